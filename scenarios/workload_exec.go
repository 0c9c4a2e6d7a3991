package scenarios

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
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
	Ops      string            `json:"ops,omitempty"` // a Go regexp
}

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
	Name:         "exec",
	HostOnly:     "it runs a command of this host, and a VM's guest holds no program but tailgate",
	Whole:        "a command runs its own course",
	Keys:         []string{"command", "env", "dir", "setup", "teardown", "ready", "load", "ops"},
	Parse:        parseExec,
	DecodeParams: decodeParams[Exec],
	Defaults: func(w *Workload) {
		if e, ok := w.Params.(*Exec); ok && e.Ready != nil && e.Ready.Timeout == 0 {
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
