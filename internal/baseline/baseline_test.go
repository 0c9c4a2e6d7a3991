package baseline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

func sample(target, kernel string, finished time.Time, scenarios ...string) *result.Result {
	r := &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    finished,
		Target:      result.Target{Name: target, Kind: "host"},
		Environment: result.Environment{KernelRelease: kernel, CPUModel: "cpu", CPUs: 2},
	}
	for _, name := range scenarios {
		h := hist.New()
		for v := uint64(1000); v < 2000; v += 10 {
			h.Record(v)
		}
		r.Scenarios = append(r.Scenarios, result.Scenario{
			Name: name, Params: "p", Trials: 1,
			Metrics: map[string]*result.Metric{"syscall.read": {Unit: "ns", Trials: []result.Trial{{Histogram: h, Summary: result.Summarize(h)}}}},
		})
	}
	return r
}

func TestFileName(t *testing.T) {
	for _, c := range []struct{ s, t, k, want string }{
		{"getppid", "host", "6.1.0-28-amd64", "getppid@host-6.1.0-28-amd64.json"},
		{"a/b", "vm 1", "6.12.9+deb13-amd64", "a_b@vm_1-6.12.9+deb13-amd64.json"},
		{"..", "host", "", "_.@host-_.json"},
		{"x@y", "host", "k", "x_y@host-k.json"},
	} {
		if got := FileName(c.s, c.t, c.k); got != c.want {
			t.Errorf("FileName(%q, %q, %q) = %q, want %q", c.s, c.t, c.k, got, c.want)
		}
	}
}

func TestSaveSplitsAndLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "baselines")
	paths, err := Save(dir, sample("host", "6.1.0", time.Unix(100, 0), "getppid", "pipe"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "getppid@host-6.1.0.json"), filepath.Join(dir, "pipe@host-6.1.0.json")}
	if d := cmp.Diff(want, paths); d != "" {
		t.Fatalf("paths (-want +got):\n%s", d)
	}
	e, err := Load(dir, "pipe", "host", "6.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != want[1] || len(e.Result.Scenarios) != 1 || e.Scenario().Name != "pipe" {
		t.Errorf("Load = %s with %d scenarios", e.Path, len(e.Result.Scenarios))
	}
	if _, err := Load(dir, "fork", "host", "6.1.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing scenario: err %v, want ErrNotFound", err)
	}
	if _, err := Load(dir, "pipe", "vm", "6.1.0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing target: err %v, want ErrNotFound", err)
	}
	if _, err := Load(filepath.Join(dir, "nope"), "pipe", "host", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing directory: err %v, want ErrNotFound", err)
	}
	entries, err := List(dir)
	if err != nil || len(entries) != 2 {
		t.Errorf("List = %d entries, %v", len(entries), err)
	}
}

func TestLoadPrefersKernelThenNewest(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []*result.Result{
		sample("host", "6.1.0", time.Unix(100, 0), "getppid"),
		sample("host", "6.12.0", time.Unix(300, 0), "getppid"),
		sample("host", "6.6.0", time.Unix(200, 0), "getppid"),
		sample("host-2", "6.6.0", time.Unix(900, 0), "getppid"), // shares the prefix "getppid@host-"
	} {
		if _, err := Save(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ kernel, want string }{
		{"6.6.0", "6.6.0"},
		{"6.1.0", "6.1.0"},
		{"7.0.0", "6.12.0"}, // none for this kernel: the newest
	} {
		e, err := Load(dir, "getppid", "host", c.kernel)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Result.Environment.KernelRelease; got != c.want || e.Result.Target.Name != "host" {
			t.Errorf("kernel %s: loaded %s on %s, want %s on host", c.kernel, got, e.Result.Target.Name, c.want)
		}
	}
}

func TestLoadSingleFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.json")
	if err := result.Write(path, sample("host", "6.1.0", time.Time{}, "getppid", "pipe")); err != nil {
		t.Fatal(err)
	}
	e, err := Load(path, "pipe", "anything", "")
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != path || e.Scenario().Name != "pipe" {
		t.Errorf("Load = %s %s", e.Path, e.Scenario().Name)
	}
	if _, err := Load(path, "fork", "host", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("err %v, want ErrNotFound", err)
	}
}

