package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/kernels"
	"github.com/tailgate-ci/tailgate/vm"
)

// TargetChoice is the targets a command was given: VMs booting kernels,
// named targets of a targets file, the default VM, host variants, each in
// the order given. None is the host alone.
type TargetChoice struct {
	Kernels []string // --kernel SPEC, each a VM booting SPEC
	Names   []string // --target NAME, from File (default vm.DefaultTargetFile)
	File    string
	VM      bool // a VM booting kernels.DefaultSpec
	// The settings of the VMs Kernels and VM boot; the Clock, Deadline
	// and Cache apply to named targets too, when set.
	Cmdline string
	vm.Settings
	// Jobs bounds the VMs in virtual time that boot at once (VM.Jobs); 0
	// is the CPUs.
	Jobs  int
	Cache string
	// Order is every target (kernel, target, vm, variant) in the order
	// given: the first is the base of a gate, the reference of a matrix.
	Order []TargetUse
	// HostRunner runs the host's requests; nil is runner.Run.
	HostRunner func(context.Context, runner.Request) (*result.Result, error)
}

// TargetUse is one target as given: its kind (kernel, target, vm,
// variant) and its value.
type TargetUse struct{ Kind, Value string }

// Use records a target as given, in Order: kind "kernel" (a VM booting
// the spec value, in Kernels too), "target" (value a name in File, in
// Names too), "variant" (a host variant, ParseVariant's value) or "vm"
// (value a boolean: the default VM, once however often given, and taken
// back by false).
func (ts *TargetChoice) Use(kind, value string) error {
	switch kind {
	case "kernel":
		ts.Kernels = append(ts.Kernels, value)
	case "target":
		ts.Names = append(ts.Names, value)
	case "vm":
		b, err := strconv.ParseBool(value)
		if err != nil {
			return err
		}
		ts.VM = b
		ts.Order = slices.DeleteFunc(ts.Order, func(u TargetUse) bool { return u.Kind == "vm" })
		if b {
			ts.Order = append(ts.Order, TargetUse{Kind: "vm"})
		}
		return nil
	}
	ts.Order = append(ts.Order, TargetUse{Kind: kind, Value: value})
	return nil
}

// Settings are the VM settings of a TargetChoice as their flags name them.
var Settings = []string{"cmdline", "vcpus", "memory", "accel", "clock", "jobs", "deadline", "kernel-cache", "phases"}

// CheckSet refuses VM settings that were set (Settings, spelled as flags:
// --vcpus) and that no target would use: on the host they mean nothing, and a named
// target takes its settings from the targets file, except Clock, Jobs,
// Deadline and Cache. Ignoring them silently would measure something else than
// asked. A real clock on the host is what the host has, and passes. each
// says every target must use them (a matrix, whose named targets stand
// beside VMs booting kernels), not only one.
func (ts *TargetChoice) CheckSet(set []string, each bool) error {
	if !each && (len(ts.Kernels) > 0 || ts.VM) {
		return nil
	}
	if each && len(ts.Names) == 0 {
		return ts.CheckSet(set, false)
	}
	var unused []string
	for _, s := range set {
		switch strings.TrimPrefix(s, "--") {
		case "cmdline", "vcpus", "memory", "accel", "phases":
			unused = append(unused, s)
		case "deadline", "kernel-cache", "jobs":
			if len(ts.Names) == 0 {
				unused = append(unused, s)
			}
		case "clock":
			if len(ts.Names) == 0 && !ts.AsksRealTime() {
				unused = append(unused, s+" "+ts.Clock)
			}
		}
	}
	switch {
	case len(unused) == 0:
		return nil
	case len(ts.Names) > 0:
		return Inputf("%s: --target takes its VM settings from the targets file; set them there, or boot the kernel with --kernel", strings.Join(unused, ", "))
	default:
		return Inputf("%s: VM settings, and this run is on the host; add --kernel SPEC, --target NAME or --vm, or drop them", strings.Join(unused, ", "))
	}
}

