//go:build layout

package main

import "os"

// With the tag layout the base's main package holds pad, which is never
// called (no one sets the variable it waits for) and moves the code laid
// out after it: another build of the same program, for an A/A whose
// sides differ in layout alone (scripts/build-servers.sh).
func init() {
	if os.Getenv("HTTP_SERVER_NEVER_SET") == "pad" {
		pad(os.Args)
	}
}

//go:noinline
func pad(args []string) int {
	n := 0
	for i, a := range args {
		for j := range len(a) {
			n += int(a[j]) * (i + j)
			n ^= n << 3
			n += n >> 5
			n *= 31
		}
	}
	return n
}
