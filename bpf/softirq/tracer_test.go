package softirq

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// parseEntry parses "softirq: ..." as the scenario parser hands it over.
func parseEntry(t *testing.T, src string) (tracing.Config, error) {
	return tracingtest.ParseEntry(t, Tracer, "test.yaml", src, tracing.Workload{})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *Config
		wantErr   string
	}{
		{name: "defaults", src: "softirq:", want: &Config{Vectors: DefaultVectors}},
		{name: "vectors", src: "softirq: {vectors: [net_rx, net_tx], cpus: [1]}", want: &Config{Vectors: []string{"net_rx", "net_tx"}, CPUs: []int{1}}},
		{name: "eight", src: "softirq: {vectors: [hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched]}", want: &Config{Vectors: Vectors[:8]}},
		{name: "nine", src: "softirq: {vectors: [hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, rcu]}", wantErr: "test.yaml:1:20: 9 vectors; the tracer times at most 8 (two metrics each, 16 in all)"},
		{name: "kernel spelling", src: "softirq: {vectors: [NET_RX]}", wantErr: `test.yaml:1:21: unknown softirq vector "NET_RX"; vectors: hi, timer, net_tx, net_rx, block, irq_poll, tasklet, sched, hrtimer, rcu`},
		{name: "twice", src: "softirq: {vectors: [rcu, rcu]}", wantErr: `test.yaml:1:26: vector "rcu" listed twice`},
		{name: "empty", src: "softirq: {vectors: []}", wantErr: "test.yaml:1:20: vectors is empty; name at least one, or leave vectors out for net_rx, block, timer, sched, rcu"},
		{name: "not a list", src: "softirq: {vectors: net_rx}", wantErr: "test.yaml:1:20: vectors must be a list of softirq vectors"},
		{name: "not a name", src: "softirq: {vectors: [3]}", wantErr: "test.yaml:1:21: vectors must be names of softirq vectors, got an integer"},
		{name: "bad cpu", src: "softirq: {cpus: [-1]}", wantErr: "test.yaml:1:18: a CPU must be from 0 to 1023, got -1"},
		{name: "unknown key", src: "softirq: {irqs: [a]}", wantErr: `test.yaml:1:11: unknown key "irqs" in tracers.softirq; allowed: vectors, cpus`},
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
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Tracer.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c, back); diff != "" {
				t.Errorf("JSON %s decodes to another config (-parsed +decoded):\n%s", b, diff)
			}
		})
	}
}

// The registry entry passes the scenario's evidence K to the tracer.
func TestKindKeepsEvidence(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := Tracer.New(&Config{Vectors: []string{"net_rx"}}, tracing.TracerOptions{Evidence: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tcpPingPong(t, 100, -1)
	evs, _, err := tr.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range tr.Metrics() {
		if n := len(evs[m]); n != 3 {
			t.Errorf("%d %s events kept, want the 3 asked for", n, m)
		}
	}
}
