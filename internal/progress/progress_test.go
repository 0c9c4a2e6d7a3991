package progress

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// gateLooks are the looks of the simulated gate: after these rounds.
var gateLooks = []int{12, 15, 19, 24, 30, 37, 46}

// fullDetail is a trial's detail with every metric, as long as
// tcp-rr-small's (806 characters).
func fullDetail() string {
	d := "5182 ops in 0.2s"
	for i := range 40 {
		d += fmt.Sprintf("; irq.hard.virtio%d-reporting n=0", i)
	}
	return d
}

// simulateGate drives r as a same-job gate does: 200 rounds planned
// until the first three rounds set the pace, then the looks' last round;
// each round two trials of 2 s, each with its steps; a look after each
// of gateLooks. It returns the trials and looks reported.
func simulateGate(r *Reporter, clock *fakeClock) (trials, looks int) {
	r.Plan(200, "rounds")
	planned := gateLooks[len(gateLooks)-1]
	for round := 1; round <= planned; round++ {
		for _, side := range []string{"base", "head"} {
			label := fmt.Sprintf("round %d, %s: tcp-rr-small", round, side)
			r.Status(label + ": attaching tracers")
			r.Status(label + ": warmup")
			clock.advance(2 * time.Second)
			r.Trial(label+": trial done: 5182 ops in 0.2s; tcp.rr n=5182", label+": trial done: "+fullDetail())
			trials++
		}
		r.Add(1)
		switch {
		case round < 3:
			r.Plan(90, "rounds") // what the budget allows at the pace so far
		case round == 3:
			r.Plan(planned, "rounds")
		}
		for k, at := range gateLooks {
			if at == round {
				verdict := "net.tcp.deliver p99 no change, tcp.rr p99 undecided"
				r.Look(fmt.Sprintf("look %d/%d after round %d: 2 gated, 1 undecided, 0 regressions (%s)", k+1, len(gateLooks), round, verdict), verdict)
				looks++
			}
		}
	}
	r.End()
	return trials, looks
}

var frameCounts = regexp.MustCompile(`\] (\d+)/(\d+) rounds`)

// TestBarOnTerminal: on a terminal the bar's counts never go back, it
// ends at planned/planned, an ETA from the rounds' pace shows from the
// first round on, the last look's verdicts show, and no frame is wider
// than the terminal.
func TestBarOnTerminal(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	r := New(&out, Options{Mode: Bar, Width: 80, Now: clock.now})
	simulateGate(r, clock)
	if strings.Count(out.String(), "\n") != 1 {
		t.Errorf("the bar printed %d lines, want one, its last frame:\n%q", strings.Count(out.String(), "\n"), out.String())
	}
	frames := strings.FieldsFunc(out.String(), func(r rune) bool { return r == '\r' || r == '\n' })
	lastDone, etaAt, verdictAt := -1, 0, 0
	var last string
	for i, f := range frames {
		if n := utf8.RuneCountInString(f); n > 79 {
			t.Errorf("frame %d is %d columns, over the terminal's 80 less one: %q", i, n, f)
		}
		m := frameCounts.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		done, _ := strconv.Atoi(m[1])
		planned, _ := strconv.Atoi(m[2])
		if done < lastDone {
			t.Errorf("frame %d: count went back from %d to %d: %q", i, lastDone, done, f)
		}
		if planned < done {
			t.Errorf("frame %d: %d done of %d planned", i, done, planned)
		}
		lastDone, last = done, strings.TrimRight(f, " ")
		if done >= 1 && done < planned && strings.Contains(f, " left") && etaAt == 0 {
			etaAt = done
		}
		if strings.Contains(f, "| net.tcp.deliver p99 no change") && verdictAt == 0 {
			verdictAt = done
		}
	}
	if want := "[==========] 46/46 rounds, 3m04s"; !strings.HasPrefix(last, want) {
		t.Errorf("last frame %q, want it to begin %q", last, want)
	}
	if etaAt != 1 {
		t.Errorf("the ETA first showed after round %d, want after the first", etaAt)
	}
	if verdictAt != gateLooks[0] {
		t.Errorf("the verdicts first showed after round %d, want after the first look's (%d)", verdictAt, gateLooks[0])
	}
}

