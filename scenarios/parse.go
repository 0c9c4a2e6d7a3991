package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracers"
)

// ParseError is a bad scenario file: where and what.
type ParseError = config.Error

// Load reads and parses the scenario file at path. A file over
// MaxInputSize is refused without reading it.
func Load(path string) (*Scenario, error) {
	b, err := ReadInput(path)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(path, b)
}

// Limits of YAML input, scenario files and targets files alike: the YAML
// parser's time and memory grow faster than the input's nesting (100 000
// nested "[", 200 KB, took 22 s and 15 GB), so deep or large input is
// refused before it is parsed. A scenario is a few hundred bytes, nested
// four deep.
const (
	MaxInputSize  = 1 << 20 // bytes
	MaxInputDepth = 64      // nested collections, block and flow
	// MaxDescription is the longest description, in bytes: it is copied
	// into every Result.
	MaxDescription = 4 << 10
)

// ReadInput reads a YAML input file of at most MaxInputSize bytes; a larger
// one is a *ParseError, found from its size before it is read (or after
// MaxInputSize bytes of a pipe).
func ReadInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxInputSize {
		return nil, tooLarge(path, st.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxInputSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInputSize {
		return nil, tooLarge(path, -1)
	}
	return b, nil
}

func tooLarge(source string, size int64) *ParseError {
	what := "more than 1 MiB"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes", size)
	}
	return &ParseError{Source: source, Line: 1, Column: 1, Msg: fmt.Sprintf("the file is %s; the limit is %d bytes (1 MiB)", what, MaxInputSize)}
}

