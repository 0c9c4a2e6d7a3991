package vm

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
)

// Target is a named VM configuration from a targets file:
//
//	targets:
//	  - name: debian-6.1-cloud
//	    kernel: debian:6.1-cloud   # a kernel spec (see kernels.Cache.Resolve)
//	    vcpus: 2                   # default 2, 1 in virtual time
//	    memory_mib: 1024           # default 1024
//	    cmdline: "nohz_full=1"     # appended to tailgate's own
//	    accel: auto                # auto (default), kvm or tcg
//	    clock: auto                # auto (default: virtual under TCG, real under KVM), virtual or real
//	    deadline: 15m              # default none
type Target struct {
	Name     string `yaml:"name"`
	Kernel   string `yaml:"kernel"`
	Cmdline  string `yaml:"cmdline"`
	Settings `yaml:",inline"`
}

// Machine returns the VM of the target running kernel k as setup (its
// Settings resolved) says.
func (t Target) Machine(k *kernels.Kernel, setup Setup) Machine {
	return Machine{Name: t.Name, Kernel: k, Setup: setup, Cmdline: t.Cmdline, Deadline: t.Deadline}
}

// TargetFile is the content of a targets file, in file order.
type TargetFile struct {
	Source  string // the file, for messages
	Targets []Target
}

// Find returns the target of the given name.
func (ts *TargetFile) Find(name string) (Target, error) {
	var names []string
	for _, t := range ts.Targets {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Target{}, fmt.Errorf("%w: no target %q in %s; it has: %s", ErrBadTargets, name, ts.Source, strings.Join(names, ", "))
}

// ErrBadTargets is wrapped by every targets-file error.
var ErrBadTargets = errors.New("bad targets")

//go:embed targets.yaml
var defaultTargets []byte

// DefaultTargetFile returns the targets that come with tailgate
// (vm/targets.yaml).
func DefaultTargetFile() *TargetFile {
	ts, err := ParseTargetFile(defaultTargets, "builtin:targets.yaml")
	if err != nil {
		panic(err) // tested
	}
	return ts
}

// LoadTargetFile reads and parses a targets file. A file over
// config.MaxInputSize is refused without reading it.
func LoadTargetFile(path string) (*TargetFile, error) {
	b, err := config.ReadInput(path)
	if err != nil {
		var pe *config.Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: %w", ErrBadTargets, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrBadTargets, err)
	}
	return ParseTargetFile(b, path)
}

var targetNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseTargetFile parses a targets file's content strictly: unknown fields,
// missing kernels, duplicate names and out-of-range numbers are errors that
// say FILE:LINE. Defaults are filled in. Content over the limits of YAML
// input (config.CheckInput: size, nesting, keys) is refused before the
// YAML parser sees it, and anchors and aliases before the decoder could
// expand them (config.ParseInput); a UTF-8 byte order mark is dropped.
func ParseTargetFile(b []byte, source string) (*TargetFile, error) {
	file, err := config.ParseInput(source, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTargets, err)
	}
	targets, err := decodeTargets(file, source)
	if err != nil {
		return nil, err
	}
	// at returns FILE:LINE of a field of target i (or of the target).
	at := func(i int, field string) string { return lineOf(file, source, i, field) }
	seen := map[string]int{}
	for i := range targets {
		t := &targets[i]
		if err := t.check(i, at); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadTargets, err)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%w: %s: target %s is already defined at %s", ErrBadTargets, at(i, "name"), t.Name, at(j, "name"))
		}
		seen[t.Name] = i
		if t.MemMiB == 0 {
			t.MemMiB = DefaultMemMiB
		}
		if t.Accel == "" {
			t.Accel = "auto"
		}
		if t.Clock == "" {
			t.Clock = ClockAuto
		}
	}
	return &TargetFile{Source: source, Targets: targets}, nil
}

// decodeTargets decodes the one document of file, a 'targets:' list of at
// least one target, strictly.
func decodeTargets(file *ast.File, source string) ([]Target, error) {
	if len(file.Docs) > 1 {
		return nil, fmt.Errorf("%w: %s: more than one YAML document; a targets file is one 'targets:' list", ErrBadTargets, source)
	}
	var doc struct {
		Targets []Target `yaml:"targets"`
	}
	var body ast.Node
	if len(file.Docs) == 1 {
		body = file.Docs[0].Body
	}
	if body == nil {
		return nil, fmt.Errorf("%w: %s: no targets (want a 'targets:' list)", ErrBadTargets, source)
	}
	if err := yaml.NodeToValue(body, &doc, yaml.Strict()); err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			return nil, fmt.Errorf("%w: %s:%d: %s", ErrBadTargets, source, ye.GetToken().Position.Line, ye.GetMessage())
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrBadTargets, source, err)
	}
	if len(doc.Targets) == 0 {
		return nil, fmt.Errorf("%w: %s: no targets (want a 'targets:' list)", ErrBadTargets, source)
	}
	return doc.Targets, nil
}

// lineOf is FILE:LINE of a field of target i in file (or of the target),
// FILE alone when the line is not known.
func lineOf(file *ast.File, source string, i int, field string) string {
	p := fmt.Sprintf("$.targets[%d]", i)
	if field != "" {
		p += "." + field
	}
	line := 0
	if path, err := yaml.PathString(p); err == nil {
		if n, err := path.FilterFile(file); err == nil && n != nil {
			line = nodeLine(n)
		}
	}
	if line == 0 {
		return source
	}
	return fmt.Sprintf("%s:%d", source, line)
}

// check refuses what target i of a file (at says where a field of it is)
// could only fail with later.
func (t *Target) check(i int, at func(i int, field string) string) error {
	switch {
	case t.Name == "":
		return fmt.Errorf("%s: target %d has no name", at(i, ""), i+1)
	case !targetNameRE.MatchString(t.Name) || len(t.Name) > result.MaxNameLen:
		return fmt.Errorf("%s: target name %q: use letters, digits, '.', '_' and '-', at most %d", at(i, "name"), t.Name, result.MaxNameLen)
	case t.Kernel == "":
		return fmt.Errorf("%s: target %s has no kernel (a bzImage path or debian:ABI)", at(i, ""), t.Name)
	}
	if err := t.Settings.Check(); err != nil {
		field := ""
		if se := (*SettingError)(nil); errors.As(err, &se) {
			field = se.Setting
		}
		return fmt.Errorf("%s: target %s: %w", at(i, field), t.Name, err)
	}
	return nil
}

func nodeLine(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}