// Unreadable stored files are errors that name the file, and Save never
// replaces one unless told to.
func TestUnreadable(t *testing.T) {
	r := sample("host", "6.1.0", time.Unix(100, 0), "getppid")
	good, err := result.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		content []byte
		want    error
	}{
		{"corrupt", []byte("not json at all"), result.ErrCorrupt},
		{"truncated", good[:len(good)/2], result.ErrCorrupt},
		{"empty", nil, result.ErrCorrupt},
		{"future schema", []byte(`{"schema": 99, "scenarios": []}`), result.ErrFutureSchema},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, FileName("getppid", "host", "6.1.0"))
			if err := os.WriteFile(path, c.content, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(dir, "getppid", "host", "6.1.0")
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Load: err %v, want %v naming %s", err, c.want, path)
			}
			_, err = Save(dir, r)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("Save: err %v, want %v naming %s", err, c.want, path)
			}
			if b, _ := os.ReadFile(path); string(b) != string(c.content) {
				t.Errorf("Save replaced the unreadable file")
			}
			if _, err := List(dir); !errors.Is(err, c.want) {
				t.Errorf("List: err %v, want %v", err, c.want)
			}
			if _, err := SaveWith(context.Background(), dir, r, SaveOptions{ReplaceUnreadable: true}); err != nil {
				t.Fatalf("SaveWith(ReplaceUnreadable): %v", err)
			}
			if _, err := Load(dir, "getppid", "host", "6.1.0"); err != nil {
				t.Errorf("Load after replacing: %v", err)
			}
		})
	}
}

// A refusal writes nothing, even for the scenarios whose files are fine.
func TestSaveRefusesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, FileName("pipe", "host", "6.1.0"))
	if err := os.WriteFile(bad, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(dir, sample("host", "6.1.0", time.Time{}, "getppid", "pipe")); err == nil {
		t.Fatal("Save over a corrupt file succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, FileName("getppid", "host", "6.1.0"))); err == nil {
		t.Error("Save wrote getppid before refusing pipe")
	}
}

// A write that fails leaves the old baseline whole and no temporary file.
func TestSaveFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	old := sample("host", "6.1.0", time.Unix(100, 0), "getppid")
	paths, err := Save(dir, old)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(paths[0])
	// A NaN cannot be encoded in JSON: the write fails after the checks.
	broken := sample("host", "6.1.0", time.Unix(200, 0), "getppid")
	h := broken.Scenarios[0].Metrics["syscall.read"].Trials[0].Histogram
	h.SetExtremes(h.Min(), h.Max(), math.NaN())
	if _, err := Save(dir, broken); err == nil {
		t.Fatal("Save of an unencodable result succeeded")
	}
	after, _ := os.ReadFile(paths[0])
	if string(before) != string(after) {
		t.Error("the old baseline changed")
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Errorf("directory holds %d files after a failed save, want 1", len(names))
	}
}

func TestSaveRefusesPartial(t *testing.T) {
	r := sample("host", "6.1.0", time.Time{}, "getppid")
	r.Partial, r.Error = true, "interrupted"
	if _, err := Save(t.TempDir(), r); err == nil || !strings.Contains(err.Error(), "partial") {
		t.Errorf("err %v, want a refusal of a partial result", err)
	}
}

