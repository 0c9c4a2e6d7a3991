package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tailgate-ci/tailgate/report/stats"
)

// TestMatrixProgramBuilds runs a matrix on this host for real, its
// verdict unfaked: three builds of testdata/program/work.c as dir=
// variants, the reference, the same source built again, and one doing
// three times the work per tg_op (as TestGateProgramBuilds gates). The
// slow build is a regression of tg_op's p50 against the reference (exit
// 1), the same build is not. Gated at p50: a matrix's fixed 8 rounds
// cannot call ×3 at p99 beside other work, whose preemptions make the
// p99 (inconclusive in 15 of 15 reruns, BENCHMARKS.md, "The matrix on
// real runs", where its rerun rate is too).
func TestMatrixProgramBuilds(t *testing.T) {
	bin := buildTailgate(t)
	root := t.TempDir()
	buildProgram(t, filepath.Join(root, "base"), 200)
	buildProgram(t, filepath.Join(root, "same"), 200)
	buildProgram(t, filepath.Join(root, "slow"), 600)
	sc, err := filepath.Abs("../../testdata/program/bench.yaml")
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(root, "matrix.json")
	cmd := exec.Command(bin, "matrix", sc,
		"--variant", "base:dir="+filepath.Join(root, "base"),
		"--variant", "same:dir="+filepath.Join(root, "same"),
		"--variant", "slow:dir="+filepath.Join(root, "slow"),
		"--trials", "8", "--duration", "200ms", "--warmup", "100ms",
		"--threshold", "ufunc.work:tg_op:p50=10%", "--threshold", "ufunc.work:tg_op:p99=off",
		"--format", "text", "--format", "json="+report)
	cmd.Env = append(cmd.Environ(), "CI=true")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitRegression {
		t.Errorf("matrix with a build three times slower: exit %d, want %d (regression)\n%s", code, exitRegression, out)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The matrix document: one comparison per target against the
	// reference, each with its scenarios' verdicts.
	var doc struct {
		Comparisons []struct {
			Candidate struct {
				Target string `json:"target"`
			} `json:"candidate"`
			Scenarios []struct {
				Verdicts []struct {
					Metric     string     `json:"metric"`
					Percentile string     `json:"percentile"`
					Gated      bool       `json:"gated"`
					Verdict    stats.Kind `json:"verdict"`
				} `json:"verdicts"`
			} `json:"scenarios"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]stats.Kind{}
	for _, c := range doc.Comparisons {
		for _, s := range c.Scenarios {
			for _, v := range s.Verdicts {
				if v.Gated {
					got[c.Candidate.Target] = v.Verdict
				}
			}
		}
	}
	t.Logf("gated p50 of tg_op against base: %v", got)
	if got["slow"] != stats.Regression {
		t.Errorf("slow against base: %q, want a regression\n%s", got["slow"], out)
	}
	if k, ok := got["same"]; !ok || k == stats.Regression {
		t.Errorf("the same source built again against base: %q, want a verdict and no regression\n%s", k, out)
	}
}
