package main

import (
	"os"
	"testing"

	"github.com/tailgate-ci/tailgate/engine/runner"
)

// TestMain lets the test binary serve as its own trial worker: in-process
// runs re-execute os.Executable, which here is the test binary.
func TestMain(m *testing.M) {
	if runner.IsWorker() {
		os.Exit(runner.WorkerMain())
	}
	os.Exit(m.Run())
}
