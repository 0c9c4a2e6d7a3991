package scenarios

import (
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/loadfile"
	"github.com/tailgate-ci/tailgate/internal/loadgen"
)

// parseExec is the exec kind's WorkloadKind.Parse: it reads the kind's
// keys from fs; at is where an error about a missing key points. A
// relative dir is taken relative to the directory of the scenario file.
func parseExec(at config.Node, fs []config.Field) (any, error) {
	e := &Exec{}
	var haveCommand bool
	for _, f := range fs {
		var err error
		switch f.Key {
		case "command":
			e.Command, err = parseArgv(f)
			haveCommand = true
		case "setup":
			e.Setup, err = parseArgv(f)
		case "teardown":
			e.Teardown, err = parseArgv(f)
		case "load":
			switch f.Value.AST().(type) {
			case *ast.MappingNode, *ast.MappingValueNode:
				e.Builtin, err = parseBuiltin(f)
			default:
				e.Load, err = parseArgv(f)
			}
		case "env":
			e.Env, err = parseEnv(f)
		case "dir":
			e.Dir, err = parseDir(f)
		case "ready":
			e.Ready, err = parseReady(f)
		case "latencies":
			e.Latencies, err = parseLatencies(f)
		case "ops":
			if e.Ops, err = f.String(); err == nil {
				if _, rerr := regexp.Compile(e.Ops); rerr != nil {
					err = f.Value.Errorf("ops %q is not a regular expression: %v", e.Ops, rerr)
				}
			}
		default:
			err = f.KeyAt.Errorf("%s does not apply to workload kind exec", f.Key)
		}
		if err != nil {
			return nil, err
		}
	}
	if e.Builtin != nil && e.Ops != "" {
		return nil, at.Errorf("ops counts lines of a load command's output; the built-in load counts its answered requests as ops: leave ops out")
	}
	if e.Latencies != nil && len(e.Load) == 0 {
		return nil, at.Errorf("latencies are read from the output of load, a command (e.g. load: [wrk2, -R, 2000, --latency, http://127.0.0.1:8080/]); give one, or use the built-in load, load: {http: URL, rate: N}, which measures its own")
	}
	if !haveCommand {
		return nil, at.Errorf("workload kind exec needs command: the program to measure and its arguments, e.g. command: [dd, if=/dev/zero, of=/dev/null]")
	}
	return e, nil
}

// parseArgv reads a list of arguments; numbers and booleans read as their
// source text (port 8080 needs no quotes).
func parseArgv(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		if s, isStr := f.Value.AST().(*ast.StringNode); isStr {
			return nil, f.Value.Errorf("%s must be a list of arguments, not a string; write [sh, -c, %q] to run it in a shell", f.Key, s.Value)
		}
		return nil, f.Value.Errorf("%s must be a list of arguments, e.g. [sh, -c, \"echo hi\"], got %s", f.Key, f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("%s is empty; give the program and its arguments, e.g. [sh, -c, \"echo hi\"]", f.Key)
	}
	if len(items) > maxArgs {
		return nil, f.Value.Errorf("%s has %d arguments; the limit is %d", f.Key, len(items), maxArgs)
	}
	argv := make([]string, len(items))
	for i, v := range items {
		s, ok := scalar(v)
		if !ok {
			return nil, v.Errorf("the arguments of %s must be strings, got %s", f.Key, v.Describe())
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, v.Errorf("an argument of %s holds a NUL byte", f.Key)
		}
		argv[i] = s
	}
	if argv[0] == "" {
		return nil, items[0].Errorf("the program name of %s is empty", f.Key)
	}
	return argv, nil
}

// scalar returns the value of a string, number or boolean node.
func scalar(n config.Node) (string, bool) {
	switch v := n.AST().(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return n.Text(), true
	}
	return "", false
}

func parseEnv(f config.Field) (map[string]string, error) {
	fs, err := f.Value.Fields("workload.env", nil)
	if err != nil {
		return nil, err
	}
	env := make(map[string]string, len(fs))
	for _, v := range fs {
		if err := checkEnvName(v.Key); err != nil {
			return nil, v.KeyAt.Errorf("%v", err)
		}
		s, ok := scalar(v.Value)
		if !ok && !v.Value.IsNull() {
			return nil, v.Value.Errorf("env %s must be a string, got %s", v.Key, v.Value.Describe())
		}
		env[v.Key] = s
	}
	return env, nil
}

func parseDir(f config.Field) (string, error) {
	d, err := f.String()
	if err != nil {
		return "", err
	}
	if d == "" {
		return "", f.Value.Errorf("dir is empty; leave it out to run in tailgate's working directory")
	}
	// A file's dir is relative to the file, as in a compose file; a
	// built-in scenario has no directory of its own.
	if src := f.Value.Source(); !filepath.IsAbs(d) && src != "" && !strings.HasPrefix(src, builtinPrefix) {
		if abs, err := filepath.Abs(filepath.Join(filepath.Dir(src), d)); err == nil {
			d = abs
		}
	}
	return filepath.Clean(d), nil
}

