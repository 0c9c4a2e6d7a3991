// Package termwidth says how wide a command's text output may be: the
// width of $COLUMNS, else of the terminal it is written to, else Piped
// (a pipe or a file, as a CI log shows it). Renderers take the width as
// an option; only commands ask this package.
package termwidth

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Unlimited is the width a renderer takes for no limit.
const Unlimited = 0

// Piped is the width of output that is not for a terminal: a CI log or a
// file read in an editor shows 100 columns without wrapping.
const Piped = 100

// Of returns the width output written to w should fit: $COLUMNS when it
// is a positive number, else the terminal's columns when w is a
// terminal, else Piped.
func Of(w io.Writer) int {
	// A writer over a file (a guard of the terminal) says which.
	f, _ := w.(interface{ Fd() uintptr })
	return from(os.Getenv("COLUMNS"), f)
}

// Stdout is Of(os.Stdout).
func Stdout() int { return Of(os.Stdout) }

// From is Of with $COLUMNS given: columns, then the terminal f (nil for
// none), then Piped. A COLUMNS that is not a positive number is
// ignored, as shells leave it empty.
func From(columns string, f *os.File) int {
	if f == nil {
		return from(columns, nil)
	}
	return from(columns, f)
}

func from(columns string, f interface{ Fd() uintptr }) int {
	if n, err := strconv.Atoi(strings.TrimSpace(columns)); err == nil && n > 0 {
		return n
	}
	if f == nil {
		return Piped
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return Piped // not a terminal, or one that does not say
	}
	return int(ws.Col)
}
