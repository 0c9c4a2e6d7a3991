package vmtest

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// Target is a named VM configuration from a targets file:
//
//	targets:
//	  - name: debian-6.1-cloud
//	    kernel: debian:6.1-cloud   # a kernel spec (see KernelCache.Resolve)
//	    vcpus: 2                   # default 2, 1 in virtual time
//	    memory_mib: 1024           # default 1024
//	    cmdline: "nohz_full=1"     # appended to tailgate's own
//	    accel: auto                # auto (default), kvm or tcg
//	    clock: auto                # auto (default: virtual under TCG, real under KVM), virtual or real
//	    deadline: 15m              # default none
type Target struct {
	Name     string        `yaml:"name"`
	Kernel   string        `yaml:"kernel"`
	VCPUs    int           `yaml:"vcpus"`
	MemMiB   int           `yaml:"memory_mib"`
	Cmdline  string        `yaml:"cmdline"`
	Accel    string        `yaml:"accel"`
	Clock    string        `yaml:"clock"`
	Deadline time.Duration `yaml:"deadline"`
}

// VM returns the VM of the target running kernel k.
func (t Target) VM(k *Kernel) VM {
	return VM{Name: t.Name, Kernel: k, VCPUs: t.VCPUs, MemMiB: t.MemMiB, Cmdline: t.Cmdline, Accel: t.Accel, Clock: t.Clock, Deadline: t.Deadline}
}

// Targets is the content of a targets file, in file order.
type Targets struct {
	Source  string // the file, for messages
	Targets []Target
}

// Find returns the target of the given name.
func (ts *Targets) Find(name string) (Target, error) {
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

// DefaultTargets returns the targets that come with tailgate
// (vmtest/targets.yaml).
func DefaultTargets() *Targets {
	ts, err := ParseTargets(defaultTargets, "builtin:targets.yaml")
	if err != nil {
		panic(err) // tested
	}
	return ts
}

// LoadTargets reads and parses a targets file. A file over
// config.MaxInputSize is refused without reading it.
func LoadTargets(path string) (*Targets, error) {
	b, err := config.ReadInput(path)
	if err != nil {
		var pe *config.Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w: %w", ErrBadTargets, err)
		}
		return nil, fmt.Errorf("%w: %v", ErrBadTargets, err)
	}
	return ParseTargets(b, path)
}

var targetNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ParseTargets parses a targets file's content strictly: unknown fields,
// missing kernels, duplicate names and out-of-range numbers are errors that
// say FILE:LINE. Defaults are filled in. Content over the limits of YAML
// input (config.CheckInput: size, nesting, keys) is refused before the
// YAML parser sees it, and anchors and aliases before the decoder could
// expand them (config.ParseInput); a UTF-8 byte order mark is dropped.
func ParseTargets(b []byte, source string) (*Targets, error) {
	file, err := config.ParseInput(source, b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadTargets, err)
	}
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
	// at returns FILE:LINE of a field of target i (or of the target).
	at := func(i int, field string) string {
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
	if len(doc.Targets) == 0 {
		return nil, fmt.Errorf("%w: %s: no targets (want a 'targets:' list)", ErrBadTargets, source)
	}
	seen := map[string]int{}
	for i := range doc.Targets {
		t := &doc.Targets[i]
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("%w: %s: target %d has no name", ErrBadTargets, at(i, ""), i+1)
		case !targetNameRE.MatchString(t.Name) || len(t.Name) > result.MaxNameLen:
			return nil, fmt.Errorf("%w: %s: target name %q: use letters, digits, '.', '_' and '-', at most %d", ErrBadTargets, at(i, "name"), t.Name, result.MaxNameLen)
		case t.Kernel == "":
			return nil, fmt.Errorf("%w: %s: target %s has no kernel (a bzImage path or debian:ABI)", ErrBadTargets, at(i, ""), t.Name)
		case t.VCPUs < 0 || t.VCPUs > 64:
			return nil, fmt.Errorf("%w: %s: target %s: vcpus %d: want 1 to 64", ErrBadTargets, at(i, "vcpus"), t.Name, t.VCPUs)
		case t.MemMiB != 0 && (t.MemMiB < 256 || t.MemMiB > 1<<20):
			return nil, fmt.Errorf("%w: %s: target %s: memory_mib %d: want 256 or more", ErrBadTargets, at(i, "memory_mib"), t.Name, t.MemMiB)
		case t.Accel != "" && t.Accel != "auto" && t.Accel != "kvm" && t.Accel != "tcg":
			return nil, fmt.Errorf("%w: %s: target %s: accel %q: want auto, kvm or tcg", ErrBadTargets, at(i, "accel"), t.Name, t.Accel)
		case t.Clock != "" && !slices.Contains(Clocks, t.Clock):
			return nil, fmt.Errorf("%w: %s: target %s: clock %q: want %s", ErrBadTargets, at(i, "clock"), t.Name, t.Clock, strings.Join(Clocks, ", "))
		case t.Clock == ClockVirtual && t.Accel == "kvm":
			return nil, fmt.Errorf("%w: %s: target %s: clock virtual runs under TCG, and accel is kvm: drop one", ErrBadTargets, at(i, "clock"), t.Name)
		case t.Clock == ClockVirtual && t.VCPUs > VirtualVCPUs:
			return nil, fmt.Errorf("%w: %s: target %s: vcpus %d in virtual time, which has %d (docs/vms.md): drop vcpus, or give clock real", ErrBadTargets, at(i, "vcpus"), t.Name, t.VCPUs, VirtualVCPUs)
		case t.Deadline < 0:
			return nil, fmt.Errorf("%w: %s: target %s: negative deadline", ErrBadTargets, at(i, "deadline"), t.Name)
		}
		if j, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%w: %s: target %s is already defined at %s", ErrBadTargets, at(i, "name"), t.Name, at(j, "name"))
		}
		seen[t.Name] = i
		if t.MemMiB == 0 {
			t.MemMiB = 1024
		}
		if t.Accel == "" {
			t.Accel = "auto"
		}
		if t.Clock == "" {
			t.Clock = ClockAuto
		}
	}
	return &Targets{Source: source, Targets: doc.Targets}, nil
}

func nodeLine(n ast.Node) int {
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}
