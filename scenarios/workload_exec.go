package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/loadfile"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

// Exec is the exec kind's parameters: the user's own program, measured
// through a cgroup v2 group made for it.
//
//	workload:
//	  kind: exec
//	  command: [./server, --port, "8080"]  # argv; the measured program
//	  env: {GOMAXPROCS: "2"}               # added to tailgate's environment
//	  dir: ./testdata                      # of every command; relative to the scenario file
//	  setup: [make, server]                # run once before, to completion
//	  teardown: [rm, -f, /tmp/x]           # run once after, to completion
//	  ready: {port: 8080, timeout: 10s}    # or {file: PATH}: before the clock starts
//	  load: [./client, --port, "8080"]     # run against command for each trial
//	  ops: '^ok '                          # ops: lines of load's (else command's) stdout matching
//
// or, for the built-in load generator (Builtin), which measures each
// request's latency as request.client:
//
//	load: {http: "http://127.0.0.1:8080/", rate: 2000}
//	load: {tcp: 127.0.0.1:7071, send: "ping\n", reply: {until: "\n"}, rate: 2000}
//
// The tracers count every task of the group: command, and everything it
// starts, but neither load nor setup and teardown, which run in groups of
// their own. Without load, a run ends when every process of the group has
// exited or the duration is over; with load, when load exits or the
// duration is over, and command keeps running from one run to the next.
// Whatever is left in a group at the end is killed and the group removed.
//
// A run cut by its end is not a failure, and the next run starts afresh
// what was cut. So the warmup is a run like a trial's, stopped at the
// warmup's end: without load it starts command (warming the page cache,
// the dynamic loader, the program's own files) and kills what still runs
// when the warmup is over, and each trial then starts command anew; with
// load it runs load against command, which keeps running into the
// trials. Only a program that exits by itself with a failure fails a run.
//
// Without ops, an op is a run that ended by itself: Stats.Ops is 1 when
// command (with load, load) finished within the run and 0 when the run's
// end cut it, so ops/s reads as runs per second.
type Exec struct {
	Command  []string          `json:"command"`
	Env      map[string]string `json:"env,omitempty"`
	Dir      string            `json:"dir,omitempty"`
	Setup    []string          `json:"setup,omitempty"`
	Teardown []string          `json:"teardown,omitempty"`
	Ready    *Ready            `json:"ready,omitempty"`
	Load     []string          `json:"load,omitempty"`
	// Builtin is the built-in load, in place of Load; written as load's
	// mapping form in YAML and JSON alike.
	Builtin *loadgen.Spec `json:"-"`
	// Latencies is where load (a command) writes its requests'
	// latencies, read after each run as request.client.
	Latencies *LoadOutput `json:"latencies,omitempty"`
	Ops       string      `json:"ops,omitempty"` // a Go regexp
}

// LoadOutput is the output of the user's load generator that holds its
// requests' latencies: a file it writes, or its stdout.
type LoadOutput struct {
	// Format is one of loadfile.Formats.
	Format string `json:"format"`
	// File is the path it writes (relative to Dir); "" for its stdout.
	File string `json:"file,omitempty"`
	// Unit is what a value of an HdrHistogram log stands for: ns, us, ms
	// or s; "" for ns.
	Unit string `json:"unit,omitempty"`
}

// loadUnits are LoadOutput.Unit's values.
var loadUnits = map[string]time.Duration{"ns": time.Nanosecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}

func (o *LoadOutput) check() error {
	if err := loadfile.CheckFormat(o.Format); err != nil {
		return fmt.Errorf("latencies: %w", err)
	}
	if _, ok := loadUnits[o.Unit]; !ok && o.Unit != "" {
		return fmt.Errorf("latencies: unknown unit %q; allowed: ns, us, ms, s", o.Unit)
	}
	if o.Unit != "" && o.Format != loadfile.HdrLog {
		return fmt.Errorf("latencies: unit goes with format %s, whose values name no unit; %s names its own", loadfile.HdrLog, o.Format)
	}
	return nil
}

