package irq

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/rlimit"
	"github.com/google/go-cmp/cmp"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

// parseEntry parses "irq: ..." as the scenario parser hands it over.
func parseEntry(t *testing.T, src string) (tracing.Config, error) {
	return tracingtest.ParseEntry(t, Tracer, "test.yaml", src, tracing.Workload{})
}

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *Config
		wantErr   string
	}{
		{name: "discover", src: "irq:", want: &Config{}},
		{name: "empty mapping", src: "irq: {}", want: &Config{}},
		{name: "names", src: "irq: {irqs: [virtio1-req.0, 'ACPI:Ged', 'PCIe PME']}", want: &Config{Irqs: []string{"virtio1-req.0", "ACPI:Ged", "PCIe PME"}}},
		{name: "block list", src: "irq:\n  irqs:\n    - ttyS0\n    - ACPI:Ged\n  cpus: [3, 1]\n", want: &Config{Irqs: []string{"ttyS0", "ACPI:Ged"}, CPUs: []int{3, 1}}},
		{name: "colon unquoted", src: "irq: {irqs: [ACPI:Ged]}", wantErr: "test.yaml:1:14: irqs must be names, got a mapping; quote a name with a colon: 'ACPI:Ged'"},
		{name: "numeric name", src: "irq: {irqs: [8042]}", want: &Config{Irqs: []string{"8042"}}},
		{name: "empty irqs", src: "irq: {irqs: []}", wantErr: "test.yaml:1:13: irqs is empty; name at least one, or leave irqs out"},
		{name: "not a list", src: "irq: {irqs: ttyS0}", wantErr: "test.yaml:1:13: irqs must be a list of irq action names"},
		{name: "twice", src: "irq: {irqs: [a, a]}", wantErr: `test.yaml:1:17: irq "a" listed twice`},
		{name: "long", src: "irq: {irqs: [" + strings.Repeat("n", 32) + "]}", wantErr: "test.yaml:1:14: irq name"},
		{name: "too many", src: "irq: {irqs: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]}", wantErr: "test.yaml:1:13: 17 irqs; the tracer times at most 16"},
		{name: "bad cpu", src: "irq: {cpus: [0, 1024]}", wantErr: "test.yaml:1:17: a CPU must be from 0 to 1023, got 1024"},
		{name: "cpu twice", src: "irq: {cpus: [1, 1]}", wantErr: "test.yaml:1:17: CPU 1 listed twice"},
		{name: "cpu not a number", src: "irq: {cpus: [one]}", wantErr: "test.yaml:1:14: a CPU must be an integer"},
		{name: "empty cpus", src: "irq: {cpus: []}", wantErr: "test.yaml:1:13: cpus is empty"},
		{name: "unknown key", src: "irq: {vectors: [net_rx]}", wantErr: `test.yaml:1:7: unknown key "vectors" in tracers.irq; allowed: irqs, cpus`},
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
			// A trial worker gets it back from JSON.
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

// Without irqs the registry entry loads the machine's busiest actions: the
// loaded tracer's metrics are those it reads, irq.hard.<name> each.
func TestKindDiscovers(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	want, _, err := Discover(MaxMetrics)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Tracer.New(&Config{}, tracing.TracerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if diff := cmp.Diff(Metrics(want), tr.Metrics()); diff != "" {
		t.Errorf("metrics of the discovered irqs (-want +loaded):\n%s", diff)
	}
	hs, err := tr.Read()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(tr.Metrics())), slices.Sorted(maps.Keys(hs))); diff != "" {
		t.Errorf("metrics read are not those declared (-declared +read):\n%s", diff)
	}
}

// The registry entry passes the scenario's evidence K to the tracer.
func TestKindKeepsEvidence(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := Tracer.New(&Config{}, tracing.TracerOptions{Evidence: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	fsyncs(t, diskDir(t), 10)
	evs, _, err := tr.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, m := range tr.Metrics() {
		if n := len(evs[m]); n > 3 {
			t.Errorf("%d %s events kept, at most 3 asked for", n, m)
		}
		kept += len(evs[m])
	}
	if kept == 0 {
		t.Errorf("no evidence kept of any irq during 10 fsyncs")
	}
}
