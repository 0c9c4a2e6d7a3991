package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/version"
)

// cmdVersion prints the version line; `tailgate --version` is the same.
func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("version")
	cmdline.SetUsage(fs, stdout, "usage: tailgate version\n\nPrints tailgate's version, the commit it was built from, the Go toolchain\nand the platform; `tailgate --version` is the same. Results record the\nversion and commit too (environment.tailgate).\n\n"+
		helpEnd(exits{"0 printed", exitBadInput + " (an argument)"}, "tailgate version", "tailgate --version"))
	pos, err := cmdline.Parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments (got %s)", strings.Join(pos, " "))
	}
	fmt.Fprintln(stdout, version.String())
	return nil
}
