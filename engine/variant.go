package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/engine/runner"
	"github.com/tailgate-ci/tailgate/internal/progress"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/sysctl"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// Variant is a target with sysctls in force during its trials, exactly
// that long: they are restored when each run returns, however it returns
// (an error, an interrupt, a panic). A host variant is a Variant of Host.
// Dir and Env change its scenarios' own programs (scenarios.InDir): the
// base and the head of a pull request, built in two checkouts, gated in
// one job.
type Variant struct {
	Target
	// VariantName names the variant; "" is the target's own name.
	VariantName string
	Sysctls     []sysctl.Setting
	// Dir stands in for the scenario file's directory (absolute); Env is
	// added to the exec workloads' environment.
	Dir string
	Env map[string]string
	// Root is /proc/sys.
	Root string
	// SliceSysctls lets a variant with sysctls take turns in a round's
	// slices (the gate's --slice-sysctls): its settings are written as
	// its warmup and each of its slices start and the saved values put
	// back as they end, under one journal from the first write until
	// Release. Opt-in: a setting whose effect builds up in kernel state
	// (caches, queues, what was allocated under it) would carry into the
	// other side's next slice.
	SliceSysctls bool

	sliced    *sysctl.Applied // the settings while a sliced run holds them
	slicedSet []result.Sysctl // as read back at the first write
}

func (v *Variant) Name() string {
	if v.VariantName != "" {
		return v.VariantName
	}
	return v.Target.Name()
}

// Prepare refuses a dir= or env. a scenario has nowhere to put (a
// built-in loop), before any trial.
func (v *Variant) Prepare(req runner.Request) (runner.Request, error) {
	if _, err := v.scenarios(req); err != nil {
		return req, err
	}
	return v.Target.Prepare(req)
}

func (v *Variant) scenarios(req runner.Request) (runner.Request, error) {
	if v.Dir == "" && len(v.Env) == 0 {
		return req, nil
	}
	out := req
	out.Scenarios = make([]*scenarios.Scenario, len(req.Scenarios))
	for i, s := range req.Scenarios {
		c, err := scenarios.InDir(s, v.Dir, v.Env)
		if err != nil {
			return req, Inputf("variant %s: %v", v.Name(), err)
		}
		out.Scenarios[i] = c
	}
	return out, nil
}

func (v *Variant) Run(ctx context.Context, req runner.Request, p *progress.Reporter) (res *result.Result, err error) {
	var set []result.Sysctl
	if len(v.Sysctls) > 0 {
		applied, read, aerr := v.apply()
		if aerr != nil {
			return nil, aerr
		}
		defer func() {
			if rerr := applied.Restore(); rerr != nil {
				err = &RestoreError{errors.Join(rerr, err)}
			}
		}()
		set = read
	}
	run, err := v.scenarios(req)
	if err != nil {
		return nil, err
	}
	res, err = v.Target.Run(ctx, run, p)
	if res != nil {
		v.stamp(req, res, set)
	}
	return res, err
}

// stamp records the variant on res, the Result of req's run with the
// sysctls set.
func (v *Variant) stamp(req runner.Request, res *result.Result, set []result.Sysctl) {
	res.Target.Sysctls, res.Target.Dir, res.Target.Env = set, v.Dir, maps.Clone(v.Env)
	// The digest that guards the comparison is the scenario's as given:
	// the variant's own keys are what is compared on purpose.
	if v.Dir != "" || len(v.Env) > 0 {
		for _, s := range req.Scenarios {
			if sr := res.Find(s.Name); sr != nil {
				sr.Params = scenarios.Params(req.Resolve(s))
			}
		}
	}
}

// Interleave: a variant's sysctls hold machine-wide, so one that sets
// any runs its trials whole, unless SliceSysctls writes them around each
// of its turns.
func (v *Variant) Interleave(req runner.Request) (runner.Request, func(*result.Result), string) {
	if len(v.Sysctls) > 0 && !v.SliceSysctls {
		return req, nil, fmt.Sprintf("variant %s sets sysctls, which hold machine-wide for a whole trial (--slice-sysctls writes them around each of its slices)", v.Name())
	}
	inner, ok := v.Target.(Interleaver)
	if !ok {
		return req, nil, fmt.Sprintf("target %s runs its trials whole", v.Target.Name())
	}
	run, err := v.scenarios(req)
	if err != nil {
		return req, nil, err.Error()
	}
	run, stamp, why := inner.Interleave(run)
	if why != "" {
		return req, nil, why
	}
	if len(v.Sysctls) > 0 {
		run.SliceHook = runner.JoinHooks(v.turn, run.SliceHook)
	}
	return run, func(res *result.Result) {
		stamp(res)
		v.stamp(req, res, v.slicedSet)
	}, ""
}

