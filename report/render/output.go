package render

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/plaintext"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/internal/termwidth"
	"github.com/tailgate-ci/tailgate/report"
)

// stdoutPath is the file name that means standard output, as in
// --format text=-.
const stdoutPath = "-"

// Output is one rendering of a comparison or a matrix and where it goes
// ("" is standard output).
type Output struct {
	Format Format
	Path   string
	// Strict is --strict: a JUnit report fails inconclusive verdicts, as
	// the exit code does.
	Strict bool
	// Verbose is -v: a text report shows every row and warning, not
	// only the gated ones (TextOptions.Verbose).
	Verbose bool
}

// ParseOutput reads FORMAT[=FILE], FILE - or none being standard output.
func ParseOutput(s string) (Output, error) {
	name, path, _ := strings.Cut(s, "=")
	format, err := ParseFormat(name)
	if err != nil {
		return Output{}, err
	}
	if path == "" && strings.Contains(s, "=") {
		return Output{}, fmt.Errorf("%q: empty file name after '='; write FORMAT=- for standard output", s)
	}
	if path == stdoutPath {
		path = ""
	}
	return Output{Format: format, Path: path}, nil
}

// ResolveOutputs applies output (--output: the file of the one format
// without one) and the default (text to standard output), and refuses,
// before a run spends minutes, more than one rendering on standard output,
// a file that cannot be written (safefile.CheckWritable) and a file two
// renderings share. Each output gets strict.
func ResolveOutputs(outs []Output, output string, strict bool) ([]Output, error) {
	outs = append([]Output(nil), outs...)
	if len(outs) == 0 {
		outs = []Output{{Format: FormatText}}
	}
	var toStdout []int
	for i, o := range outs {
		if o.Path == "" {
			toStdout = append(toStdout, i)
		}
	}
	if output != "" && output != stdoutPath {
		if len(toStdout) != 1 {
			return nil, fmt.Errorf("--output names one file but %d formats have none; write --format FORMAT=FILE for each", len(toStdout))
		}
		outs[toStdout[0]].Path = output
		toStdout = nil
	}
	if len(toStdout) > 1 {
		return nil, fmt.Errorf("%d formats would go to stdout; give all but one a file: --format FORMAT=FILE", len(toStdout))
	}
	written := map[string]Output{}
	for i, o := range outs {
		outs[i].Strict = strict
		if o.Path == "" {
			continue
		}
		if err := safefile.CheckWritable(o.Path); err != nil {
			return nil, err
		}
		key, ok := safefile.Key(o.Path)
		if !ok {
			continue
		}
		if prev, dup := written[key]; dup {
			return nil, fmt.Errorf("the %s and %s reports would both be written to %s; give each its own file", prev.Format, o.Format, o.Path)
		}
		written[key] = o
	}
	return outs, nil
}

// WriteOutputs renders m, a comparison's (report.Report.Matrix) or a matrix's, to
// every output, saying on log which file each went to. Files are written
// atomically, so that CI never picks up half a report.
func WriteOutputs(m *report.Matrix, outs []Output, stdout, log io.Writer) error {
	for _, o := range outs {
		var b bytes.Buffer
		var err error
		switch {
		case o.Format == FormatJUnit:
			err = WriteJUnit(&b, m, JUnitOptions{Strict: o.Strict})
		case o.Format == FormatText && o.Path == "":
			// Text on standard output keeps to its width ($COLUMNS,
			// else the terminal's); files keep whole rows.
			err = WriteText(&b, m, TextOptions{Width: termwidth.Of(stdout), Verbose: o.Verbose})
		case o.Format == FormatText:
			err = WriteText(&b, m, TextOptions{Verbose: o.Verbose})
		default:
			err = WriteMatrix(&b, m, o.Format)
		}
		if err != nil {
			return err
		}
		if o.Path == "" {
			w := stdout
			if o.Format == FormatGitHub {
				w = plaintext.Raw(stdout) // its commands are meant, each escaped
			}
			if _, err := w.Write(b.Bytes()); err != nil {
				return err
			}
			continue
		}
		if err := result.WriteFileAtomic(o.Path, b.Bytes()); err != nil {
			return fmt.Errorf("write %s report: %w", o.Format, err)
		}
		fmt.Fprintf(log, "%s report written to %s\n", o.Format, o.Path)
	}
	return nil
}

// WriteJUnitErrors writes the JUnit document of a command that failed
// with err (WriteJUnitError) to every JUnit output file: CI that reads
// the XML sees the job broken, not a missing file or a pass. It does its
// best, quietly: the command's own error is what is reported.
func WriteJUnitErrors(outs []Output, command string, err error, log io.Writer) {
	for _, o := range outs {
		if o.Format != FormatJUnit || o.Path == "" {
			continue
		}
		var b bytes.Buffer
		if WriteJUnitError(&b, command, err) != nil || result.WriteFileAtomic(o.Path, b.Bytes()) != nil {
			continue
		}
		fmt.Fprintf(log, "junit report of the failure written to %s\n", o.Path)
	}
}
