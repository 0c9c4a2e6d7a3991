package show

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
)

// stdoutPath is the file name that means standard output, as in -o -.
const stdoutPath = "-"

// Outputs is run's repeated --format FORMAT[=FILE] (a flag.Value): the
// Result as tailgate show renders it, beside the run's own table.
type Outputs []Output

// Output is one format and its file ("" for standard output).
type Output struct {
	Format Format
	Path   string
}

func (outs *Outputs) String() string {
	var parts []string
	for _, o := range *outs {
		if o.Path == "" {
			parts = append(parts, string(o.Format))
		} else {
			parts = append(parts, string(o.Format)+"="+o.Path)
		}
	}
	return strings.Join(parts, ",")
}

func (outs *Outputs) Set(v string) error {
	name, path, _ := strings.Cut(v, "=")
	f, err := ParseFormat(name)
	if err != nil {
		return err
	}
	if path == stdoutPath {
		path = ""
	}
	*outs = append(*outs, Output{Format: f, Path: path})
	return nil
}

// Check refuses, before anything runs, two formats on standard output, a
// format on standard output beside -o - (output), and files that cannot
// be written or that two outputs share; paths gives the file of each
// target a path stands for (-o FILE and FORMAT=FILE alike). It reports
// whether one goes to standard output (the run's table then goes to
// standard error).
func (outs Outputs) Check(output string, paths func(string) []string) (toStdout bool, err error) {
	seen := map[string]string{}
	if output != "" && output != stdoutPath {
		for _, p := range paths(output) {
			seen[p] = "-o"
		}
	}
	for _, o := range outs {
		if o.Path == "" {
			if toStdout {
				return false, fmt.Errorf("two --format outputs would go to standard output; give all but one a file: --format FORMAT=FILE")
			}
			if output == stdoutPath {
				return false, fmt.Errorf("--format %s and -o - would both write standard output; give one a file", o.Format)
			}
			toStdout = true
			continue
		}
		for _, p := range paths(o.Path) {
			if err := safefile.CheckWritable(p); err != nil {
				return false, err
			}
			if prev, dup := seen[p]; dup {
				return false, fmt.Errorf("--format %s and %s would both write %s; give each its own file", o.Format, prev, p)
			}
			seen[p] = "--format " + string(o.Format)
		}
	}
	return toStdout, nil
}

// Write renders res in each format, to its file (path gives the file of
// this Result's target; written atomically) or to stdout, saying on log
// which file each went to.
func (outs Outputs) Write(res *result.Result, path func(string) string, stdout, log io.Writer) error {
	for _, o := range outs {
		var b bytes.Buffer
		if err := New(res).Write(&b, o.Format, Options{}); err != nil {
			return fmt.Errorf("render %s: %w", o.Format, err)
		}
		if o.Path == "" {
			if _, err := stdout.Write(b.Bytes()); err != nil {
				return err
			}
			continue
		}
		p := path(o.Path)
		if err := result.WriteFileAtomic(p, b.Bytes()); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		fmt.Fprintf(log, "%s written to %s\n", o.Format, p)
	}
	return nil
}

// FormatNames are the names of Formats, for usage texts.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return names
}
