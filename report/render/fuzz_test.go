package render

import (
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// fuzzResult is a small Result for seeds: one scenario, two metrics, a few
// buckets per trial, every value multiplied by scale.
func fuzzResult(target string, scale float64, trials int) *result.Result {
	sc := result.Scenario{Name: "timer-1ms", Params: "p1", Trials: trials, Definition: json.RawMessage(`{}`),
		Gate: map[string]map[string]float64{"timer.lateness": {"p99": 0.1}}, Metrics: map[string]*result.Metric{}}
	for k, name := range []string{"timer.lateness", "sched.runq"} {
		m := &result.Metric{Unit: "ns"}
		for i := range trials {
			h := hist.New()
			for j, v := range []uint64{1000, 2000, 5000, 20000} {
				h.RecordN(uint64(float64(v<<k)*scale*(1+0.01*float64(i))), uint64(400>>(2*j)))
			}
			m.Trials = append(m.Trials, result.Trial{Histogram: h, Summary: result.Summarize(h), Ops: h.Count(), Duration: 0.5})
		}
		sc.Metrics[name] = m
	}
	return &result.Result{
		Schema:      result.SchemaVersion,
		Finished:    time.Unix(1700000000, 0).UTC(),
		Target:      result.Target{Name: target, Kind: "host"},
		Environment: result.Environment{KernelRelease: "6.1.0-57-cloud-amd64", CPUModel: "test cpu", CPUs: 2},
		Scenarios:   []result.Scenario{sc},
	}
}

// compareTimeout is the watchdog of FuzzCompare: a comparison of inputs
// this small takes milliseconds.
const compareTimeout = 10 * time.Second

// FuzzCompare runs what gate and compare do with two files, on fuzzed
// Results: parse the baseline and one or two candidate shards, merge the
// shards, compare, and render the report. Nothing may panic or hang, and
// the report's verdicts must agree with its tally.
func FuzzCompare(f *testing.F) {
	enc := func(r *result.Result) []byte {
		b, err := json.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	base, cand := enc(fuzzResult("host", 1, 3)), enc(fuzzResult("host", 1.3, 2))
	f.Add(base, cand, cand, uint8(0))
	f.Add(base, base, []byte(nil), uint8(2))
	f.Add(base, cand, []byte(nil), uint8(5))
	f.Fuzz(func(t *testing.T, baseJSON, shard1, shard2 []byte, flags uint8) {
		base, err := result.Parse(baseJSON)
		if err != nil {
			return
		}
		in := []result.Input{{Path: "shard1.json"}}
		if in[0].Result, err = result.Parse(shard1); err != nil {
			return
		}
		if len(shard2) > 0 {
			r, err := result.Parse(shard2)
			if err != nil {
				return
			}
			in = append(in, result.Input{Path: "shard2.json", Result: r})
		}
		cand, err := result.Merge(in)
		if err != nil {
			if !errors.Is(err, result.ErrMismatch) && !errors.Is(err, result.ErrDuplicateTrial) {
				t.Fatalf("merge: %v is not ErrMismatch or ErrDuplicateTrial", err)
			}
			return
		}
		opt := report.Options{Resamples: 20, Force: flags&1 != 0, Stored: flags&2 != 0}
		if flags&4 != 0 {
			opt.Look, opt.Looks = 1, 3
		}
		type compared struct {
			rep *report.Report
			err error
		}
		done := make(chan compared, 1)
		go func() {
			rep, err := report.Compare(base, cand, opt)
			done <- compared{rep, err}
		}()
		var rep *report.Report
		select {
		case c := <-done:
			if c.err != nil {
				return
			}
			rep = c.rep
		case <-time.After(compareTimeout):
			t.Fatalf("Compare did not return in %v", compareTimeout)
		}
		var gated, regressions int
		for _, s := range rep.Scenarios {
			for _, v := range s.Verdicts {
				switch v.Kind {
				case stats.NoChange, stats.Regression, stats.Improvement, stats.Inconclusive, stats.NotGated:
				default:
					t.Fatalf("%s %s: verdict kind %q", v.Metric, v.Quantile, v.Kind)
				}
				if v.Gated != (v.Kind != stats.NotGated) {
					t.Fatalf("%s %s: gated %v with verdict %q", v.Metric, v.Quantile, v.Gated, v.Kind)
				}
				if (v.Kind == stats.Regression || v.Kind == stats.Improvement) && !(v.P <= v.Level) {
					t.Fatalf("%s %s: %s with P %g above its level %g", v.Metric, v.Quantile, v.Kind, v.P, v.Level)
				}
				if v.Gated {
					gated++
				}
				if v.Kind == stats.Regression {
					regressions++
				}
			}
		}
		if c := rep.Tally(); c.Gated != gated || c.Regressions != regressions {
			t.Fatalf("tally %+v, verdicts have %d gated and %d regressions", c, gated, regressions)
		}
		if rep.Failed(false) != (regressions > 0) {
			t.Fatalf("Failed = %v with %d regressions", rep.Failed(false), regressions)
		}
		for _, format := range []Format{FormatText, FormatMarkdown, FormatJSON, FormatJUnit, FormatGitHub} {
			if err := WriteReport(io.Discard, rep, format); err != nil {
				t.Fatalf("render %s: %v", format, err)
			}
		}
	})
}
