package report

import (
	"fmt"
	"maps"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/result"
)

// Difference is one recorded respect in which the two sides differ: what
// each side was, for a reader who must know what was compared.
type Difference struct {
	What string `json:"what"` // "sysctl vm.swappiness", "syscall-read command sha256"
	Base string `json:"baseline"`
	Cand string `json:"candidate"`
}

// respect is one recorded respect of a Result: what and its value.
type respect struct{ what, value string }

// respects lists what a Result records about what was measured: the
// kernel, its command line and configuration, the CPU, the target's
// shape, a variant's sysctls (as read back), directory and environment,
// and each scenario's programs (path, content, commit). The target's name
// is left out: it always differs.
func respects(r *result.Result) []respect {
	var out []respect
	add := func(what, v string) {
		if v != "" {
			out = append(out, respect{what, v})
		}
	}
	e, t := r.Environment, r.Target
	add("kernel", e.KernelRelease)
	add("kernel version", e.KernelVersion)
	add("kernel config", short(e.ConfigHash))
	add("kernel command line", e.Cmdline)
	add("CPU", e.CPUModel)
	if e.CPUs > 0 {
		add("CPUs", fmt.Sprint(e.CPUs))
	}
	add("clock source", e.Clocksource)
	add("virtualized", e.Virtualized)
	add("target kind", t.Kind)
	add("accel", t.Accel)
	add("kernel spec", t.Kernel)
	add("extra command line", t.Cmdline)
	add("dir", t.Dir)
	for _, st := range t.Sysctls {
		add("sysctl "+st.Key, sysctlText(st))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		add("env "+k, t.Env[k])
	}
	for _, sc := range r.Scenarios {
		for _, x := range sc.Executables {
			p := sc.Name + " " + x.Role
			add(p, x.Path)
			add(p+" sha256", short(x.SHA256))
			add(p+" commit", commitText(x))
		}
	}
	return out
}

// differing lists, in the order first recorded, each respect whose value
// is not the same in all of rs (a respect one lacks reads "-"), with its
// value in each.
func differing(rs []*result.Result) (whats []string, values [][]string) {
	vals := map[string][]string{}
	for i, r := range rs {
		for _, x := range respects(r) {
			if _, ok := vals[x.what]; !ok {
				whats = append(whats, x.what)
				vals[x.what] = make([]string, len(rs))
			}
			vals[x.what][i] = x.value
		}
	}
	out := whats[:0]
	for _, w := range whats {
		v := vals[w]
		same := true
		for i := range v {
			if v[i] != v[0] {
				same = false
			}
		}
		if same {
			continue
		}
		for i := range v {
			v[i] = orNone(v[i])
		}
		out = append(out, w)
		values = append(values, v)
	}
	return out, values
}

// Differences lists what the two Results record differently about what
// was measured (respects). None at all, in a comparison of two runs, is
// an A/A, which a report says, so that one made by mistake is seen.
func Differences(base, cand *result.Result) []Difference {
	if base == nil || cand == nil {
		return nil
	}
	whats, values := differing([]*result.Result{base, cand})
	ds := make([]Difference, len(whats))
	for i, w := range whats {
		ds[i] = Difference{What: w, Base: values[i][0], Cand: values[i][1]}
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

// short is a digest cut to its first 12 characters, "(none)" for none.
func short(digest string) string {
	if digest == "" {
		return "(none)"
	}
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}
