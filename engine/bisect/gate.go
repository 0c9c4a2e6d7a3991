package bisect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tailgate-ci/tailgate/internal/childproc"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Gate measures one commit's build against the good commit's build in
// one job. An error that is ErrBadInput aborts the bisect as the user's
// to fix; any other aborts it as the machinery's.
type Gate interface {
	Gate(ctx context.Context, r Request) (*Measure, error)
}

// Request is one gate: the directories where the scenario's relative
// paths resolve for the good build and for the commit's, and the
// directory for the gate's files.
type Request struct {
	Commit       string
	GoodDir, Dir string
	Out          string
	// Scratch says Out goes when the bisect ends (no -o): what the gate
	// says it wrote there is not passed on to Log.
	Scratch bool
	// Kernels are the good build's and the commit's --kernel values in
	// a kernel's bisect (each NAME=IMAGE [CMDLINE]); "" in a program's.
	Kernels [2]string
}

// Measure is what a gate said of a commit: the verdict of its gated
// tests taken together, its headline and the gated verdicts themselves.
type Measure struct {
	Verdict  stats.Kind
	Headline string
	Gated    []render.JSONVerdict
}

// Verdict is the gated tests' verdict taken together: a regression if any
// is one, else inconclusive if any is, else no change (an improvement is
// no change for a bisect). No gated test at all is inconclusive.
func Verdict(gated []render.JSONVerdict) stats.Kind {
	var reg, open, decided bool
	for _, v := range gated {
		switch v.Verdict {
		case stats.Regression:
			reg = true
		case stats.NoChange, stats.Improvement:
			decided = true
		default:
			open = true
		}
	}
	switch {
	case reg:
		return stats.Regression
	case open || !decided:
		return stats.Inconclusive
	}
	return stats.NoChange
}

// Worst is the gated verdict to show for m: the one with the largest
// ratio among those of m's verdict.
func (m *Measure) Worst() *render.JSONVerdict {
	var w *render.JSONVerdict
	for i := range m.Gated {
		v := &m.Gated[i]
		if k := v.Verdict; k != m.Verdict && !(m.Verdict == stats.NoChange && k == stats.Improvement) {
			continue
		}
		if w == nil || ratio(v) > ratio(w) {
			w = v
		}
	}
	return w
}

func ratio(v *render.JSONVerdict) float64 {
	if v.Ratio == nil {
		return 0
	}
	return *v.Ratio
}

// ExecGate gates each step with tailgate's own same-job gate, in a child
// process of Exe (a fresh one per step, as a trial is):
//
//	Exe gate SCENARIO --variant good:dir=GOOD --variant COMMIT:dir=DIR \
//	    -o OUT/result.json --format json=OUT/report.json --format text=OUT/report.txt ARGS...
//
// The gate's progress goes to Log and OUT/gate.log; its JSON report is
// read for the verdicts.
type ExecGate struct {
	Exe      string
	Scenario string
	Args     []string
	Log      io.Writer
}

// GateArgs are the arguments ExecGate gives tailgate for r: two host
// variants of the program's builds, or in a kernel's bisect two VMs.
func (g *ExecGate) GateArgs(r Request) []string {
	args := []string{"gate", g.Scenario,
		"--variant", "good:dir=" + r.GoodDir, "--variant", Short(r.Commit) + ":dir=" + r.Dir}
	if r.Kernels[0] != "" {
		args = []string{"gate", g.Scenario, "--kernel", r.Kernels[0], "--kernel", r.Kernels[1]}
	}
	args = append(args,
		"-o", filepath.Join(r.Out, "result.json"),
		"--format", "json="+filepath.Join(r.Out, "report.json"),
		"--format", "text="+filepath.Join(r.Out, "report.txt"))
	return append(args, g.Args...)
}

func (g *ExecGate) Gate(ctx context.Context, r Request) (*Measure, error) {
	logf, err := safefile.OpenFile(filepath.Join(r.Out, "gate.log"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	var tail tailBuffer
	cmd := exec.CommandContext(ctx, g.Exe, g.GateArgs(r)...)
	cmd.Stdout = logf
	log := g.Log
	if r.Scratch && log != nil {
		drop := &dropLines{w: log, mention: r.Out + string(filepath.Separator)}
		defer drop.Flush()
		log = drop
	}
	cmd.Stderr = io.MultiWriter(log, logf, &tail)
	// An interrupt reaches the gate as one from a terminal would, so it
	// restores what it set and stops its trials.
	signalGroup(cmd, syscall.SIGINT)
	err = run(cmd)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	code := cmd.ProcessState.ExitCode()
	switch {
	case code == 2:
		return nil, badInputf("the gate of %s refused its input: %s", Short(r.Commit), tail.last())
	case code != 0 && code != 1:
		return nil, fmt.Errorf("the gate of %s failed (%v): %s", Short(r.Commit), err, tail.last())
	}
	b, err := os.ReadFile(filepath.Join(r.Out, "report.json"))
	if err != nil {
		return nil, fmt.Errorf("the gate of %s: %w", Short(r.Commit), err)
	}
	return ParseReport(b)
}

// ParseReport reads a same-job gate's JSON report, the compare document
// of its two sides (docs/compare.schema.json), into a Measure.
func ParseReport(b []byte) (*Measure, error) {
	var doc render.JSONReport
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("gate report: %w", err)
	}
	if doc.Schema != render.JSONSchemaVersion {
		return nil, fmt.Errorf("gate report: schema %d, want %d", doc.Schema, render.JSONSchemaVersion)
	}
	m := &Measure{Headline: doc.Headline}
	for _, s := range doc.Scenarios {
		for _, v := range s.Verdicts {
			if v.Gated {
				m.Gated = append(m.Gated, v)
			}
		}
	}
	m.Verdict = Verdict(m.Gated)
	return m, nil
}

// signalGroup runs cmd in a process group of its own and makes a
// cancelled context send sig to the whole group (a build's make and its
// compilers, a gate's trials), then kill it if it has not ended.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	childproc.Group(cmd, sig, 30*time.Second)
}

// run runs cmd (signalGroup's) so that it dies with tailgate, even one
// killed outright (childproc.Start).
func run(cmd *exec.Cmd) error {
	if err := childproc.Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// tailBuffer keeps the last lines written to it, for an error message.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8192 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

// last is the last line that says something.
func (t *tailBuffer) last() string {
	lines := bytes.Split(bytes.TrimSpace(t.b), []byte("\n"))
	if s := strings.TrimSpace(string(lines[len(lines)-1])); s != "" {
		return s
	}
	return "no message"
}

// lines is its last n lines.
func (t *tailBuffer) lines(n int) []string {
	s := strings.TrimRight(string(t.b), "\n")
	if s == "" {
		return nil
	}
	l := strings.Split(s, "\n")
	return l[max(0, len(l)-n):]
}

// dropLines passes on the lines written to it, but those that mention a
// path under a directory that will be gone.
type dropLines struct {
	w       io.Writer
	mention string
	partial []byte
}

func (d *dropLines) Write(p []byte) (int, error) {
	d.partial = append(d.partial, p...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := d.partial[:i+1]
		if !bytes.Contains(line, []byte(d.mention)) {
			if _, err := d.w.Write(line); err != nil {
				return len(p), err
			}
		}
		d.partial = d.partial[i+1:]
	}
}

// Flush passes on a last line without its newline.
func (d *dropLines) Flush() {
	if len(d.partial) > 0 && !bytes.Contains(d.partial, []byte(d.mention)) {
		d.w.Write(d.partial)
	}
	d.partial = nil
}
