package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"
)

// TestJUnitAgreesWithStrict: the JUnit report counts an inconclusive
// verdict as skipped when it passes, and as a failure under --strict,
// where it fails the exit code too.
func TestJUnitAgreesWithStrict(t *testing.T) {
	dir := t.TempDir()
	base := fakeRun{scenario: "syscall-read", scales: steady, seed: 1}.write(t, dir, "base.json")
	wild := fakeRun{scenario: "syscall-read", scales: []float64{0.7, 1.6, 1.0}, seed: 4}.write(t, dir, "wild.json")
	inconclusive := 0 // the gated verdicts, all inconclusive: as many skipped as failed under --strict
	for _, tc := range []struct {
		strict bool
		code   int
	}{{false, exitPass}, {true, exitRegression}} {
		out := filepath.Join(dir, "junit.xml")
		args := []string{"compare", base, wild, "--threshold", "p50=10%", "--format", "junit=" + out}
		if tc.strict {
			args = append(args, "--strict")
		}
		code, _, stderr := cli(args...)
		if code != tc.code {
			t.Fatalf("strict %v: exit %d, want %d: %s", tc.strict, code, tc.code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Failures int `xml:"failures,attr"`
			Suites   []struct {
				Skipped int `xml:"skipped,attr"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		skipped := 0
		for _, s := range doc.Suites {
			skipped += s.Skipped
		}
		if !tc.strict {
			inconclusive = skipped
			if skipped == 0 || doc.Failures != 0 {
				t.Errorf("exit 0 with failures %d, skipped %d; want 0 and the inconclusive\n%s", doc.Failures, skipped, b)
			}
		} else if doc.Failures != inconclusive || skipped != 0 {
			t.Errorf("--strict, exit 1: failures %d, skipped %d; want %d, 0\n%s", doc.Failures, skipped, inconclusive, b)
		}
	}
}
