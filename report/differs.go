package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Difference is one recorded respect in which the two sides differ: what
// each side was, for a reader who must know what was compared.
type Difference struct {
	What string `json:"what"` // "sysctl vm.swappiness", "syscall-read command sha256"
	Base string `json:"baseline"`
	Cand string `json:"candidate"`
}

// Differences lists what the two Results record differently about what
// was measured: the kernel, its command line, a variant's sysctls (as
// read back), directory and environment, and each scenario's programs
// (path, content, commit). The targets' names are left out: they always
// differ. None at all, in a comparison of two runs, is an A/A, which a
// report says (so that one made by mistake is seen).
func Differences(base, cand *result.Result) []Difference {
	if base == nil || cand == nil {
		return nil
	}
	var ds []Difference
	diff := func(what, b, c string) {
		if b != c {
			ds = append(ds, Difference{What: what, Base: orNone(b), Cand: orNone(c)})
		}
	}
	be, ce := base.Environment, cand.Environment
	diff("kernel", be.KernelRelease, ce.KernelRelease)
	diff("kernel version", be.KernelVersion, ce.KernelVersion)
	diff("kernel config", short(be.ConfigHash), short(ce.ConfigHash))
	diff("kernel command line", be.Cmdline, ce.Cmdline)
	bt, ct := base.Target, cand.Target
	diff("kernel spec", bt.Kernel, ct.Kernel)
	diff("accel", bt.Accel, ct.Accel)
	diff("extra command line", bt.Cmdline, ct.Cmdline)
	diff("dir", bt.Dir, ct.Dir)
	keys := map[string]bool{}
	bs, cs := map[string]result.Sysctl{}, map[string]result.Sysctl{}
	for _, s := range bt.Sysctls {
		bs[s.Key], keys[s.Key] = s, true
	}
	for _, s := range ct.Sysctls {
		cs[s.Key], keys[s.Key] = s, true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		diff("sysctl "+k, sysctlText(bs[k]), sysctlText(cs[k]))
	}
	envs := map[string]bool{}
	for k := range bt.Env {
		envs[k] = true
	}
	for k := range ct.Env {
		envs[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(envs)) {
		diff("env "+k, bt.Env[k], ct.Env[k])
	}
	for _, c := range cand.Scenarios {
		b := base.Find(c.Name)
		if b == nil {
			continue
		}
		roles := map[string]bool{}
		bx, cx := map[string]result.Executable{}, map[string]result.Executable{}
		for _, x := range b.Executables {
			bx[x.Role], roles[x.Role] = x, true
		}
		for _, x := range c.Executables {
			cx[x.Role], roles[x.Role] = x, true
		}
		for _, r := range slices.Sorted(maps.Keys(roles)) {
			p := c.Name + " " + r
			diff(p, bx[r].Path, cx[r].Path)
			diff(p+" sha256", short(bx[r].SHA256), short(cx[r].SHA256))
			diff(p+" commit", commitText(bx[r]), commitText(cx[r]))
		}
	}
	return ds
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sysctlText(s result.Sysctl) string {
	switch {
	case s.Key == "":
		return ""
	case s.Read != "" && s.Read != s.Set:
		return s.Set + " (read back " + s.Read + ")"
	}
	return s.Set
}

func commitText(x result.Executable) string {
	if x.GitHead == "" {
		return ""
	}
	h := short(x.GitHead)
	if x.GitDirty {
		h += " (modified)"
	}
	return h
}

// differenceLine is the "what differs" line of a comparison of two runs:
// each difference, or the words that say there is none; "" for a report
// built without its Results.
func differenceLine(r *Report) string {
	if r.BaseResult == nil || r.CandResult == nil {
		return ""
	}
	ds := Differences(r.BaseResult, r.CandResult)
	// The sides as the report names them, where its Results do not (a
	// report put together from parts).
	for _, d := range []Difference{{"kernel", r.Base.KernelRelease, r.Cand.KernelRelease}, {"accel", r.Base.Accel, r.Cand.Accel}} {
		if d.Base != d.Cand && !slices.ContainsFunc(ds, func(o Difference) bool { return o.What == d.What }) {
			ds = append([]Difference{{d.What, orNone(d.Base), orNone(d.Cand)}}, ds...)
		}
	}
	if len(ds) == 0 {
		return "nothing recorded (kernel, sysctls, programs): an A/A comparison"
	}
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s → %s", d.What, d.Base, d.Cand))
	}
	return strings.Join(parts, "; ")
}
