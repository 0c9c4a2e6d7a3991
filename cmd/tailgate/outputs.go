package main

import (
	"io"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
)

// stdoutPath is the output path that means standard output, as in -o -.
const stdoutPath = "-"

// describeOutput names where path writes to, for messages.
func describeOutput(path string) string {
	if path == stdoutPath {
		return "standard output"
	}
	return path
}

// writeResult writes r to path (atomically, see result.WriteFileAtomic), or
// to stdout when path is "-".
func writeResult(path string, r *result.Result, stdout io.Writer) error {
	if path != stdoutPath {
		return result.Write(path, r)
	}
	b, err := result.Marshal(r)
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// checkOutputPath checks, before any work, that a file can be written at
// path (safefile.CheckWritable); "" (none) and "-" (standard output)
// pass. What cannot be written is a usage error (exit 2).
func checkOutputPath(path string) error {
	if path == "" || path == stdoutPath {
		return nil
	}
	if err := safefile.CheckWritable(path); err != nil {
		return &usageError{Err: err}
	}
	return nil
}

// outputKey identifies the file path writes (safefile.Key).
func outputKey(path string) (key string, ok bool) { return safefile.Key(path) }

// checkThresholdMetrics refuses a --threshold for a metric no scenario
// measures (report.CheckThresholdMetrics): a usage error.
func checkThresholdMetrics(ths []report.Threshold, metrics []string) error {
	if err := report.CheckThresholdMetrics(ths, metrics); err != nil {
		return &usageError{Err: err}
	}
	return nil
}

// resultMetrics returns the names of the metrics of every scenario in rs.
func resultMetrics(rs ...*result.Result) []string { return result.MetricNames(rs...) }
