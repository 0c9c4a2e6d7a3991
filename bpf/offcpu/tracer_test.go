package offcpu

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/bpf/tracing/tracingtest"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct{ name, src, wantErr string }{
		{"null", "offcpu:", ""},
		{"empty", "offcpu: {}", ""},
		{"a key", "offcpu: {stacks: true}", `test.yaml:1:10: unknown key "stacks" in tracers.offcpu; the offcpu tracer has no options: write offcpu: {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tracingtest.ParseEntry(t, Tracer, "test.yaml", tc.src, tracing.Workload{})
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

// The registry entry passes the scenario's evidence K to the tracer.
func TestKindKeepsEvidence(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	tr, err := Tracer.New(&Config{}, tracing.TracerOptions{TGID: uint32(os.Getpid()), Threads: true, Evidence: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := tr.AddThread(unix.Gettid()); err != nil {
		t.Fatal(err)
	}
	nanosleeps(t, 10, time.Millisecond)
	evs, _, err := tr.Evidence()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(evs["offcpu.blocked"]); n != 3 {
		t.Errorf("%d offcpu.blocked events kept, want the 3 asked for", n)
	}
}
