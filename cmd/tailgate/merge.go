package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("merge")
	out := fs.String("o", engine.StdoutPath, "write the merged Result to `FILE`; - is standard output")
	cmdline.SetUsage(fs, stdout, "usage: tailgate merge FILE... [-o OUT]\n\nCombines Results of one target (the shards of a CI matrix, or repeated runs):\nscenarios are united, trials of the same scenario concatenate.\n\n"+
		helpEnd(exits{"0 merged", exitBadInput + " (a Result that does not read, Results of different targets)",
			"3 the merged Result not written"},
			"tailgate merge shard-1.json shard-2.json -o merged.json"))
	files, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usagef("merge: name the Result files to merge")
	}
	if *out == "" {
		return usagef("-o: empty file name; give a FILE, or - for standard output")
	}
	if err := engine.CheckOutput(*out); err != nil {
		return err
	}
	m, err := result.MergeFiles(files, scenarios.CheckParams)
	if err != nil {
		return &usageError{Err: err}
	}
	if err := engine.WriteResult(*out, m, stdout); err != nil {
		return infra(fmt.Errorf("write %s: %w", *out, err))
	}
	if *out != engine.StdoutPath {
		fmt.Fprintf(stderr, "merged %d results (%d scenarios) into %s\n", len(files), len(m.Scenarios), *out)
	}
	return nil
}
