package main

import (
	"strings"

	"github.com/tailgate-ci/tailgate/internal/suggest"
)

// unknownSub is the one line a mistyped subcommand of cmd gets.
func unknownSub(cmd, sub string) error {
	var subs []string
	for _, c := range commands() {
		if c.name == cmd {
			subs = c.subs
		}
	}
	if near := suggest.Near(sub, subs, 2); len(near) > 0 {
		return usagef("unknown subcommand %q; did you mean %s? (tailgate %s -h)", sub, strings.Join(near, " or "), cmd)
	}
	return usagef("unknown subcommand %q; want %s (tailgate %s -h)", sub, strings.Join(subs, ", "), cmd)
}
