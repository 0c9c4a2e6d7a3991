package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// writeTargetResults writes each target's Result where -o path says
// (path-TARGET.json), what was measured kept even when the rounds were cut
// short (runErr), and returns runErr or the first write error.
func writeTargetResults(path string, targets []engine.Target, results []*result.Result, runErr error, stderr io.Writer) error {
	for i, t := range targets {
		out := outputPath(path, t, len(targets))
		if out == "" || results[i] == nil {
			continue
		}
		if err := result.Write(out, results[i]); err != nil {
			return errors.Join(runErr, infra(fmt.Errorf("write result: %w", err)))
		}
		what := "result"
		if runErr != nil {
			what = "partial result"
		}
		fmt.Fprintf(stderr, "%s of %s written to %s\n", what, t.Name(), out)
	}
	return runErr
}

// checkTargetOutputs checks, before anything runs, where -o path puts each
// target's Result: one file per target, so standard output will not do.
func checkTargetOutputs(path string, targets []engine.Target) error {
	if path == stdoutPath {
		return usagef("-o - writes one Result, and %d targets make %d: give -o FILE (each target's goes to FILE-TARGET.json)", len(targets), len(targets))
	}
	for _, t := range targets {
		if err := checkOutputPath(outputPath(path, t, len(targets))); err != nil {
			return err
		}
	}
	return nil
}
