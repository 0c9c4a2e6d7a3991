package main

import (
	"strings"

	"github.com/tailgate-ci/tailgate/internal/cmdline"
)

// exampleWidth is the most columns a line of an example or exit code
// takes: an example must be copied whole, so it is never wrapped (a
// longer one goes on in a line after " \").
const exampleWidth = 80

// exits are the exit codes a command returns, each "CODE what", in
// order.
type exits []string

// The exit codes most commands share.
const (
	exitBadInput = "2 bad usage or input"
	exitInfraAny = "3 infrastructure failure"
)

// exitsGate are the exit codes of a command that gates.
var exitsGate = exits{"0 pass", "1 regression (or inconclusive with --strict)", exitBadInput, exitInfraAny}

// helpEnd is how every command's help ends, before its flags: examples
// that work as written (help_examples_test.go runs each through its
// command's flags), then the exit codes the command returns, one a line.
func helpEnd(codes exits, examples ...string) string {
	var b strings.Builder
	b.WriteString("examples:\n")
	for _, e := range examples {
		b.WriteString("  " + e + "\n")
	}
	b.WriteString("\nexit codes:\n")
	for _, c := range codes {
		// Wrapped under the words, past the code.
		lines := strings.Split(cmdline.Wrap(c, exampleWidth-4), "\n")
		b.WriteString("  " + strings.Join(lines, "\n    ") + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// subAbout is what a subcommand's help says (cmdline.Sub's About): about,
// then its examples and exit codes (helpEnd).
func subAbout(about string, codes exits, examples ...string) string {
	return about + "\n\n" + strings.TrimSuffix(helpEnd(codes, examples...), "\n\n")
}
