package ufunc

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// parseEntry parses "ufunc: ..." as the scenario parser hands it over.
func parseEntry(t *testing.T, src string) (tracing.Config, error) {
	return tracingtest.ParseEntry(t, Tracer, "dir/test.yaml", src, tracing.Workload{})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *Config
		wantErr   string
	}{
		{name: "flow", src: "ufunc: {binary: ./server, symbols: [handle, parse]}", want: &Config{Binary: "dir/server", Symbols: []string{"handle", "parse"}}},
		{name: "absolute", src: "ufunc: {binary: /srv/server, symbols: [handle]}", want: &Config{Binary: "/srv/server", Symbols: []string{"handle"}}},
		{name: "in PATH", src: "ufunc: {binary: server, symbols: [handle]}", want: &Config{Binary: "server", Symbols: []string{"handle"}}},
		{name: "block", src: "ufunc:\n  binary: libc.so.6\n  symbols:\n    - malloc\n", want: &Config{Binary: "libc.so.6", Symbols: []string{"malloc"}}},
		{name: "none", src: "ufunc:", wantErr: "dir/test.yaml:1:1: the ufunc tracer needs binary"},
		{name: "no symbols", src: "ufunc: {binary: ./server}", wantErr: "dir/test.yaml:1:1: the ufunc tracer needs symbols"},
		{name: "empty binary", src: `ufunc: {binary: "", symbols: [f]}`, wantErr: "dir/test.yaml:1:17: binary is empty"},
		{name: "empty symbols", src: "ufunc: {binary: ./server, symbols: []}", wantErr: "dir/test.yaml:1:36: symbols is empty"},
		{name: "symbols not a list", src: "ufunc: {binary: ./server, symbols: handle}", wantErr: "dir/test.yaml:1:36: symbols must be a list"},
		{name: "bad symbol", src: "ufunc: {binary: ./server, symbols: [handle, 3]}", wantErr: "dir/test.yaml:1:45: symbols must be function names"},
		{name: "twice", src: "ufunc: {binary: ./server, symbols: [f, f]}", wantErr: `dir/test.yaml:1:40: symbol "f" listed twice`},
		{name: "unknown key", src: "ufunc: {binary: ./server, symbols: [f], pid: 3}", wantErr: `dir/test.yaml:1:41: unknown key "pid" in tracers.ufunc; allowed: binary, symbols`},
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
			if diff := cmp.Diff(tc.want, c); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigMetrics(t *testing.T) {
	c := &Config{Binary: "/srv/app", Symbols: []string{"parse", "handle"}}
	if diff := cmp.Diff([]string{"ufunc.app:parse", "ufunc.app:handle"}, c.Metrics()); diff != "" {
		t.Error(diff)
	}
	if diff := cmp.Diff(&Config{Binary: "app", Symbols: []string{"handle", "parse"}}, c.Canonical()); diff != "" {
		t.Error(diff)
	}
}

// TestProbeConfig loads the tracer with the config tailgate doctor uses:
// getpid of the C library, which this process (Go, static) never calls.
func TestProbeConfig(t *testing.T) {
	tr, err := Tracer.New(Tracer.Probe, tracing.TracerOptions{TGID: uint32(os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if diff := cmp.Diff(Tracer.Probe.Metrics(), tr.Metrics()); diff != "" {
		t.Error(diff)
	}
}
