package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The overrides of a scenario's trials, duration and warmup that a
// command takes hold what a scenario file holds: a value a file would
// refuse is refused, never taken as "the scenario's default" (trials 0)
// or run (a duration of 1ns).

// ParseTrials reads a number of trials, 1 to MaxTrials.
func ParseTrials(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxTrials {
		return 0, fmt.Errorf("want a number of trials from 1 to %d", MaxTrials)
	}
	return n, nil
}

// ParseDuration reads a trial's duration, MinDuration to MaxDuration.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < MinDuration || d > MaxDuration {
		return 0, fmt.Errorf("want a duration from %s to %s, such as 5s", MinDuration, ShortDuration(MaxDuration))
	}
	return d, nil
}

// ParseWarmup reads a warmup, 0 to MaxWarmup.
func ParseWarmup(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxWarmup {
		return 0, fmt.Errorf("want a duration from 0 to %s, such as 500ms", ShortDuration(MaxWarmup))
	}
	return d, nil
}

// ShortDuration writes d without zero tails: "1h", "10m", not "1h0m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
