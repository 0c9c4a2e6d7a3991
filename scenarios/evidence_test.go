package scenarios

import (
	"strings"
	"testing"
)

func TestEvidenceKey(t *testing.T) {
	const base = "name: e\nworkload:\n  kind: syscall\ntracers:\n  syscall:\n"
	s, err := Parse("e.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if s.Evidence != DefaultEvidence {
		t.Errorf("default evidence %d, want %d", s.Evidence, DefaultEvidence)
	}
	s2, err := Parse("e.yaml", []byte(base+"evidence: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s2.Evidence != 0 {
		t.Errorf("evidence: 0 parsed as %d", s2.Evidence)
	}
	if Params(s) != Params(s2) {
		t.Error("evidence changed the scenario's Params: runs with and without it would not compare")
	}
	_, err = Parse("e.yaml", []byte(base+"evidence: -1\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "e.yaml:6:") {
		t.Errorf("evidence: -1: err = %v, want one at e.yaml:6", err)
	}
}
