package report

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultThresholds are the thresholds used when neither the scenario nor
// the command line sets one. max is absent: one event decides it, so it is
// reported but not gated.
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
		return Threshold{}, fmt.Errorf("threshold %q: unknown percentile %q (want p50, p90, p99, p99.9 or max)", s, t.Percentile)
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
	if pct {
		f /= 100
	} else if f > 1 {
		return Threshold{}, fmt.Errorf("threshold %q: %s as a fraction is more than 100%%; did you mean %s%%?", s, val, val)
	}
	if f < 0 || f != f {
		return Threshold{}, fmt.Errorf("threshold %q: must not be negative (0%% flags any confirmed change; off disables)", s)
	}
	t.Value = f
	return t, nil
}

// ResolveThreshold returns the threshold for metric at percentile and
// whether it is gated. Precedence, first match wins: a command-line
// override naming the metric, a command-line override for the percentile,
// the scenario's gate block for the metric, its "*" entry, the default.
func ResolveThreshold(metric, percentile string, gate map[string]map[string]float64, cli []Threshold) (value float64, gated bool) {
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
	v, ok := DefaultThresholds[percentile]
	return v, ok
}
