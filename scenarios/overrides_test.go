package scenarios

import (
	"testing"
	"time"
)

// The overrides take what a scenario file takes, and nothing else.
func TestOverrides(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{{"1", 1, true}, {"1000", 1000, true}, {"0", 0, false}, {"1001", 0, false}, {"x", 0, false}} {
		if n, err := ParseTrials(c.in); (err == nil) != c.ok || n != c.want {
			t.Errorf("ParseTrials(%q) = %d, %v", c.in, n, err)
		}
	}
	for _, c := range []struct {
		parse func(string) (time.Duration, error)
		in    string
		want  time.Duration
		ok    bool
	}{
		{ParseDuration, "10ms", 10 * time.Millisecond, true},
		{ParseDuration, "1h", time.Hour, true},
		{ParseDuration, "9ms", 0, false},
		{ParseDuration, "61m", 0, false},
		{ParseWarmup, "0", 0, true},
		{ParseWarmup, "10m", 10 * time.Minute, true},
		{ParseWarmup, "-1s", 0, false},
		{ParseWarmup, "11m", 0, false},
	} {
		if d, err := c.parse(c.in); (err == nil) != c.ok || d != c.want {
			t.Errorf("%q: %v, %v", c.in, d, err)
		}
	}
	for d, want := range map[time.Duration]string{time.Hour: "1h", 10 * time.Minute: "10m", 90 * time.Second: "1m30s", 10 * time.Millisecond: "10ms"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