// turn puts the variant's sysctls in force as its side of a sliced pair
// starts to run (the first time with their journal) and out of force as
// it stops.
func (v *Variant) turn(running bool) error {
	if !running {
		if err := v.sliced.Suspend(); err != nil {
			return &RestoreError{err}
		}
		return nil
	}
	if v.sliced != nil {
		if err := v.sliced.Resume(); err != nil {
			return Infra(fmt.Errorf("variant %s: %w", v.Name(), err))
		}
		return nil
	}
	applied, read, err := v.apply()
	if err != nil {
		return err
	}
	v.sliced, v.slicedSet = applied, read
	return nil
}

// apply puts the variant's sysctls in force (sysctl.Apply, with its
// journal) and returns them as they read back after, for the Result. A
// setting that could not be put back after a failed write is a
// *RestoreError, any other failure an infrastructure one.
func (v *Variant) apply() (*sysctl.Applied, []result.Sysctl, error) {
	applied, err := sysctl.Apply(v.Root, v.Sysctls)
	if err != nil {
		var re *sysctl.RestoreError
		if errors.As(err, &re) {
			return nil, nil, &RestoreError{err}
		}
		return nil, nil, Infra(fmt.Errorf("variant %s: %w", v.Name(), err))
	}
	var read []result.Sysctl
	for _, st := range v.Sysctls {
		got, _ := sysctl.Read(v.Root, st.Key)
		read = append(read, result.Sysctl{Key: st.Key, Set: st.Value, Read: got})
	}
	return applied, read, nil
}

// Release restores what a sliced run left suspended and removes its
// journal; Rounds calls it however the rounds end.
func (v *Variant) Release() error {
	if v.sliced == nil {
		return nil
	}
	err := v.sliced.Restore()
	v.sliced = nil
	if err != nil {
		return &RestoreError{err}
	}
	return nil
}

var variantName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// VariantSpec is a host variant as --variant gives it.
type VariantSpec struct {
	Name    string
	Sysctls []sysctl.Setting
	Dir     string            // absolute
	Env     map[string]string // env.NAME=VALUE
	// Description is for reports: "host, vm.swappiness=10, dir=../base".
	Description string
}

// ParseVariant reads a host variant, NAME[:KEY=VALUE[,KEY=VALUE...]]: each
// KEY a sysctl, dir (a directory standing in for the scenario file's: a
// checkout of the same tree) or env.NAME (one more environment variable
// of the exec workload).
func ParseVariant(s string) (VariantSpec, error) {
	name, list, _ := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !variantName.MatchString(name) || len(name) > result.MaxNameLen {
		return VariantSpec{}, Inputf("--variant %.80q: name %.80q must be letters, digits, '.', '_' or '-', at most %d (it names the Result file and the baseline); want NAME[:KEY=VALUE,...]", s, name, result.MaxNameLen)
	}
	v := VariantSpec{Name: name}
	if strings.TrimSpace(list) == "" {
		v.Description = "host"
		return v, nil
	}
	descr := []string{"host"}
	for _, kv := range strings.Split(list, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(kv), "=")
		switch {
		case k == "dir":
			if v.Dir != "" {
				return VariantSpec{}, Inputf("--variant %s: dir set twice", name)
			}
			abs, err := filepath.Abs(val)
			if err != nil || val == "" {
				return VariantSpec{}, Inputf("--variant %s: dir=%q: want the directory of a checkout, e.g. dir=../base", name, val)
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return VariantSpec{}, Inputf("--variant %s: dir=%s is not a directory; check out the base there first", name, val)
			}
			v.Dir = abs
			descr = append(descr, "dir="+val)
		case strings.HasPrefix(k, "env."):
			n := strings.TrimPrefix(k, "env.")
			if n == "" || strings.ContainsAny(n, "=\x00") || !strings.Contains(kv, "=") {
				return VariantSpec{}, Inputf("--variant %s: %q: want env.NAME=VALUE", name, kv)
			}
			if _, dup := v.Env[n]; dup {
				return VariantSpec{}, Inputf("--variant %s: env.%s set twice", name, n)
			}
			if v.Env == nil {
				v.Env = map[string]string{}
			}
			v.Env[n] = val
			descr = append(descr, k+"="+val)
		default:
			st, err := sysctl.Parse(kv)
			if err != nil {
				return VariantSpec{}, Inputf("--variant %s: %v (a key is a sysctl, dir or env.NAME)", name, err)
			}
			if slices.ContainsFunc(v.Sysctls, func(o sysctl.Setting) bool { return o.Key == st.Key }) {
				return VariantSpec{}, Inputf("--variant %s: %s set twice", name, st.Key)
			}
			v.Sysctls = append(v.Sysctls, st)
			descr = append(descr, st.String())
		}
	}
	v.Description = strings.Join(descr, ", ")
	return v, nil
}

