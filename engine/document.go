package engine

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// LoadResult reads a Result named on the command line as what (result,
// candidate); an unreadable one is an InputError, which names the
// tailgate document path is when it is another.
func LoadResult(path, what string) (*result.Result, error) {
	r, err := result.Load(path)
	if err != nil {
		if doc := identifyDocument(path); doc != "" {
			return nil, Inputf("%s: %s", what, doc)
		}
		return nil, &InputError{fmt.Errorf("%s: %w", what, err)}
	}
	if err := scenarios.CheckParams(r); err != nil {
		return nil, &InputError{fmt.Errorf("%s: %s: %w", what, path, err)}
	}
	return r, nil
}

// checkStored checks a stored baseline as compare needs it: one that
// gates something (report.CheckBaseline), whose scenarios' digests are
// their definitions' (scenarios.CheckParams).
func checkStored(r *result.Result) error {
	if err := report.CheckBaseline(r); err != nil {
		return err
	}
	return scenarios.CheckParams(r)
}

// LookupScenarios resolves names or paths (scenarios.LookupAll); none
// means every built-in. What does not resolve is an InputError.
func LookupScenarios(names []string) ([]*scenarios.Scenario, error) {
	ss, err := scenarios.LookupAll(names)
	if err != nil {
		return nil, &InputError{err}
	}
	return ss, nil
}

// CheckThresholds refuses a --threshold for a metric none of metrics is
// (stats.CheckThresholdMetrics): an InputError.
func CheckThresholds(ts []stats.Threshold, metrics []string) error {
	if err := stats.CheckThresholdMetrics(ts, metrics); err != nil {
		return &InputError{err}
	}
	return nil
}

// otherDocuments are the JSON documents tailgate writes that are not
// Results, each told by keys its schema requires and a Result has not,
// with what reads it instead.
var otherDocuments = []struct {
	keys       []string
	what, read string
}{
	{[]string{"headline", "candidate"}, "a comparison report (gate or compare --format json; docs/compare.schema.json)",
		"a gate's Results are what its -o FILE wrote (FILE-NAME.json, one per target); tailgate compare BASE HEAD reports on them again"},
	{[]string{"headlines", "comparisons"}, "a matrix report (matrix --format json; docs/matrix.schema.json)",
		"the Results are what matrix -o wrote; tailgate compare REF TARGET reports on two of them again"},
	{[]string{"baselines"}, "a baseline store's index (docs/baselines.schema.json)", "tailgate baseline show DIR reads its store"},
	{[]string{"failed", "checks"}, "tailgate doctor's report (docs/doctor.schema.json)", "tailgate doctor makes it again"},
	{[]string{"cached", "available"}, "tailgate kernels list's report (docs/kernels.schema.json)", "tailgate kernels list makes it again"},
	{[]string{"tracers", "workload_metrics"}, "tailgate list's catalog (docs/catalog.schema.json)", "tailgate list makes it again"},
}

// identifyDocument names the tailgate document at path when it is JSON
// but not a Result, with the command that reads it; "" otherwise.
func identifyDocument(path string) string {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil {
		return ""
	}
	has := func(ks ...string) bool {
		for _, k := range ks {
			if _, ok := keys[k]; !ok {
				return false
			}
		}
		return true
	}
	for _, d := range otherDocuments {
		if has(d.keys...) {
			return fmt.Sprintf("%s is %s, not a Result: %s", path, d.what, d.read)
		}
	}
	// show --format json writes a Result's derived view: no run times.
	if has("target", "environment", "scenarios") && !has("started") {
		return fmt.Sprintf("%s is what show --format json writes (docs/show.schema.json), not a Result: show the Result it was made from", path)
	}
	return ""
}
