package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// report0 compares with few resamples: the tests judge no interval.
func report0() report.Options { return report.Options{Resamples: 100} }

// A gate that does not save refuses, before any trial, scenarios with no
// baseline for the target; one that saves runs, stores the run as the
// baseline, and judges the next run against it.
func TestStoredGate(t *testing.T) {
	dir := t.TempDir()
	ts, log := fakes("A")
	sp := spec(1, 1)
	var stderr bytes.Buffer
	g := StoredGate{Store: Store{Path: dir, Log: &stderr}, Options: report0()}
	_, err := g.Run(context.Background(), ts[0], sp, "")
	var me *MissingError
	if !errors.As(err, &me) || !errors.As(err, new(*InputError)) || len(*log) != 0 {
		t.Fatalf("err %v after runs %v, want an InputError of a MissingError before any run", err, *log)
	}
	if me.Target != "A" || me.Path != dir || strings.Join(me.Scenarios, ",") != "a,b" {
		t.Errorf("missing %+v, want a and b on A in %s", me, dir)
	}

	g.Save = true
	out := filepath.Join(t.TempDir(), "r.json")
	res, err := g.Run(context.Background(), ts[0], sp, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := result.Load(out); err != nil || !strings.Contains(stderr.String(), "result written to "+out) {
		t.Errorf("-o: %v; stderr %q", err, stderr.String())
	}
	j, err := g.Judge(context.Background(), res)
	if err == nil {
		err = j.Keep(context.Background())
	}
	if err != nil || j.Matrix != nil {
		t.Fatalf("first judge: matrix %v, err %v; want none: nothing to compare with", j.Matrix, err)
	}
	if missing, err := g.Store.Missing(sp.Scenarios, "A"); err != nil || len(missing) != 0 {
		t.Fatalf("after saving, missing %v (%v)", missing, err)
	}

	g.Save = false
	res, err = g.Run(context.Background(), ts[0], sp, "")
	if err != nil {
		t.Fatal(err)
	}
	j, err = g.Judge(context.Background(), res)
	if err == nil {
		err = j.Keep(context.Background())
	}
	if err != nil || j.Matrix == nil || len(j.Matrix.Targets) != 2 {
		t.Errorf("second judge: matrix %v, err %v; want the comparison", j.Matrix, err)
	}
}

// An interrupted run is an InfraError that says nothing was compared.
func TestStoredGateInterrupted(t *testing.T) {
	ts, _ := fakes("A")
	ts[0].(*fakeTarget).fail = []error{context.Canceled}
	g := StoredGate{Store: Store{Path: t.TempDir(), Log: &bytes.Buffer{}}, Save: true}
	_, err := g.Run(context.Background(), ts[0], spec(1), "")
	if !errors.As(err, new(*InfraError)) || !strings.Contains(err.Error(), "nothing compared") {
		t.Errorf("err %v", err)
	}
}

// LoadBase takes a baseline directory or a Result file; what it cannot
// read, or that has nothing to compare with, is the input's.
func TestLoadBase(t *testing.T) {
	ts, _ := fakes("A")
	cand, err := Run(context.Background(), ts[0], spec(1), progress.New(io.Discard, progress.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "base.json")
	if err := result.Write(file, cand); err != nil {
		t.Fatal(err)
	}
	if base, err := LoadBase(file, cand, "new.json", &bytes.Buffer{}); err != nil || base.Find("a") == nil {
		t.Errorf("a Result file: %v", err)
	}
	empty := *cand
	empty.Scenarios = []result.Scenario{{Name: "a"}}
	hollow := filepath.Join(dir, "hollow.json")
	result.Write(hollow, &empty)
	var log bytes.Buffer
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none.json"), "baseline: "},
		{hollow, "baseline " + hollow + ": "},
		{t.TempDir(), "for any scenario of new.json"},
	} {
		_, err := LoadBase(c.path, cand, "new.json", &log)
		if !errors.As(err, new(*InputError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadBase(%s) = %v, want an InputError with %q", c.path, err, c.want)
		}
	}
	if !strings.Contains(log.String(), "no baseline for scenario a on A") {
		t.Errorf("the empty directory's missing scenario is not named: %q", log.String())
	}
}

// CheckRounds refuses, before anything runs, -o - for several targets
// and overrides no run could take.
func TestCheckRounds(t *testing.T) {
	ts, _ := fakes("A", "B")
	root := t.TempDir()
	if err := CheckRounds(ts, spec(1), filepath.Join(t.TempDir(), "r.json"), root, &bytes.Buffer{}); err != nil {
		t.Errorf("a good matrix refused: %v", err)
	}
	bad := spec(1)
	bad.Trials = -1
	taken := t.TempDir()
	os.Mkdir(filepath.Join(taken, "r-A.json"), 0o755)
	for name, err := range map[string]error{
		"-o -":       CheckRounds(ts, spec(1), StdoutPath, root, &bytes.Buffer{}),
		"trials -1":  CheckRounds(ts, bad, "", root, &bytes.Buffer{}),
		"unwritable": CheckRounds(ts, spec(1), filepath.Join(taken, "r.json"), root, &bytes.Buffer{}),
	} {
		if !errors.As(err, new(*InputError)) {
			t.Errorf("%s: %v, want an InputError", name, err)
		}
	}
}

// A gate against stored baselines says before its run, in one line, each
// gated test whose threshold lies inside the nuisance band the
// baseline's seeded boots show: the run cannot decide it.
func TestStoredGateTellsUnreachableBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	ts, log := fakes("A")
	sp := spec(1)
	base := &result.Result{Schema: result.SchemaVersion, Target: result.Target{Name: "A", Kind: "host"}, Environment: result.Environment{KernelRelease: "6.1.0"}}
	m := &result.Metric{Unit: "ns"}
	for i, v := range []uint64{5000, 6500, 5000, 6500} {
		h := hist.New()
		h.RecordN(v, 1000)
		m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h), Seed: uint64(i + 1), Ops: 1000, BootID: string(rune('a' + i))})
	}
	def := &scenarios.Scenario{Name: "a", Gate: result.GatePolicy{"m": {"p50": 0.02}}}
	raw, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	base.Scenarios = []result.Scenario{{Name: "a", Trials: 4, Definition: raw, Params: scenarios.Params(def), Metrics: map[string]*result.Metric{"m": m}}}
	if _, err := baseline.Save(dir, base); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	g := StoredGate{Store: Store{Path: dir, Log: &stderr}, Options: report0()}
	if _, err := g.Run(context.Background(), ts[0], sp, ""); err != nil {
		t.Fatal(err)
	}
	want := "gate: a m p50: unreachable: its threshold 2% is inside the nuisance band its baseline shows (±14.0% across 4 seeds)"
	if i := strings.Index(stderr.String(), want); i < 0 || len(*log) == 0 {
		t.Errorf("stderr:\n%s\nwant %q before the run", stderr.String(), want)
	}
}
