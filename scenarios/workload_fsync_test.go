package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

func TestFsyncParse(t *testing.T) {
	s, err := Parse("x.yaml", []byte("name: f\nworkload: {kind: fsync, dir: /srv/ci, size: 8192}\ntracers: {syscall: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Kind: "fsync", Threads: 1, Params: &Fsync{Size: 8192, Dir: "/srv/ci"}}
	if diff := cmp.Diff(want, s.Workload); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"syscall.fdatasync"}, Metrics(s)); diff != "" {
		t.Errorf("the syscall tracer's default is fdatasync (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(s.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"kind":"fsync","size":8192,"threads":1,"dir":"/srv/ci"}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	_, err = Parse("x.yaml", []byte("name: f\nworkload:\n  kind: fsync\n  dir: var/tmp\ntracers: {syscall: {}}\n"))
	wantParseError(t, err, 4, 8, `dir must be an absolute path, got "var/tmp"`)
	_, err = Parse("x.yaml", []byte("name: f\nworkload:\n  kind: fsync\n  rate: 5\ntracers: {syscall: {}}\n"))
	wantParseError(t, err, 4, 3, "rate does not apply to workload kind fsync; fsync takes: dir, device, size, threads, noise")
}

// TestFsyncRun: the kind's ops are its fdatasyncs, each after one pwrite64
// of size bytes; its files (and the directory it made) are gone after
// Close.
func TestFsyncRun(t *testing.T) {
	testenv.Need(t, testenv.Platform("linux/amd64"))
	named := t.TempDir()
	for _, tc := range []struct {
		name string
		dir  string
	}{{"default dir", ""}, {"named dir", named}} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := filepath.Glob(filepath.Join(DefaultFsyncParent, "tailgate-fsync-*"))
			r, err := NewWorkload(Workload{Kind: "fsync", Threads: 2, Params: &Fsync{Dir: tc.dir}})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // Run may be called again
				ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				st, err := r.Run(ctx)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if st.Ops == 0 || st.Syscalls["fdatasync"] != st.Ops || st.Syscalls["pwrite64"] != st.Ops {
					t.Errorf("ops %d, syscalls %v: want an fdatasync and a pwrite64 per op", st.Ops, st.Syscalls)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.dir != "" {
				if es, err := os.ReadDir(tc.dir); err != nil || len(es) != 0 {
					t.Errorf("%s after Close: %v, %v; want it empty", tc.dir, es, err)
				}
			}
			after, _ := filepath.Glob(filepath.Join(DefaultFsyncParent, "tailgate-fsync-*"))
			if len(after) > len(before) {
				t.Errorf("directories left in %s: %v (before: %v)", DefaultFsyncParent, after, before)
			}
		})
	}
	if _, err := NewWorkload(Workload{Kind: "fsync", Params: &Fsync{Dir: filepath.Join(named, "none")}}); err == nil {
		t.Error("a dir that does not exist: no error")
	}
}

// TestFsyncDeviceParse: device scratch is read and written back; device
// file is the default and is not written, so the fsync built-in keeps the
// digest it had before the key existed; a size O_DIRECT cannot write is
// refused where the device is chosen.
func TestFsyncDeviceParse(t *testing.T) {
	s, err := Parse("x.yaml", []byte("name: f\nworkload: {kind: fsync, device: scratch, threads: 2}\ntracers: {syscall: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Kind: "fsync", Threads: 2, Params: &Fsync{Size: 4096, Device: FsyncDeviceScratch}}
	if diff := cmp.Diff(want, s.Workload); diff != "" {
		t.Errorf("workload (-want +got):\n%s", diff)
	}
	if got := ScratchSize(s.Workload); got != 2*4096 {
		t.Errorf("ScratchSize = %d, want 8192", got)
	}
	b, err := json.Marshal(s.Workload)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"kind":"fsync","size":4096,"threads":2,"device":"scratch"}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}

	file, err := Parse("x.yaml", []byte("name: f\nworkload: {kind: fsync, device: file}\ntracers: {syscall: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	none, err := Parse("x.yaml", []byte("name: f\nworkload: {kind: fsync}\ntracers: {syscall: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if Params(file) != Params(none) || ScratchSize(file.Workload) != 0 {
		t.Errorf("device: file differs from no device key: digest %s vs %s, ScratchSize %d", Params(file), Params(none), ScratchSize(file.Workload))
	}
	if Params(s) == Params(none) {
		t.Error("device: scratch has the digest of a file run")
	}
	// The digests of Results written before the key existed (timer-1ms's
	// since the timer's sleep: raw became its default).
	for name, digest := range map[string]string{
		"fsync":     "b508331f5bbe0d05addec60ec6f1db7e78eda1bb9f55ccb2ea2888b09bc83274",
		"timer-1ms": "d3b0614f035a2f0f6db0735850d1f0ca46b9d6911eda731926ecd5e8fbee9a80",
	} {
		b, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := Params(b); got != digest {
			t.Errorf("%s: digest %s, was %s", name, got, digest)
		}
	}

	_, err = Parse("x.yaml", []byte("name: f\nworkload:\n  kind: fsync\n  device: ram\ntracers: {syscall: {}}\n"))
	wantParseError(t, err, 4, 11, `unknown device "ram"; allowed: file, scratch`)
	_, err = Parse("x.yaml", []byte("name: f\nworkload:\n  kind: fsync\n  size: 1000\n  device: scratch\ntracers: {syscall: {}}\n"))
	wantParseError(t, err, 5, 11, "size must be a multiple of 512 with device scratch")
	if _, err := NewWorkload(Workload{Kind: "fsync", Params: &Fsync{Size: 1000, Device: FsyncDeviceScratch}}); err == nil {
		t.Error("size 1000 with device scratch, built in Go: no error")
	}
}
