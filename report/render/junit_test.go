package render

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/testenv"
)

// xmllint validates path against the Jenkins xUnit plugin's junit-10.xsd
// (testdata/junit-10.xsd, its source in junit-10.xsd.source); without
// xmllint the test skips, and fails on CI (apt-get install libxml2-utils).
func xmllint(t *testing.T, path string) {
	t.Helper()
	testenv.Need(t, testenv.Tool("xmllint", "Debian: libxml2-utils"))
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--noout", "--schema", filepath.Join("testdata", "junit-10.xsd"), path).CombinedOutput()
	if err != nil {
		t.Errorf("%s fails junit-10.xsd: %v\n%s", filepath.Base(path), err, out)
	}
}

// TestJUnitValidates checks every JUnit document tailgate writes against
// junit-10.xsd, and what each counts: an inconclusive verdict is skipped,
// a failure under Strict, so that failures agree with the exit code.
func TestJUnitValidates(t *testing.T) {
	dir := t.TempDir()
	m := sampleReport().Matrix()
	c := m.Tally()
	for _, tc := range []struct {
		name     string
		write    func(*bytes.Buffer) error
		failures int
		errors   int
	}{
		{"plain", func(b *bytes.Buffer) error { return WriteMatrix(b, m, FormatJUnit) }, c.Regressions, 0},
		{"strict", func(b *bytes.Buffer) error { return WriteJUnit(b, m, JUnitOptions{Strict: true}) }, c.Regressions + c.Inconclusive, 0},
		{"matrix", func(b *bytes.Buffer) error { return WriteMatrix(b, sampleMatrix(t), FormatJUnit) }, sampleMatrix(t).Tally().Regressions, 0},
		{"error", func(b *bytes.Buffer) error {
			return WriteJUnitError(b, "gate", errors.New("attach sched_switch: operation not permitted\n(run as root)"))
		}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.write(&b); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, tc.name+".xml")
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			xmllint(t, path)
			var doc junitSuites
			if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Failures != tc.failures || doc.Errors != tc.errors || doc.Time == "" {
				t.Errorf("failures %d errors %d time %q; want %d, %d and a time", doc.Failures, doc.Errors, doc.Time, tc.failures, tc.errors)
			}
			skipped, failures := 0, 0
			for _, s := range doc.Suites {
				for _, k := range s.Cases {
					if k.Time == "" {
						t.Errorf("case %s has no time", k.Name)
					}
					if k.Skipped != nil {
						skipped++
					}
					if k.Failure != nil {
						failures++
					}
				}
				if s.Time == "" {
					t.Errorf("suite %s has no time", s.Name)
				}
			}
			if failures != tc.failures {
				t.Errorf("%d failure cases, want %d", failures, tc.failures)
			}
			if tc.name == "plain" && skipped != c.Inconclusive {
				t.Errorf("%d skipped, want the %d inconclusive", skipped, c.Inconclusive)
			}
			if tc.name == "strict" && skipped != 0 {
				t.Errorf("%d skipped under Strict", skipped)
			}
		})
	}
	// The schema is not vacuous: the document written before, without
	// errors, fails it.
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte(`<?xml version="1.0"?><testsuites><testsuite name="x" tests="0" failures="0"></testsuite></testsuites>`), 0o644)
	if bin, err := exec.LookPath("xmllint"); err == nil {
		if exec.Command(bin, "--noout", "--schema", filepath.Join("testdata", "junit-10.xsd"), bad).Run() == nil {
			t.Error("a suite without errors passes junit-10.xsd")
		}
	}
}
