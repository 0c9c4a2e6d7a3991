package engine

import (
	"context"

	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/report"
)

// Matrix runs spec on every target in rounds, as many as PlannedRounds,
// writes each target's Result where o.Output says (WriteTargetResults:
// what was measured is kept even when the rounds were cut short), and
// compares every target with the first, each described by descr.
func Matrix(ctx context.Context, targets []Target, descr []string, spec Spec, o RoundsOptions) (*report.Matrix, error) {
	plan := Plan{Rounds: PlannedRounds(spec), Retries: o.Retries, Jobs: o.Jobs, Progress: progress.New(o.Log, progress.Options{Mode: o.Progress})}
	results, _, runErr := Rounds(ctx, targets, spec, plan, o.Log)
	if err := WriteTargetResults(o.Output, targets, results, runErr, o.Log); err != nil {
		return nil, err
	}
	var mts []report.MatrixTarget
	for i, t := range targets {
		mts = append(mts, report.MatrixTarget{Name: t.Name(), Description: descr[i], Result: results[i]})
	}
	m, err := report.CompareMatrix(mts, o.Compare)
	if err != nil {
		return nil, CompareError(err)
	}
	return m, nil
}