func parseReady(f config.Field) (*Ready, error) {
	fs, err := f.Value.Fields("workload.ready", []string{"port", "file", "timeout"})
	if err != nil {
		return nil, err
	}
	r := &Ready{Timeout: DefaultReadyTimeout}
	var what *config.Field
	for i, rf := range fs {
		switch rf.Key {
		case "port", "file":
			if what != nil {
				return nil, rf.KeyAt.Errorf("ready takes one of port and file, not both")
			}
			what = &fs[i]
			s, err := rf.String()
			if err != nil {
				return nil, err
			}
			if rf.Key == "port" {
				if _, err := readyAddr(s); err != nil {
					return nil, rf.Value.Errorf("%v", err)
				}
				r.Port = s
			} else {
				if s == "" {
					return nil, rf.Value.Errorf("ready file is empty; name the file command makes when it is ready")
				}
				r.File = s
			}
		case "timeout":
			if r.Timeout, err = rf.Duration(time.Millisecond, MaxReadyTimeout); err != nil {
				return nil, err
			}
		}
	}
	if what == nil {
		return nil, f.KeyAt.Errorf("ready needs port (a TCP port that accepts, e.g. port: 8080) or file (a path that exists)")
	}
	return r, nil
}

// parseBuiltin reads the built-in load: {http: URL, rate: N} or {tcp:
// host:port, send: BYTES, reply: {bytes: N} | {until: DELIMITER}, rate:
// N}, with an optional timeout.
func parseBuiltin(f config.Field) (*loadgen.Spec, error) {
	fs, err := f.Value.Fields("workload.load", []string{"http", "tcp", "send", "reply", "rate", "timeout"})
	if err != nil {
		return nil, err
	}
	s := &loadgen.Spec{}
	var target, rate *config.Field
	for i, lf := range fs {
		switch lf.Key {
		case "http", "tcp":
			if target != nil {
				return nil, lf.KeyAt.Errorf("load takes one of http and tcp, not both")
			}
			target = &fs[i]
			err = parseTarget(lf, s)
		case "send":
			if s.Send, err = lf.String(); err == nil && s.Send == "" {
				err = lf.Value.Errorf("send is empty; give the bytes of one request, e.g. send: \"ping\\n\"")
			}
		case "reply":
			err = parseReply(lf, s)
		case "rate":
			rate = &fs[i]
			s.Rate, err = lf.Int(1, loadgen.MaxRate)
		case "timeout":
			s.Timeout, err = lf.Duration(time.Millisecond, loadgen.MaxTimeout)
		}
		if err != nil {
			return nil, err
		}
	}
	if target == nil {
		return nil, f.KeyAt.Errorf("the built-in load needs http (a URL, e.g. http: http://127.0.0.1:8080/) or tcp (host:port, with send and reply)")
	}
	if rate == nil {
		return nil, f.KeyAt.Errorf("the built-in load needs rate: the requests it sends per second, e.g. rate: 1000")
	}
	if err := s.Check(); err != nil {
		// What is left: send or reply with the wrong target, or missing.
		return nil, target.KeyAt.Errorf("%v", err)
	}
	return s, nil
}

func parseTarget(f config.Field, s *loadgen.Spec) error {
	v, err := f.String()
	if err != nil {
		return err
	}
	if f.Key == "http" {
		s.URL = v
		if err := loadgen.CheckURL(v); err != nil {
			return f.Value.Errorf("%v", err)
		}
		return nil
	}
	s.Addr = v
	if err := loadgen.CheckAddr(v); err != nil {
		return f.Value.Errorf("%v", err)
	}
	return nil
}

// parseReply reads {bytes: N} or {until: DELIMITER}.
func parseReply(f config.Field, s *loadgen.Spec) error {
	fs, err := f.Value.Fields("workload.load.reply", []string{"bytes", "until"})
	if err != nil {
		return err
	}
	if len(fs) != 1 {
		return f.KeyAt.Errorf("reply takes one of bytes (its length, e.g. bytes: 5) and until (its last bytes, e.g. until: \"\\n\")")
	}
	rf := fs[0]
	if rf.Key == "bytes" {
		s.ReplyBytes, err = rf.Int(1, loadgen.MaxReply)
		return err
	}
	if s.ReplyUntil, err = rf.String(); err == nil && s.ReplyUntil == "" {
		return rf.Value.Errorf("until is empty; give the bytes a reply ends with, e.g. until: \"\\n\"")
	}
	return err
}

// parseLatencies reads {format: F, file: PATH, unit: U}.
func parseLatencies(f config.Field) (*LoadOutput, error) {
	fs, err := f.Value.Fields("workload.latencies", []string{"format", "file", "unit"})
	if err != nil {
		return nil, err
	}
	o := &LoadOutput{}
	for _, lf := range fs {
		switch lf.Key {
		case "format":
			o.Format, err = lf.OneOf("latencies format", loadfile.Formats)
		case "file":
			if o.File, err = lf.String(); err == nil && o.File == "" {
				err = lf.Value.Errorf("file is empty; leave it out to read load's stdout")
			}
		case "unit":
			o.Unit, err = lf.OneOf("unit", []string{"ns", "us", "ms", "s"})
		}
		if err != nil {
			return nil, err
		}
	}
	if o.Format == "" {
		return nil, f.KeyAt.Errorf("latencies needs format: one of %s", strings.Join(loadfile.Formats, ", "))
	}
	if err := o.check(); err != nil {
		return nil, f.KeyAt.Errorf("%v", err)
	}
	return o, nil
}
