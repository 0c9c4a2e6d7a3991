package main

import (
	"errors"
	"flag"
	"io"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/engine"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/report/render"
)

// Exit codes: CI must be able to tell "slower" from "broken".
const (
	exitPass       = 0
	exitRegression = 1
	exitUsage      = 2 // bad usage or bad input
	exitInfra      = 3 // the machinery failed: privileges, attach, VM
)

// usageError is bad usage or bad input: exit 2.
type usageError = engine.InputError

func usagef(format string, a ...any) error { return engine.Inputf(format, a...) }

// infra is a failure of the machinery, not of the kernel under test: an
// engine.InfraError, exit 3 (as an engine.RestoreError, an interrupt and
// any error no case of exitCode names).
func infra(err error) error { return engine.Infra(err) }

// errRegression is returned when the gate found a regression; the report has
// already been written.
var errRegression = engine.ErrRegression

func exitCode(err error) int {
	var u *usageError
	var ce *cmdline.Error // a bad flag
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // the help was asked for, and shown
		return exitPass
	case errors.Is(err, errRegression):
		return exitRegression
	case errors.As(err, &u), errors.As(err, &ce):
		return exitUsage
	case errors.Is(err, tracing.ErrBadTarget):
		// A function, symbol or binary to trace that does not exist.
		return exitUsage
	default:
		return exitInfra
	}
}

// writeJUnitErrors writes, when err is an infrastructure failure (exit 3),
// the JUnit document that says so to every JUnit output file.
func writeJUnitErrors(outs []render.Output, command string, err error, stderr io.Writer) {
	if err != nil && exitCode(err) == exitInfra {
		render.WriteJUnitErrors(outs, command, err, stderr)
	}
}