// RecoverSysctls puts back, before anything runs, the sysctls under root
// that runs which died (SIGKILL) left changed, from their journals, and
// says so on log, naming each value and the run. A journal it cannot
// replay is set aside and named on log with what to restore by hand: it
// blocks no run. Every command that runs trials calls it first. A journal
// directory it cannot use is warned of on log: a run that writes no
// sysctl goes on (CheckVariants, for one that does, fails on it).
func RecoverSysctls(root string, log io.Writer) {
	if err := recoverSysctls(root, log); err != nil {
		fmt.Fprintf(log, "tailgate: warning: %v\n", err)
	}
}

// recoverSysctls is RecoverSysctls, the journal directory's error
// returned.
func recoverSysctls(root string, log io.Writer) error {
	rec, err := sysctl.Recover(root)
	for _, r := range rec.Restored {
		fmt.Fprintf(log, "tailgate: restored sysctl %s, left changed by a tailgate run that died (pid %d)\n", r.Setting, r.PID)
	}
	for _, sa := range rec.SetAside {
		fmt.Fprintf(log, "tailgate: %v\n", sa)
	}
	return err
}

// CheckVariants puts back what runs that died left changed
// (RecoverSysctls), then refuses, before anything runs, a key this kernel
// lacks (a typo until proven otherwise), one tailgate could not put back
// as it found it (read-only, changed by the kernel itself), one another
// tailgate run holds, or a value the kernel will not take: found here, in
// one line naming the key and the value, not after the base's trials.
// Targets that are not variants are passed over.
func CheckVariants(targets []Target, root string, log io.Writer) error {
	var vs []*Variant
	for _, t := range targets {
		if v, ok := t.(*Variant); ok {
			vs = append(vs, v)
		}
	}
	if err := recoverSysctls(root, log); err != nil {
		if slices.ContainsFunc(vs, func(v *Variant) bool { return len(v.Sysctls) > 0 }) {
			return Infra(err)
		}
		fmt.Fprintf(log, "tailgate: warning: %v\n", err)
	}
	for _, v := range vs {
		for _, s := range v.Sysctls {
			if err := sysctl.Check(root, s); err != nil {
				return Inputf("variant %s: %v; drop it from the variant", v.Name(), err)
			}
		}
	}
	for _, v := range vs {
		if err := sysctl.Probe(root, v.Sysctls); err != nil {
			var pe *sysctl.ProbeError
			var be *sysctl.BusyError
			switch {
			case errors.As(err, &be):
				return Infra(fmt.Errorf("variant %s: %w", v.Name(), err))
			case errors.As(err, &pe):
				return Inputf("variant %s: %v; drop it or give it a value this kernel takes", v.Name(), err)
			}
			return &RestoreError{err}
		}
	}
	return nil
}

// Turns says what a variant writes around each of its runs of slices
// (Turner): its sysctls, when it sets any.
func (v *Variant) Turns() string {
	if len(v.Sysctls) == 0 {
		return ""
	}
	return v.Name() + "'s sysctls"
}
