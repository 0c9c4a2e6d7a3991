package kfunc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// parseEntry parses "kfunc: ..." as the scenario parser hands it over.
func parseEntry(t *testing.T, src string) (tracing.Config, error) {
	return tracingtest.ParseEntry(t, Tracer, "test.yaml", src, tracing.Workload{})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // functions
		wantErr   string
	}{
		{name: "flow list", src: "kfunc: {functions: [vfs_read, kernel_clone]}", want: []string{"vfs_read", "kernel_clone"}},
		{name: "block list", src: "kfunc:\n  functions:\n    - vfs_read\n", want: []string{"vfs_read"}},
		{name: "compiler clone", src: "kfunc: {functions: [foo.isra.0]}", want: []string{"foo.isra.0"}},
		{name: "none", src: "kfunc:", wantErr: "test.yaml:1:1: the kfunc tracer needs functions"},
		{name: "empty", src: "kfunc: {functions: []}", wantErr: "test.yaml:1:20: functions is empty"},
		{name: "not a list", src: "kfunc: {functions: vfs_read}", wantErr: "test.yaml:1:20: functions must be a list"},
		{name: "bad name", src: "kfunc: {functions: [vfs_read, 12]}", wantErr: "test.yaml:1:31: functions must be kernel function names such as vfs_read, got an integer"},
		{name: "twice", src: "kfunc: {functions: [vfs_read, vfs_read]}", wantErr: `test.yaml:1:31: function "vfs_read" listed twice`},
		{name: "unknown key", src: "kfunc: {functions: [vfs_read], variant: kprobe}", wantErr: `test.yaml:1:32: unknown key "variant" in tracers.kfunc; allowed: functions`},
		{name: "too many", src: "kfunc: {functions: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]}", wantErr: "test.yaml:1:69: 17 functions; the tracer times at most 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseEntry(t, tc.src)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, c.(*Config).Functions); diff != "" {
				t.Errorf("functions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigMetrics(t *testing.T) {
	c := &Config{Functions: []string{"vfs_read", "kernel_clone"}}
	if diff := cmp.Diff([]string{"kfunc.vfs_read", "kfunc.kernel_clone"}, c.Metrics()); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(c.Metrics(), c.Primary()); diff != "" {
		t.Error(diff)
	}
	canon := c.Canonical().(*Config)
	if diff := cmp.Diff([]string{"kernel_clone", "vfs_read"}, canon.Functions); diff != "" || c.Functions[0] != "vfs_read" {
		t.Errorf("canonical %v, config %v", canon.Functions, c.Functions)
	}
	back, err := Tracer.Decode([]byte(`{"functions":["vfs_read"]}`))
	if err != nil || back.(*Config).Functions[0] != "vfs_read" {
		t.Errorf("decode: %v, %v", back, err)
	}
}
