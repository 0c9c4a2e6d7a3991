package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func cmdMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("merge")
	out := fs.String("o", engine.StdoutPath, "write the merged Result to `FILE`; - is standard output")
	cmdline.SetUsage(fs, stdout, "usage: tailgate merge FILE... [-o OUT]\n\nCombines Results of one target (the shards of a CI matrix, or repeated runs):\nscenarios are united, trials of the same scenario concatenate.\n\n")
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
	if err := distinctFiles(files); err != nil {
		return err
	}
	var in []result.Input
	for _, f := range files {
		r, err := result.Load(f)
		if err != nil {
			return &usageError{Err: err}
		}
		in = append(in, result.Input{Path: f, Result: r})
	}
	m, err := result.Merge(in)
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

// distinctFiles refuses a file named twice, by the same path or another
// (a link, ./x): merging it would count its trials twice.
func distinctFiles(files []string) error {
	seen := make([]os.FileInfo, len(files))
	for i, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			continue // loading it says why
		}
		for j, prev := range seen[:i] {
			if prev == nil || !os.SameFile(prev, st) {
				continue
			}
			if files[j] == f {
				return usagef("%s is named twice; merging it would count its trials twice", f)
			}
			return usagef("%s and %s are the same file; merging it would count its trials twice", files[j], f)
		}
		seen[i] = st
	}
	return nil
}
