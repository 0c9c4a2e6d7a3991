package render

import (
	"bytes"
	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"strings"
	"testing"
)

// hostileRelease is a kernel release string as a guest or a Result file
// may hold it: a line of its own, a table cell's end, a code span's end
// and HTML.
const hostileRelease = "6.1.0\n## PASS | `x` <img src=x onerror=alert(1)> [ok](https://evil.example)"

func hostileReport() *report.Report {
	return &report.Report{
		Base: report.Side{Target: "host", KernelRelease: hostileRelease},
		Cand: report.Side{Target: "vm\n- injected", KernelRelease: "6.12\r\n\u202etxt.exe @octocat @org/team www.evil.example"},
		Warnings: []stats.Warning{
			{Kind: report.WarnEnvironment, Field: stats.FieldKernelRelease, Base: hostileRelease, Cand: "6.12"},
		},
		Scenarios: []report.ScenarioReport{{
			Name: "read\n\n</summary></details><b>x @octocat http://evil.example",
			Verdicts: []stats.Verdict{{
				Metric: "sys`call|read\nrow", Quantile: "p99\n|", Base: 1000, Cand: 2000, Ratio: 2, Lo: 1.8, Hi: 2.2,
				Threshold: 0.1, Gated: true, Kind: stats.Regression, BaseTrials: 5, CandTrials: 5,
				Warnings: []stats.Warning{{Kind: report.WarnDefinitionUnreadable, Detail: "line one\nline two"}},
			}},
		}},
	}
}

// TestMarkdownEscapesFields: a field from a guest or a file is one line of
// literal text in the Markdown report, whatever it holds.
func TestMarkdownEscapesFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReport(&b, hostileReport(), FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, bad := range []string{
		"\n## PASS", "\n- injected", "<img", "</summary></details><b>x", "[ok](", "\u202e", "\r",
		"| `x` |", "\nrow", "p99\n", "@octocat", "@org/team", "https://", "http://", "www.evil",
	} {
		if strings.Contains(md, bad) {
			t.Errorf("Markdown holds %q unescaped:\n%s", bad, md)
		}
	}
	for _, want := range []string{
		// The release, one line, every mark escaped: the newline reads \n.
		"Baseline: host, kernel " + `6.1.0\\n## PASS \| \` + "`x\\`" + ` &lt;img src=x onerror=alert(1)&gt; \[ok\](https&#8203;://evil.example) · `,
		`candidate: vm\\n- injected, kernel 6.12\\r\\n\\u202etxt.exe @&#8203;octocat @&#8203;org/team www&#8203;.evil.example` + "\n",
		// Inside HTML, where Markdown escapes are not read.
		`<summary><b>read\n\n&lt;/summary&gt;&lt;/details&gt;&lt;b&gt;x @&#8203;octocat http&#8203;://evil.example</b>`,
		// A backtick in a code span: a longer fence; a pipe escaped for the table.
		"| ``sys`call" + `\|read\nrow` + "`` | p99" + `\\n\| | 1.00µs |`,
		`: scenario definition unreadable (line one\\nline two); p99`,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	// Each table row is one line with the header's number of cells.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ``sys") {
			if cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); cells != 9 {
				t.Errorf("row has %d pipes, want 9: %s", cells, line)
			}
		}
	}
}

// TestGitHubEscapesFields: in the annotations a field stays on its line;
// only the renderer's own breaks (before each warning) start a line.
func TestGitHubEscapesFields(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReport(&b, hostileReport(), FormatGitHub); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "::") {
			t.Errorf("a line that is no workflow command: %q", l)
		}
	}
	var errLine string
	for _, l := range lines {
		if strings.HasPrefix(l, "::error ") {
			errLine = l
		}
	}
	// %0A is the one line break the runner decodes: the one before the
	// warning, none inside a name.
	if strings.Count(errLine, "%0A") != 1 || !strings.Contains(errLine, `read\n\n</summary>`) ||
		!strings.Contains(errLine, "title=tailgate%3A read\\n\\n</summary></details><b>x @octocat http%3A//evil.example sys`call|read\\nrow p99\\n| regression::") {
		t.Errorf("error annotation: %s", errLine)
	}
	if !strings.Contains(lines[0], `6.1.0\n## PASS`) || strings.Contains(lines[0], "%0A") {
		t.Errorf("warning annotation: %s", lines[0])
	}
}
