package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/baseline"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/scenarios"
)

// defined is fakeRun's Result of the built-in syscall-read, its
// definition the scenario's own and its params the definition's digest,
// as a run writes them; edit changes the scenario first.
func defined(t *testing.T, seed uint64, edit func(*scenarios.Scenario)) *result.Result {
	t.Helper()
	sc, err := scenarios.Lookup("syscall-read")
	if err != nil {
		t.Fatal(err)
	}
	r := fakeRun{scenario: sc.Name, scales: steady, seed: seed}.result()
	s := &r.Scenarios[0]
	if s.Definition, err = json.Marshal(sc); err != nil {
		t.Fatal(err)
	}
	s.Params = scenarios.Params(sc)
	if edit != nil {
		edit(sc)
		if s.Definition, err = json.Marshal(sc); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestParamsMustBeTheDefinitionsDigest: a Result's params (the digest
// compare, merge, the history's series and a baseline's lookup trust) were
// never checked against its definition (what show, the parameter
// differences and a reader trust): a Result could say two things. One
// whose digest is not its definition's is refused by every command that
// reads it, exit 2, in one line.
func TestParamsMustBeTheDefinitionsDigest(t *testing.T) {
	dir := t.TempDir()
	good := writeResult(t, dir, "good.json", defined(t, 1, nil))
	other := writeResult(t, dir, "other.json", defined(t, 2, nil))
	forged := defined(t, 3, nil)
	forged.Scenarios[0].Params = strings.Repeat("ab", 32)
	forgedPath := writeResult(t, dir, "forged.json", forged)
	// The definition says a read of 1 byte, the digest a read of 4 KiB.
	edited := writeResult(t, dir, "edited.json", defined(t, 4, func(s *scenarios.Scenario) {
		s.Workload.Params.(*scenarios.Syscall).Size = 1
	}))
	// A stored baseline, planted beside the store's own files.
	store := filepath.Join(dir, "store")
	if _, err := baseline.Save(store, defined(t, 5, nil)); err != nil {
		t.Fatal(err)
	}
	bad := defined(t, 6, nil)
	bad.Scenarios[0].Params = strings.Repeat("cd", 32)
	writeResult(t, store, baseline.FileName("syscall-read", "host", bad.Environment.KernelRelease), bad)
	history := filepath.Join(dir, "history")

	if code, _, stderr := cli("compare", good, other); code != exitPass {
		t.Fatalf("two Results whose digests are their definitions': exit %d: %s", code, stderr)
	}
	for _, bad := range []string{forgedPath, edited} {
		for _, args := range [][]string{
			{"compare", good, bad},
			{"compare", bad, good},
			{"show", bad},
			{"merge", good, bad, "-o", filepath.Join(dir, "merged.json")},
			{"gate", "--candidate", bad, "--baseline", good},
			{"baseline", "save", bad, filepath.Join(dir, "saved")},
			{"history", "add", history, bad, "--commit", strings.Repeat("a", 40)},
		} {
			code, _, stderr := cli(args...)
			if code != exitUsage || !strings.Contains(stderr, "are not the digest of its definition") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("tailgate %s: exit %d, want %d and one line saying the params are not the definition's digest:\n%s", strings.Join(args, " "), code, exitUsage, stderr)
			}
		}
	}
	if code, _, stderr := cli("compare", store, good); code != exitUsage || !strings.Contains(stderr, "are not the digest of its definition") {
		t.Errorf("compare against a store holding a forged baseline: exit %d, want %d:\n%s", code, exitUsage, stderr)
	}
}
