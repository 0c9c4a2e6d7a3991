package engine

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/profiles"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// ReportOutputs are where a comparison is written, as the report flags
// say: --format (Outputs), --output, --strict, -v and --pprof.
type ReportOutputs struct {
	Outputs []render.Output
	Output  string
	Strict  bool
	Verbose bool
	// Pprof is the directory of the sides' profiles; empty for none.
	Pprof string
}

// Resolve applies --output and the default, and checks every file, and
// the profiles' directory, before anything runs (render.ResolveOutputs).
func (o ReportOutputs) Resolve() ([]render.Output, error) {
	outs, err := render.ResolveOutputs(o.Outputs, o.Output, o.Strict)
	if err != nil {
		return nil, &InputError{err}
	}
	for i := range outs {
		outs[i].Verbose = o.Verbose
	}
	if o.Pprof != "" {
		if err := safefile.MkdirAll(o.Pprof, 0o755); err != nil {
			return nil, Inputf("--pprof %s: %w", o.Pprof, err)
		}
	}
	return outs, nil
}

// WriteProfiles writes the sides' profiles of m under dir (--pprof; none
// when empty): dir for a two-sided comparison, dir/TARGET for each
// target of a matrix, with a line on log saying how to see what grew.
func WriteProfiles(dir string, m *report.Matrix, log io.Writer) error {
	if dir == "" {
		return nil
	}
	for i, p := range m.Pairs {
		d := dir
		if len(m.Pairs) > 1 {
			d = filepath.Join(dir, m.Targets[i+1].Name)
		}
		written, err := profiles.WriteSides(d, p.BaseResult, p.CandResult)
		if err != nil {
			return fmt.Errorf("--pprof: %w", err)
		}
		for j, w := range written {
			if w.Side == "head" && j > 0 && written[j-1].Side == "base" && written[j-1].Metric == w.Metric && written[j-1].Scenario == w.Scenario {
				fmt.Fprintf(log, "what grew in %s's slowest requests of %s: go tool pprof -normalize -diff_base %s %s\n", w.Metric, w.Scenario, written[j-1].Path, w.Path)
			}
		}
	}
	return nil
}

// ParseResamples reads --resamples: 1 to stats.MaxResamples.
func ParseResamples(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > stats.MaxResamples {
		return 0, fmt.Errorf("want a number from 1 to %d", stats.MaxResamples)
	}
	return n, nil
}
