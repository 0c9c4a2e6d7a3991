package main

import (
	"io"

	"github.com/tailgate-ci/tailgate/internal/result"
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
