package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/history"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// ErrNoSeries: no record of a store has a series the selection picks.
var ErrNoSeries = errors.New("no series to test")

// DetectChanges reads the series sel picks from v (report.ReadSeries) and
// detects their change points (changepoint.Detect). A store with none to
// test is ErrNoSeries; any other error is a record's that does not read.
func DetectChanges(v *history.View, sel report.Selection, opt changepoint.Options) (*changepoint.Report, error) {
	series, err := report.ReadSeries(v, sel)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("%w: the store is empty, or no record has metric %s at %s", ErrNoSeries, orGated(sel.Metrics), orGated(sel.Percentiles))
	}
	return changepoint.Detect(series, opt), nil
}

// orGated names a selection's list, or what an empty one takes: the
// gated metrics and percentiles.
func orGated(xs []string) string {
	if len(xs) == 0 {
		return "(gated)"
	}
	return strings.Join(xs, ",")
}
