package main

import (
	"flag"
	"slices"
	"strings"
)

// given lists which of the flags names were set on fs (none when fs is
// nil), spelled as the usage does (flagName).
func given(fs *flag.FlagSet, names ...string) []string {
	var set []string
	if fs != nil {
		fs.Visit(func(fl *flag.Flag) {
			if slices.Contains(names, fl.Name) {
				set = append(set, flagName(fl.Name))
			}
		})
	}
	return set
}

// flagName spells a flag as the usage does: -o, --trials.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// joinArgs writes args as a command line takes them, with a space after
// (nothing for none), to stand before more.
func joinArgs(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return strings.Join(args, " ") + " "
}
