// Package progress shows how a long run is going. On a terminal it is one
// line redrawn in place: what is done of what is planned, the time left
// at the pace measured so far, the last look's verdicts, what runs now.
// Elsewhere (CI logs, pipes, a VM console) it is a plain line per
// finished trial and per look, each at most MaxLine characters. Verbose
// prints every step as a line, with all that each trial measured.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"

	"github.com/tailgate-ci/tailgate/internal/termwidth"
)

// Mode is how a Reporter shows progress.
type Mode int

const (
	// Auto is Bar on a terminal when the CI environment variable is
	// not set, else Lines.
	Auto Mode = iota
	// Bar is one line redrawn in place.
	Bar
	// Lines is a line per finished trial and per look, and the lines
	// that stay (Line).
	Lines
	// Verbose is a line per step, each trial's with all it measured.
	Verbose
)

// ModeFor is Verbose when verbose (-v), else Auto.
func ModeFor(verbose bool) Mode {
	if verbose {
		return Verbose
	}
	return Auto
}

// MaxLine is the most characters of a line in Lines mode: a trial's or a
// look's is cut to it, a Line wrapped.
const MaxLine = 160

// Options say how a Reporter shows progress.
type Options struct {
	Mode Mode
	// Width is the terminal's columns, which the bar keeps within; 0
	// asks termwidth.
	Width int
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Reporter writes progress to a writer. Its methods may be called from
// several goroutines.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	mode  Mode
	width int
	now   func() time.Time
	start time.Time
	// counting is when Plan was first called: the pace's start.
	counting      time.Time
	unit          string
	done, planned int
	// deadline, when set, bounds the time left shown: a budget.
	deadline time.Time
	status   string
	verdict  string
	drawn    int // columns of the bar as last drawn; 0 when none is
	shown    string
}

// New returns a Reporter on w.
func New(w io.Writer, o Options) *Reporter {
	r := &Reporter{w: w, mode: o.Mode, width: o.Width, now: o.Now}
	if r.now == nil {
		r.now = time.Now
	}
	if r.mode == Auto {
		r.mode = Lines
		// A writer over a file (a guard of the terminal) says which.
		if f, ok := w.(interface{ Fd() uintptr }); ok && os.Getenv("CI") == "" && isatty.IsTerminal(f.Fd()) {
			r.mode = Bar
		}
	}
	if r.width <= 0 {
		r.width = termwidth.Of(w)
	}
	r.start = r.now()
	return r
}

// Mode is how r shows progress: Bar, Lines or Verbose.
func (r *Reporter) Mode() Mode { return r.mode }

// Plan sets how many units (rounds, trials) are planned. It may change
// as a run learns its pace, never below what is done.
func (r *Reporter) Plan(planned int, unit string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counting.IsZero() {
		r.counting = r.now()
	}
	r.planned, r.unit = max(planned, r.done), unit
	r.draw()
}

// Deadline says the run ends by t whatever is planned (a budget): the
// time left shown is never past it.
func (r *Reporter) Deadline(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
}

// Add counts n more units done; the count never goes back.
func (r *Reporter) Add(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n <= 0 {
		return
	}
	if r.counting.IsZero() {
		r.counting = r.now()
	}
	r.done += n
	r.planned = max(r.planned, r.done)
	r.draw()
}

// Counts returns the units done and planned.
func (r *Reporter) Counts() (done, planned int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done, r.planned
}

// Status says what runs now: on the bar, or as a line when Verbose.
func (r *Reporter) Status(s string) { r.setStatus(s, true) }

// Detail is a step only Verbose prints, unstamped; on the bar it is the
// status.
func (r *Reporter) Detail(s string) { r.setStatus(s, false) }

// setStatus puts s on the bar, or prints it when Verbose, after the
// elapsed time when stamped.
func (r *Reporter) setStatus(s string, stamped bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case Bar:
		r.status = s
		r.draw()
	case Verbose:
		if stamped {
			s = r.stamp() + s
		}
		r.println(s)
	}
}

// Trial reports a finished trial: short (what it measured of what is
// gated) as a line of Lines, full (all it measured) as one of Verbose.
func (r *Reporter) Trial(short, full string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case Lines:
		r.println(Cut(r.stamp()+short, MaxLine))
	case Verbose:
		r.println(r.stamp() + full)
	}
}