// settingFlags are the flags of the VM settings a vm.SettingError names.
var settingFlags = map[string]string{"memory_mib": "memory"}

// Check refuses VM settings that could only fail later, in QEMU or the
// guest (vm.Settings.Check, the limits a targets file has too), and
// --jobs where it cannot be had.
func (ts *TargetChoice) Check() error {
	if err := ts.Settings.Check(); err != nil {
		var se *vm.SettingError
		if errors.As(err, &se) {
			return Inputf("--%s %s: %s", cmp.Or(settingFlags[se.Setting], se.Setting), se.Value, se.Want)
		}
		return &InputError{Err: err}
	}
	switch {
	case ts.Jobs < 0:
		return Inputf("--jobs %d: want 1 or more", ts.Jobs)
	case ts.Jobs > 1 && ts.AsksRealTime():
		return Inputf("--jobs %d with --clock real: VMs in real time boot one at a time, or each would measure the others; --jobs is for virtual time", ts.Jobs)
	}
	return nil
}

// Resolve returns the VM targets, kernels first, then named targets; the
// host when there is none. Variants are not among them (InOrder takes
// them).
func (ts *TargetChoice) Resolve() ([]Target, error) {
	var out []Target
	for _, k := range ts.Kernels {
		out = append(out, ts.kernel(k))
	}
	if ts.VM && len(ts.Kernels) == 0 {
		out = append(out, ts.adhoc(kernels.DefaultSpec))
	}
	if len(ts.Names) > 0 {
		named, err := ts.named()
		if err != nil {
			return nil, err
		}
		out = append(out, named...)
	} else if ts.File != "" {
		return nil, Inputf("--targets names a file but no --target NAME picks from it")
	}
	if err := distinctNames(out, ""); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return []Target{&Host{Runner: ts.HostRunner}}, nil
	}
	return out, nil
}

// named looks Names up in File.
func (ts *TargetChoice) named() ([]Target, error) {
	file := vm.DefaultTargetFile()
	if ts.File != "" {
		// Over the limits of YAML input, before a YAML parser gets it.
		if err := config.CheckFile(ts.File); err != nil {
			return nil, &InputError{Err: err}
		}
		var err error
		if file, err = vm.LoadTargetFile(ts.File); err != nil {
			return nil, &InputError{Err: err}
		}
	}
	var out []Target
	for _, n := range ts.Names {
		t, err := file.Find(n)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		if ts.Deadline > 0 {
			t.Deadline = ts.Deadline
		}
		if ts.Clock != "" {
			t.Clock = ts.Clock
		}
		out = append(out, ts.vm(&t))
	}
	return out, nil
}

// InOrder returns every target in Order (the first is the reference),
// each with a description for reports. wrap, when set, stands in for each
// host or VM (inside a variant's sysctls); root is /proc/sys.
func (ts *TargetChoice) InOrder(root string, wrap func(Target) Target) ([]Target, []string, error) {
	if err := ts.Check(); err != nil {
		return nil, nil, err
	}
	var out []Target
	var descr []string
	add := func(t Target, d string) {
		if wrap != nil {
			if v, ok := t.(*Variant); ok {
				v.Target = wrap(v.Target)
			} else {
				t = wrap(t)
			}
		}
		out, descr = append(out, t), append(descr, d)
	}
	var named []Target
	if len(ts.Names) > 0 {
		var err error
		if named, err = ts.named(); err != nil {
			return nil, nil, err
		}
		if err := distinctNames(named, ""); err != nil {
			return nil, nil, err
		}
	} else if ts.File != "" {
		return nil, nil, Inputf("--targets names a file but no --target NAME picks from it")
	}
	for _, u := range ts.Order {
		switch u.Kind {
		case "kernel":
			t := ts.kernel(u.Value)
			add(t, describeVM(t.Target))
		case "vm":
			if len(ts.Kernels) == 0 {
				t := ts.kernel(kernels.DefaultSpec)
				add(t, describeVM(t.Target))
			}
		case "target":
			for _, t := range named {
				if t.Name() == u.Value {
					add(t, describeVM(t.(*VM).Target))
					break
				}
			}
		case "variant":
			v, err := ParseVariant(u.Value)
			if err != nil {
				return nil, nil, err
			}
			add(&Variant{Target: &Host{Runner: ts.HostRunner}, VariantName: v.Name, Sysctls: v.Sysctls, Dir: v.Dir, Env: v.Env, Root: root}, v.Description)
		}
	}
	if err := distinctNames(out, "; give variants distinct names"); err != nil {
		return nil, nil, err
	}
	return out, descr, nil
}