// TestBarETA: the time left is the rounds left at the pace measured so
// far.
func TestBarETA(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	r := New(&out, Options{Mode: Bar, Width: 100, Now: clock.now})
	r.Plan(10, "rounds")
	if strings.Contains(out.String(), "left") {
		t.Errorf("an ETA before any round ended: %q", out.String())
	}
	clock.advance(4 * time.Second)
	r.Add(1)
	if !strings.HasSuffix(out.String(), "1/10 rounds, 36s left") {
		t.Errorf("after one round of 4 s: %q, want 36s left", out.String())
	}
	clock.advance(56 * time.Second)
	r.Add(1)
	if !strings.HasSuffix(out.String(), "2/10 rounds, 4m00s left") {
		t.Errorf("after two rounds in 60 s: %q, want 4m00s left", out.String())
	}
}

// TestBarETADeadline: under a deadline (a budget), the time left shown
// is never past it, whatever is planned.
func TestBarETADeadline(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	r := New(&out, Options{Mode: Bar, Width: 100, Now: clock.now})
	r.Deadline(clock.t.Add(30 * time.Second))
	r.Plan(200, "rounds")
	clock.advance(1100 * time.Millisecond)
	r.Add(1)
	if !strings.HasSuffix(out.String(), "1/200 rounds, 29s left") {
		t.Errorf("200 rounds planned, 1.1 s a round, 30 s budget: %q, want 29s left", out.String())
	}
	clock.advance(40 * time.Second)
	r.Add(1)
	if !strings.HasSuffix(strings.TrimRight(out.String(), " "), "2/200 rounds, 0s left") {
		t.Errorf("past the deadline: %q, want 0s left", out.String())
	}
}

// TestPiped: piped, the gate prints a line per trial and per look, no
// more, each within MaxLine; -v prints every step and the full detail.
func TestPiped(t *testing.T) {
	var out bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	trials, looks := simulateGate(New(&out, Options{Mode: Lines, Now: clock.now}), clock)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) > trials+looks {
		t.Errorf("%d lines for %d trials and %d looks", len(lines), trials, looks)
	}
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > MaxLine {
			t.Errorf("line %d is %d characters, over %d: %q", i+1, n, MaxLine, l)
		}
		if strings.Contains(l, "\r") {
			t.Errorf("line %d redraws: %q", i+1, l)
		}
	}
	if want := "[2s] round 1, base: tcp-rr-small: trial done: 5182 ops in 0.2s; tcp.rr n=5182"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}

	out.Reset()
	simulateGate(New(&out, Options{Mode: Verbose, Now: clock.now}), clock)
	if n := strings.Count(out.String(), "\n"); n != 3*trials+looks {
		t.Errorf("verbose: %d lines, want a line per step of each trial and per look (%d)", n, 3*trials+looks)
	}
	if !strings.Contains(out.String(), fullDetail()) {
		t.Error("verbose: lacks the trials' full detail")
	}
}

// TestLineWrapsPiped: a line that stays is wrapped to MaxLine piped, not
// cut; on a terminal it is printed above the bar, which is drawn again.
func TestLineWrapsPiped(t *testing.T) {
	long := strings.Repeat("word ", 70)
	var out bytes.Buffer
	New(&out, Options{Mode: Lines}).Line(long)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(out.String()), " ") != strings.TrimSpace(long) {
		t.Errorf("wrapped into %d lines, words kept %v:\n%s", len(lines), strings.Join(strings.Fields(out.String()), " ") == strings.TrimSpace(long), out.String())
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > MaxLine {
			t.Errorf("%d characters: %q", utf8.RuneCountInString(l), l)
		}
	}

	out.Reset()
	r := New(&out, Options{Mode: Bar, Width: 60})
	r.Plan(4, "trials")
	r.Line("calibrate: run 1 of 2 on host")
	want := "\r[          ] 0/4 trials" + "\r" + strings.Repeat(" ", 23) + "\r" + "calibrate: run 1 of 2 on host\n" + "\r[          ] 0/4 trials"
	if out.String() != want {
		t.Errorf("got %q\nwant %q", out.String(), want)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		400 * time.Millisecond:                    "0s",
		42 * time.Second:                          "42s",
		185 * time.Second:                         "3m05s",
		time.Hour + 2*time.Minute + 3*time.Second: "1h02m",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%s) = %q, want %q", d, got, want)
		}
	}
}