// options are the loadfile options of o.
func (o *LoadOutput) options() loadfile.Options { return loadfile.Options{Unit: loadUnits[o.Unit]} }

// execJSON is Exec as JSON: load is a list (a command) or an object (the
// built-in load).
type execJSON struct {
	execFields
	Load json.RawMessage `json:"load,omitempty"`
}

type execFields Exec

// MarshalJSON writes load as its command or as the built-in load.
func (e Exec) MarshalJSON() ([]byte, error) {
	j := execJSON{execFields: execFields(e)}
	var err error
	switch {
	case e.Builtin != nil:
		j.Load, err = json.Marshal(e.Builtin)
	case len(e.Load) > 0:
		j.Load, err = json.Marshal(e.Load)
	}
	if err != nil {
		return nil, err
	}
	j.execFields.Load = nil
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Exec) UnmarshalJSON(b []byte) error {
	var j execJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Exec(j.execFields)
	e.Load, e.Builtin = nil, nil
	switch l := bytes.TrimSpace(j.Load); {
	case len(l) == 0 || string(l) == "null":
	case l[0] == '{':
		e.Builtin = new(loadgen.Spec)
		return json.Unmarshal(l, e.Builtin)
	default:
		return json.Unmarshal(l, &e.Load)
	}
	return nil
}

// hasLoad reports whether something loads command: a command of the
// user's or the built-in load.
func (e *Exec) hasLoad() bool { return len(e.Load) > 0 || e.Builtin != nil }

// Ready is what tells that command is ready for the clock to start.
type Ready struct {
	// Port is a TCP address (host:port) that accepts a connection.
	Port string `json:"port,omitempty"`
	// File is a path that exists (relative to Dir).
	File string `json:"file,omitempty"`
	// Timeout is how long to wait for it; past it the run fails.
	Timeout time.Duration `json:"timeout"`
}

// Canonical is e without what does not change the measurement, for
// Params: the directory (a checkout's path differs between machines) and
// how long to wait for ready.
func (e *Exec) Canonical() any {
	c := *e
	c.Dir = ""
	if c.Ready != nil {
		r := *c.Ready
		r.Timeout = 0
		c.Ready = &r
	}
	return &c
}

// Limits and defaults of the exec kind.
const (
	DefaultReadyTimeout = 10 * time.Second
	MaxReadyTimeout     = 10 * time.Minute
	// HookTimeout bounds setup and teardown: a hung hook fails the run
	// rather than hang it.
	HookTimeout = 5 * time.Minute
	maxArgs     = 4096
)

var execKind = WorkloadKind{
	Name:     "exec",
	HostOnly: "it runs a command of this host, and a VM's guest holds no program but tailgate",
	Whole:    "a command runs its own course",
	Keys:     []string{"command", "env", "dir", "setup", "teardown", "ready", "load", "latencies", "ops"},
	Parse:    parseExec,
	Metrics: []WorkloadMetric{{Name: loadgen.Metric,
		Description: "each request's latency as its client felt it: the built-in load's (load: {http: URL, rate: N}), from each request's intended send time, or what load's output says (latencies: {format: wrk2})"}},
	Measures: func(w Workload) []string {
		if e, ok := w.Params.(*Exec); ok && (e.Builtin != nil || e.Latencies != nil) {
			return []string{loadgen.Metric}
		}
		return nil
	},
	DecodeParams: decodeParams[Exec],
	Defaults: func(w *Workload) {
		e, ok := w.Params.(*Exec)
		if !ok {
			return
		}
		if e.Ready == nil && e.Builtin != nil {
			// The built-in load's requests wait until its address accepts.
			c := *e
			c.Ready = &Ready{Port: e.Builtin.HostPort(), Timeout: DefaultReadyTimeout}
			w.Params = &c
		} else if e.Ready != nil && e.Ready.Timeout == 0 {
			c := *e
			r := *e.Ready
			r.Timeout = DefaultReadyTimeout
			c.Ready = &r
			w.Params = &c
		}
	},
	Check: func(w Workload) error {
		e, ok := w.Params.(*Exec)
		if !ok {
			return fmt.Errorf("exec workload without its parameters (command)")
		}
		return e.check()
	},
	New: newExecKind,
	// A command that a ready port waits for is a server: its requests
	// are measured when the scenario names no tracers.
	Serves: func(w Workload) bool {
		e, ok := w.Params.(*Exec)
		return ok && e.Ready != nil && e.Ready.Port != ""
	},
	// The tracers count the group, not this process's threads.
	ThreadsAttributable: func(Workload) bool { return false },
}

