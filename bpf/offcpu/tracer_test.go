package offcpu

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ name, src, wantErr string }{
		{"null", "offcpu:", ""},
		{"empty", "offcpu: {}", ""},
		{"a key", "offcpu: {stacks: true}", `test.yaml:1:10: unknown key "stacks" in tracers.offcpu; the offcpu tracer has no options: write offcpu: {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseBytes([]byte(tc.src), 0)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := config.NewNode("test.yaml", f.Docs[0].Body).Fields("tracers", nil)
			if err != nil || len(fs) != 1 {
				t.Fatalf("fields: %v, %v", fs, err)
			}
			c, err := Tracer.Parse(fs[0], tracing.Workload{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(c.Metrics(), " "); got != "offcpu.blocked offcpu.runnable" {
				t.Errorf("metrics %s", got)
			}
		})
	}
}
