package tcp

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// TestKindMetricsAreRead: the metrics the registry entry's config declares
// are exactly those the tracer it makes returns from Read.
func TestKindMetricsAreRead(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	c := Tracer.Probe
	tr, err := Tracer.New(c, tracing.TracerOptions{TGID: uint32(os.Getpid())})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for m := range hs {
		got = append(got, m)
	}
	slices.Sort(got)
	if diff := cmp.Diff(slices.Sorted(slices.Values(c.Metrics())), got); diff != "" {
		t.Errorf("Read's metrics differ from the config's (-declared +read):\n%s", diff)
	}
	if diff := cmp.Diff(c.Metrics(), tr.Metrics()); diff != "" {
		t.Errorf("Tracer.Metrics differs from the config's (-want +got):\n%s", diff)
	}
	for _, m := range c.Primary() {
		if !slices.Contains(c.Metrics(), m) {
			t.Errorf("primary metric %s is not among %v", m, c.Metrics())
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, yaml, err string
	}{
		{"empty mapping", "net: {}", ""},
		{"null", "net:", ""},
		{"unknown key", "net: {ports: [80]}", "x.yaml:1:7: unknown key \"ports\" in tracers.net; the net tracer has no options: write net: {}"},
		{"not a mapping", "net: [1]", "x.yaml:1:6: tracers.net must be a mapping, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tracingtest.ParseEntry(t, Tracer, "x.yaml", tt.yaml, tracing.Workload{Kind: "tcp-rr"})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Tracer.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c, back); diff != "" {
				t.Errorf("config after a JSON round trip (-parsed +decoded):\n%s", diff)
			}
		})
	}
}
