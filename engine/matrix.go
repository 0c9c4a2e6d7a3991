package engine

import (
	"context"
	"io"

	"github.com/tailgate-ci/tailgate/report"
)

// Matrix runs spec on every target in rounds (Rounds, as plan says),
// writes each target's Result where output says (WriteTargetResults:
// what was measured is kept even when the rounds were cut short), and
// compares every target with the first, each described by descr.
func Matrix(ctx context.Context, targets []Target, descr []string, spec Spec, plan Plan, output string, o report.Options, log io.Writer) (*report.Matrix, error) {
	results, _, runErr := Rounds(ctx, targets, spec, plan, log)
	if err := WriteTargetResults(output, targets, results, runErr, log); err != nil {
		return nil, err
	}
	var mts []report.MatrixTarget
	for i, t := range targets {
		mts = append(mts, report.MatrixTarget{Name: t.Name(), Description: descr[i], Result: results[i]})
	}
	m, err := report.CompareMatrix(mts, o)
	if err != nil {
		return nil, CompareError(err)
	}
	return m, nil
}
