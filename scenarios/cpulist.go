package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPU bounds a CPU number in a workload's cpus (unix.CPUSet's size).
const maxCPU = 1023

// ParseCPUList reads a CPU list as taskset -c, isolcpus= and
// /sys/devices/system/cpu/online write it: numbers and ranges joined by
// commas ("1", "0,2", "2-3,6"). It returns the CPUs increasing, each once.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New(`want a CPU list such as "1", "0,2" or "2-3", got nothing`)
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("%q in %q: %w", part, s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("%q in %q: %w", part, s, err)
			}
			if b < a {
				return nil, fmt.Errorf("%q in %q: the range ends before it starts", part, s)
			}
		}
		for c := a; c <= b; c++ {
			if slices.Contains(cpus, c) {
				return nil, fmt.Errorf("CPU %d is listed twice in %q", c, s)
			}
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return cpus, nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > maxCPU {
		return 0, fmt.Errorf("want a CPU number from 0 to %d", maxCPU)
	}
	return n, nil
}

// FormatCPUList writes cpus (increasing) as a CPU list, ranges folded:
// [0 1 2 5] is "0-2,5".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// checkCPUs checks a workload's cpus built in Go: increasing, each once,
// within range; nil is the default.
func checkCPUs(cpus []int) error {
	if cpus == nil {
		return nil
	}
	if len(cpus) == 0 {
		return errors.New("cpus is empty; leave it out to let each trial choose")
	}
	for i, c := range cpus {
		if c < 0 || c > maxCPU || (i > 0 && c <= cpus[i-1]) {
			return fmt.Errorf("cpus %v: want CPU numbers from 0 to %d, increasing, each once", cpus, maxCPU)
		}
	}
	return nil
}

type pinCPUsKey struct{}

// withPinCPUs returns a context under which runCrew pins the i-th thread
// to cpus[(i+offset) mod len] instead of to one of every CPU the process
// may run on; nil cpus change nothing.
func withPinCPUs(ctx context.Context, cpus []int) context.Context {
	if cpus == nil {
		return ctx
	}
	return context.WithValue(ctx, pinCPUsKey{}, cpus)
}

func pinCPUsOf(ctx context.Context) []int {
	c, _ := ctx.Value(pinCPUsKey{}).([]int)
	return c
}
