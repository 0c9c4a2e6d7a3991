package tracing_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

type fixedConfig struct{}

func (*fixedConfig) Metrics() []string { return []string{"fixed.a", "fixed.b"} }
func (*fixedConfig) Primary() []string { return []string{"fixed.a"} }

func TestNoOptions(t *testing.T) {
	k := tracing.NoOptions[fixedConfig](tracing.Kind{Name: "fixed", Description: "kept"})
	if k.Name != "fixed" || k.Description != "kept" {
		t.Errorf("the entry's own fields changed: %q, %q", k.Name, k.Description)
	}
	if _, ok := k.Probe.(*fixedConfig); !ok {
		t.Errorf("Probe is a %T, want *fixedConfig", k.Probe)
	}
	for _, tc := range []struct{ name, src, wantErr string }{
		{"null", "fixed:", ""},
		{"empty", "fixed: {}", ""},
		{"a key", "fixed: {every: 2}", `t.yaml:1:9: unknown key "every" in tracers.fixed; the fixed tracer has no options: write fixed: {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tracingtest.ParseEntry(t, k, "t.yaml", tc.src, tracing.Workload{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"fixed.a", "fixed.b"}, c.Metrics()); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
	c, err := k.Decode([]byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*fixedConfig); !ok {
		t.Errorf("Decode gives a %T, want *fixedConfig", c)
	}
}
