// Package termwidth says how wide a command's text output may be: the
// width of $COLUMNS, else of the terminal it is written to, else none
// (a pipe or a file keeps the full rows). Renderers take the width as an
// option; only commands ask this package.
package termwidth

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Unlimited is the width of output that is not for a terminal.
const Unlimited = 0

// Of returns the width output written to w should fit: $COLUMNS when it
// is a positive number, else the terminal's columns when w is a
// terminal, else Unlimited.
func Of(w io.Writer) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	// A writer over a file (a guard of the terminal) says which.
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return Unlimited
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return Unlimited
	}
	return int(ws.Col)
}

// Stdout is Of(os.Stdout).
func Stdout() int { return Of(os.Stdout) }

// From is Of with $COLUMNS given: columns, then the terminal f (nil for
// none), then Unlimited. A COLUMNS that is not a positive number is
// ignored, as shells leave it empty.
func From(columns string, f *os.File) int {
	if n, err := strconv.Atoi(strings.TrimSpace(columns)); err == nil && n > 0 {
		return n
	}
	if f == nil {
		return Unlimited
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return Unlimited // not a terminal, or one that does not say
	}
	return int(ws.Col)
}
