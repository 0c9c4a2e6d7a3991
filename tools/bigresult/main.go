// Command bigresult writes a valid Result of many small trials, the
// shape that costs the most memory per byte to read: each trial's
// histogram holds one bucket. BENCHMARKS.md measures show, compare and
// the guest reply's reader on its output.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

func main() {
	nScen := flag.Int("scenarios", 50, "scenarios")
	nMetrics := flag.Int("metrics", 1, "metrics per scenario")
	nTrials := flag.Int("trials", 1000, "trials per metric")
	out := flag.String("o", "big.json", "output file")
	flag.Parse()
	if err := write(*out, *nScen, *nMetrics, *nTrials); err != nil {
		fmt.Fprintln(os.Stderr, "bigresult:", err)
		os.Exit(1)
	}
}

func write(path string, nScen, nMetrics, nTrials int) error {
	base, err := scenarios.Lookup("syscall-read")
	if err != nil {
		return err
	}
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	r := &result.Result{
		Schema:   result.SchemaVersion,
		Tailgate: result.Version{Version: "bigresult"},
		Started:  now, Finished: now,
		Target:      result.Target{Name: "host", Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.18.0", KernelVersion: "Linux", CPUModel: "cpu", CPUs: 2},
	}
	pid := 1
	for s := range nScen {
		sc := *base
		sc.Name = fmt.Sprintf("s%d", s)
		sc.Trials = nTrials
		def, err := json.Marshal(&sc)
		if err != nil {
			return err
		}
		rs := result.Scenario{Name: sc.Name, Definition: def, Params: scenarios.Params(&sc),
			Gate: scenarios.GatePolicy(&sc), Trials: nTrials, Metrics: map[string]*result.Metric{}}
		for m := range nMetrics {
			name := "syscall.read"
			if m > 0 {
				name = fmt.Sprintf("syscall.read%d", m)
			}
			met := &result.Metric{Unit: "ns"}
			for t := range nTrials {
				h := hist.New()
				h.RecordN(uint64(1000+t%7), 1+uint64(t))
				pid++
				met.Trials = append(met.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h), Ops: 1 + uint64(t), Duration: 1, PID: pid})
			}
			rs.Metrics[name] = met
		}
		r.Scenarios = append(r.Scenarios, rs)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
