package request

import (
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// request: takes queue, a boolean, and nothing else; queue adds
// request.queue, and request.server alone is primary either way.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ name, src, metrics, wantErr string }{
		{"null", "request:", "request.server", ""},
		{"empty", "request: {}", "request.server", ""},
		{"queue", "request: {queue: true}", "request.server request.queue", ""},
		{"no queue", "request: {queue: false}", "request.server", ""},
		{"queue not a boolean", "request: {queue: yes-please}", "", `test.yaml:1:18: queue must be true or false, got a string "yes-please"`},
		{"another key", "request: {port: 80}", "", `test.yaml:1:11: unknown key "port" in tracers.request`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tracingtest.ParseEntry(t, Tracer, "test.yaml", tc.src, tracing.Workload{})
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(c.Metrics(), " "); got != tc.metrics {
				t.Errorf("metrics %s, want %s", got, tc.metrics)
			}
			if got := strings.Join(c.Primary(), " "); got != MetricServer {
				t.Errorf("primary %s, want %s", got, MetricServer)
			}
		})
	}
}
