package runner

import (
	"context"
	"maps"
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
// the next scenario's trials run with the first's tracers detached, and
// nothing stays loaded once the Loads close.
func TestWorkersCountThroughTheParentsLinks(t *testing.T) {
	if err := tracing.CheckPrivileges(); err != nil {
		t.Fatalf("needs root for BPF: %v", err)
	}
	loads := NewLoads()
	defer loads.Close()
	run := func(s *scenarios.Scenario) {
		t.Helper()
		res, err := Run(context.Background(), Request{Scenarios: []*scenarios.Scenario{s}, Loads: loads})
		if err != nil {
			t.Fatal(err)
		}
		sr := res.Find(s.Name)
		if sr == nil || sr.Trials != s.Trials {
			t.Fatalf("want %d trials of %s, got %+v", s.Trials, s.Name, sr)
		}
		m := sr.Metrics["syscall."+strings.TrimPrefix(s.Name, "syscall-")]
		if m == nil {
			t.Fatalf("%s: no syscall metric in %v", s.Name, slices.Collect(maps.Keys(sr.Metrics)))
		}
		for i, tr := range m.Trials {
			if tr.Summary.Count < tr.Ops*95/100 || tr.Summary.Count > tr.Ops*105/100 {
				t.Errorf("%s trial %d: counted %d of the workload's %d calls", s.Name, i+1, tr.Summary.Count, tr.Ops)
			}
		}
	}
	read := syscallRead(t, 2, 100*time.Millisecond)
	run(read)
	if len(loads.by) != 1 {
		t.Fatalf("%d scenarios loaded, want 1", len(loads.by))
	}
	var ids []ebpf.ProgramID
	for _, objs := range loads.by {
		ids = objs.ProgramIDs()
	}
	first := linksTo(t, ids, len(ids))
	if len(first) != len(ids) {
		t.Fatalf("%d links to the %d kept programs, want one each", len(first), len(ids))
	}
	run(read)
	if again := linksTo(t, ids, len(ids)); !maps.Equal(again, first) {
		t.Errorf("links %v after more trials, want the parent's %v: a worker attached its own", again, first)
	}

	write, err := scenarios.Lookup("syscall-write")
	if err != nil {
		t.Fatal(err)
	}
	w := *write
	w.Trials, w.Duration, w.Warmup = 1, 100*time.Millisecond, 0
	run(&w)
	if left := linksTo(t, ids, 0); len(left) != 0 {
		t.Errorf("syscall-read's programs still attached by %v after syscall-write ran", left)
	}
	var all []ebpf.ProgramID
	for _, objs := range loads.by {
		all = append(all, objs.ProgramIDs()...)
	}
	loads.Close()
	if left, err := tracing.StillLoaded(all, 5*time.Second); err != nil || len(left) > 0 {
		t.Errorf("kept programs %v still loaded after the Loads closed (%v)", left, err)
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
