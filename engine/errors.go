// Package engine runs experiments: the trials of scenarios on targets (the
// host, a VM booted once per trial, a host with sysctls set), in rounds
// that interleave targets, with retries, a time budget and the looks of a
// sequential gate, and stores what a gate compares against. Commands are
// thin callers of it; it returns typed errors that only main maps to exit
// codes.
package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tailgate-ci/tailgate/engine/runner"
)

// InputError is bad usage or bad input: what the user gave cannot run.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Inputf returns an InputError with a formatted message.
func Inputf(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }

// InfraError is a failure of the machinery (privileges, attach, a VM), not
// of the kernel under test.
type InfraError struct{ Err error }

func (e *InfraError) Error() string { return e.Err.Error() }
func (e *InfraError) Unwrap() error { return e.Err }

// Infra wraps err as an InfraError; nil stays nil.
func Infra(err error) error {
	if err == nil {
		return nil
	}
	return &InfraError{err}
}

// Classify keeps an InputError as it is and makes any other error an
// InfraError: what a run's failure is unless it is the input's.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var u *InputError
	if errors.As(err, &u) {
		return err
	}
	return Infra(err)
}

// RestoreError is a sysctl left changed on this machine: the loudest
// failure a run has, since it outlives the run.
type RestoreError struct{ Err error }

func (e *RestoreError) Error() string {
	return "SYSCTLS NOT RESTORED, this machine is left changed: " + e.Err.Error()
}
func (e *RestoreError) Unwrap() error { return e.Err }

// retryable reports whether a trial that failed with err may run again: a
// failure of the machinery, not an interrupt, bad input, missing
// privileges or a sysctl left changed.
func retryable(ctx context.Context, err error) bool {
	var u *InputError
	var rf *RestoreError
	return err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) &&
		!errors.As(err, &u) && !errors.As(err, &rf) && !errors.Is(err, runner.ErrPrivileges)
}
