package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/shard"
	"github.com/tailgate-ci/tailgate/report/show"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// RunOutputs are where tailgate run puts each target's Result: its table,
// its other formats, its file.
type RunOutputs struct {
	// Path is -o: the Result's file (OutputPath per target), StdoutPath
	// for standard output, "" for none.
	Path string
	// Formats render the Result again, as tailgate show does.
	Formats show.Outputs
	// Stdout and Log are standard output and error; the table goes to
	// Stdout unless the Result or a format takes it (Check).
	Stdout, Log io.Writer
	// Width is the columns the table keeps to (termwidth of Table's
	// writer); 0 is no limit.
	Width int
	table io.Writer
}

// Table is where the table goes, once Check chose: standard output, or
// Log when standard output carries the Result or a format.
func (o *RunOutputs) Table() io.Writer { return o.table }

// Check refuses, before anything runs, outputs that cannot be written or
// would collide: -o - with several targets, a file that cannot be
// written, two outputs on one file or on standard output. It sends the
// table to Log when standard output carries the Result or a format alone.
func (o *RunOutputs) Check(targets []Target) error {
	o.table = o.Stdout
	if o.Path == StdoutPath {
		if len(targets) > 1 {
			return Inputf("-o - writes one Result to standard output, but %d targets make %d; give -o FILE (FILE-TARGET.json each)", len(targets), len(targets))
		}
		o.table = o.Log
	}
	for _, t := range targets {
		if err := CheckOutput(OutputPath(o.Path, t, len(targets))); err != nil {
			return err
		}
	}
	toStdout, err := o.Formats.Check(o.Path, func(path string) []string {
		var ps []string
		for _, t := range targets {
			ps = append(ps, OutputPath(path, t, len(targets)))
		}
		return ps
	})
	if err != nil {
		return &InputError{Err: err}
	}
	if toStdout {
		o.table = o.Log
	}
	return nil
}

// Work is what each target runs: every scenario of ss, or with a shard sh
// its deal (ShardWork), saying on log when the shard has none.
func Work(sh *shard.Spec, ss []*scenarios.Scenario, targets []Target, log io.Writer) [][]*scenarios.Scenario {
	work := make([][]*scenarios.Scenario, len(targets))
	for i := range targets {
		work[i] = ss
	}
	if sh == nil {
		return work
	}
	work = ShardWork(*sh, ss, targets)
	n := 0
	for _, w := range work {
		n += len(w)
	}
	if n == 0 {
		fmt.Fprintf(log, "shard %s has no work (%d scenarios × %d targets over %d shards)\n", sh, len(ss), len(targets), sh.N)
	}
	return work
}

// RunEach runs spec on each target in turn, its scenarios the target's
// share of the work, work[i] (an empty share of one of several targets is
// passed over), each Result put where o says as it ends: what was
// measured is kept even when a run was cut short, and an empty shard
// writes an empty Result, so a merge finds every file. An interrupt stops
// them all; with several targets a broken one does not stop the others,
// and the first error is returned once they ran. o must have been checked
// (Check).
func RunEach(ctx context.Context, targets []Target, work [][]*scenarios.Scenario, spec Spec, o RunOutputs, p *progress.Reporter) error {
	var firstErr error
	PlanTrials(p, targets, work, spec)
	for i, t := range targets {
		if len(work[i]) == 0 && len(targets) > 1 {
			continue
		}
		spec.Scenarios = work[i]
		res, runErr := Run(ctx, t, spec, p)
		p.End()
		if res != nil && len(res.Scenarios) > 0 {
			if err := show.RenderRun(o.table, res, o.Width); err != nil {
				return err
			}
			path := func(f string) string { return OutputPath(f, t, len(targets)) }
			if err := o.Formats.Write(res, path, o.Stdout, o.Log); err != nil {
				return Infra(err)
			}
		}
		out := OutputPath(o.Path, t, len(targets))
		if out != "" && res != nil && (runErr == nil || len(res.Scenarios) > 0) {
			if err := WriteResult(out, res, o.Stdout); err != nil {
				return Infra(fmt.Errorf("write result: %w", err))
			}
			if runErr != nil {
				fmt.Fprintf(o.Log, "tailgate run: partial result written to %s\n", DescribeOutput(out))
			} else if out != StdoutPath {
				fmt.Fprintf(o.Log, "result written to %s\n", out)
			}
		}
		if errors.Is(runErr, context.Canceled) || ctx.Err() != nil {
			return Infra(errors.New("interrupted; tracers detached, no VM left running"))
		}
		if runErr != nil {
			runErr = Classify(runErr)
			if len(targets) == 1 {
				return runErr
			}
			fmt.Fprintf(o.Log, "tailgate run: target %s: %v\n", t.Name(), runErr)
			if firstErr == nil {
				firstErr = runErr
			}
		}
	}
	return firstErr
}