// check validates e as built in Go rather than parsed; parseExec checks
// the same with positions.
func (e *Exec) check() error {
	if err := checkArgv("command", e.Command, true); err != nil {
		return err
	}
	for _, c := range []struct {
		what string
		argv []string
	}{{"setup", e.Setup}, {"teardown", e.Teardown}, {"load", e.Load}} {
		if err := checkArgv(c.what, c.argv, false); err != nil {
			return err
		}
	}
	for k := range e.Env {
		if err := checkEnvName(k); err != nil {
			return err
		}
	}
	if e.Ops != "" {
		if _, err := regexp.Compile(e.Ops); err != nil {
			return fmt.Errorf("ops: %w", err)
		}
	}
	if e.Builtin != nil {
		if len(e.Load) > 0 {
			return errors.New("load is a command or the built-in load, not both")
		}
		if e.Ops != "" {
			return errors.New("ops counts lines of a load command's output; the built-in load counts its answered requests as ops")
		}
		if err := e.Builtin.Check(); err != nil {
			return err
		}
	}
	if e.Latencies != nil {
		if len(e.Load) == 0 {
			return errors.New("latencies are read from the output of load, a command; without one there is none")
		}
		if err := e.Latencies.check(); err != nil {
			return err
		}
	}
	if r := e.Ready; r != nil {
		if (r.Port == "") == (r.File == "") {
			return errors.New("ready needs one of port or file")
		}
		if r.Port != "" {
			if _, err := readyAddr(r.Port); err != nil {
				return err
			}
		}
		if r.Timeout < time.Millisecond || r.Timeout > MaxReadyTimeout {
			return fmt.Errorf("ready timeout must be from 1ms to %v, got %v", MaxReadyTimeout, r.Timeout)
		}
	}
	return nil
}

func checkArgv(what string, argv []string, required bool) error {
	if len(argv) == 0 {
		if required {
			return fmt.Errorf("%s is empty; give the program and its arguments, e.g. [sh, -c, \"echo hi\"]", what)
		}
		return nil
	}
	if len(argv) > maxArgs {
		return fmt.Errorf("%s has %d arguments; the limit is %d", what, len(argv), maxArgs)
	}
	if argv[0] == "" {
		return fmt.Errorf("%s: the program name is empty", what)
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("%s: an argument holds a NUL byte", what)
		}
	}
	return nil
}

func checkEnvName(k string) error {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Errorf("env: bad variable name %q; a name has no = and is not empty", k)
	}
	return nil
}

// readyAddr reads a ready port: a port number (on localhost) or host:port.
func readyAddr(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 65535 {
			return "", fmt.Errorf("ready port must be from 1 to 65535, got %d", n)
		}
		return net.JoinHostPort("localhost", s), nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return "", fmt.Errorf("ready port %q: want a port number or host:port, e.g. 8080 or 127.0.0.1:8080", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("ready port %q: the port must be from 1 to 65535", s)
	}
	return s, nil
}

// quoteArgv writes argv for messages, quoting what a shell would split.
func quoteArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`;&|<>()*?[]#~") {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
