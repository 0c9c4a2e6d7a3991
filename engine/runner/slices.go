package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/scenarios"
)

// A sliced worker runs its one trial in slices, taking turns with another
// worker's trial: the base's and the head's of one round of a same-job
// gate (RunPair). Both workers start and attach at once; then the parent
// tells them to warm up, and each in turn to run each slice of its trial, while
// the other waits with its tracers attached and no workload thread
// running. Whatever the machine does in the round (a burst of other work,
// a slow spell of the vCPU) falls on both sides' slices alike, instead of
// on one side's whole trial.
//
// The line between them is two pipes, the worker's fds 3 (from the
// parent) and 4 (to it), one word per line:
//
//	worker: ready            attached
//	parent: warm             worker: ok    (warmed up)
//	parent: slice NS         worker: ok    (ran NS nanoseconds more)
//	parent: end                            (the worker reads its tracers,
//	                                        replies on stdout and exits)

// sliceControl is a sliced worker's end of the line.
type sliceControl struct {
	in  *bufio.Reader
	out io.Writer
}

// sliceFDs are the fds a sliced worker finds its line on.
const (
	sliceInFD  = 3
	sliceOutFD = 4
)

func newSliceControl(in io.Reader, out io.Writer) *sliceControl {
	return &sliceControl{in: bufio.NewReader(in), out: out}
}

// say tells the parent one word.
func (c *sliceControl) say(word string) error {
	if _, err := io.WriteString(c.out, word+"\n"); err != nil {
		return fmt.Errorf("slice line to the parent: %w", err)
	}
	return nil
}

// next reads the parent's next command. A parent that closed the line
// stopped the round: the trial is interrupted.
func (c *sliceControl) next(ctx context.Context) (string, time.Duration, error) {
	line, err := c.in.ReadString('\n')
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, io.EOF) {
			return "", 0, context.Canceled
		}
		return "", 0, fmt.Errorf("slice line from the parent: %w", err)
	}
	word, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	if word != "slice" {
		return word, 0, nil
	}
	ns, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || ns <= 0 {
		return "", 0, fmt.Errorf("slice line from the parent: bad slice %q", arg)
	}
	return word, time.Duration(ns), nil
}

// await reads the next command and wants it to be want.
func (c *sliceControl) await(ctx context.Context, want string) error {
	word, _, err := c.next(ctx)
	if err != nil {
		return err
	}
	if word != want {
		return fmt.Errorf("slice line from the parent: got %q, want %q", word, want)
	}
	return nil
}

// runSlices runs the slices the parent asks for until it says end, and
// returns their sum: the stats, the time run, the CPU time outside the
// workload in them (nil when a slice could not read it; summed signed,
// see cpuSums), and how many there were.
func (c *sliceControl) runSlices(ctx context.Context, wl scenarios.Runner) (m trialMeasures, err error) {
	var cpu cpuSums
	unread := false // a slice read no CPU time: the trial has none
	for {
		word, d, err := c.next(ctx)
		if err != nil {
			return m, err
		}
		switch word {
		case "end":
			if m.slices == 0 {
				return m, errors.New("slice line from the parent: end before any slice")
			}
			if !unread {
				m.cpu = cpu.time()
			}
			return m, nil
		case "slice":
		default:
			return m, fmt.Errorf("slice line from the parent: got %q, want slice or end", word)
		}
		one, took, sc, ok, err := timedRun(ctx, wl, d)
		if err != nil {
			return m, err
		}
		addStats(&m.stats, one)
		m.elapsed += took
		unread = unread || !ok
		cpu.add(sc)
		m.slices++
		if err := c.say("ok"); err != nil {
			return m, err
		}
	}
}

// addStats adds one slice's stats to a trial's.
func addStats(dst *scenarios.Stats, src scenarios.Stats) {
	dst.Ops += src.Ops
	if len(src.Syscalls) > 0 && dst.Syscalls == nil {
		dst.Syscalls = map[string]uint64{}
	}
	for k, v := range src.Syscalls {
		dst.Syscalls[k] += v
	}
	if len(src.Metrics) > 0 && dst.Metrics == nil {
		dst.Metrics = maps.Clone(src.Metrics)
	} else {
		for k, h := range src.Metrics {
			if dst.Metrics[k] == nil {
				dst.Metrics[k] = h
			} else {
				dst.Metrics[k].Merge(h)
			}
		}
	}
	if dst.CPUs == nil {
		dst.CPUs = src.CPUs
	}
	if dst.Device == nil {
		dst.Device = src.Device
	}
}

// sliceLine opens a sliced worker's line from the fds its parent gave it.
func sliceLine() *sliceControl {
	// What the worker starts (a noise workload's hogs) does not hold the
	// line open after the worker is gone.
	syscall.CloseOnExec(sliceInFD)
	syscall.CloseOnExec(sliceOutFD)
	return newSliceControl(os.NewFile(sliceInFD, "slice-in"), os.NewFile(sliceOutFD, "slice-out"))
}
