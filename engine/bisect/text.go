package bisect

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// WriteText writes how the bisect ended: the first bad commit with the
// summary of its gate against the good build, the commits it is one of
// when skipped ones hide it, or why there was nothing to bisect.
func (o *Outcome) WriteText(w io.Writer, keep bool) error {
	var b strings.Builder
	switch {
	case !o.Found() && o.Check.Measure != nil && o.Check.Measure.Verdict == stats.Inconclusive:
		fmt.Fprintf(&b, "no regression to bisect: the gate of bad %s against good %s was inconclusive (%s); a longer --budget after -- may decide\n",
			Short(o.Bad), Short(o.Good), Describe(o.Check.Measure))
	case !o.Found():
		fmt.Fprintf(&b, "no regression to bisect: bad %s against good %s is %s\n", Short(o.Bad), Short(o.Good), Describe(o.Check.Measure))
	case o.First != "" && o.Step(o.First) == nil:
		fmt.Fprintf(&b, "first bad commit: %s\n", o.First)
	case o.First != "":
		s := o.Step(o.First)
		fmt.Fprintf(&b, "first bad commit: %s %s\n", o.First, s.Subject)
		fmt.Fprintf(&b, "  gated against good %s in one job: %s\n", Short(o.Good), s.Measure.Headline)
		for _, v := range s.Measure.Gated {
			fmt.Fprintf(&b, "  %s\n", verdictLine(v))
		}
		if keep {
			fmt.Fprintf(&b, "  its report: %s\n", s.Dir)
		}
	default:
		fmt.Fprintf(&b, "first bad commit: one of these %d, which skipped commits keep git bisect from telling apart:\n", len(o.Candidates))
		for _, c := range o.Candidates {
			s := o.Step(c)
			if s == nil {
				fmt.Fprintf(&b, "  %s: not measured\n", c)
				continue
			}
			fmt.Fprintf(&b, "  %s %s: %s, %s\n", Short(c), s.Subject, s.Mark, s.describe())
		}
	}
	skipped := 0
	for _, s := range o.Steps {
		if s.Mark == Skip {
			skipped++
		}
	}
	fmt.Fprintf(&b, "%d steps (%d skipped) after the check of bad %s, in %s\n", len(o.Steps), skipped, Short(o.Bad), o.Elapsed.Round(time.Second))
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is a step's result in a few words.
func (s *Step) describe() string {
	if s.Build != nil {
		return "does not build"
	}
	return Describe(s.Measure)
}

// verdictLine is a gated verdict as the report's row reads:
// "ufunc.work:tg_op p99: 21.3µs → 64.1µs, ×3.02 [×2.95, ×3.10], regression, 12 rounds".
func verdictLine(v render.JSONVerdict) string {
	ns := func(f *float64) string {
		if f == nil {
			return "-"
		}
		return render.FormatNs(*f)
	}
	s := fmt.Sprintf("%s %s: %s → %s, %s, %s", v.Metric, v.Percentile, ns(v.BaseNs), ns(v.CandNs), formatRatio(&v), v.Verdict)
	if v.Rounds > 0 {
		s += fmt.Sprintf(", %d rounds", v.Rounds)
	}
	return s
}
