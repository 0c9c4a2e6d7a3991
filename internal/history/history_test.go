package history

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// sample is a real recorded Result (syscall-read, 80 worker processes)
// cut to n trials.
func sample(t testing.TB, n int) *result.Result {
	t.Helper()
	r, err := result.Load(filepath.Join("..", "..", "report", "testdata", "trials-syscall-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Scenarios {
		for _, m := range r.Scenarios[i].Metrics {
			m.Trials = m.Trials[:n]
		}
		r.Scenarios[i].Trials = n
	}
	return r
}

func commitID(i int) string { return fmt.Sprintf("%040x", 0xc0ffee000+i) }

// stores returns a fresh directory store and a fresh git store on a real
// local bare repository.
func stores(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bare := filepath.Join(dir, "repo.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return map[string]string{"dir": filepath.Join(dir, "store"), "git": "git:" + bare + "#history"}
}

func add(t testing.TB, s *Store, r *result.Result, i int) Entry {
	t.Helper()
	rec, err := NewRecord(r, commitID(i), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour), "main", Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Add(context.Background(), rec, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAddReadCheckPrune(t *testing.T) {
	r := sample(t, 4)
	for kind, spec := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			s, err := Open(spec)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// Added out of order: the index orders by commit time.
			for _, i := range []int{2, 0, 1, 3} {
				add(t, s, r, i)
			}
			rec, _ := NewRecord(r, commitID(1), time.Now(), "main", Provenance{})
			if _, err := s.Add(ctx, rec, AddOptions{}); !errors.Is(err, ErrDuplicate) {
				t.Errorf("second add of a commit and target: %v, want ErrDuplicate", err)
			}
			v, err := s.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range v.Index.Entries {
				got = append(got, e.Commit)
			}
			if want := []string{commitID(0), commitID(1), commitID(2), commitID(3)}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("index order %v, want %v", got, want)
			}
			back, err := v.Record(v.Index.Entries[1])
			if err != nil {
				t.Fatal(err)
			}
			m := back.Result.Scenarios[0].Metrics["syscall.read"]
			if len(m.Trials) != 4 || m.Trials[2].Histogram.Count() != r.Scenarios[0].Metrics["syscall.read"].Trials[2].Histogram.Count() {
				t.Errorf("record's histograms did not survive the store")
			}
			if ps := v.Check(); len(ps) != 0 {
				t.Errorf("check of a good store: %v", ps)
			}
			v.Close()

			removed, err := s.Prune(ctx, Policy{Keep: 2})
			if err != nil {
				t.Fatal(err)
			}
			if len(removed) != 2 || removed[0].Commit != commitID(0) || removed[1].Commit != commitID(1) {
				t.Errorf("prune --keep 2 removed %v, want the two oldest", removed)
			}
			removed, err = s.Prune(ctx, Policy{OlderThan: 24 * time.Hour, Now: time.Date(2026, 1, 2, 2, 30, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			if len(removed) != 1 || removed[0].Commit != commitID(2) {
				t.Errorf("prune --older-than 24h removed %v, want commit 2 only", removed)
			}
			v, err = s.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			if len(v.Index.Entries) != 1 || v.Index.Entries[0].Commit != commitID(3) {
				t.Errorf("after pruning: %v", v.Index.Entries)
			}
			if files, _ := v.sn.list(RecordsDir); len(files) != 1 {
				t.Errorf("after pruning the records are %v, want one", files)
			}
			if ps := v.Check(); len(ps) != 0 {
				t.Errorf("check after pruning: %v", ps)
			}
		})
	}
}

// TestCheckFindsDamage: a torn record, a record edited by hand, an orphan
// and an index from a newer tailgate are each found.
func TestCheckFindsDamage(t *testing.T) {
	r := sample(t, 2)
	dir := filepath.Join(t.TempDir(), "store")
	s, _ := Open(dir)
	e0 := add(t, s, r, 0)
	e1 := add(t, s, r, 1)
	p0 := filepath.Join(dir, e0.Path)
	b, _ := os.ReadFile(p0)
	os.WriteFile(p0, b[:len(b)/2], 0o644) // torn
	p1 := filepath.Join(dir, e1.Path)
	b, _ = os.ReadFile(p1)
	os.WriteFile(p1, []byte(strings.Replace(string(b), `"commit"`, ` "commit"`, 1)), 0o644) // edited
	os.MkdirAll(filepath.Join(dir, RecordsDir, "stray"), 0o755)
	os.WriteFile(filepath.Join(dir, RecordsDir, "stray", "x.json"), []byte("{}"), 0o644)
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ps := v.Check()
	v.Close()
	var errs, warns int
	for _, p := range ps {
		if p.Warning {
			warns++
		} else if errors.Is(p.Err, ErrCorrupt) {
			errs++
		}
	}
	if errs != 2 || warns != 1 {
		t.Errorf("check found %d corrupt and %d warnings, want 2 and 1: %v", errs, warns, ps)
	}
	os.WriteFile(filepath.Join(dir, IndexFile), []byte(`{"format": 99, "entries": []}`), 0o644)
	if _, err := s.Read(context.Background()); !errors.Is(err, ErrFutureFormat) {
		t.Errorf("index of format 99: %v, want ErrFutureFormat", err)
	}
}

// TestConcurrentAdd: writers that add at once all land, whole, for both
// kinds of store: goroutines, and separate processes (this test binary
// run again as a writer), into one store.
func TestConcurrentAdd(t *testing.T) {
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for _, kind := range []string{"dir", "git"} {
		t.Run(kind+"/goroutines", func(t *testing.T) {
			s, _ := Open(stores(t)[kind])
			r := sample(t, 2)
			lost := lostRaces.Load()
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := range rounds {
						add(t, s, r, w*1000+i)
					}
				})
			}
			wg.Wait()
			checkCount(t, s, 4*rounds)
			if kind == "git" {
				n := lostRaces.Load() - lost
				t.Logf("%d pushes lost a race and were redone", n)
				if n == 0 {
					t.Errorf("no push lost a race: the writers did not overlap, so the retry went untested")
				}
			}
		})
		t.Run(kind+"/processes", func(t *testing.T) {
			spec := stores(t)[kind]
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2*rounds)
			for i := range rounds {
				for w := range 2 {
					wg.Go(func() {
						cmd := exec.Command(exe, "-test.run=^TestHelperAdd$")
						cmd.Env = append(os.Environ(), "TAILGATE_HISTORY_HELPER="+spec, "TAILGATE_HISTORY_COMMIT="+strconv.Itoa(w*1000+i))
						if out, err := cmd.CombinedOutput(); err != nil {
							errs <- fmt.Errorf("writer %d/%d: %v: %s", i, w, err, out)
						}
					})
				}
				wg.Wait()
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			s, _ := Open(spec)
			checkCount(t, s, 2*rounds)
		})
	}
}

