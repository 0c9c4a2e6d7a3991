package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/engine"
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

// TestGateOutputHelp checks gate's -o help names the files a gate of two
// targets writes as engine.OutputPath names them.
func TestGateOutputHelp(t *testing.T) {
	help := helpOf(t, []string{"gate"})
	for _, name := range []string{"base", "head"} {
		want := engine.OutputPath("r.json", &engine.Variant{Target: &engine.Host{}, VariantName: name}, 2)
		if !strings.Contains(strings.Join(strings.Fields(help), " "), want) {
			t.Errorf("gate's help does not name %s, what -o r.json writes for --variant %s", want, name)
		}
	}
}