// distinctNames refuses two targets of one name: their Results would
// overwrite each other.
func distinctNames(ts []Target, hint string) error {
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.Name()] {
			return Inputf("target %s given twice%s", t.Name(), hint)
		}
		seen[t.Name()] = true
	}
	return nil
}

// vm is the target booting t, with the kernel cache.
func (ts *TargetChoice) vm(t *vm.Target) *VM {
	return &VM{Target: t, CacheDir: ts.Cache, Jobs: ts.Jobs}
}

// adhoc is the target of a --kernel SPEC, named after the kernel.
func (ts *TargetChoice) adhoc(spec string) *VM {
	name := kernelName(spec)
	if ts.Cmdline != "" {
		name += "+" + strings.ReplaceAll(strings.Fields(ts.Cmdline)[0], "=", "-")
	}
	return ts.vm(&vm.Target{Name: fitName(name), Kernel: spec, Cmdline: ts.Cmdline, Settings: ts.Settings})
}

// kernelName names a VM after the kernel it boots: 6.1-cloud, bzImage.
func kernelName(spec string) string {
	if name, ok := strings.CutPrefix(spec, "debian:"); ok {
		return name
	}
	return filepath.Base(spec)
}

// kernel is a --kernel '[NAME=]SPEC [CMDLINE]' target: the command line
// after the spec is appended to Cmdline, and named in the target's name
// so that one kernel can appear with several; NAME, when given, is its
// name instead (two builds of one path, bzImage and bzImage, or one
// kernel twice).
func (ts *TargetChoice) kernel(value string) *VM {
	given, value := cutKernelName(value)
	fields := strings.Fields(value)
	spec := ""
	if len(fields) > 0 {
		spec = fields[0]
	}
	own := fields[min(1, len(fields)):]
	c := *ts
	c.Cmdline = strings.TrimSpace(ts.Cmdline + " " + strings.Join(own, " "))
	t := c.adhoc(spec)
	if len(own) > 0 {
		name := kernelName(spec)
		for _, w := range own {
			name += "+" + strings.NewReplacer("=", "-", "/", "-", ",", "-").Replace(w)
		}
		t.Target.Name = name
	}
	if given != "" {
		t.Target.Name = given
	}
	t.Target.Name = fitName(t.Target.Name)
	return t
}

// fitName is name within a Result's limit on names: one longer (a kernel
// and its whole command line) keeps its start and a digest of the whole,
// so that two long names stay two.
func fitName(name string) string {
	if len(name) <= result.MaxNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	tag := "~" + hex.EncodeToString(sum[:4])
	cut := result.MaxNameLen - len(tag)
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut] + tag
}

func describeVM(t *vm.Target) string {
	d := t.Kernel
	if t.Cmdline != "" {
		d += " " + t.Cmdline
	}
	return d
}

// cutKernelName splits a --kernel value's NAME= off: "base=./bzImage
// audit=1" is ./bzImage audit=1 named base. Only a first word whose part
// before '=' is a name is named, so a spec (debian:6.1-cloud, a path
// with '/') or a command line word is not taken for one; a file named
// a=b is ./a=b.
func cutKernelName(value string) (name, rest string) {
	v := strings.TrimSpace(value)
	first, _, _ := strings.Cut(v, " ")
	n, spec, ok := strings.Cut(first, "=")
	if !ok || spec == "" || !variantName.MatchString(n) || len(n) > result.MaxNameLen {
		return "", value
	}
	return n, strings.TrimPrefix(v, n+"=")
}
