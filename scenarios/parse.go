package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
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
	gotoken "github.com/goccy/go-yaml/token"
)

// ParseError is a bad scenario file: where and what.
type ParseError struct {
	Source       string // file path or "builtin:NAME.yaml"
	Line, Column int    // 1-based
	Msg          string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Source, e.Line, e.Column, e.Msg)
}

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
	topKeys     = []string{"name", "description", "workload", "tracers", "trials", "warmup", "duration", "gate"}
	tracerKeys  = []string{"syscall", "sched"}
	percentiles = []string{"p50", "p90", "p99", "p99.9", "max"}
	nameRE      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

const (
	maxNameLen  = 64
	maxTrials   = 1000
	maxWarmup   = 10 * time.Minute
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

// field is one key: value entry of a mapping.
type field struct {
	key   string
	keyAt ast.Node
	value ast.Node // never nil: an empty value is a *ast.NullNode
}

func (p *scenarioParser) errAt(n ast.Node, format string, args ...any) *ParseError {
	line, col := position(n)
	return &ParseError{Source: p.source, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
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

// position returns where n starts: for a block mapping, its first key.
func position(n ast.Node) (line, col int) {
	if n == nil {
		return 1, 1
	}
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 {
			return position(m.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return position(m.Key)
	}
	tk := token(n)
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return 1, 1
	}
	return tk.Position.Line, max(tk.Position.Column, 1)
}

// token returns n's token, or nil. Some nodes of a tree built from odd
// input have no token and panic in GetToken (a document without a
// "---"), so this asks only the node types known to be safe.
func token(n ast.Node) *gotoken.Token {
	switch d := n.(type) {
	case nil:
		return nil
	case *ast.DocumentNode:
		return d.Start
	}
	return n.GetToken()
}

// text is the source text of a scalar node.
func text(n ast.Node) string {
	if tk := token(n); tk != nil {
		return tk.Value
	}
	return ""
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "an integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode:
		return "nothing"
	}
	return "a " + strings.ToLower(n.Type().String())
}

// plain rejects the YAML features a scenario has no use for, so that what
// is read is what is written.
func (p *scenarioParser) plain(n ast.Node) error {
	switch n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		return p.errAt(n, "anchors and aliases are not supported in scenarios")
	case *ast.TagNode:
		return p.errAt(n, "tags are not supported in scenarios")
	case *ast.MergeKeyNode:
		return p.errAt(n, "merge keys are not supported in scenarios")
	}
	return nil
}

// fields returns the entries of mapping n. what names the mapping in
// errors; a key not in allowed is an error unless allowed is nil. A null
// value is an empty mapping.
func (p *scenarioParser) fields(n ast.Node, what string, allowed []string) ([]field, error) {
	if err := p.plain(n); err != nil {
		return nil, err
	}
	var entries []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.NullNode:
		return nil, nil
	case *ast.MappingNode:
		entries = m.Values
	case *ast.MappingValueNode:
		entries = []*ast.MappingValueNode{m}
	default:
		return nil, p.errAt(n, "%s must be a mapping, got %s", what, describe(n))
	}
	var fs []field
	seen := map[string]bool{}
	for _, e := range entries {
		if err := p.plain(e.Key); err != nil {
			return nil, err
		}
		k, ok := e.Key.(*ast.StringNode)
		if !ok {
			return nil, p.errAt(e.Key, "keys in %s must be plain names, got %s", what, describe(e.Key))
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, p.errAt(e.Key, "unknown key %q in %s; allowed: %s", k.Value, what, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, p.errAt(e.Key, "duplicate key %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		v := e.Value
		if v == nil {
			v = ast.Null(e.Start)
		}
		if err := p.plain(v); err != nil {
			return nil, err
		}
		fs = append(fs, field{key: k.Value, keyAt: e.Key, value: v})
	}
	return fs, nil
}

func (p *scenarioParser) str(f field) (string, error) {
	switch v := f.value.(type) {
	case *ast.StringNode:
		return v.Value, nil
	case *ast.LiteralNode:
		return v.Value.Value, nil
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return text(v), nil
	}
	return "", p.errAt(f.value, "%s must be a string, got %s", f.key, describe(f.value))
}

func (p *scenarioParser) oneOf(f field, what string, allowed []string) (string, error) {
	s, err := p.str(f)
	if err != nil {
		return "", err
	}
	if !slices.Contains(allowed, s) {
		return "", p.errAt(f.value, "unknown %s %q; allowed: %s", what, s, strings.Join(allowed, ", "))
	}
	return s, nil
}

func (p *scenarioParser) intIn(f field, lo, hi int) (int, error) {
	v, ok := f.value.(*ast.IntegerNode)
	if !ok {
		return 0, p.errAt(f.value, "%s must be an integer from %d to %d, got %s %q", f.key, lo, hi, describe(f.value), text(f.value))
	}
	var n int64
	switch x := v.Value.(type) {
	case int64:
		n = x
	case uint64:
		n = math.MaxInt64
		if x < math.MaxInt64 {
			n = int64(x)
		}
	}
	if n < int64(lo) || n > int64(hi) {
		return 0, p.errAt(f.value, "%s must be from %d to %d, got %s", f.key, lo, hi, text(v))
	}
	return int(n), nil
}

func (p *scenarioParser) number(f field) (float64, bool) {
	switch v := f.value.(type) {
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return float64(x), true
		case uint64:
			return float64(x), true
		}
	case *ast.FloatNode:
		return v.Value, true
	}
	return 0, false
}

// duration reads a Go duration string such as "500ms" or "5s".
func (p *scenarioParser) duration(f field, lo, hi time.Duration) (time.Duration, error) {
	src := ""
	switch v := f.value.(type) {
	case *ast.StringNode:
		src = v.Value
	case *ast.IntegerNode, *ast.FloatNode:
		src = text(v)
	default:
		return 0, p.errAt(f.value, "%s must be a duration such as 500ms or 5s, got %s", f.key, describe(f.value))
	}
	d, err := time.ParseDuration(src)
	if err != nil {
		if _, numErr := strconv.ParseFloat(src, 64); numErr == nil && src != "0" {
			return 0, p.errAt(f.value, "%s %q has no unit; write e.g. 500ms or 5s", f.key, src)
		}
		return 0, p.errAt(f.value, "bad %s %q; write a duration such as 500ms or 5s", f.key, src)
	}
	if d < lo || d > hi {
		if d < 0 {
			return 0, p.errAt(f.value, "%s must not be negative, got %s", f.key, src)
		}
		return 0, p.errAt(f.value, "%s must be from %v to %v, got %s", f.key, lo, hi, src)
	}
	return d, nil
}

func (p *scenarioParser) scenario(body ast.Node) (*Scenario, error) {
	fs, err := p.fields(body, "scenario", topKeys)
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
	}
	var haveName, haveWorkload bool
	var tracers, gate *field
	for i := range fs {
		f := fs[i]
		switch f.key {
		case "name":
			if s.Name, err = p.str(f); err != nil {
				return nil, err
			}
			if !nameRE.MatchString(s.Name) || len(s.Name) > maxNameLen {
				return nil, p.errAt(f.value, "bad name %q; use lowercase letters, digits and dashes (at most %d), e.g. syscall-read", s.Name, maxNameLen)
			}
			haveName = true
		case "description":
			if s.Description, err = p.str(f); err != nil {
				return nil, err
			}
			s.Description = strings.TrimSpace(s.Description)
			if len(s.Description) > MaxDescription {
				return nil, p.errAt(f.value, "description is %d bytes; the limit is %d (4 KiB)", len(s.Description), MaxDescription)
			}
		case "workload":
			if s.Workload, err = p.workload(f); err != nil {
				return nil, err
			}
			haveWorkload = true
		case "tracers":
			tracers = &fs[i]
		case "trials":
			if s.Trials, err = p.intIn(f, 1, maxTrials); err != nil {
				return nil, err
			}
		case "warmup":
			if s.Warmup, err = p.duration(f, 0, maxWarmup); err != nil {
				return nil, err
			}
		case "duration":
			if s.Duration, err = p.duration(f, minDuration, maxDuration); err != nil {
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
		return nil, p.errAt(body, "scenario has no workload; add workload: with kind: %s", strings.Join(workloadKinds, ", "))
	}
	// Tracers and the gate are read last: their defaults and checks depend
	// on the workload.
	if tracers != nil {
		if s.Tracers, err = p.tracers(*tracers, s.Workload); err != nil {
			return nil, err
		}
	}
	metrics := Metrics(s)
	if len(metrics) == 0 {
		at := body
		if tracers != nil {
			at = tracers.keyAt
		}
		return nil, p.errAt(at, "scenario measures nothing; add tracers (%s) or use a timer workload", strings.Join(tracerKeys, ", "))
	}
	if gate != nil {
		if s.Gate, err = p.gate(*gate, metrics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *scenarioParser) workload(wf field) (Workload, error) {
	var w Workload
	allKeys := []string{"kind"}
	for _, k := range workloadKinds {
		for _, key := range kindKeys[k] {
			if !slices.Contains(allKeys, key) {
				allKeys = append(allKeys, key)
			}
		}
	}
	fs, err := p.fields(wf.value, "workload", allKeys)
	if err != nil {
		return w, err
	}
	i := slices.IndexFunc(fs, func(f field) bool { return f.key == "kind" })
	if i < 0 {
		return w, p.errAt(wf.keyAt, "workload has no kind; allowed: %s", strings.Join(workloadKinds, ", "))
	}
	if w.Kind, err = p.oneOf(fs[i], "workload kind", workloadKinds); err != nil {
		return w, err
	}
	keys := kindKeys[w.Kind]
	for _, f := range fs {
		if !slices.Contains(keys, f.key) {
			return w, p.errAt(f.keyAt, "%s does not apply to workload kind %s; %s takes: %s", f.key, w.Kind, w.Kind, strings.Join(keys[1:], ", "))
		}
	}
	var size *field
	for i, f := range fs {
		switch f.key {
		case "syscall":
			w.Syscall, err = p.oneOf(f, "syscall for the syscall workload", workloadSyscalls)
		case "size":
			size = &fs[i]
			w.Size, err = p.intIn(f, 1, maxSize)
		case "threads":
			w.Threads, err = p.intIn(f, 1, maxThreads)
		case "rate":
			r, ok := p.number(f)
			if !ok || checkRate(r) != nil {
				err = p.errAt(f.value, "rate must be a number from 0 (closed loop) to %g operations per second per thread, got %q", maxRate, text(f.value))
			}
			w.Rate = r
		case "channel":
			w.Channel, err = p.oneOf(f, "pingpong channel", pingpongChannels)
		case "pairs":
			w.Pairs, err = p.intIn(f, 1, maxPairs)
		case "interval":
			w.Interval, err = p.duration(f, minInterval, maxInterval)
		case "priority":
			w.Priority, err = p.intIn(f, 0, maxPriority)
		case "mode":
			w.Mode, err = p.oneOf(f, "fork mode", forkModes)
		case "noise":
			if s, ok := f.value.(*ast.StringNode); ok && s.Value == "ncpu" {
				w.Noise = NoiseNumCPU
			} else if _, ok := f.value.(*ast.IntegerNode); !ok {
				err = p.errAt(f.value, `noise must be "ncpu" or a number of hog threads from 0 to %d, got %q`, maxNoise, text(f.value))
			} else {
				w.Noise, err = p.intIn(f, 0, maxNoise)
			}
		}
		if err != nil {
			return w, err
		}
	}
	if size != nil && w.Syscall == "getppid" {
		return w, p.errAt(size.keyAt, "size does not apply to syscall getppid; remove it")
	}
	w = w.withDefaults()
	if err := w.check(); err != nil {
		// Unreachable when the checks above agree with check.
		return w, p.errAt(wf.keyAt, "%v", err)
	}
	return w, nil
}

func (p *scenarioParser) tracers(tf field, w Workload) (Tracers, error) {
	var t Tracers
	fs, err := p.fields(tf.value, "tracers", tracerKeys)
	if err != nil {
		return t, err
	}
	for _, f := range fs {
		switch f.key {
		case "syscall":
			sfs, err := p.fields(f.value, "tracers.syscall", []string{"syscalls"})
			if err != nil {
				return t, err
			}
			t.Syscall = &SyscallTracer{}
			for _, sf := range sfs {
				if t.Syscall.Syscalls, err = p.syscalls(sf); err != nil {
					return t, err
				}
			}
			if len(sfs) == 0 {
				if w.Kind != "syscall" {
					return t, p.errAt(f.keyAt, "the syscall tracer needs syscalls, e.g. syscalls: [read, write]")
				}
				t.Syscall.Syscalls = []string{w.Syscall}
			}
		case "sched":
			sfs, err := p.fields(f.value, "tracers.sched", nil)
			if err != nil {
				return t, err
			}
			if len(sfs) > 0 {
				return t, p.errAt(sfs[0].keyAt, "unknown key %q in tracers.sched; the sched tracer has no options: write sched: {}", sfs[0].key)
			}
			t.Sched = &SchedTracer{}
		}
	}
	return t, nil
}

func (p *scenarioParser) syscalls(f field) ([]string, error) {
	seq, ok := f.value.(*ast.SequenceNode)
	if !ok {
		return nil, p.errAt(f.value, "syscalls must be a list of syscall names, e.g. [read, write], got %s", describe(f.value))
	}
	if len(seq.Values) == 0 {
		return nil, p.errAt(f.value, "syscalls is empty; name at least one, e.g. [read]")
	}
	var names []string
	for _, v := range seq.Values {
		if err := p.plain(v); err != nil {
			return nil, err
		}
		s, ok := v.(*ast.StringNode)
		if !ok {
			return nil, p.errAt(v, "syscalls must be names, got %s", describe(v))
		}
		if _, ok := SyscallNumbers[s.Value]; !ok {
			return nil, p.errAt(v, "unknown syscall %q; allowed: %s", s.Value, strings.Join(sysnum.Names(), ", "))
		}
		if slices.Contains(names, s.Value) {
			return nil, p.errAt(v, "syscall %q listed twice", s.Value)
		}
		names = append(names, s.Value)
	}
	return names, nil
}

func (p *scenarioParser) gate(gf field, metrics []string) (map[string]map[string]float64, error) {
	fs, err := p.fields(gf.value, "gate", nil)
	if err != nil {
		return nil, err
	}
	gate := map[string]map[string]float64{}
	for _, f := range fs {
		if f.key != "*" && !slices.Contains(metrics, f.key) {
			return nil, p.errAt(f.keyAt, "gate names %q, which this scenario does not measure; metrics: %s, or * for all", f.key, strings.Join(metrics, ", "))
		}
		pfs, err := p.fields(f.value, "gate."+f.key, percentiles)
		if err != nil {
			return nil, err
		}
		if len(pfs) == 0 {
			return nil, p.errAt(f.keyAt, "gate %s has no thresholds; add e.g. p99: 10%%", f.key)
		}
		th := map[string]float64{}
		for _, pf := range pfs {
			if th[pf.key], err = p.threshold(pf); err != nil {
				return nil, err
			}
		}
		gate[f.key] = th
	}
	if len(gate) == 0 {
		return nil, nil
	}
	return gate, nil
}

// threshold reads "10%" or a fraction such as 0.10.
func (p *scenarioParser) threshold(f field) (float64, error) {
	bad := func() error {
		return p.errAt(f.value, "bad threshold %q for %s; write a percentage such as 10%% or a fraction such as 0.10", text(f.value), f.key)
	}
	if s, ok := f.value.(*ast.StringNode); ok {
		num, isPct := strings.CutSuffix(strings.TrimSpace(s.Value), "%")
		if !isPct {
			return 0, bad()
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, bad()
		}
		if v < 0 {
			return 0, p.errAt(f.value, "threshold %q for %s must not be negative", s.Value, f.key)
		}
		return v / 100, nil
	}
	v, ok := p.number(f)
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, bad()
	}
	if v < 0 {
		return 0, p.errAt(f.value, "threshold %s for %s must not be negative", text(f.value), f.key)
	}
	if v > 1 {
		return 0, p.errAt(f.value, "threshold %s for %s is a fraction above 1; a bare number is a fraction (0.10 = 10%%), write %s%% for a percentage", text(f.value), f.key, text(f.value))
	}
	return v, nil
}