func checkCount(t *testing.T, s *Store, want int) {
	t.Helper()
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if len(v.Index.Entries) != want {
		t.Errorf("%d records in the index, want %d", len(v.Index.Entries), want)
	}
	if ps := v.Check(); len(ps) != 0 {
		t.Errorf("check: %d problems, first %v", len(ps), ps[0])
	}
}

// TestHelperAdd is a writer process of TestConcurrentAdd.
func TestHelperAdd(t *testing.T) {
	spec := os.Getenv("TAILGATE_HISTORY_HELPER")
	if spec == "" {
		t.Skip("a writer process of TestConcurrentAdd")
	}
	i, _ := strconv.Atoi(os.Getenv("TAILGATE_HISTORY_COMMIT"))
	s, err := Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	add(t, s, sample(t, 2), i)
}

func TestOpenRefuses(t *testing.T) {
	for _, spec := range []string{"", "git:", "git:x#-b", "git:x#a..b"} {
		if _, err := Open(spec); !errors.Is(err, ErrBadInput) {
			t.Errorf("Open(%q): %v, want ErrBadInput", spec, err)
		}
	}
	if _, err := NewRecord(sample(t, 1), "HEAD", time.Now(), "", Provenance{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("commit HEAD: %v, want ErrBadInput", err)
	}
}

func TestFileName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"host", "host"},
		{"debian-6.1", "debian-6.1"},
	} {
		if got := fileName(c.in); got != c.want {
			t.Errorf("fileName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	a, b := fileName("a/b"), fileName("a_b")
	if a == b || strings.Contains(a, "/") {
		t.Errorf("fileName(a/b) = %q, fileName(a_b) = %q: want distinct, no slash", a, b)
	}
	if got := fileName(".."); strings.HasPrefix(got, ".") && !strings.Contains(got, "-") {
		t.Errorf("fileName(..) = %q", got)
	}
}

// TestIndexPathsStayInTheStore: an index entry whose path is not its own
// record's (one outside the store, or another record's) is refused as a
// corrupt index, and nothing outside the store is read. Once, an entry of
// "../../../../../etc/passwd" was read.
func TestIndexPathsStayInTheStore(t *testing.T) {
	r := sample(t, 2)
	dir := filepath.Join(t.TempDir(), "store")
	s, _ := Open(dir)
	e := add(t, s, r, 0)
	add(t, s, r, 1)
	ixPath := filepath.Join(dir, IndexFile)
	good, _ := os.ReadFile(ixPath)
	for _, bad := range []string{"../../../../../etc/passwd", "records/../../outside.json", RecordPath(commitID(1), e.Target)} {
		b := strings.Replace(string(good), `"path": "`+e.Path+`"`, `"path": "`+bad+`"`, 1)
		if b == string(good) {
			t.Fatalf("the index holds no path %s:\n%s", e.Path, good)
		}
		os.WriteFile(ixPath, []byte(b), 0o644)
		if _, err := s.Read(context.Background()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not the record of commit") {
			t.Errorf("index naming %s: %v; want ErrCorrupt naming the entry", bad, err)
		}
	}
}

// TestNewRecordWantsWholeCommit: a record is filed under a whole commit
// id only; an abbreviation would file one commit under two ids.
func TestNewRecordWantsWholeCommit(t *testing.T) {
	r := sample(t, 2)
	for _, c := range []string{"abc1234", commitID(0)[:39], commitID(0) + "0"} {
		if _, err := NewRecord(r, c, time.Time{}, "", Provenance{}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "whole commit id") {
			t.Errorf("NewRecord(%q) = %v; want ErrBadInput asking for the whole id", c, err)
		}
	}
	for _, c := range []string{commitID(0), strings.Repeat("ab", 32)} {
		if _, err := NewRecord(r, c, time.Time{}, "", Provenance{}); err != nil {
			t.Errorf("NewRecord(%q) = %v", c, err)
		}
	}
}

// TestPresentFindsWhatSummariesHide: a record removed, or edited to
// another size, is found without reading any record; a whole store, in
// a directory or on a branch, has nothing to find.
func TestPresentFindsWhatSummariesHide(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "repo.git")
	if out, err := exec.Command("git", "init", "--quiet", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	gs, err := Open("git:" + bare + "#history")
	if err != nil {
		t.Fatal(err)
	}
	add(t, gs, sample(t, 2), 0)
	add(t, gs, sample(t, 2), 1)
	gv, err := gs.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ps := gv.Present(); len(ps) != 0 {
		t.Errorf("Present of a whole branch store = %v", ps)
	}
	gv.Close()

	r := sample(t, 2)
	dir := filepath.Join(t.TempDir(), "store")
	s, _ := Open(dir)
	e0 := add(t, s, r, 0)
	e1 := add(t, s, r, 1)
	add(t, s, r, 2)
	os.Remove(filepath.Join(dir, e0.Path))
	p1 := filepath.Join(dir, e1.Path)
	b, _ := os.ReadFile(p1)
	os.WriteFile(p1, append(b, ' '), 0o644)
	v, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	ps := v.Present()
	if len(ps) != 2 || ps[0].Path != e0.Path || !strings.Contains(ps[0].Err.Error(), "missing") || ps[1].Path != e1.Path || !strings.Contains(ps[1].Err.Error(), "the index says") {
		t.Errorf("Present = %v; want %s missing and %s of another size", ps, e0.Path, e1.Path)
	}
}
