package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// RunEach runs each target's work in turn, puts each Result in its own
// file and its table on standard output, and keeps going past a broken
// target, returning its error once the others ran.
func TestRunEach(t *testing.T) {
	ts, log := fakes("A", "B", "C")
	ts[0].(*fakeTarget).fail = []error{errors.New("guest oops")}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	o := RunOutputs{Path: filepath.Join(dir, "r.json"), Stdout: &stdout, Log: &stderr}
	if err := o.Check(ts); err != nil {
		t.Fatal(err)
	}
	ss := spec(1, 1).Scenarios
	err := RunEach(context.Background(), ts, Work(nil, ss, ts, &stderr), Spec{}, o, progress.New(&bytes.Buffer{}, progress.Options{}))
	var ie *InfraError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "guest oops") {
		t.Errorf("err %v, want A's failure as an InfraError", err)
	}
	if diff := cmp.Diff([]string{"A:a,b", "B:a,b", "C:a,b"}, *log); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr.String(), "target A: guest oops") {
		t.Errorf("stderr does not name A's failure:\n%s", stderr.String())
	}
	for name, want := range map[string]bool{"r-A.json": false, "r-B.json": true, "r-C.json": true} {
		r, err := result.Load(filepath.Join(dir, name))
		if got := err == nil; got != want {
			t.Errorf("%s written %v, want %v (%v)", name, got, want, err)
			continue
		}
		if want && (len(r.Scenarios) != 2 || r.Target.Name != strings.TrimSuffix(strings.TrimPrefix(name, "r-"), ".json")) {
			t.Errorf("%s holds target %s, %d scenarios", name, r.Target.Name, len(r.Scenarios))
		}
	}
	if n := strings.Count(stdout.String(), "a (1 trial, "); n != 2 {
		t.Errorf("stdout has %d tables of scenario a, want B's and C's:\n%s", n, stdout.String())
	}
}

// A lone target's error comes back at once, typed; bad input stays bad
// input.
func TestRunEachOneTarget(t *testing.T) {
	ts, _ := fakes("A")
	ts[0].(*fakeTarget).prepare = Inputf("scenario a cannot run here")
	var out bytes.Buffer
	o := RunOutputs{Stdout: &out, Log: &out}
	if err := o.Check(ts); err != nil {
		t.Fatal(err)
	}
	ss := spec(1).Scenarios
	err := RunEach(context.Background(), ts, Work(nil, ss, ts, &out), Spec{}, o, progress.New(&bytes.Buffer{}, progress.Options{}))
	if !errors.As(err, new(*InputError)) {
		t.Errorf("err %v, want the InputError of Prepare", err)
	}
}

// With a shard, each target runs its deal only; a shard with no work
// says so and runs nothing, writing no file, while a lone target writes
// its empty Result for merge to find.
func TestRunEachShard(t *testing.T) {
	ts, log := fakes("A", "B")
	ss := spec(1, 1).Scenarios
	var stderr bytes.Buffer
	sh, err := shard.Parse("2/2")
	if err != nil {
		t.Fatal(err)
	}
	work := Work(&sh, ss, ts, &stderr)
	n := 0
	for _, w := range work {
		n += len(w)
	}
	if n != 2 {
		t.Fatalf("shard 2/2 of 4 units deals %d", n)
	}
	o := RunOutputs{Stdout: &bytes.Buffer{}, Log: &stderr}
	o.Check(ts)
	if err := RunEach(context.Background(), ts, work, Spec{}, o, progress.New(&bytes.Buffer{}, progress.Options{})); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, l := range *log {
		ran += len(strings.Split(strings.SplitN(l, ":", 2)[1], ","))
	}
	if ran != 2 {
		t.Errorf("ran %v: %d units, want the shard's 2", *log, ran)
	}

	sh, _ = shard.Parse("5/5")
	var said bytes.Buffer
	if w := Work(&sh, ss[:1], ts[:1], &said); len(w[0]) != 0 || !strings.Contains(said.String(), "has no work") {
		t.Fatalf("shard 5/5 of 1 unit: work %v, said %q", w, said.String())
	}
	path := filepath.Join(t.TempDir(), "r.json")
	one, log1 := fakes("A")
	o = RunOutputs{Path: path, Stdout: &bytes.Buffer{}, Log: &bytes.Buffer{}}
	o.Check(one)
	if err := RunEach(context.Background(), one, [][]*scenarios.Scenario{nil}, Spec{}, o, progress.New(&bytes.Buffer{}, progress.Options{})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil || len(*log1) != 1 {
		t.Errorf("an empty shard of one target: ran %v, file %v", *log1, err)
	}
}

// Matrix runs every target in rounds, writes each one's Result and
// compares them with the first, each described as given.
func TestMatrix(t *testing.T) {
	ts, log := fakes("A", "B")
	sp := spec(2)
	dir := t.TempDir()
	var stderr bytes.Buffer
	m, err := Matrix(context.Background(), ts, []string{"the base", "the head"}, sp, RoundsOptions{Output: filepath.Join(dir, "m.json"), Compare: report0(), Log: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if len(*log) != 4 {
		t.Errorf("runs %v, want 2 rounds of 2", *log)
	}
	if len(m.Targets) != 2 || m.Targets[0].Description != "the base" || m.Targets[1].Name != "B" {
		t.Errorf("matrix targets %+v", m.Targets)
	}
	for _, n := range []string{"A", "B"} {
		r, err := result.Load(filepath.Join(dir, "m-"+n+".json"))
		if err != nil || r.Find("a").Trials != 2 {
			t.Errorf("%s's Result: %v", n, err)
		}
	}

	ts, _ = fakes("A", "B")
	ts[1].(*fakeTarget).fail = []error{errors.New("boom")}
	if _, err := Matrix(context.Background(), ts, []string{"", ""}, sp, RoundsOptions{Compare: report0(), Log: &stderr}); !errors.As(err, new(*InfraError)) {
		t.Errorf("a broken round: %v, want an InfraError", err)
	}
}