// CheckInput checks YAML input against MaxInputSize and MaxInputDepth
// before it is parsed and returns it without a UTF-8 byte order mark. An
// error is a *ParseError at the line where the input gets too deep.
func CheckInput(source string, b []byte) ([]byte, error) {
	if len(b) > MaxInputSize {
		return nil, tooLarge(source, int64(len(b)))
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if line := tooDeep(b, MaxInputDepth); line > 0 {
		return nil, &ParseError{Source: source, Line: line, Column: 1,
			Msg: fmt.Sprintf("nested more than %d deep; the limit is %d levels of lists and mappings", MaxInputDepth, MaxInputDepth)}
	}
	return b, nil
}

// tooDeep returns the first line at which the collections of YAML input b
// nest deeper than limit, or 0. It scans the bytes once, without parsing:
// block collections by their indentation (and "- - x" compact sequences),
// flow collections by their brackets, skipping quoted scalars, block
// scalars and comments. What it cannot place counts as depth: a mistaken
// refusal needs 64 levels of odd text, a mistaken pass would hand the
// parser the input it chokes on.
func tooDeep(b []byte, limit int) int {
	var indents []int // columns of the open block collections
	flow := 0         // open flow collections
	var quote byte    // the quote of the scalar being read, or 0
	literal := -1     // in a block scalar: the indentation its lines exceed
	tokenStart := true
	for n := 1; len(b) > 0; n++ {
		var ln []byte
		ln, b, _ = bytes.Cut(b, []byte("\n"))
		ln = bytes.TrimSuffix(ln, []byte("\r"))
		indent := 0
		for indent < len(ln) && ln[indent] == ' ' {
			indent++
		}
		blank := indent == len(ln)
		if literal >= 0 {
			if blank || indent > literal {
				continue
			}
			literal = -1
		}
		i := 0
		if quote == 0 && flow == 0 {
			if blank || ln[indent] == '#' {
				continue
			}
			for len(indents) > 0 && indents[len(indents)-1] >= indent {
				indents = indents[:len(indents)-1]
			}
			indents = append(indents, indent)
			i = indent
			// "- - x" and "? x" open a collection each, on one line.
			for i < len(ln) && (ln[i] == '-' || ln[i] == '?') && (i+1 == len(ln) || ln[i+1] == ' ') {
				i++
				for i < len(ln) && ln[i] == ' ' {
					i++
				}
				indents = append(indents, i)
			}
			if len(indents) > limit {
				return n
			}
			tokenStart = true
		}
	scan:
		for ; i < len(ln); i++ {
			c := ln[i]
			if quote != 0 {
				switch {
				case quote == '"' && c == '\\':
					i++
				case quote == '\'' && c == '\'' && i+1 < len(ln) && ln[i+1] == '\'':
					i++
				case c == quote:
					quote, tokenStart = 0, false
				}
				continue
			}
			next := byte(' ')
			if i+1 < len(ln) {
				next = ln[i+1]
			}
			switch {
			case c == '#' && (i == 0 || ln[i-1] == ' ' || ln[i-1] == '\t'):
				break scan
			case c == ' ' || c == '\t':
			case c == '[' || c == '{':
				// Outside a flow collection a bracket only opens one at the
				// start of a value; counting it elsewhere too errs on the
				// side of depth but would refuse "a[0]" text repeated.
				if tokenStart || flow > 0 {
					flow++
					tokenStart = true
					if len(indents)+flow > limit {
						return n
					}
				}
			case (c == ']' || c == '}') && flow > 0:
				flow--
				tokenStart = false
			case c == ',' && flow > 0:
				tokenStart = true
			case c == ':' && (next == ' ' || next == '\t' || flow > 0 && bytes.IndexByte([]byte(",[]{}"), next) >= 0):
				tokenStart = true
			case !tokenStart:
			case c == '"' || c == '\'':
				quote = c
			case (c == '|' || c == '>') && flow == 0:
				literal = indent
				break scan
			case (c == '-' || c == '?') && (next == ' ' || next == '\t'):
			case c == '&' || c == '!':
				// An anchor or tag: the value follows it.
				for i+1 < len(ln) && ln[i+1] != ' ' {
					i++
				}
			default:
				tokenStart = false
			}
		}
	}
	return 0
}

var (
	topKeys     = []string{"name", "description", "workload", "tracers", "trials", "warmup", "duration", "evidence", "gate"}
	percentiles = []string{"p50", "p90", "p99", "p99.9", "max"}
	nameRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

const (
	maxNameLen  = 64
	maxTrials   = 1000
	maxWarmup   = 10 * time.Minute
	maxEvidence = 1000
	minDuration = 10 * time.Millisecond
	maxDuration = time.Hour
)

// Limits a scenario file enforces on trials and durations, for the flags
// that override them.
const (
	MaxTrials   = maxTrials
	MaxWarmup   = maxWarmup
	MinDuration = minDuration
	MaxDuration = maxDuration
)

// Parse parses and validates a scenario and fills in defaults. source names
// the input in errors and becomes Scenario.Source. Every error is a
// *ParseError pointing at the offending key or value.
//
// Defaults: trials 5, warmup 1s, duration 5s; workload parameters as the
// Default constants say (syscall read of 4096 bytes, 1 thread, closed loop;
// pingpong over a pipe, 1 pair; timer every 1ms at SCHED_OTHER; fork mode
// fork; no noise, except the noise kind: one hog per CPU). A syscall tracer
// without syscalls traces the syscall workload's syscall.
func Parse(source string, b []byte) (s *Scenario, err error) {
	p := &scenarioParser{source: source}
	b, err = CheckInput(source, b)
	if err != nil {
		return nil, err
	}
	f, err := parseYAML(b)
	if err != nil {
		return nil, p.yamlError(err)
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, p.errAt(nil, "empty scenario; a scenario is a mapping with keys: %s", strings.Join(topKeys, ", "))
	}
	if len(f.Docs) > 1 {
		d := f.Docs[1]
		var at ast.Node = d
		if d.Body != nil {
			at = d.Body
		}
		return nil, p.errAt(at, "a second YAML document; write one scenario per file")
	}
	return p.scenario(f.Docs[0].Body)
}

// parseYAML parses b into a syntax tree. The parser is third-party code
// fed user input; a panic in it becomes an error at 1:1.
func parseYAML(b []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("cannot parse YAML: %v", r)
		}
	}()
	return parser.ParseBytes(b, 0)
}

