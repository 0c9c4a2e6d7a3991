package changes

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/history"
)

// ErrNoSeries: no record of a store has a series the selection picks.
var ErrNoSeries = errors.New("no series to test")

// Find reads the series sel picks from v (ReadSeries) and detects their
// change points (Detect). A store with none to test is ErrNoSeries; any
// other error is a record's that does not read.
func Find(v *history.View, sel Selection, opt Options) (*Report, error) {
	series, err := ReadSeries(v, sel)
	if err != nil {
		return nil, err
	}
	if len(series) == 0 {
		return nil, fmt.Errorf("%w: the store is empty, or no record has metric %s at %s", ErrNoSeries, orGated(sel.Metrics), orGated(sel.Percentiles))
	}
	return Detect(series, opt), nil
}

// orGated names a selection's list, or what an empty one takes: the
// gated metrics and percentiles.
func orGated(xs []string) string {
	if len(xs) == 0 {
		return "(gated)"
	}
	return strings.Join(xs, ",")
}
