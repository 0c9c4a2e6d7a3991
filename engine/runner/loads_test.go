package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Every trial's worker attaches the tracers its parent loaded once: the
// kept programs are the ones that ran through the trials, no trial counts
// another's events, and nothing is left loaded once the Loads close.
func TestTrialsAttachTracersLoadedOnce(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	stats, err := ebpf.EnableStats(unix.BPF_STATS_RUN_TIME)
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()
	loads := NewLoads()
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{syscallRead(t, 3, 150*time.Millisecond)}, Loads: loads})
	if err != nil {
		loads.Close()
		t.Fatal(err)
	}
	if len(loads.by) != 1 {
		t.Fatalf("%d scenarios loaded, want 1", len(loads.by))
	}
	var kept *tracing.Loaded
	for _, objs := range loads.by {
		kept = objs
	}
	if kept == nil || kept.Len() < 2 {
		t.Fatalf("loaded %v, want the syscall and sched tracers kept", kept)
	}
	s := res.Find("syscall-read")
	if s == nil || s.Trials != 3 {
		t.Fatalf("want 3 trials, got %+v", s)
	}
	var ops uint64
	pids := map[int]bool{}
	for i, tr := range s.Metrics["syscall.read"].Trials {
		if tr.Ops == 0 || tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops*105/100 {
			t.Errorf("trial %d: the tracer counted %d reads of the workload's %d", i+1, tr.Summary.Count, tr.Ops)
		}
		ops += tr.Ops
		pids[tr.PID] = true
	}
	if len(pids) != 3 {
		t.Errorf("trials ran in %d workers, want 3", len(pids))
	}
	var runs uint64
	ids := kept.ProgramIDs()
	for _, id := range ids {
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			t.Fatal(err)
		}
		if st, err := p.Stats(); err == nil {
			runs += st.RunCount
		}
		p.Close()
	}
	if runs < ops {
		t.Errorf("the kept programs ran %d times for %d reads: the workers attached programs of their own", runs, ops)
	}
	loads.Close()
	if left, err := tracing.StillLoaded(ids, 5*time.Second); err != nil || len(left) > 0 {
		t.Errorf("kept programs %v still loaded after the Loads closed (%v)", left, err)
	}
}

// A command of the user's, started by a worker that got the tracers'
// descriptors, inherits none of them.
func TestExecCommandInheritsNoTracerDescriptors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fds")
	s, m := execScenario(t, `  command: [sh, -c, 'for f in /proc/$$/fd/*; do readlink "$f"; done > `+out+`; exec sleep 1000']`,
		"tracers:\n  sched: {}\ntrials: 2\nwarmup: 0s\nduration: 200ms\n")
	if _, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}}); err != nil {
		t.Fatal(err)
	}
	checkNothingLeft(t, m, nil)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		t.Fatal("the command listed no descriptors")
	}
	if strings.Contains(string(b), "bpf") {
		t.Errorf("the command inherited BPF descriptors:\n%s", b)
	}
}
