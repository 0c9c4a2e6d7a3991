package syscalls

import (
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/suggest"
	"github.com/tailgate-ci/tailgate/internal/sysnum"
)

// Tracer is the syscall tracer's registry entry.
var Tracer = tracing.Kind{
	Name:        "syscall",
	Description: "sys_enter to sys_exit of the listed syscalls",
	Metrics:     []string{"syscall.<name>"},
	Parse:       parse,
	Decode:      tracing.DecodeJSON[Config],
	New: func(c tracing.Config, o tracing.TracerOptions) (*tracing.Tracer, error) {
		return New(Options{TracerOptions: o, Syscalls: c.(*Config).Syscalls})
	},
	Objects: func() ([]*ebpf.CollectionSpec, error) { return tracing.Objects(loadSyscall, loadEmpty) },
	Probe:   &Config{Syscalls: []string{"getppid"}},
	Values:  map[string]func() []string{"syscalls": Names},
}

// Config is the tracer's config in a scenario:
//
//	tracers:
//	  syscall: {syscalls: [read, write]}
//
// Without syscalls it traces the syscalls of a syscall workload.
type Config struct {
	Syscalls []string `json:"syscalls"` // names, see Names; metric syscall.<name>
}

// Metrics is syscall.<name> for each syscall, in the order written.
func (c *Config) Metrics() []string {
	ms := make([]string, len(c.Syscalls))
	for i, name := range c.Syscalls {
		ms[i] = Metric(name)
	}
	return ms
}

// Primary is every metric: the traced syscalls are what the scenario is
// about.
func (c *Config) Primary() []string { return c.Metrics() }

// Canonical returns c with its syscalls as a sorted set: the order changes
// the order of the metrics, not what is measured.
func (c *Config) Canonical() tracing.Config {
	names := slices.Clone(c.Syscalls)
	slices.Sort(names)
	return &Config{Syscalls: slices.Compact(names)}
}

func parse(f config.Field, w tracing.Workload) (tracing.Config, error) {
	fs, err := f.Value.Fields("tracers.syscall", []string{"syscalls"})
	if err != nil {
		return nil, err
	}
	c := &Config{}
	for _, sf := range fs {
		if c.Syscalls, err = parseSyscalls(sf); err != nil {
			return nil, err
		}
	}
	if len(fs) == 0 {
		if len(w.Syscalls) == 0 {
			return nil, f.KeyAt.Errorf("the syscall tracer needs syscalls, e.g. syscalls: [read, write]")
		}
		c.Syscalls = slices.Clone(w.Syscalls)
	}
	return c, nil
}

func parseSyscalls(f config.Field) ([]string, error) {
	items, ok, err := f.Value.List()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, f.Value.Errorf("syscalls must be a list of syscall names, e.g. [read, write], got %s", f.Value.Describe())
	}
	if len(items) == 0 {
		return nil, f.Value.Errorf("syscalls is empty; name at least one, e.g. [read]")
	}
	var names []string
	for _, v := range items {
		name, ok := v.Name()
		if !ok {
			return nil, v.Errorf("syscalls must be names, got %s", v.Describe())
		}
		if _, ok := sysnum.Numbers[name]; !ok {
			hint := "tailgate list syscalls shows them all"
			if near := suggest.Near(name, Names(), 3); len(near) > 0 {
				hint = "near: " + strings.Join(near, ", ") + "; " + hint
			}
			return nil, v.Errorf("unknown syscall %q; %s", name, hint)
		}
		if slices.Contains(names, name) {
			return nil, v.Errorf("syscall %q listed twice", name)
		}
		names = append(names, name)
	}
	return names, nil
}
