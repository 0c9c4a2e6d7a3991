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
	// Digest says the values are digests (a sha256, a commit), whole
	// here: text may shorten them (ShortDigest), a machine must not.
	Digest bool `json:"-"`
}

// respect is one recorded respect of a Result: what and its value, and
// whether that is a digest.
type respect struct {
	what, value string
	digest      bool
}

// respects lists what a Result records about what was measured: the
// kernel, its command line and configuration, the CPU, the target's
// shape, a variant's sysctls (as read back), directory and environment,
// and each scenario's programs (path, content, commit). The target's name
// is left out: it always differs.
func respects(r *result.Result) []respect {
	var out []respect
	add := func(what, v string) {
		if v != "" {
			out = append(out, respect{what: what, value: v})
		}
	}
	// A digest is recorded whole, "(none)" where a Result lacks it.
	addDigest := func(what, v string) {
		out = append(out, respect{what: what, value: orNoDigest(v), digest: true})
	}
	e, t := r.Environment, r.Target
	add("kernel", e.KernelRelease)
	add("kernel version", e.KernelVersion)
	addDigest("kernel config", e.ConfigHash)
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
		for _, g := range sameBinaries(sc.Executables) {
			x := g.x
			p := sc.Name + " " + strings.Join(g.roles, " and ")
			add(p, x.Path)
			addDigest(p+" sha256", x.SHA256)
			if x.GitHead != "" {
				out = append(out, respect{what: p + " commit", value: commitText(x), digest: true})
			}
		}
	}
	return out
}

// binaryRoles is one binary and the roles it plays in a scenario.
type binaryRoles struct {
	x     result.Executable
	roles []string
}

// sameBinaries groups xs by the binary (path, content and commit), in
// the order first listed, so that one program that is both the server
// and the load generator is named once, with both roles.
func sameBinaries(xs []result.Executable) []binaryRoles {
	var out []binaryRoles
	for _, x := range xs {
		i := slices.IndexFunc(out, func(g binaryRoles) bool {
			return g.x.Path == x.Path && g.x.SHA256 == x.SHA256 && g.x.GitHead == x.GitHead && g.x.GitDirty == x.GitDirty
		})
		if i < 0 {
			out = append(out, binaryRoles{x: x})
			i = len(out) - 1
		}
		out[i].roles = append(out[i].roles, x.Role)
	}
	return out
}

// differing lists, in the order first recorded, each respect whose value
// is not the same in all of rs (a respect one lacks reads "-"), with its
// value in each.
func differing(rs []*result.Result) []Differing {
	var out []Differing
	at := map[string]int{} // what → index in out
	for i, r := range rs {
		for _, x := range respects(r) {
			k, ok := at[x.what]
			if !ok {
				k = len(out)
				at[x.what] = k
				out = append(out, Differing{What: x.what, Values: make([]string, len(rs)), Digest: x.digest})
			}
			out[k].Values[i] = x.value
		}
	}
	return slices.DeleteFunc(out, func(d Differing) bool {
		for i := range d.Values {
			d.Values[i] = orNone(d.Values[i])
		}
		for _, v := range d.Values {
			if v != d.Values[0] {
				return false
			}
		}
		return true
	})
}

// Differences lists what the two Results record differently about what
// was measured (respects). None at all, in a comparison of two runs, is
// an A/A, which a report says, so that one made by mistake is seen.
func Differences(base, cand *result.Result) []Difference {
	if base == nil || cand == nil {
		return nil
	}
	var ds []Difference
	for _, d := range differing([]*result.Result{base, cand}) {
		ds = append(ds, Difference{What: d.What, Base: d.Values[0], Cand: d.Values[1], Digest: d.Digest})
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
	h := x.GitHead
	if x.GitDirty {
		h += " (modified)"
	}
	return h
}

func orNoDigest(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ShortDigest is a digest as text shows it: its first 12 hex digits, an
// algorithm's prefix ("sha256:") dropped and what follows a space (a
// commit's " (modified)") kept.
func ShortDigest(s string) string {
	d, rest, _ := strings.Cut(s, " ")
	if _, hex, ok := strings.Cut(d, ":"); ok {
		d = hex
	}
	if len(d) > 12 {
		d = d[:12]
	}
	if rest != "" {
		return d + " " + rest
	}
	return d
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

// paramsDiffText names what differs between the parameters of two runs of
// a scenario (result.ParamsDiff): "duration 500ms (baseline) vs 200ms
// (candidate)", a field each, or, where the definitions do not say, the
// two digests.
func paramsDiffText(base, cand *result.Scenario) string {
	ds := result.ParamsDiff(base, cand)
	if len(ds) == 0 {
		return fmt.Sprintf("parameter digest %s (baseline) vs %s (candidate)", short(base.Params), short(cand.Params))
	}
	const most = 3
	var parts []string
	for i, d := range ds {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-most))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s (baseline) vs %s (candidate)", d.Field, d.A, d.B))
	}
	return strings.Join(parts, ", ")
}