// TestEmptyBaselinesRefused: a scenario without trials or metrics is never
// stored, and one found in a store is an error, not a baseline that passes
// every gate.
func TestEmptyBaselinesRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		empty func(s *result.Scenario)
	}{
		{"zero trials", func(s *result.Scenario) { s.Trials = 0 }},
		{"no metrics", func(s *result.Scenario) { s.Metrics = map[string]*result.Metric{} }},
		{"a metric without trials", func(s *result.Scenario) { s.Metrics["syscall.read"].Trials = nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			r := sample("host", "6.1.0", time.Unix(100, 0), "getppid", "pipe")
			tt.empty(&r.Scenarios[1])
			paths, err := Save(dir, r)
			if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "pipe") {
				t.Errorf("Save = %v, want ErrRefused and ErrEmpty naming pipe", err)
			}
			if ents, _ := os.ReadDir(dir); len(paths) != 0 || len(ents) != 0 {
				t.Errorf("Save wrote %v; the store holds %v", paths, ents)
			}

			// Written by hand (or an older tailgate): Load refuses it.
			os.MkdirAll(dir, 0o755)
			path := filepath.Join(dir, FileName("pipe", "host", "6.1.0"))
			one := *r
			one.Scenarios = r.Scenarios[1:]
			if err := result.Write(path, &one); err != nil {
				t.Fatal(err)
			}
			for _, from := range []string{dir, path} {
				_, err := Load(from, "pipe", "host", "6.1.0")
				if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), path) {
					t.Errorf("Load(%s) = %v, want ErrEmpty naming %s", from, err, path)
				}
			}
		})
	}
}

// TestSaveWaitsForTheLock: a Save while another holds the store's lock says
// it waits, writes nothing until the lock is released, then saves.
func TestSaveWaitsForTheLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockStore(context.Background(), dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan LockWait, 1)
	done := make(chan error, 1)
	go func() {
		_, err := SaveWith(context.Background(), dir, sample("host", "6.1.0", time.Unix(100, 0), "pipe"), SaveOptions{
			Waiting: func(w LockWait) { waited <- w },
		})
		done <- err
	}()
	select {
	case w := <-waited:
		if w.Lock != filepath.Join(dir, LockName) || w.Holder.PID != os.Getpid() {
			t.Errorf("waits for %+v, want %s held by pid %d", w, filepath.Join(dir, LockName), os.Getpid())
		}
	case err := <-done:
		t.Fatalf("Save did not wait for the lock: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Save neither waited nor finished in 10s")
	}
	if _, err := os.Stat(filepath.Join(dir, FileName("pipe", "host", "6.1.0"))); err == nil {
		t.Error("Save wrote while another held the lock")
	}
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Save did not finish after the lock was released")
	}
	if _, err := Load(dir, "pipe", "host", "6.1.0"); err != nil {
		t.Error(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the store holds %v, want the baseline alone (no lock file, no temporaries)", ents)
	}
}

// TestConcurrentSaves: saves into one store at once take turns; each one
// succeeds, every file is whole, and each file is from one Result.
func TestConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			r := sample("host", "6.1.0", time.Unix(int64(100+i), 0), "getppid", "pipe", "fork")
			_, err := Save(dir, r)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	entries, err := List(dir)
	if err != nil || len(entries) != 3 {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("the store holds %v, want 3 baselines", ents)
	}
}

// TestStaleTemporariesInStore: a temporary left by a killed save is
// removed by the next Save or Load and never read as a baseline.
func TestStaleTemporariesInStore(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	for _, op := range []string{"Save", "Load"} {
		t.Run(op, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := Save(dir, sample("host", "6.1.0", time.Unix(100, 0), "pipe")); err != nil {
				t.Fatal(err)
			}
			// Half a baseline, named as a temporary of its file.
			stale := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-99", FileName("pipe", "host", "6.1.0"), dead))
			fresh := filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-98", FileName("pipe", "host", "6.1.0"), os.Getpid()))
			for _, p := range []string{stale, fresh} {
				os.WriteFile(p, []byte(`{"schema": 1, "scen`), 0o644)
				old := time.Now().Add(-5 * time.Minute)
				os.Chtimes(p, old, old)
			}
			var err error
			if op == "Save" {
				_, err = Save(dir, sample("host", "6.1.0", time.Unix(200, 0), "pipe"))
			} else {
				_, err = Load(dir, "pipe", "host", "6.1.0")
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(stale); err == nil {
				t.Errorf("%s: the stale temporary is still there", op)
			}
			if _, err := os.Stat(fresh); err != nil {
				t.Errorf("%s removed the temporary of a live writer: %v", op, err)
			}
			if entries, err := List(dir); err != nil || len(entries) != 1 {
				t.Errorf("List: %d entries, %v; temporaries are not baselines", len(entries), err)
			}
		})
	}
}

