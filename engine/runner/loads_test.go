package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
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

// The parent attaches a scenario's kept tracers once: its workers count
// through the parent's links, each read once, and make none of their own;
// the tracers are detached, still loaded, once the Run ends, and unloaded
// once the Loads close.
func TestWorkersCountThroughTheParentsLinks(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	loads := NewLoads()
	defer loads.Close()
	s := syscallRead(t, 3, 100*time.Millisecond)
	stop := make(chan struct{})
	seen := make(chan map[link.ID]ebpf.ProgramID)
	go func() { seen <- watchLinks(loads, stop) }()
	res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}, Loads: loads})
	close(stop)
	links := <-seen
	if err != nil {
		t.Fatal(err)
	}
	sr := res.Find(s.Name)
	if sr == nil || sr.Trials != 3 {
		t.Fatalf("want 3 trials, got %+v", sr)
	}
	for i, tr := range sr.Metrics["syscall.read"].Trials {
		if tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops*105/100 {
			t.Errorf("trial %d: counted %d of the workload's %d reads", i+1, tr.Summary.Count, tr.Ops)
		}
	}
	var ids []ebpf.ProgramID
	for _, objs := range loads.by {
		ids = append(ids, objs.ProgramIDs()...)
	}
	perProgram := map[ebpf.ProgramID]int{}
	for _, p := range links {
		perProgram[p]++
	}
	if len(perProgram) != len(ids) {
		t.Errorf("links to %d of the %d kept programs while the trials ran, want all", len(perProgram), len(ids))
	}
	for p, n := range perProgram {
		if n != 1 {
			t.Errorf("program %d had %d links while the trials ran, want the parent's one", p, n)
		}
	}
	if left := linksTo(t, ids, 0); len(left) != 0 {
		t.Errorf("links %v left after the Run, want its tracers detached", left)
	}
	loads.Close()
	if left, err := tracing.StillLoaded(ids, 5*time.Second); err != nil || len(left) > 0 {
		t.Errorf("kept programs %v still loaded after the Loads closed (%v)", left, err)
	}
}

// watchLinks returns every link the kernel had, until stop, to the
// programs loads keeps, looked at every 5 ms.
func watchLinks(loads *Loads, stop <-chan struct{}) map[link.ID]ebpf.ProgramID {
	seen := map[link.ID]ebpf.ProgramID{}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		loads.mu.Lock()
		var ids []ebpf.ProgramID
		for _, objs := range loads.by {
			if objs != nil {
				ids = append(ids, objs.ProgramIDs()...)
			}
		}
		loads.mu.Unlock()
		var it link.Iterator
		for it.Next() {
			if info, err := it.Link.Info(); err == nil && slices.Contains(ids, info.Program) {
				seen[it.ID] = info.Program
			}
		}
		select {
		case <-stop:
			return seen
		case <-tick.C:
		}
	}
}

// linksTo returns the kernel's links to the programs of ids, by link,
// waiting up to a second for there to be want of them: a closed link
// goes after the kernel's grace period.
func linksTo(t *testing.T, ids []ebpf.ProgramID, want int) map[link.ID]ebpf.ProgramID {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		got := map[link.ID]ebpf.ProgramID{}
		var it link.Iterator
		for it.Next() {
			if info, err := it.Link.Info(); err == nil && slices.Contains(ids, info.Program) {
				got[it.ID] = info.Program
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if len(got) == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}
