package report_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// A scenario's resolved gate wins over its definition's block, which wins
// over the default; a definition that does not read is warned of.
func TestGatePolicy(t *testing.T) {
	def := []byte(`{"name":"s","gate":{"syscall.read":{"p50":0.05}}}`)
	for _, c := range []struct {
		name     string
		s        result.Scenario
		want     result.GatePolicy
		wantWarn bool
	}{
		{"resolved gate wins", result.Scenario{Gate: map[string]map[string]float64{"*": {"p90": 0.2}}, Definition: def}, map[string]map[string]float64{"*": {"p90": 0.2}}, false},
		{"older result: the definition's block", result.Scenario{Definition: def}, map[string]map[string]float64{"syscall.read": {"p50": 0.05}}, false},
		{"no block: p99 of every metric", result.Scenario{Definition: []byte(`{"name":"s"}`)}, map[string]map[string]float64{"*": {"p99": 0.10}}, false},
		{"no definition", result.Scenario{}, map[string]map[string]float64{"*": {"p99": 0.10}}, false},
		{"unreadable definition", result.Scenario{Definition: []byte(`{"gate":{"*":"p99"}}`)}, map[string]map[string]float64{"*": {"p99": 0.10}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, warn := report.GatePolicy(&c.s)
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if (warn != nil) != c.wantWarn || (warn != nil && warn.Kind != report.WarnDefinitionUnreadable) {
				t.Errorf("warning %+v, want one: %v", warn, c.wantWarn)
			}
		})
	}
}

// The statistics' threshold cap and a Result's own check agree.
func TestMaxThresholdsAgree(t *testing.T) {
	if stats.MaxThreshold != result.MaxThreshold {
		t.Errorf("stats.MaxThreshold %v, result.MaxThreshold %v: a threshold one accepts the other refuses", stats.MaxThreshold, result.MaxThreshold)
	}
}
