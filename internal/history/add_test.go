package history

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// AddResult records a Result file under a commit given in any case; what
// the file or the commit cannot make into a record is the input's and
// names the file.
func TestAddResult(t *testing.T) {
	ctx := context.Background()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := result.Write(path, sample(t, 3)); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := s.AddResult(ctx, path, Origin{Commit: strings.ToUpper(commitID(1)), At: at, Ref: "main"}, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Commit != commitID(1) || !e.Time.Equal(at) || e.Ref != "main" || len(e.Scenarios) != 1 {
		t.Errorf("entry %+v, want commit %s at %s on main, one scenario", e, commitID(1), at)
	}
	for _, c := range []struct {
		path, commit, want string
	}{
		{path, "HEAD", path + ": "},
		{path, commitID(1), "already recorded"},
		{filepath.Join(t.TempDir(), "none.json"), commitID(2), "none.json"},
	} {
		_, err := s.AddResult(ctx, c.path, Origin{Commit: c.commit}, AddOptions{})
		if !IsInput(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddResult(%s, %s) = %v, want an input error with %q", filepath.Base(c.path), c.commit, err, c.want)
		}
	}
}

func TestNewPolicy(t *testing.T) {
	if p, err := NewPolicy(3, "90d"); err != nil || p.Keep != 3 || p.OlderThan != 90*24*time.Hour {
		t.Errorf("NewPolicy(3, 90d) = %+v, %v", p, err)
	}
	for _, c := range []struct {
		keep  int
		older string
		want  string
	}{
		{0, "", "give --keep N or --older-than D"},
		{-1, "", "--keep -1"},
		{0, "soon", `--older-than "soon"`},
	} {
		if _, err := NewPolicy(c.keep, c.older); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewPolicy(%d, %q) = %v, want ErrBadInput with %q", c.keep, c.older, err, c.want)
		}
	}
}

func TestProblemString(t *testing.T) {
	for p, want := range map[Problem]string{
		{Path: "records/x.json", Err: ErrCorrupt}:                "error: records/x.json: history store is corrupt",
		{Path: "records/y.json", Err: ErrCorrupt, Warning: true}: "warning: records/y.json: history store is corrupt",
	} {
		if got := p.String(); got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// Boot takes the records' kernels, or refuses records of host runs
// unless a build makes them.
func TestPairBoot(t *testing.T) {
	vm := &Pair{Kernels: [2]string{"debian:6.1-cloud", "debian:6.1-cloud quiet"}}
	if err := vm.Boot(context.Background(), "", "", nil); err != nil {
		t.Errorf("records of VM runs: %v", err)
	}
	host := &Pair{Base: Entry{Commit: commitID(1)}, Head: Entry{Commit: commitID(2)}}
	err := host.Boot(context.Background(), "", "", nil)
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "give --build CMD") || !strings.Contains(err.Error(), Short(commitID(2))) ||
		!strings.Contains(err.Error(), "tailgate bisect --good "+Short(commitID(1))+" --bad "+Short(commitID(2))) {
		t.Errorf("records of host runs: %v", err)
	}
}
