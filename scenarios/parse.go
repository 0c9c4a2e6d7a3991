package scenarios

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// ParseError is a bad scenario file: where and what.
type ParseError = config.Error

// Load reads and parses the scenario file at path. A file over
// config.MaxInputSize is refused without reading it.
func Load(path string) (*Scenario, error) {
	b, err := config.ReadInput(path)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(path, b)
}

// MaxDescription is the longest description, in bytes: it is copied into
// every Result. The limits of the file itself are those of all YAML input
// (config.CheckInput).
const MaxDescription = 4 << 10

var (
	topKeys = []string{"name", "description", "workload", "tracers", "trials", "warmup", "duration", "evidence", "gate"}
	nameRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

const (
	maxNameLen  = 64
	maxTrials   = result.MaxTrials
	maxWarmup   = 10 * time.Minute
	maxEvidence = result.MaxSlowest
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
	p := &scenarioParser{source: source, path: source}
	if source != "" && !strings.HasPrefix(source, builtinPrefix) && !filepath.IsAbs(source) {
		// Relative paths in the file (a ufunc binary, an exec dir) are
		// the file's own, whatever the working directory becomes.
		if abs, err := filepath.Abs(source); err == nil {
			p.path = abs
		}
	}
	b, err = config.CheckInput(source, b)
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
	source string // as errors name the file
	path   string // the file's path, absolute, for its relative paths
}

// node returns the config.Node of n.
func (p *scenarioParser) node(n ast.Node) config.Node { return config.NewFileNode(p.source, p.path, n) }

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
	seen, err := p.topFields(s, fs)
	if err != nil {
		return nil, err
	}
	if !seen.name {
		return nil, p.errAt(body, "scenario has no name; add e.g. name: my-scenario")
	}
	if !seen.workload {
		return nil, p.errAt(body, "scenario has no workload; add workload: with kind: %s", strings.Join(kindNames(), ", "))
	}
	// Tracers and the gate are read last: their defaults and checks depend
	// on the workload.
	if seen.tracers != nil {
		if s.Tracers, err = p.tracers(*seen.tracers, s.Workload); err != nil {
			return nil, err
		}
	} else {
		s.Tracers = defaultTracers(s.Workload)
	}
	metrics := Metrics(s)
	if len(metrics) == 0 {
		at := body
		if seen.tracers != nil {
			at = seen.tracers.KeyAt.AST()
		}
		return nil, p.errAt(at, "scenario measures nothing; add tracers (%s) or use a timer workload", strings.Join(tracers.Names(), ", "))
	}
	if seen.gate != nil {
		if s.Gate, err = p.gate(*seen.gate, metrics); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// seenFields is what topFields found of a scenario's keys: whether it has
// a name and a workload, and the keys read once the workload is known.
type seenFields struct {
	name, workload bool
	tracers, gate  *config.Field
}

// topFields reads the scenario's top-level keys into s, all but tracers
// and gate, which it returns.
func (p *scenarioParser) topFields(s *Scenario, fs []config.Field) (seenFields, error) {
	var seen seenFields
	for i := range fs {
		f := fs[i]
		var err error
		switch f.Key {
		case "name":
			err = s.readName(f)
			seen.name = true
		case "workload":
			s.Workload, err = p.workload(f)
			seen.workload = true
		case "tracers":
			seen.tracers = &fs[i]
		case "gate":
			seen.gate = &fs[i]
		default:
			err = s.readSetting(f)
		}
		if err != nil {
			return seen, err
		}
	}
	return seen, nil
}

// readName reads and checks the scenario's name.
func (s *Scenario) readName(f config.Field) (err error) {
	if s.Name, err = f.String(); err != nil {
		return err
	}
	if !ValidName(s.Name) {
		return f.Value.Errorf("bad name %q; use lowercase letters, digits and dashes (at most %d), e.g. syscall-read", s.Name, maxNameLen)
	}
	return nil
}

// ValidName says name is a scenario's name: lowercase letters, digits
// and dashes, not starting with a dash, at most 64 bytes. Such a name is
// never a flag or a path, so a name read from a file (a history record)
// may become an argument once it passes.
func ValidName(name string) bool {
	return nameRE.MatchString(name) && len(name) <= maxNameLen
}

// NameRule is ValidName's rule in words, for messages.
const NameRule = "lowercase letters, digits and dashes, at most 64"

// readSetting reads one of the scenario's keys that stand alone: its
// description, trials, warmup, duration and evidence.
func (s *Scenario) readSetting(f config.Field) (err error) {
	switch f.Key {
	case "description":
		if s.Description, err = f.String(); err != nil {
			return err
		}
		s.Description = strings.TrimSpace(s.Description)
		if len(s.Description) > MaxDescription {
			return f.Value.Errorf("description is %d bytes; the limit is %d (4 KiB)", len(s.Description), MaxDescription)
		}
	case "trials":
		s.Trials, err = f.Int(1, maxTrials)
	case "warmup":
		s.Warmup, err = f.Duration(0, maxWarmup)
	case "duration":
		s.Duration, err = f.Duration(minDuration, maxDuration)
	case "evidence":
		s.Evidence, err = f.Int(0, maxEvidence)
	}
	return err
}

// workload reads the workload block: kind, the placement keys (fields of
// Workload), noise, and the kind's own keys, which its WorkloadKind.Parse
// reads into Params.
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
			w.Params, err = k.Parse(wf.Value, fs)
			return w, err
		}
	}
	if w.Kind, err = fs[i].OneOf("workload kind", kindNames()); err != nil {
		return w, err
	}
	kind, _ := lookupKind(w.Kind)
	keys := append(slices.Clone(kind.Keys), "noise")
	placement := w.placementKeys()
	var own []config.Field
	for _, f := range fs {
		if f.Key == "kind" {
			continue
		}
		if !slices.Contains(keys, f.Key) {
			return w, f.KeyAt.Errorf("%s does not apply to workload kind %s; %s takes: %s", f.Key, w.Kind, w.Kind, strings.Join(keys, ", "))
		}
		if _, ok := placement[f.Key]; !ok && f.Key != "noise" {
			own = append(own, f)
			continue
		}
		if err := w.readPlacement(f); err != nil {
			return w, err
		}
	}
	if kind.Parse != nil {
		if w.Params, err = kind.Parse(wf.KeyAt, own); err != nil {
			return w, err
		}
	}
	w = w.withDefaults()
	if err := w.check(); err != nil {
		// Unreachable when the checks above agree with check.
		return w, wf.KeyAt.Errorf("%v", err)
	}
	return w, nil
}

