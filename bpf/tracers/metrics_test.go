package tracers

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// cIndex is a METRIC_<NAME> index a tracer's C sources define: the m its
// programs pass to hist_record, which the Go side names by position.
type cIndex struct {
	Name  string // METRIC_RUNQ
	Index int64
	At    string // file:line
}

var (
	// #define METRIC_X 0
	metricDefine = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(METRIC_\w+)[ \t]+([^\n]*)`)
	// enum [tag] { ... }
	enumBlock = regexp.MustCompile(`\benum\s*\w*\s*\{([^}]*)\}`)
	comment   = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	notNL     = regexp.MustCompile(`[^\n]`)
	cInteger  = regexp.MustCompile(`^\(?([0-9]+|0[xX][0-9a-fA-F]+)[uUlL]*\)?$`)
)

// parseMetricIndexes returns the METRIC_ indexes src (a .h or .bpf.c
// named file) defines, as #define lines or enum members, in the order
// written. A value that is not an integer literal is an error: the test
// cannot tell what it is.
func parseMetricIndexes(file string, src []byte) ([]cIndex, error) {
	// Blank out comments, keeping offsets (and so lines) where they were.
	text := comment.ReplaceAllFunc(src, func(c []byte) []byte {
		return notNL.ReplaceAll(c, []byte(" "))
	})
	at := func(off int) string {
		return fmt.Sprintf("%s:%d", file, 1+strings.Count(string(text[:off]), "\n"))
	}
	value := func(s, where string) (int64, error) {
		s = strings.TrimSpace(s)
		m := cInteger.FindStringSubmatch(s)
		if m == nil {
			return 0, fmt.Errorf("%s: enum or METRIC_ value %q is not an integer literal", where, s)
		}
		return strconv.ParseInt(m[1], 0, 64)
	}
	var out []cIndex
	for _, m := range metricDefine.FindAllSubmatchIndex(text, -1) {
		name, where := string(text[m[2]:m[3]]), at(m[0])
		v, err := value(string(text[m[4]:m[5]]), where)
		if err != nil {
			return nil, err
		}
		out = append(out, cIndex{name, v, where})
	}
	// An enum with METRIC_ members: C numbers them on from 0, or from the
	// last value given.
	for _, m := range enumBlock.FindAllSubmatchIndex(text, -1) {
		body := string(text[m[2]:m[3]])
		if !strings.Contains(body, "METRIC_") {
			continue
		}
		next, off := int64(0), m[2]
		for _, member := range strings.Split(body, ",") {
			where := at(off + len(member) - len(strings.TrimLeft(member, " \t\n")))
			off += len(member) + 1
			name, expr, assigned := strings.Cut(member, "=")
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if assigned {
				v, err := value(expr, where)
				if err != nil {
					return nil, err
				}
				next = v
			}
			if strings.HasPrefix(name, "METRIC_") {
				out = append(out, cIndex{name, next, where})
			}
			next++
		}
	}
	return out, nil
}

// checkMetricIndexes compares a tracer's C indexes with its Go metric
// names, which Load takes by index: the indexes must be 0 to n-1, one each,
// n must be the number of names, and the index of METRIC_<NAME> must name
// the metric whose last dot-separated part is <name> in lower case
// (METRIC_RUNQ_PREEMPTED is sched.runq_preempted). It returns what differs.
func checkMetricIndexes(c []cIndex, metrics []string) []string {
	var problems []string
	byIndex := map[int64]cIndex{}
	for _, d := range c {
		if prev, ok := byIndex[d.Index]; ok {
			problems = append(problems, fmt.Sprintf("%s: %s is index %d, as %s is (%s)", d.At, d.Name, d.Index, prev.Name, prev.At))
			continue
		}
		byIndex[d.Index] = d
	}
	for _, d := range c {
		if d.Index < 0 || d.Index >= int64(len(metrics)) {
			problems = append(problems, fmt.Sprintf("%s: %s is index %d, but Go names %d metrics %q", d.At, d.Name, d.Index, len(metrics), metrics))
		}
	}
	for i, m := range metrics {
		d, ok := byIndex[int64(i)]
		if !ok {
			problems = append(problems, fmt.Sprintf("Go names index %d %s, but no METRIC_ is %d", i, m, i))
			continue
		}
		want := "METRIC_" + strings.ToUpper(m[strings.LastIndex(m, ".")+1:])
		if d.Name != want {
			problems = append(problems, fmt.Sprintf("%s: index %d is %s in C, %s (%s) in Go", d.At, i, d.Name, m, want))
		}
	}
	return problems
}

// cSources returns the METRIC_ indexes of the C sources in dir (its *.h
// and *.bpf.c).
func cSources(t *testing.T, dir string) []cIndex {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.h", "*.bpf.c"} {
		fs, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	var all []cIndex
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Named from the module's root, as a reader finds them.
		c, err := parseMetricIndexes(filepath.ToSlash(filepath.Join("bpf", filepath.Base(dir), filepath.Base(f))), src)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c...)
	}
	return all
}

// TestMetricIndexes holds each tracer's C metric indexes (the METRIC_
// defines or enum members of its package's .h and .bpf.c files) to the Go
// names of its metrics, index by index: a tracer reads histogram m as the
// m-th name of the list it loads with, so a METRIC_ moved, added or
// dropped on one side only would file one metric's latencies under
// another's name. The names are the tracer's list (Kind.Metrics) where
// it names them all, else its probe config's. Tracers whose indexes
// follow the config (syscall's
// table, irq's map, kfunc's cookies) define none and are not checked
// here. It needs no privileges.
func TestMetricIndexes(t *testing.T) {
	const module = "github.com/tailgate-ci/tailgate/bpf/"
	checked := map[string]bool{}
	for _, k := range All {
		t.Run(k.Name, func(t *testing.T) {
			pkg := reflect.TypeOf(k.Probe).Elem().PkgPath()
			if !strings.HasPrefix(pkg, module) {
				t.Fatalf("probe config of package %s, not under bpf/", pkg)
			}
			dir := filepath.Join("..", strings.TrimPrefix(pkg, module))
			checked[filepath.Base(dir)] = true
			c := cSources(t, dir)
			if len(c) == 0 {
				t.Logf("%s defines no METRIC_ indexes", dir)
				return
			}
			// Every metric the tracer has, where its list names them
			// all: a config may ask for fewer (request's queue).
			names := k.Probe.Metrics()
			if !slices.ContainsFunc(k.Metrics, func(m string) bool { return strings.Contains(m, "<") }) {
				names = k.Metrics
			}
			for _, p := range checkMetricIndexes(c, names) {
				t.Error(p)
			}
		})
	}
	// A package under bpf/ that defines indexes is a tracer of All, so that
	// none escapes the check.
	dirs, err := filepath.Glob(filepath.Join("..", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if name := filepath.Base(dir); name != "include" && !checked[name] && len(cSources(t, dir)) > 0 {
			t.Errorf("bpf/%s defines METRIC_ indexes, but no tracer of All is its package", name)
		}
	}
}

func TestParseMetricIndexes(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []cIndex
		err       string
	}{
		{
			name: "defines",
			src:  "/* Metric indexes. */\n#define METRIC_A 0\n  # define METRIC_B_C 1 /* b.c */\n#define HIST_MAX_METRICS 16\n#define KIND_X 3\n",
			want: []cIndex{{"METRIC_A", 0, "x.h:2"}, {"METRIC_B_C", 1, "x.h:3"}},
		},
		{
			name: "enum",
			src:  "enum metric {\n\tMETRIC_A, /* 0 */\n\tMETRIC_B = 4,\n\tMETRIC_C,\n};\nenum { OTHER = 7, ALSO };\n",
			want: []cIndex{{"METRIC_A", 0, "x.h:2"}, {"METRIC_B", 4, "x.h:3"}, {"METRIC_C", 5, "x.h:4"}},
		},
		{
			name: "commented out",
			src:  "/*\n#define METRIC_A 0\n*/\n// #define METRIC_B 1\n",
		},
		{
			name: "not a literal",
			src:  "#define METRIC_A (METRIC_B + 1)\n",
			err:  `x.h:1: enum or METRIC_ value "(METRIC_B + 1)" is not an integer literal`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMetricIndexes("x.h", []byte(tc.src))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckMetricIndexes shows the check failing on each kind of mismatch.
func TestCheckMetricIndexes(t *testing.T) {
	sched := []string{"sched.runq", "sched.runq_preempted", "sched.wakeup_new"}
	c := func(names ...string) []cIndex {
		var out []cIndex
		for i, n := range names {
			out = append(out, cIndex{n, int64(i), fmt.Sprintf("sched.h:%d", 6+i)})
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		c       []cIndex
		metrics []string
		want    []string
	}{
		{"match", c("METRIC_RUNQ", "METRIC_RUNQ_PREEMPTED", "METRIC_WAKEUP_NEW"), sched, nil},
		{"swapped", c("METRIC_RUNQ", "METRIC_WAKEUP_NEW", "METRIC_RUNQ_PREEMPTED"), sched, []string{
			"sched.h:7: index 1 is METRIC_WAKEUP_NEW in C, sched.runq_preempted (METRIC_RUNQ_PREEMPTED) in Go",
			"sched.h:8: index 2 is METRIC_RUNQ_PREEMPTED in C, sched.wakeup_new (METRIC_WAKEUP_NEW) in Go",
		}},
		{"one more in C", c("METRIC_RUNQ", "METRIC_RUNQ_PREEMPTED", "METRIC_WAKEUP_NEW", "METRIC_MIGRATE"), sched, []string{
			`sched.h:9: METRIC_MIGRATE is index 3, but Go names 3 metrics ["sched.runq" "sched.runq_preempted" "sched.wakeup_new"]`,
		}},
		{"one more in Go", c("METRIC_RUNQ", "METRIC_RUNQ_PREEMPTED"), sched, []string{
			"Go names index 2 sched.wakeup_new, but no METRIC_ is 2",
		}},
		{"same index twice", []cIndex{{"METRIC_RUNQ", 0, "sched.h:6"}, {"METRIC_RUNQ_PREEMPTED", 0, "sched.h:7"}}, sched[:1], []string{
			"sched.h:7: METRIC_RUNQ_PREEMPTED is index 0, as METRIC_RUNQ is (sched.h:6)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkMetricIndexes(tc.c, tc.metrics)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