// Look reports a look at what the trials so far say: line as a line of
// Lines or Verbose; on the bar, verdict, until the next look.
func (r *Reporter) Look(line, verdict string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case Bar:
		r.verdict = verdict
		r.draw()
	case Lines:
		r.println(Cut(r.stamp()+line, MaxLine))
	default:
		r.println(r.stamp() + line)
	}
}

// Line prints a message that stays, above the bar if there is one,
// wrapped to the terminal's width; in Lines mode to MaxLine.
func (r *Reporter) Line(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.mode {
	case Lines:
		for _, l := range wrap(msg, MaxLine) {
			r.println(l)
		}
	case Bar:
		for _, l := range wrap(msg, max(r.width, 20)) {
			r.println(l)
		}
	default:
		r.println(msg)
	}
}

// End leaves the bar, as last drawn, on a line of its own.
func (r *Reporter) End() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == Bar && r.drawn > 0 {
		r.status = "" // what ran last is over
		r.draw()
		fmt.Fprintln(r.w)
		r.drawn, r.shown = 0, ""
	}
}

// println writes a line that stays: the bar is wiped first and drawn
// again after it.
func (r *Reporter) println(s string) {
	redraw := r.mode == Bar && r.drawn > 0
	if redraw {
		fmt.Fprint(r.w, "\r"+strings.Repeat(" ", r.drawn)+"\r")
		r.drawn, r.shown = 0, ""
	}
	fmt.Fprintln(r.w, s)
	if redraw {
		r.draw()
	}
}

// stamp is the time since r began, as a line's prefix: "[12.3s] ".
func (r *Reporter) stamp() string {
	return "[" + r.now().Sub(r.start).Truncate(100*time.Millisecond).String() + "] "
}

// barWidth is the columns of the bar's [=== ] part: half as many on a
// terminal narrower than 100 columns, to leave room for the verdicts.
func (r *Reporter) barWidth() int {
	if r.width < 100 {
		return 10
	}
	return 20
}

// draw redraws the bar (Bar mode, once something is planned or said).
func (r *Reporter) draw() {
	if r.mode != Bar || (r.planned == 0 && r.status == "") {
		return
	}
	s := Cut(r.barText(), max(r.width-1, 20))
	if s == r.shown && r.drawn > 0 {
		return
	}
	r.shown = s
	n := utf8.RuneCountInString(s)
	pad := ""
	if r.drawn > n {
		pad = strings.Repeat(" ", r.drawn-n)
	}
	fmt.Fprint(r.w, "\r"+s+pad)
	r.drawn = n
}

// barText is the bar's line, whole: "[=====     ] 12/40 rounds, 1m05s
// left | tcp.rr p99 no change | round 13: head trial".
func (r *Reporter) barText() string {
	var parts []string
	if r.planned > 0 {
		bw := r.barWidth()
		filled := bw * r.done / r.planned
		p := fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("=", filled), strings.Repeat(" ", bw-filled), r.done, r.planned, r.unit)
		elapsed := r.now().Sub(r.counting)
		switch {
		case r.done >= r.planned:
			p += ", " + Duration(elapsed)
		case r.done > 0:
			per := elapsed / time.Duration(r.done)
			left := per * time.Duration(r.planned-r.done)
			if !r.deadline.IsZero() {
				left = max(min(left, r.deadline.Sub(r.now())), 0)
			}
			p += ", " + Duration(left) + " left"
		}
		parts = append(parts, p)
	}
	for _, s := range []string{r.verdict, r.status} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " | ")
}

// Duration is d as a short time: "42s", "3m05s", "1h02m".
func Duration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// Cut is s cut to at most n characters, "…" ending what was cut.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	rs := []rune(s)
	return string(rs[:max(n-1, 0)]) + "…"
}

// wrap breaks s at spaces into lines of at most n characters, those after
// the first indented by two; a word longer than a line is cut.
func wrap(s string, n int) []string {
	if utf8.RuneCountInString(s) <= n {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > n:
			lines = append(lines, Cut(line, n))
			line = "  " + word
		default:
			line += " " + word
		}
	}
	return append(lines, Cut(line, n))
}
