package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// How runs, rounds and gates show their progress (internal/progress):
// a run counts trials, rounds count rounds; each step is the status of
// the bar, each finished trial a line naming what is gated of what it
// measured (every metric with -v), each look of a gate a line and the
// bar's verdicts.

// gatedMetrics is each scenario's gated metrics by name, in order: what
// a trial's progress line names.
type gatedMetrics map[string][]string

// gatedOf is the gated metrics of ss.
func gatedOf(ss []*scenarios.Scenario) gatedMetrics {
	g := gatedMetrics{}
	for _, s := range ss {
		g[s.Name] = slices.Sorted(maps.Keys(scenarios.GatePolicy(s)))
	}
	return g
}

// stepProgress shows e, a step of a trial of scenario (as named for
// progress) on what label says (a target, a round), on p: a step is the
// bar's status, a finished trial a line, a skipped scenario a line that
// stays.
func stepProgress(p *progress.Reporter, label, scenario string, e runner.Event, gated gatedMetrics) {
	at := label + ": " + scenario
	switch {
	case e.Phase == runner.PhaseAttach:
		p.Status(at + ": attaching tracers")
	case e.Phase == runner.PhaseWarmup:
		p.Status(at + ": warmup")
	case e.Phase == runner.PhaseSkipped:
		p.Line(at + ": skipped: " + e.Detail)
	case e.Phase == runner.PhaseTrial && e.Measured == nil:
		p.Status(at + ": " + trialOf(e))
	case e.Phase == runner.PhaseTrial:
		done := at + ": " + trialOf(e) + " done: "
		p.Trial(done+e.Measured.Text(gated[e.Scenario]), done+e.Measured.Text(nil))
	}
}

// trialOf names e's trial: "trial 3/10", or "trial" when it is the one
// trial of a round.
func trialOf(e runner.Event) string {
	if e.Trials <= 1 {
		return "trial"
	}
	return fmt.Sprintf("trial %d/%d", e.Trial, e.Trials)
}

// runProgress shows a run's trials on p, counting each finished one (a
// skipped scenario's as well): "host: syscall-read (1/2): trial 3/10
// done: ...".
func runProgress(req runner.Request, p *progress.Reporter) func(runner.Event) {
	gated := gatedOf(req.Scenarios)
	trialsOf := func(name string) int {
		for _, s := range req.Scenarios {
			if s.Name == name {
				return req.Resolve(s).Trials
			}
		}
		return 0
	}
	return func(e runner.Event) {
		stepProgress(p, req.Target.Name, fmt.Sprintf("%s (%d/%d)", e.Scenario, e.Index, e.Count), e, gated)
		switch {
		case e.Phase == runner.PhaseSkipped:
			p.Add(trialsOf(e.Scenario))
		case e.Phase == runner.PhaseTrial && e.Measured != nil:
			p.Add(1)
		}
	}
}

// plannedTrials is the trials req runs: each scenario's, resolved.
func plannedTrials(req runner.Request) int {
	n := 0
	for _, s := range req.Scenarios {
		n += req.Resolve(s).Trials
	}
	return n
}

// PlanTrials sets on p the trials spec runs on targets (their shares of
// the work, work[i]; nil for spec's scenarios on each): a run's plan.
func PlanTrials(p *progress.Reporter, targets []Target, work [][]*scenarios.Scenario, spec Spec) {
	n := 0
	for i, t := range targets {
		if work != nil {
			spec.Scenarios = work[i]
		}
		n += plannedTrials(spec.request(t.Name()))
	}
	p.Plan(n, "trials")
}

// lookLine words look k of looks after round r for progress: the tally,
// then each gated test's verdict so far.
func lookLine(k, looks, r int, rep *report.Report) (line, verdicts string) {
	verdicts = lookVerdicts(rep, k == looks)
	line = fmt.Sprintf("look %d/%d after round %d: %s", k, looks, r, stoppingCounts(rep.Stopping(false)))
	if verdicts != "" {
		line += " (" + verdicts + ")"
	}
	return line, verdicts
}

// lookVerdicts words each gated test's verdict at a look: "tcp.rr p99
// no change, net.tcp.deliver p99 undecided" (inconclusive at the last
// look), the scenario named first when there are several.
func lookVerdicts(rep *report.Report, last bool) string {
	var out []string
	for _, s := range rep.Scenarios {
		for _, v := range s.Verdicts {
			if !v.Gated {
				continue
			}
			name := v.Metric + " " + v.Quantile
			if len(rep.Scenarios) > 1 {
				name = s.Name + " " + name
			}
			kind := string(v.Kind)
			if v.Kind == stats.Inconclusive && !last {
				kind = "undecided" // the next look may decide it
			}
			out = append(out, name+" "+kind)
		}
	}
	return strings.Join(out, ", ")
}
