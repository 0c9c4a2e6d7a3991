package main

import (
	"context"
	"io"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("run: not yet implemented")
}

func cmdList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usagef("list: not yet implemented")
}