// secretFile returns a root file of mode 0600 holding "secret".
func secretFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(p, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkSecret(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != "secret" {
		t.Errorf("%s now holds %.100q, %v; want it untouched", path, b, err)
	}
}

// TestSaveRefusesLockSymlink: a .tailgate.lock symlink in the store is not
// opened, so root creates or truncates nothing through it.
func TestSaveRefusesLockSymlink(t *testing.T) {
	victim := secretFile(t)
	dangling := filepath.Join(t.TempDir(), "made-by-root")
	for _, c := range []struct{ name, to string }{{"to a file", victim}, {"dangling", dangling}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lock := filepath.Join(dir, LockName)
			if err := os.Symlink(c.to, lock); err != nil {
				t.Fatal(err)
			}
			_, err := Save(dir, sample("host", "6.1.0", time.Unix(100, 0), "pipe"))
			if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), lock) {
				t.Errorf("Save with a lock symlink = %v, want ErrLink naming %s", err, lock)
			}
			if _, err := os.Stat(filepath.Join(dir, FileName("pipe", "host", "6.1.0"))); err == nil {
				t.Error("a baseline was written without the lock")
			}
		})
	}
	checkSecret(t, victim)
	if _, err := os.Lstat(dangling); err == nil {
		t.Errorf("%s was created through the lock link", dangling)
	}
}

// TestSaveRefusesStoredSymlink: a baseline that is a symlink (merged into
// a committed store) is not replaced, nor its target written.
func TestSaveRefusesStoredSymlink(t *testing.T) {
	victim := secretFile(t)
	dir := t.TempDir()
	link := filepath.Join(dir, FileName("pipe", "host", "6.1.0"))
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []SaveOptions{{}, {ReplaceUnreadable: true}} {
		_, err := SaveWith(context.Background(), dir, sample("host", "6.1.0", time.Unix(100, 0), "pipe"), opt)
		if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), link) {
			t.Errorf("SaveWith(%+v) over a symlink = %v, want ErrLink naming %s", opt, err, link)
		}
	}
	checkSecret(t, victim)
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
}

// TestLoadRefusesStoredSymlink: a stored baseline that is a symlink, even
// to a good Result, is not read as one: a pull request cannot make the
// gate compare with a file of its choosing.
func TestLoadRefusesStoredSymlink(t *testing.T) {
	elsewhere := t.TempDir()
	good, err := Save(elsewhere, sample("host", "6.1.0", time.Unix(100, 0), "pipe"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	link := filepath.Join(dir, FileName("pipe", "host", "6.1.0"))
	if err := os.Symlink(good[0], link); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, "pipe", "host", "6.1.0"); !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), link) {
		t.Errorf("Load = %v, want ErrLink naming %s", err, link)
	}
	if entries, err := List(dir); len(entries) != 0 || !errors.Is(err, ErrLink) {
		t.Errorf("List = %d entries, %v; want none and ErrLink", len(entries), err)
	}
	// The user's own link to a store or a file is theirs to follow.
	own := filepath.Join(t.TempDir(), "store")
	os.Symlink(elsewhere, own)
	if _, err := Load(own, "pipe", "host", "6.1.0"); err != nil {
		t.Errorf("Load through the user's link to a store = %v", err)
	}
}

// TestSaveRefusesPlantedStoreLink: a store path through a symlink another
// user planted in a sticky world-writable directory is refused, as
// fs.protected_symlinks would refuse it.
func TestSaveRefusesPlantedStoreLink(t *testing.T) {
	tmp := filepath.Join(t.TempDir(), "tmp")
	os.Mkdir(tmp, 0o755)
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	link := filepath.Join(tmp, "baselines")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := Save(link, sample("host", "6.1.0", time.Unix(100, 0), "pipe")); !errors.Is(err, safefile.ErrPlantedLink) {
		t.Errorf("Save through a planted link = %v, want safefile.ErrPlantedLink", err)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("written through the planted link: %v", ents)
	}
	if _, err := Load(link, "pipe", "host", "6.1.0"); !errors.Is(err, safefile.ErrPlantedLink) {
		t.Errorf("Load through a planted link = %v, want safefile.ErrPlantedLink", err)
	}
}
