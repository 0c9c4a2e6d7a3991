// Package progress shows how a long run is going: a bar redrawn in place on
// a terminal, plain lines otherwise (CI logs, pipes, a VM console).
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"
)

// Reporter writes progress lines or a bar.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	bar   bool
	start time.Time
	last  int // length of the bar line last drawn
}

// New returns a Reporter on w; it draws a bar when w is a terminal and the
// CI environment variable is not set.
func New(w io.Writer) *Reporter {
	bar := false
	// A writer over a file (a guard of the terminal) says which.
	if f, ok := w.(interface{ Fd() uintptr }); ok && os.Getenv("CI") == "" {
		bar = isatty.IsTerminal(f.Fd())
	}
	return &Reporter{w: w, bar: bar, start: time.Now()}
}

// Step reports that done of total steps are finished, with a label for the
// step under way and, for plain output, a detail of the step just finished.
func (r *Reporter) Step(done, total int, label, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	el := time.Since(r.start).Truncate(100 * time.Millisecond)
	if !r.bar {
		line := fmt.Sprintf("[%s] %s", el, label)
		if detail != "" {
			line += ": " + detail
		}
		fmt.Fprintln(r.w, line)
		return
	}
	const width = 24
	filled := 0
	if total > 0 {
		filled = width * done / total
	}
	s := fmt.Sprintf("\r[%s%s] %d/%d %s (%s)", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), done, total, label, el)
	pad := r.last - len(s)
	r.last = len(s)
	if pad > 0 {
		s += strings.Repeat(" ", pad)
	}
	fmt.Fprint(r.w, s)
}

// Line prints a message that stays, above the bar if there is one.
func (r *Reporter) Line(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar && r.last > 0 {
		fmt.Fprint(r.w, "\r"+strings.Repeat(" ", r.last)+"\r")
		r.last = 0
	}
	fmt.Fprintln(r.w, msg)
}

// Done ends the bar's line.
func (r *Reporter) Done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bar && r.last > 0 {
		fmt.Fprintln(r.w)
		r.last = 0
	}
}