type scenarioParser struct {
	source string
}

// node returns the config.Node of n.
func (p *scenarioParser) node(n ast.Node) config.Node { return config.NewNode(p.source, n) }

func (p *scenarioParser) errAt(n ast.Node, format string, args ...any) *ParseError {
	return p.node(n).Errorf(format, args...)
}

func (p *scenarioParser) yamlError(err error) *ParseError {
	var ye yaml.Error
	if errors.As(err, &ye) {
		e := &ParseError{Source: p.source, Line: 1, Column: 1, Msg: "bad YAML: " + ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil && tk.Position.Line >= 1 {
			e.Line, e.Column = tk.Position.Line, max(tk.Position.Column, 1)
		}
		return e
	}
	return &ParseError{Source: p.source, Line: 1, Column: 1, Msg: "bad YAML: " + err.Error()}
}

func (p *scenarioParser) scenario(body ast.Node) (*Scenario, error) {
	fs, err := p.node(body).Fields("scenario", topKeys)
	if err != nil {
		return nil, err
	}
	if _, ok := body.(*ast.NullNode); ok {
		return nil, p.errAt(body, "empty scenario; a scenario is a mapping with keys: %s", strings.Join(topKeys, ", "))
	}
	s := &Scenario{
		Source:   p.source,
		Trials:   DefaultTrials,
		Warmup:   DefaultWarmup,
		Duration: DefaultDuration,
		Evidence: DefaultEvidence,
	}
	var haveName, haveWorkload bool
	var tracersAt, gate *config.Field
	for i := range fs {
		f := fs[i]
		switch f.Key {
		case "name":
			if s.Name, err = f.String(); err != nil {
				return nil, err
			}
			if !nameRE.MatchString(s.Name) || len(s.Name) > maxNameLen {
				return nil, f.Value.Errorf("bad name %q; use lowercase letters, digits and dashes (at most %d), e.g. syscall-read", s.Name, maxNameLen)
			}
			haveName = true
		case "description":
			if s.Description, err = f.String(); err != nil {
				return nil, err
			}
			s.Description = strings.TrimSpace(s.Description)
			if len(s.Description) > MaxDescription {
				return nil, f.Value.Errorf("description is %d bytes; the limit is %d (4 KiB)", len(s.Description), MaxDescription)
			}
		case "workload":
			if s.Workload, err = p.workload(f); err != nil {
				return nil, err
			}
			haveWorkload = true
		case "tracers":
			tracersAt = &fs[i]
		case "trials":
			if s.Trials, err = f.Int(1, maxTrials); err != nil {
				return nil, err
			}
		case "warmup":
			if s.Warmup, err = f.Duration(0, maxWarmup); err != nil {
				return nil, err
			}
		case "duration":
			if s.Duration, err = f.Duration(minDuration, maxDuration); err != nil {
				return nil, err
			}
		case "evidence":
			if s.Evidence, err = f.Int(0, maxEvidence); err != nil {
				return nil, err
			}
		case "gate":
			gate = &fs[i]
		}
	}
	if !haveName {
		return nil, p.errAt(body, "scenario has no name; add e.g. name: my-scenario")
	}
	if !haveWorkload {
		return nil, p.errAt(body, "scenario has no workload; add workload: with kind: %s", strings.Join(kindNames(), ", "))
	}
	// Tracers and the gate are read last: their defaults and checks depend
	// on the workload.
	if tracersAt != nil {
		if s.Tracers, err = p.tracers(*tracersAt, s.Workload); err != nil {
			return nil, err
		}
	}
	metrics := Metrics(s)
	if len(metrics) == 0 {
		at := body
		if tracersAt != nil {
			at = tracersAt.KeyAt.AST()
		}
		return nil, p.errAt(at, "scenario measures nothing; add tracers (%s) or use a timer workload", strings.Join(tracers.Names(), ", "))
	}
	if gate != nil {
		if s.Gate, err = p.gate(*gate, metrics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// workload reads the workload block: kind, the keys the built-in kinds
// share (fields of Workload), noise, and the kind's own keys, which its
// WorkloadKind.Parse reads.
func (p *scenarioParser) workload(wf config.Field) (Workload, error) {
	var w Workload
	allKeys := []string{"kind"}
	for _, k := range workloadKinds {
		for _, key := range append(slices.Clone(k.Keys), "noise") {
			if !slices.Contains(allKeys, key) {
				allKeys = append(allKeys, key)
			}
		}
	}
	fs, err := wf.Value.Fields("workload", allKeys)
	if err != nil {
		return w, err
	}
	i := slices.IndexFunc(fs, func(f config.Field) bool { return f.Key == "kind" })
	if i < 0 {
		return w, wf.KeyAt.Errorf("workload has no kind; allowed: %s", strings.Join(kindNames(), ", "))
	}
	if name, err := fs[i].String(); err == nil {
		if k, ok := lookupKind(name); ok && k.Internal {
			// Its Parse says what the kind is for, and that files do not
			// name it.
			w.Kind = name
			return w, k.Parse(&w, wf.Value, fs)
		}
	}
	if w.Kind, err = fs[i].OneOf("workload kind", kindNames()); err != nil {
		return w, err
	}
	kind, _ := lookupKind(w.Kind)
	keys := append(slices.Clone(kind.Keys), "noise")
	shared := w.sharedKeys()
	var own []config.Field
	var size *config.Field
	for i, f := range fs {
		if f.Key == "kind" {
			continue
		}
		if !slices.Contains(keys, f.Key) {
			return w, f.KeyAt.Errorf("%s does not apply to workload kind %s; %s takes: %s", f.Key, w.Kind, w.Kind, strings.Join(keys, ", "))
		}
		if _, ok := shared[f.Key]; !ok && f.Key != "noise" {
			own = append(own, f)
			continue
		}
		switch f.Key {
		case "syscall":
			w.Syscall, err = f.OneOf("syscall for the syscall workload", workloadSyscalls)
		case "size":
			size = &fs[i]
			w.Size, err = f.Int(1, maxSize)
		case "threads":
			w.Threads, err = f.Int(1, maxThreads)
		case "rate":
			r, ok := f.Number()
			if !ok || checkRate(r) != nil {
				err = f.Value.Errorf("rate must be a number from 0 (closed loop) to %g operations per second per thread, got %q", maxRate, f.Value.Text())
			}
			w.Rate = r
		case "channel":
			w.Channel, err = f.OneOf("pingpong channel", pingpongChannels)
		case "pairs":
			w.Pairs, err = f.Int(1, maxPairs)
		case "interval":
			w.Interval, err = f.Duration(minInterval, maxInterval)
		case "priority":
			w.Priority, err = f.Int(0, maxPriority)
		case "mode":
			w.Mode, err = f.OneOf("fork mode", forkModes)
		case "mlock":
			b, ok := f.Value.AST().(*ast.BoolNode)
			if !ok {
				err = f.Value.Errorf("mlock must be true or false, got %s %q", f.Value.Describe(), f.Value.Text())
				break
			}
			w.MLock = &b.Value
		case "dma_latency":
			var d int
			d, err = f.Int(DMALatencyLeave, maxDMALatency)
			w.DMALatency = &d
			if err != nil {
				err = f.Value.Errorf("dma_latency must be an integer from 0 to %d µs held in /dev/cpu_dma_latency, or -1 to leave it alone, got %q", maxDMALatency, f.Value.Text())
			}
		case "sleep":
			w.Sleep, err = f.OneOf("timer sleep", timerSleeps)
		case "cpus":
			w.CPUs, err = ParseCPUList(f.Value.Text())
			if err != nil {
				err = f.Value.Errorf("cpus: %v", err)
			}
		case "noise":
			if s, ok := f.Value.Name(); ok && s == "ncpu" {
				w.Noise = NoiseNumCPU
			} else if _, ok := f.Value.AST().(*ast.IntegerNode); !ok {
				err = f.Value.Errorf(`noise must be "ncpu" or a number of hog threads from 0 to %d, got %q`, maxNoise, f.Value.Text())
			} else {
				w.Noise, err = f.Int(0, maxNoise)
			}
		}
		if err != nil {
			return w, err
		}
	}
	if kind.Parse != nil {
		if err := kind.Parse(&w, wf.KeyAt, own); err != nil {
			return w, err
		}
	}
	if size != nil && w.Syscall == "getppid" {
		return w, size.KeyAt.Errorf("size does not apply to syscall getppid; remove it")
	}
	w = w.withDefaults()
	if err := w.check(); err != nil {
		// Unreachable when the checks above agree with check.
		return w, wf.KeyAt.Errorf("%v", err)
	}
	return w, nil
}

// tracers reads the tracers block: each key names a tracer of the
// registry, which parses its own config.
func (p *scenarioParser) tracers(tf config.Field, w Workload) (Tracers, error) {
	fs, err := tf.Value.Fields("tracers", tracers.Names())
	if err != nil {
		return nil, err
	}
	var t Tracers
	for _, f := range fs {
		k, _ := tracers.Lookup(f.Key) // Fields allowed only registered names
		c, err := k.Parse(f, tracerWorkload(w))
		if err != nil {
			return nil, err
		}
		if t == nil {
			t = Tracers{}
		}
		t[k.Name] = c
	}
	return t, nil
}

func (p *scenarioParser) gate(gf config.Field, metrics []string) (map[string]map[string]float64, error) {
	fs, err := gf.Value.Fields("gate", nil)
	if err != nil {
		return nil, err
	}
	gate := map[string]map[string]float64{}
	for _, f := range fs {
		if f.Key != "*" && !slices.Contains(metrics, f.Key) {
			return nil, f.KeyAt.Errorf("gate names %q, which this scenario does not measure; metrics: %s, or * for all", f.Key, strings.Join(metrics, ", "))
		}
		pfs, err := f.Value.Fields("gate."+f.Key, percentiles)
		if err != nil {
			return nil, err
		}
		if len(pfs) == 0 {
			return nil, f.KeyAt.Errorf("gate %s has no thresholds; add e.g. p99: 10%%", f.Key)
		}
		th := map[string]float64{}
		for _, pf := range pfs {
			if th[pf.Key], err = p.threshold(pf); err != nil {
				return nil, err
			}
		}
		gate[f.Key] = th
	}
	if len(gate) == 0 {
		return nil, nil
	}
	return gate, nil
}

// threshold reads "10%" or a fraction such as 0.10.
func (p *scenarioParser) threshold(f config.Field) (float64, error) {
	bad := func() error {
		return f.Value.Errorf("bad threshold %q for %s; write a percentage such as 10%% or a fraction such as 0.10", f.Value.Text(), f.Key)
	}
	if s, ok := f.Value.AST().(*ast.StringNode); ok {
		num, isPct := strings.CutSuffix(strings.TrimSpace(s.Value), "%")
		if !isPct {
			return 0, bad()
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, bad()
		}
		if v < 0 {
			return 0, f.Value.Errorf("threshold %q for %s must not be negative", s.Value, f.Key)
		}
		return v / 100, nil
	}
	v, ok := f.Number()
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, bad()
	}
	if v < 0 {
		return 0, f.Value.Errorf("threshold %s for %s must not be negative", f.Value.Text(), f.Key)
	}
	if v > 1 {
		return 0, f.Value.Errorf("threshold %s for %s is a fraction above 1; a bare number is a fraction (0.10 = 10%%), write %s%% for a percentage", f.Value.Text(), f.Key, f.Value.Text())
	}
	return v, nil
}
