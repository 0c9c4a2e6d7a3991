package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tailgate-ci/tailgate/engine/doctor"
	"github.com/tailgate-ci/tailgate/internal/cmdline"
	"github.com/tailgate-ci/tailgate/internal/english"
)

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cmdline.NewFlagSet("doctor")
	cmdline.SetUsage(fs, stdout, "usage: tailgate doctor [--format text|json]\n\n"+
		"Checks what runs need on this machine: privileges, BTF, each tracer, qemu and kvm.\n\n"+
		helpEnd(exits{"0 host runs will work here", exitBadInput, "3 a check they need failed"},
			"tailgate doctor", "tailgate doctor --format json"))
	format := fs.String("format", "text", "text, or json (docs/doctor.schema.json)")
	if _, err := cmdline.Parse(fs, args); err != nil {
		return err
	}
	write := doctor.Write
	switch *format {
	case "text":
	case "json":
		write = doctor.WriteJSON
	default:
		return usagef("--format %q: want text or json", *format)
	}
	failed, err := write(stdout, doctor.Checks())
	if err != nil {
		return err
	}
	if failed > 0 {
		return infra(fmt.Errorf("%s failed: host runs will not work here", english.Count(failed, "check")))
	}
	return nil
}
