package render

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/report"
)

// handMatrix is sampleReport as a matrix of its two sides: the case of
// one pair.
func handMatrix() *report.Matrix {
	r := sampleReport()
	return &report.Matrix{
		Targets: []report.MatrixTarget{{Name: r.Base.Target}, {Name: r.Cand.Target}},
		Pairs:   []*report.Report{r},
	}
}

// A matrix of two targets writes the JUnit of their comparison, each case
// named for the target: one renderer, the pair its N = 2 case.
func TestMatrixJUnitIsCompares(t *testing.T) {
	m := handMatrix()
	var two, matrix bytes.Buffer
	if err := WriteReport(&two, m.Pairs[0], FormatJUnit); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(&matrix, m, FormatJUnit); err != nil {
		t.Fatal(err)
	}
	named := strings.ReplaceAll(matrix.String(), "debian-6.12 vs host: ", "")
	if n := strings.Count(matrix.String(), `<testcase name="debian-6.12 vs host: `); n != 5 {
		t.Errorf("%d cases name the pair, want the 5 gated:\n%s", n, matrix.String())
	}
	if diff := cmp.Diff(two.String(), named); diff != "" {
		t.Errorf("matrix JUnit, pair names removed, differs from compare's (-compare +matrix):\n%s", diff)
	}
}

// A report and a matrix of its two targets lay out the same table, the
// columns named for the targets in place of baseline and candidate, and
// word the same warnings, named for the pair.
func TestMatrixTextIsCompares(t *testing.T) {
	r := sampleReport()
	m := r.Matrix()
	m.TwoSided = false
	var two, matrix bytes.Buffer
	if err := WriteReport(&two, r, FormatText); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(&matrix, m, FormatText); err != nil {
		t.Fatal(err)
	}
	rows := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| metric ") {
				out = append(out, strings.Join(strings.Fields(l), " "))
			}
		}
		return out
	}
	// The gated rows: 5 of the 6, max not gated (-v shows it).
	if diff := cmp.Diff(rows(two.String()), rows(matrix.String())); diff != "" || len(rows(two.String())) != 5 {
		t.Errorf("table rows (-compare +matrix):\n%s", diff)
	}
	for _, want := range []string{
		"| metric | pctl | host (ref) | debian-6.12 | delta | 95% CI | threshold | verdict |",
		"target: debian-6.12, kernel 6.12.9-amd64, kvm",
		"warning: debian-6.12 vs host: sched.wakeup p90: few events beyond p90 (baseline 12; want ≥ 20)",
	} {
		if got := strings.Join(strings.Fields(matrix.String()), " "); !strings.Contains(got, want) {
			t.Errorf("matrix text lacks %q:\n%s", want, matrix.String())
		}
	}
}

// The same for the workflow annotations of verdicts; report-wide warnings
// name the two targets in place of "the baseline" and "the candidate".
func TestMatrixGitHubIsCompares(t *testing.T) {
	m := handMatrix()
	var two, matrix bytes.Buffer
	if err := WriteReport(&two, m.Pairs[0], FormatGitHub); err != nil {
		t.Fatal(err)
	}
	if err := WriteMatrix(&matrix, m, FormatGitHub); err != nil {
		t.Fatal(err)
	}
	twoLines := strings.Split(strings.TrimSuffix(two.String(), "\n"), "\n")
	lines := strings.Split(strings.TrimSuffix(matrix.String(), "\n"), "\n")
	if len(lines) != len(twoLines) {
		t.Fatalf("%d lines, compare writes %d:\n%s", len(lines), len(twoLines), matrix.String())
	}
	for i, l := range lines {
		want := twoLines[i]
		switch {
		case strings.HasPrefix(l, "::error") || strings.HasPrefix(l, "::warning"):
			l = strings.Replace(l, "title=tailgate%3A debian-6.12 ", "title=tailgate%3A ", 1)
			l = strings.Replace(l, "::debian-6.12 vs host: ", "::", 1)
		case i == 0:
			want = `::notice title=tailgate::debian-6.12 vs host: environments differ: kernel release is "6.1.0-28-amd64" in host, "6.12.9-amd64" in debian-6.12`
		default:
			want = "::notice title=tailgate::debian-6.12 vs host: " + strings.TrimPrefix(want, "::notice title=tailgate::")
		}
		if l != want {
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, l, want)
		}
	}
}

// A matrix of three targets: a case per target, gated metric and
// percentile, a failure per regression; an annotation per regression or
// inconclusive verdict naming its target, a headline per target.
func TestMatrixJUnitGitHub(t *testing.T) {
	m := sampleMatrix(t)
	var b bytes.Buffer
	if err := WriteMatrix(&b, m, FormatJUnit); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "matrix.junit", b.Bytes())
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	c := m.Tally()
	if doc.Tests != c.Gated || doc.Failures != c.Regressions || c.Regressions == 0 {
		t.Errorf("junit: %d tests, %d failures; the matrix has %d gated, %d regressions", doc.Tests, doc.Failures, c.Gated, c.Regressions)
	}
	for _, s := range doc.Suites {
		for _, tc := range s.Cases {
			slow := strings.HasPrefix(tc.Name, "slow vs generic: ")
			if !slow && !strings.HasPrefix(tc.Name, "generic-again vs generic: ") {
				t.Errorf("case %q does not name its target", tc.Name)
			}
			if (tc.Failure != nil) != slow {
				t.Errorf("case %q: failure %v", tc.Name, tc.Failure)
			}
		}
	}

	b.Reset()
	if err := WriteMatrix(&b, m, FormatGitHub); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "matrix.github", b.Bytes())
	errs := 0
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "::error ") {
			errs++
			if !strings.HasPrefix(l, "::error title=tailgate%3A slow timer-1ms ") || !strings.Contains(l, "::slow vs generic: timer-1ms ") {
				t.Errorf("annotation does not name its target: %s", l)
			}
		}
	}
	if errs != c.Regressions {
		t.Errorf("%d error annotations, %d regressions", errs, c.Regressions)
	}
	for _, h := range headlines(m) {
		if !strings.Contains(b.String(), "::notice title=tailgate::"+h+"\n") {
			t.Errorf("no notice of %q", h)
		}
	}
}
