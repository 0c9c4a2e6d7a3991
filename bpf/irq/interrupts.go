package irq

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Interrupt is a numbered irq line of /proc/interrupts: its number and how
// many times it fired on each CPU (in the order of the header's columns:
// the online CPUs) and on all.
type Interrupt struct {
	IRQ    int
	PerCPU []uint64
	Count  uint64
}

// ParseInterrupts reads the numbered irqs of /proc/interrupts. The lines of
// the architecture's own vectors (NMI, LOC, RES, ...) are skipped: they have
// no irq action, and irq_handler_entry does not see them.
func ParseInterrupts(b []byte) ([]Interrupt, error) {
	lines := strings.Split(string(b), "\n")
	ncpu := 0
	for _, f := range strings.Fields(lines[0]) {
		if !strings.HasPrefix(f, "CPU") {
			return nil, fmt.Errorf("/proc/interrupts:1: header %q does not list CPUs", lines[0])
		}
		ncpu++
	}
	if ncpu == 0 {
		return nil, fmt.Errorf("/proc/interrupts:1: no CPU columns")
	}
	var out []Interrupt
	for i, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		label, ok := strings.CutSuffix(f[0], ":")
		if !ok {
			return nil, fmt.Errorf("/proc/interrupts:%d: %q does not start with an irq label", i+2, line)
		}
		irq, err := strconv.Atoi(label)
		if err != nil {
			continue // NMI, LOC, ...
		}
		if len(f) < 1+ncpu {
			return nil, fmt.Errorf("/proc/interrupts:%d: irq %d has %d fields, want %d CPU counts", i+2, irq, len(f)-1, ncpu)
		}
		in := Interrupt{IRQ: irq, PerCPU: make([]uint64, ncpu)}
		for j, c := range f[1 : 1+ncpu] {
			v, err := strconv.ParseUint(c, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/interrupts:%d: irq %d: count %q: %w", i+2, irq, c, err)
			}
			in.PerCPU[j] = v
			in.Count += v
		}
		out = append(out, in)
	}
	return out, nil
}

// Action is a hardirq action: its name (truncated to the bytes the
// programs compare, see Names) and the interrupts of the irq lines it is
// on so far.
type Action struct {
	Name  string
	Count uint64
}

// Actions returns the hardirq actions of this machine, busiest first (ties
// by name): the irqs of /proc/interrupts, each named by its actions'
// directories in /proc/irq/<irq>/ (exact names, which the action list of
// /proc/interrupts, padded and comma-joined, does not give). An action
// whose name is on several irqs counts the interrupts of all.
func Actions() ([]Action, error) { return actions("/proc") }

func actions(proc string) ([]Action, error) {
	b, err := os.ReadFile(filepath.Join(proc, "interrupts"))
	if err != nil {
		return nil, err
	}
	irqs, err := ParseInterrupts(b)
	if err != nil {
		return nil, err
	}
	counts := map[string]uint64{}
	for _, in := range irqs {
		for _, name := range irqNames(proc, in.IRQ) {
			counts[name] += in.Count
		}
	}
	out := make([]Action, 0, len(counts))
	for name, n := range counts {
		out = append(out, Action{Name: name, Count: n})
	}
	slices.SortFunc(out, func(a, b Action) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// Discover chooses the hardirq actions to count when a config names none:
// of Actions that fired since boot, the busiest max (at most MaxMetrics);
// left are the rest of those, busiest first. Actions that never fired are
// left out of both: their metrics would be empty.
func Discover(max int) (names, left []string, err error) {
	max = min(max, MaxMetrics)
	as, err := Actions()
	if err != nil {
		return nil, nil, fmt.Errorf("discover irqs: %w", err)
	}
	for _, a := range as {
		switch {
		case a.Count == 0:
		case len(names) < max:
			names = append(names, a.Name)
		default:
			left = append(left, a.Name)
		}
	}
	return names, left, nil
}

// irqNames returns the names of irq's actions, as the programs read them,
// from its directory in proc: a directory for each (the rest are files).
// An irq freed since /proc/interrupts was read has none.
func irqNames(proc string, irq int) []string {
	ents, err := os.ReadDir(filepath.Join(proc, "irq", strconv.Itoa(irq)))
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, truncName(e.Name()))
		}
	}
	return names
}

// truncName cuts an action name to the bytes the programs read of it.
func truncName(name string) string {
	if len(name) > nameLen-1 {
		return name[:nameLen-1]
	}
	return name
}

// nameKey is the irq_metric key of an action name.
func nameKey(name string) [nameLen]byte {
	var k [nameLen]byte
	copy(k[:nameLen-1], name)
	return k
}

// hasNUL reports whether name could not be an action's name as the
// programs read it.
func hasNUL(name string) bool { return bytes.IndexByte([]byte(name), 0) >= 0 }
