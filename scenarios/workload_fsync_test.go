package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFsyncParse(t *testing.T) {
	s, err := Parse("x.yaml", []byte("name: f\nworkload: {kind: fsync, dir: /srv/ci, size: 8192}\ntracers: {syscall: {}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Workload{Kind: "fsync", Size: 8192, Threads: 1, Params: &Fsync{Dir: "/srv/ci"}}
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
	wantParseError(t, err, 4, 3, "rate does not apply to workload kind fsync; fsync takes: dir, size, threads, noise")
}

// TestFsyncRun: the kind's ops are its fdatasyncs, each after one pwrite64
// of size bytes; its files (and the directory it made) are gone after
// Close.
func TestFsyncRun(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs linux/amd64")
	}
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
