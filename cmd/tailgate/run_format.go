package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/show"
)

// runFormats is run's repeated --format FORMAT[=FILE]: the Result as
// tailgate show renders it, beside the run's own table.
type runFormats []runFormat

type runFormat struct {
	format show.Format
	path   string // "" for standard output
}

func (fs *runFormats) String() string {
	var parts []string
	for _, f := range *fs {
		if f.path == "" {
			parts = append(parts, string(f.format))
		} else {
			parts = append(parts, string(f.format)+"="+f.path)
		}
	}
	return strings.Join(parts, ",")
}

func (fs *runFormats) Set(v string) error {
	name, path, _ := strings.Cut(v, "=")
	f, err := show.ParseFormat(name)
	if err != nil {
		return err
	}
	if path == stdoutPath {
		path = ""
	}
	*fs = append(*fs, runFormat{format: f, path: path})
	return nil
}

// check refuses, before anything runs, two formats on standard output, a
// format on standard output beside -o -, and files that cannot be
// written or that two outputs share. It reports whether one goes to
// standard output (the run's table then goes to standard error).
func (fs runFormats) check(output string, targets []engine.Target) (toStdout bool, err error) {
	seen := map[string]string{}
	if output != "" && output != stdoutPath {
		for _, t := range targets {
			seen[outputPath(output, t, len(targets))] = "-o"
		}
	}
	for _, f := range fs {
		if f.path == "" {
			if toStdout {
				return false, usagef("two --format outputs would go to standard output; give all but one a file: --format FORMAT=FILE")
			}
			if output == stdoutPath {
				return false, usagef("--format %s and -o - would both write standard output; give one a file", f.format)
			}
			toStdout = true
			continue
		}
		for _, t := range targets {
			p := outputPath(f.path, t, len(targets))
			if err := checkOutputPath(p); err != nil {
				return false, err
			}
			if prev, dup := seen[p]; dup {
				return false, usagef("--format %s and %s would both write %s; give each its own file", f.format, prev, p)
			}
			seen[p] = "--format " + string(f.format)
		}
	}
	return toStdout, nil
}

// write renders res in each format, to its file (atomically; with several
// targets, FILE-TARGET.ext each) or to stdout.
func (fs runFormats) write(res *result.Result, t engine.Target, n int, stdout, stderr io.Writer) error {
	for _, f := range fs {
		var b bytes.Buffer
		if err := show.New(res).Write(&b, f.format, show.Options{}); err != nil {
			return infra(fmt.Errorf("render %s: %w", f.format, err))
		}
		if f.path == "" {
			if _, err := stdout.Write(b.Bytes()); err != nil {
				return err
			}
			continue
		}
		p := outputPath(f.path, t, n)
		if err := result.WriteFileAtomic(p, b.Bytes()); err != nil {
			return infra(fmt.Errorf("write %s: %w", p, err))
		}
		fmt.Fprintf(stderr, "%s written to %s\n", f.format, p)
	}
	return nil
}

func showFormatNames() []string {
	names := make([]string, len(show.Formats))
	for i, f := range show.Formats {
		names[i] = string(f)
	}
	return names
}
