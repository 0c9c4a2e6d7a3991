package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultThresholds are the customary thresholds per percentile: p99's is
// the default gate's (see GatePolicy). max is absent: one event decides
// it.
var DefaultThresholds = map[string]float64{
	"p50":   0.05,
	"p90":   0.10,
	"p99":   0.10,
	"p99.9": 0.25,
}

// Threshold is one command-line override: "p99=8%" (every metric) or
// "syscall.read:p99=5%" (one metric). Off disables gating the percentile.
type Threshold struct {
	Metric     string // "" for every metric
	Percentile string
	Value      float64 // a fraction: 0.08 for 8%
	Off        bool
}

// String returns t in the syntax ParseThreshold reads.
func (t Threshold) String() string {
	v := "off"
	if !t.Off {
		v = strconv.FormatFloat(t.Value*100, 'g', -1, 64) + "%"
	}
	if t.Metric != "" {
		return t.Metric + ":" + t.Percentile + "=" + v
	}
	return t.Percentile + "=" + v
}

// ParseThreshold parses "[METRIC:]PERCENTILE=VALUE", where VALUE is a
// percentage ("8%"), a fraction ("0.08") or "off".
func ParseThreshold(s string) (Threshold, error) {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return Threshold{}, fmt.Errorf("threshold %q: want [METRIC:]PERCENTILE=VALUE, e.g. p99=10%% or syscall.read:p99=5%%", s)
	}
	var t Threshold
	t.Percentile = strings.TrimSpace(key)
	if i := strings.LastIndex(key, ":"); i >= 0 {
		t.Metric, t.Percentile = strings.TrimSpace(key[:i]), strings.TrimSpace(key[i+1:])
		if t.Metric == "" {
			return Threshold{}, fmt.Errorf("threshold %q: empty metric name before ':'", s)
		}
	}
	if _, ok := LookupPercentile(t.Percentile); !ok {
		return Threshold{}, fmt.Errorf("threshold %q: unknown percentile %q (want %s)", s, t.Percentile, PercentileHelp)
	}
	val = strings.TrimSpace(val)
	if val == "off" || val == "none" {
		t.Off = true
		return t, nil
	}
	num, pct := strings.CutSuffix(val, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: value %q is not a number (want e.g. 10%% or 0.10 or off)", s, val)
	}
	// ParseFloat reads "Inf" and "NaN": neither is a threshold a
	// confidence interval can be held to.
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return Threshold{}, fmt.Errorf("threshold %q: %s is not a finite value; want one such as 10%% or 0.10 (or off to disable)", s, val)
	}
	if pct {
		f /= 100
	} else if f > 1 {
		return Threshold{}, fmt.Errorf("threshold %q: %s as a fraction is more than 100%%; did you mean %s%%?", s, val, val)
	}
	if f < 0 {
		return Threshold{}, fmt.Errorf("threshold %q: must not be negative (0%% flags any confirmed change; off disables)", s)
	}
	if f > MaxThreshold {
		return Threshold{}, fmt.Errorf("threshold %q: above %d%%, a gate passes any slowdown; at most %d%% (off disables)", s, 100*MaxThreshold, 100*MaxThreshold)
	}
	t.Value = f
	return t, nil
}

// Policy maps a metric ("*" for every metric) and a percentile to the
// threshold that gates it (a fraction): a scenario's gate block.
type Policy = map[string]map[string]float64

// MaxThreshold is the largest threshold, as a fraction (1000%): past it a
// gate passes any slowdown. A Result's own check (result.MaxThreshold)
// holds its stored policies to the same.
const MaxThreshold = 10

// DefaultPolicy is what a scenario without a gate block gates: p99 of
// every metric at DefaultThresholds["p99"].
func DefaultPolicy() Policy { return Policy{"*": {"p99": DefaultThresholds["p99"]}} }

// ResolveThreshold returns the threshold for metric at percentile and
// whether it is gated. Precedence, first match wins: a command-line
// override naming the metric, a command-line override for the percentile
// (either may turn gating off), the gate policy for the metric, its "*"
// entry. What none of them names is not gated.
func ResolveThreshold(metric, percentile string, gate Policy, cli []Threshold) (value float64, gated bool) {
	// The last of several matching overrides wins, as with repeated flags.
	for _, wantMetric := range []string{metric, ""} {
		for i := len(cli) - 1; i >= 0; i-- {
			t := cli[i]
			if t.Metric == wantMetric && t.Percentile == percentile {
				if t.Off {
					return 0, false
				}
				return t.Value, true
			}
		}
	}
	for _, m := range []string{metric, "*"} {
		if v, ok := gate[m][percentile]; ok {
			return max(v, 0), true
		}
	}
	return 0, false
}

// CheckThresholdMetrics refuses a threshold for a metric that none of
// metrics (what the scenarios run or compared measure) is: a typo would
// otherwise be ignored and the default threshold gate in its place.
func CheckThresholdMetrics(ths []Threshold, metrics []string) error {
	for _, th := range ths {
		if th.Metric == "" || slices.Contains(metrics, th.Metric) {
			continue
		}
		known := slices.Compact(slices.Sorted(slices.Values(metrics)))
		if len(known) == 0 {
			return fmt.Errorf("--threshold %s: no scenario measures %s; they measure nothing", th, th.Metric)
		}
		return fmt.Errorf("--threshold %s: no scenario measures %s; they measure %s", th, th.Metric, strings.Join(known, ", "))
	}
	return nil
}

// PercentilesFor is Percentiles with every other percentile the policy or
// the command line thresholds, in the order of their quantiles.
func PercentilesFor(gate Policy, cli []Threshold) []Percentile {
	out := slices.Clone(Percentiles)
	add := func(name string) {
		if slices.ContainsFunc(out, func(p Percentile) bool { return p.Name == name }) {
			return
		}
		if p, ok := LookupPercentile(name); ok {
			out = append(out, p)
		}
	}
	for _, ps := range gate {
		for name := range ps {
			add(name)
		}
	}
	for _, t := range cli {
		add(t.Percentile)
	}
	slices.SortStableFunc(out, func(a, b Percentile) int { return cmp.Compare(a.Q, b.Q) })
	return out
}
