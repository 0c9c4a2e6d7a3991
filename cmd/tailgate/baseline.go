package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
)

const baselineUsage = `usage: tailgate baseline show PATH
       tailgate baseline save RESULT DIR [--replace-unreadable]

show lists the baselines in a directory (or one Result file): scenario,
target, kernel, trials and p99 per metric.
save stores each scenario of RESULT as its own baseline file in DIR.
`

func cmdBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: show or save; see tailgate baseline -h")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, baselineUsage)
		return nil
	case "show":
		return baselineShow(args[1:], stdout)
	case "save":
		return baselineSave(args[1:], stdout, stderr)
	}
	return usagef("unknown subcommand %q: want show or save", args[0])
}

func baselineShow(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tailgate baseline", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, baselineUsage)
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("baseline show wants one PATH, got %d", len(pos))
	}
	entries, listErr := baseline.List(pos[0])
	if listErr != nil && len(entries) == 0 {
		return &usageError{listErr}
	}
	if len(entries) == 0 && listErr == nil {
		fmt.Fprintf(stdout, "no baselines in %s\n", pos[0])
		return nil
	}
	t := report.NewTable(stdout, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft)
	t.Header([]string{"scenario", "target", "kernel", "trials", "metric", "events", "p99", "file"})
	for _, e := range entries {
		s := e.Scenario()
		names := make([]string, 0, len(s.Metrics))
		for name := range s.Metrics {
			names = append(names, name)
		}
		slices.Sort(names)
		if len(names) == 0 {
			names = []string{""}
		}
		for _, name := range names {
			events, p99 := "-", "-"
			if m := s.Metrics[name]; m != nil {
				h := m.Merged()
				events = strconv.FormatUint(h.Count(), 10)
				p99 = report.FormatNs(h.Quantile(0.99))
			}
			if err := t.Append([]string{s.Name, e.Result.Target.Name, e.Result.Environment.KernelRelease,
				strconv.Itoa(s.Trials), name, events, p99, e.Path}); err != nil {
				return err
			}
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if listErr != nil {
		// The readable ones are listed; the unreadable ones fail the command.
		return &usageError{listErr}
	}
	return nil
}

func baselineSave(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tailgate baseline", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var opt baseline.SaveOptions
	fs.BoolVar(&opt.ReplaceUnreadable, "replace-unreadable", false, "replace stored baselines that cannot be read")
	pos, err := parseFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, baselineUsage+"\nsave's flags:\n")
		printFlags(stdout, fs)
		return nil
	}
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("baseline save wants RESULT and DIR, got %d arguments", len(pos))
	}
	r, err := loadInput(pos[0], "result")
	if err != nil {
		return err
	}
	opt.Waiting = waitingForLock(stderr)
	paths, err := baseline.SaveWith(pos[1], r, opt)
	return savedBaselines(paths, err, stderr)
}

// waitingForLock says, in one line on w, that a baseline save waits for
// another tailgate saving into the same store.
func waitingForLock(w io.Writer) func(baseline.LockWait) {
	return func(l baseline.LockWait) {
		by := "another tailgate"
		if l.PID > 0 {
			by += fmt.Sprintf(" (pid %d)", l.PID)
		}
		fmt.Fprintf(w, "baseline store %s is locked by %s saving into it; waiting for %s\n", filepath.Dir(l.Lock), by, l.Lock)
	}
}

// savedBaselines reports what a baseline save wrote and classifies its
// error: a store tailgate refuses to overwrite is bad input (exit 2), a
// failed write is infrastructure (exit 3).
func savedBaselines(paths []string, err error, stderr io.Writer) error {
	for _, p := range paths {
		fmt.Fprintf(stderr, "baseline written to %s\n", p)
	}
	if errors.Is(err, result.ErrCorrupt) || errors.Is(err, result.ErrFutureSchema) || errors.Is(err, result.ErrTooLarge) || errors.Is(err, baseline.ErrRefused) || errors.Is(err, baseline.ErrNotStore) ||
		errors.Is(err, baseline.ErrLink) || errors.Is(err, safefile.ErrPlantedLink) {
		return &usageError{err}
	}
	if err != nil {
		return infra(err)
	}
	return nil
}
