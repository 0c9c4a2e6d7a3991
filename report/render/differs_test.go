package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats/statstest"
)

// TestDiffersDigests: the JSON report's differs carries each digest
// whole, for a machine to match; the text shortens it to 12 digits.
func TestDiffersDigests(t *testing.T) {
	s := statstest.Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	a, b := statstest.Result("host", "6.1.0", s, 5, 1), statstest.Result("host", "6.1.0", s, 5, 2)
	const (
		binA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		binB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
		cfgA = "sha256:a3d0294fa49e14b304f6e1d3b8ae6fc203415190b4407ce0d5db4746a86852d7"
		cfgB = "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"
	)
	a.Environment.ConfigHash, b.Environment.ConfigHash = cfgA, cfgB
	a.Scenarios[0].Executables = []result.Executable{{Role: "command", Path: "/bin/work", SHA256: binA}}
	b.Scenarios[0].Executables = []result.Executable{{Role: "command", Path: "/bin/work", SHA256: binB}}
	r, err := report.Compare(a, b, report.Options{Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := WriteReport(&js, r, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Differs []report.Difference `json:"differs"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, d := range doc.Differs {
		got[d.What] = [2]string{d.Base, d.Cand}
	}
	name := a.Scenarios[0].Name + " command sha256"
	if got[name] != [2]string{binA, binB} || got["kernel config"] != [2]string{cfgA, cfgB} {
		t.Errorf("JSON differs %v: want the whole digests", got)
	}
	var text bytes.Buffer
	if err := WriteReport(&text, r, FormatText); err != nil {
		t.Fatal(err)
	}
	want := "kernel config a3d0294fa49e → 5e884898da28; " + name + " " + binA[:12] + " → " + binB[:12]
	if out := text.String(); !strings.Contains(out, want) || strings.Contains(out, binA) {
		t.Errorf("text differs line: want %q, digests shortened:\n%s", want, out)
	}
}

// TestDiffersOneBinaryOnce: a binary that plays two roles (the server
// and the load generator) is named once in the differs line, with both
// roles, not its path, sha256 and commit once per role.
func TestDiffersOneBinaryOnce(t *testing.T) {
	s := statstest.Synthetic{Median: 50000, Sigma: 0.4, Scale: 1}
	a, b := statstest.Result("host", "6.1.0", s, 5, 1), statstest.Result("host", "6.1.0", s, 5, 2)
	const binA, binB = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	side := func(dir, sha, head string) []result.Executable {
		x := result.Executable{Path: dir + "/bin/app", SHA256: sha, GitHead: head}
		cmd, load := x, x
		cmd.Role, load.Role = "command", "load"
		return []result.Executable{cmd, load, {Role: "ready", Path: "/usr/bin/true", SHA256: binA}}
	}
	a.Scenarios[0].Executables = side("/base", binA, "1111111111111111111111111111111111111111")
	b.Scenarios[0].Executables = side("/head", binB, "2222222222222222222222222222222222222222")
	r, err := report.Compare(a, b, report.Options{Resamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := WriteReport(&text, r, FormatText); err != nil {
		t.Fatal(err)
	}
	name := a.Scenarios[0].Name + " command and load"
	line := ""
	for l := range strings.Lines(text.String()) {
		if strings.HasPrefix(l, "differs:") {
			line = l
		}
	}
	for _, want := range []string{name + " /base/bin/app → /head/bin/app", name + " sha256 " + binA[:12] + " → " + binB[:12], name + " commit 111111111111 → 222222222222"} {
		if !strings.Contains(line, want) {
			t.Errorf("differs line %q: want %q", line, want)
		}
	}
	if n := strings.Count(line, "/base/bin/app"); n != 1 || strings.Contains(line, "ready") {
		t.Errorf("differs line %q: the binary named %d times, want once; ready does not differ", line, n)
	}
}