// readPlacement reads a placement key or noise into w.
func (w *Workload) readPlacement(f config.Field) (err error) {
	switch f.Key {
	case "threads":
		w.Threads, err = f.Int(1, maxThreads)
	case "pairs":
		w.Pairs, err = f.Int(1, maxPairs)
	case "cpus":
		if w.CPUs, err = ParseCPUList(f.Value.Text()); err != nil {
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
	return err
}

// defaultTracers are the tracers of a scenario that names none: those
// whose Default measures its workload (a server's requests), or none.
func defaultTracers(w Workload) Tracers {
	var t Tracers
	tw := tracerWorkload(w)
	for _, k := range tracers.All {
		if k.Default == nil {
			continue
		}
		if c := k.Default(tw); c != nil {
			if t == nil {
				t = Tracers{}
			}
			t[k.Name] = c
		}
	}
	return t
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
		// Found here rather than when the tracer attaches, after minutes.
		if n := len(c.Metrics()); n > tracing.MaxMetrics {
			return nil, f.KeyAt.Errorf("tracer %s measures %d metrics here; one tracer measures at most %d: split them over several scenarios", k.Name, n, tracing.MaxMetrics)
		}
		if t == nil {
			t = Tracers{}
		}
		t[k.Name] = c
	}
	return t, nil
}

func (p *scenarioParser) gate(gf config.Field, metrics []string) (result.GatePolicy, error) {
	fs, err := gf.Value.Fields("gate", nil)
	if err != nil {
		return nil, err
	}
	gate := result.GatePolicy{}
	for _, f := range fs {
		if f.Key != "*" && !slices.Contains(metrics, f.Key) {
			return nil, f.KeyAt.Errorf("gate names %q, which this scenario does not measure; metrics: %s, or * for all", f.Key, strings.Join(metrics, ", "))
		}
		pfs, err := f.Value.Fields("gate."+f.Key, nil)
		if err != nil {
			return nil, err
		}
		for _, pf := range pfs {
			if _, ok := hist.ParsePercentile(pf.Key); !ok {
				return nil, pf.KeyAt.Errorf("unknown percentile %q in gate.%s; want %s", pf.Key, f.Key, hist.PercentileNames)
			}
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
		if v/100 > result.MaxThreshold {
			return 0, f.Value.Errorf("threshold %q for %s is above %d%%: a gate that high passes any slowdown; at most %d%%", s.Value, f.Key, 100*result.MaxThreshold, 100*result.MaxThreshold)
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
