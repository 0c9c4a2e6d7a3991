package tracers

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// TestDeclaredMetricsAreRead loads every registered tracer with its probe
// config on this kernel and checks that the metrics its config declares
// (what scenarios, gates and tailgate list name) are exactly, and in the
// same order, the ones the loaded tracer reads.
func TestDeclaredMetricsAreRead(t *testing.T) {
	if err := tracing.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	for _, k := range All {
		t.Run(k.Name, func(t *testing.T) {
			if k.Probe == nil {
				t.Fatal("no Probe config")
			}
			declared := k.Probe.Metrics()
			if len(declared) == 0 {
				t.Fatal("the probe config declares no metrics")
			}
			tr, err := k.New(k.Probe, tracing.TracerOptions{TGID: uint32(os.Getpid())})
			if errors.Is(err, ebpf.ErrNotSupported) {
				// kfunc where there are neither BPF trampolines nor
				// kprobes: the tracer runs in VMs only, and
				// bpf/kfunc's TestVariantsInDebianVM reads its metrics
				// there. No other tracer may be missing here.
				if k.Name != "kfunc" {
					t.Fatalf("%s cannot load on this kernel: %v", k.Name, err)
				}
				testenv.Missing(t, testenv.Feature{Name: "fentry or kprobe (checked in Debian guests)", Present: testenv.KernelConfig("CONFIG_KPROBES")}, err)
			}
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			defer tr.Close()
			if tr.Name() != k.Name {
				t.Errorf("loaded tracer is named %q, registered %q", tr.Name(), k.Name)
			}
			// Some events, so that the maps have been written to.
			for range 100 {
				unix.Getppid()
			}
			time.Sleep(time.Millisecond)
			hs, err := tr.Read()
			if err != nil {
				t.Fatal(err)
			}
			var read []string
			for m := range hs {
				read = append(read, m)
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(declared)), slices.Sorted(slices.Values(read))); diff != "" {
				t.Errorf("Read() metrics differ from the declared ones (-declared +read):\n%s", diff)
			}
			if diff := cmp.Diff(declared, tr.Metrics()); diff != "" {
				t.Errorf("Metrics() differ from the declared ones (-declared +loaded):\n%s", diff)
			}
		})
	}
}

// TestListedMetrics checks that what tailgate list shows of each tracer's
// metrics (Kind.Metrics, names or patterns) covers what its configs
// declare, and that the metrics carry the tracer's name as prefix.
func TestListedMetrics(t *testing.T) {
	for _, k := range All {
		t.Run(k.Name, func(t *testing.T) {
			var res []*regexp.Regexp
			for _, m := range k.Metrics {
				p := regexp.QuoteMeta(m)
				p = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(p, ".+")
				res = append(res, regexp.MustCompile("^"+p+"$"))
			}
			for _, m := range k.Probe.Metrics() {
				if !strings.HasPrefix(m, k.Name+".") {
					t.Errorf("metric %q does not start with %q", m, k.Name+".")
				}
				if !slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(m) }) {
					t.Errorf("metric %q matches none of the listed %q", m, k.Metrics)
				}
			}
			for _, m := range k.Probe.Primary() {
				if !slices.Contains(k.Probe.Metrics(), m) {
					t.Errorf("primary metric %q is not one of the metrics", m)
				}
			}
		})
	}
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All {
		if k.Name == "" || k.Description == "" || k.Parse == nil || k.Decode == nil || k.New == nil || len(k.Metrics) == 0 {
			t.Errorf("tracer %q: Name, Description, Metrics, Parse, Decode and New are required", k.Name)
		}
		if seen[k.Name] {
			t.Errorf("tracer %q registered twice", k.Name)
		}
		seen[k.Name] = true
		if got, ok := Lookup(k.Name); !ok || got.Name != k.Name {
			t.Errorf("Lookup(%q) = %q, %v", k.Name, got.Name, ok)
		}
	}
	if _, ok := Lookup("nosuch"); ok {
		t.Error("Lookup(nosuch) found a tracer")
	}
}
