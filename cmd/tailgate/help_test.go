package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestHelpEveryCommand checks that every command prints its own usage, to
// standard output with exit 0, however help is asked for.
func TestHelpEveryCommand(t *testing.T) {
	for _, c := range commands() {
		for _, args := range [][]string{{"help", c.name}, {c.name, "--help"}, {c.name, "-h"}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				if code := run(context.Background(), args, &stdout, &stderr); code != exitPass {
					t.Fatalf("exit %d, want 0; stderr: %s", code, stderr.String())
				}
				if stderr.Len() > 0 {
					t.Errorf("stderr: %s", stderr.String())
				}
				want := "usage: tailgate " + c.name
				found := false
				for _, line := range strings.Split(stdout.String(), "\n") {
					if line == want || strings.HasPrefix(line, want+" ") {
						found = true
					}
				}
				if !found {
					t.Errorf("no line starting with %q in:\n%s", want, stdout.String())
				}
			})
		}
	}
}

func TestHelpUnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"help", "nosuch"}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	if !strings.Contains(stderr.String(), `unknown command "nosuch"`) {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestPrintFlags checks the flags are spelled --name (-o for one letter)
// and otherwise read as flag.PrintDefaults writes them.
func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("trials", 0, "`N` trials")
	fs.String("accel", "auto", "QEMU accelerator")
	fs.Bool("vm", false, "run in a VM")
	fs.Duration("budget", 5*time.Minute, "wall time")
	fs.String("o", "", "write to `FILE`")
	fs.Func("variant", "a host `NAME`", func(string) error { return nil })
	var got strings.Builder
	printFlags(&got, fs)
	want := `  --accel string
    	QEMU accelerator (default "auto")
  --budget duration
    	wall time (default 5m0s)
  -o FILE
    	write to FILE
  --trials N
    	N trials
  --variant NAME
    	a host NAME
  --vm
    	run in a VM
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("printFlags (-want +got):\n%s", diff)
	}
}

// TestHelpSpellsFlagsLong checks no command's usage lists a flag as -name.
func TestHelpSpellsFlagsLong(t *testing.T) {
	single := regexp.MustCompile(`(?m)^\s+-[a-z][a-z-]+\b`)
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "show", "-h"}, {c.name, "save", "-h"}, {c.name, "list", "-h"}, {c.name, "comment", "-h"}} {
			var stdout, stderr bytes.Buffer
			run(context.Background(), args, &stdout, &stderr)
			if m := single.FindString(stdout.String()); m != "" {
				t.Errorf("tailgate %s: flag spelled %q", strings.Join(args, " "), strings.TrimSpace(m))
			}
		}
	}
}
