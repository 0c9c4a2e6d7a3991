//go:build linux && amd64

package scenarios

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ref returns a pointer to v, for the timer's optional fields.
func ref[T any](v T) *T { return &v }

// readDMALatency reads the idle-state bound the kernel holds now, in µs.
func readDMALatency(t *testing.T) int32 {
	t.Helper()
	b, err := os.ReadFile(dmaLatencyPath)
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("needs " + dmaLatencyPath + " (PM QoS)")
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4 {
		t.Fatalf("%s reads %d bytes, want 4", dmaLatencyPath, len(b))
	}
	return int32(binary.NativeEndian.Uint32(b))
}

// openDMALatencyFds counts this process's descriptors open on
// /dev/cpu_dma_latency.
func openDMALatencyFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == dmaLatencyPath {
			n++
		}
	}
	return n
}

// lockedKiB reads VmLck from /proc/self/status.
func lockedKiB(t *testing.T) string {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmLck:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no VmLck in /proc/self/status")
	return ""
}

// TestTimerHolds runs the timer with its cyclictest settings and checks
// that they hold while the workload is open and are let go at Close.
func TestTimerHolds(t *testing.T) {
	before := readDMALatency(t)
	tests := []struct {
		name   string
		w      Workload
		during int32 // the bound while the workload is open
		locked bool
	}{
		{"defaults", Workload{Kind: "timer", Priority: 10}, 0, true},
		{"dma_latency 7", Workload{Kind: "timer", MLock: ref(false), DMALatency: ref(7)}, min(before, 7), false},
		{"left alone", Workload{Kind: "timer", MLock: ref(false), DMALatency: ref(DMALatencyLeave)}, before, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewWorkload(tt.w)
			if err != nil {
				t.Fatal(err)
			}
			if got := readDMALatency(t); got != tt.during {
				t.Errorf("%s while open = %d, want %d", dmaLatencyPath, got, tt.during)
			}
			if got := lockedKiB(t); (got != "0 kB") != tt.locked {
				t.Errorf("VmLck while open = %s, want locked %v", got, tt.locked)
			}
			st := runFor(t, r, 50*time.Millisecond)
			if st.Ops == 0 || st.Metrics[MetricTimerLateness].Count() != st.Ops {
				t.Errorf("stats %+v", st)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if n := openDMALatencyFds(t); n != 0 {
				t.Errorf("%d descriptors on %s after Close", n, dmaLatencyPath)
			}
			if got := readDMALatency(t); got != before {
				t.Errorf("%s after Close = %d, want %d as before", dmaLatencyPath, got, before)
			}
			if got := lockedKiB(t); got != "0 kB" {
				t.Errorf("VmLck after Close = %s, want 0 kB", got)
			}
		})
	}
}

// TestTimerParams: the digest of a timer scenario counts the defaults as
// written out, and tells mlock and dma_latency apart; the scenario's JSON
// records them.
func TestTimerParams(t *testing.T) {
	def := &Scenario{Workload: Workload{Kind: "timer"}, Duration: time.Second}
	explicit := &Scenario{Workload: Workload{Kind: "timer", MLock: ref(true), DMALatency: ref(0)}, Duration: time.Second}
	if Params(def) != Params(explicit) {
		t.Error("defaults hash differently from the same values written out")
	}
	for _, w := range []Workload{
		{Kind: "timer", MLock: ref(false)},
		{Kind: "timer", DMALatency: ref(DMALatencyLeave)},
	} {
		if Params(&Scenario{Workload: w, Duration: time.Second}) == Params(def) {
			t.Errorf("%+v hashes as the defaults", w)
		}
	}
	w := Workload{Kind: "timer"}.withDefaults()
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"kind":"timer","threads":1,"interval":1000000,"mlock":true,"dma_latency":0}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var back Workload
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
