package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tailgate-ci/tailgate/report"
)

func TestTrendSparkline(t *testing.T) {
	for _, c := range []struct {
		name       string
		values     []float64
		cand       float64
		hist, mark string
		words      string
	}{
		{"above all: the tallest block", []float64{1000, 2000, 4000}, 8000, "▁▃▆", "█",
			"8.00µs; main's last 3 commits 1.00µs to 4.00µs, above all 3"},
		{"below all: the lowest", []float64{4000, 8000}, 1000, "▆█", "▁",
			"1.00µs; main's last 2 commits 4.00µs to 8.00µs, below all 2"},
		{"among them", []float64{1000, 3000, 2000, 8000}, 2500, "▁▅▃█", "▄",
			"2.50µs; main's last 4 commits 1.00µs to 8.00µs, above 2 and below 2 of 4"},
		{"one commit, equal", []float64{5000}, 5000, "▄", "▄",
			"5.00µs; main's last 1 commit 5.00µs, equal to all 1"},
		{"no candidate value", []float64{1000, 2000}, math.NaN(), "▁█", " ",
			"main's last 2 commits 1.00µs to 2.00µs; the candidate has no value"},
		{"no history", nil, 1000, "", "▄", "no commit of main in the history has it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := report.Trend{Scenario: "s", Metric: "m", Quantile: "p99", Ref: "main", Values: c.values, Cand: c.cand}
			for range c.values {
				tr.Commits = append(tr.Commits, "0123456789abcdef")
			}
			hist, mark := sparkline(tr)
			if hist != c.hist || mark != c.mark {
				t.Errorf("Sparkline = %q, %q; want %q, %q", hist, mark, c.hist, c.mark)
			}
			if got := trendWords(tr); got != c.words {
				t.Errorf("words = %q, want %q", got, c.words)
			}
			if svg := trendSVG(tr); len(c.values) > 0 {
				var doc struct {
					Circles []struct {
						Class string `xml:"class,attr"`
					} `xml:"circle"`
					Polyline struct {
						Points string `xml:"points,attr"`
					} `xml:"polyline"`
				}
				if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
					t.Fatalf("the SVG does not parse: %v\n%s", err, svg)
				}
				n, cands := 0, 0
				for _, ci := range doc.Circles {
					if ci.Class == "candidate" {
						cands++
					} else {
						n++
					}
				}
				wantCands := 1
				if math.IsNaN(c.cand) {
					wantCands = 0
				}
				if n != len(c.values) || cands != wantCands || len(strings.Fields(doc.Polyline.Points)) != len(c.values) {
					t.Errorf("the SVG has %d points and %d candidates, a line of %q; want %d, %d", n, cands, doc.Polyline.Points, len(c.values), wantCands)
				}
			} else if svg != "" {
				t.Errorf("no history, an SVG: %s", svg)
			}
		})
	}
}

// The text, Markdown and HTML reports carry the trends, a line each, after
// the headlines and before the scenarios' tables.
func TestTrendsInReports(t *testing.T) {
	m := sampleReport().Matrix()
	m.Trends = []report.Trend{
		{Scenario: "syscall-read", Metric: "syscall.read", Quantile: "p99", Ref: "main",
			Commits: []string{"aaaaaaa1", "aaaaaaa2", "aaaaaaa3"}, Values: []float64{1000, 1100, 1050}, Cand: 1500},
		{Scenario: "syscall-read", Metric: "syscall.write", Quantile: "p99", Ref: "main", Cand: 900},
	}
	var md bytes.Buffer
	if err := WriteMatrix(&md, m, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nHistory (the candidate against main's last commits, the median of each commit's trials):\n\n",
		"- `syscall-read` `syscall.read` p99: `▁▃▂` → `█` 1.50µs; main's last 3 commits 1.00µs to 1.10µs, above all 3\n",
		"- `syscall-read` `syscall.write` p99: no commit of main in the history has it\n",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("no %q in the Markdown:\n%s", want, md.String())
		}
	}
	if h, d := strings.Index(md.String(), "History ("), strings.Index(md.String(), "<details"); h < 0 || d < h {
		t.Errorf("the history comes at %d, the scenarios at %d: want it before them", h, d)
	}

	var page bytes.Buffer
	if err := WriteMatrix(&page, m, FormatHTML); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	if !strings.Contains(p, `<section id="history">`) || strings.Count(p, `<svg class="trend"`) != 1 || !strings.Contains(p, "above all 3") {
		t.Errorf("the HTML report has no history section with one plot:\n%s", p)
	}

	var text bytes.Buffer
	if err := WriteMatrix(&text, m, FormatText); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"history:  the candidate against main's last commits, the median of each commit's trials\n",
		"  syscall-read syscall.read p99: ▁▃▂ → █ 1.50µs; main's last 3 commits 1.00µs to 1.10µs, above all 3\n",
		"  syscall-read syscall.write p99: no commit of main in the history has it\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in the text:\n%s", want, text.String())
		}
	}
	if h, s := strings.Index(text.String(), "history:"), strings.Index(text.String(), "scenario "); h < 0 || s < h {
		t.Errorf("the text's history comes at %d, the scenarios at %d: want it before them", h, s)
	}

	// None: nothing said.
	m.Trends = nil
	md.Reset()
	if err := WriteMatrix(&md, m, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := WriteMatrix(&text, m, FormatText); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "History") || strings.Contains(text.String(), "history:") {
		t.Errorf("no trends, yet a history:\n%s", md.String())
	}
}

// The JSON report carries each gated verdict's trend as its history:
// the ref, the history's target, the candidate's value and each commit
// with its time and value; a verdict without a trend, or not gated,
// has none, and a report without trends is the document it was.
func TestTrendsInJSON(t *testing.T) {
	m := sampleReport().Matrix()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m.Trends = []report.Trend{
		{Scenario: "pipe-pingpong", Metric: "sched.wakeup", Quantile: "p99", Ref: "main", Target: "debian-6.12", Candidate: "debian-6.12",
			Commits: []string{"aaaaaaa1", "aaaaaaa2"}, Times: []time.Time{at, at.Add(time.Hour)}, Values: []float64{41000, math.NaN()}, Cand: 52000},
		{Scenario: "getppid", Metric: "syscall.getppid", Quantile: "p99", Ref: "main", Candidate: "debian-6.12", Cand: math.NaN()},
		// Another pair's candidate: not this report's.
		{Scenario: "pipe-pingpong", Metric: "sched.wakeup", Quantile: "p50", Ref: "main", Candidate: "other", Commits: []string{"b"}, Times: []time.Time{at}, Values: []float64{1}},
	}
	var b bytes.Buffer
	if err := WriteMatrix(&b, m, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc JSONReport
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	histories := map[string]*JSONHistory{}
	for _, s := range doc.Scenarios {
		for _, v := range s.Verdicts {
			histories[s.Name+" "+v.Metric+" "+v.Percentile] = v.History
		}
	}
	ns := func(f float64) *float64 { return &f }
	want := map[string]*JSONHistory{
		"pipe-pingpong sched.wakeup p99": {Ref: "main", Target: "debian-6.12", CandNs: ns(52000), Commits: []JSONHistoryCommit{
			{Commit: "aaaaaaa1", Time: at, ValueNs: ns(41000)}, {Commit: "aaaaaaa2", Time: at.Add(time.Hour)}}},
		"getppid syscall.getppid p99": {Ref: "main", Commits: []JSONHistoryCommit{}},
	}
	for k, got := range histories {
		if d := cmp.Diff(want[k], got); d != "" {
			t.Errorf("%s: history (-want +got):\n%s", k, d)
		}
	}
	if !strings.Contains(b.String(), `"time": "2026-11-30T12:00:00Z"`) || !strings.Contains(b.String(), `"value_ns": null`) {
		t.Errorf("the times are not RFC 3339 or a missing value is not null:\n%s", b.String())
	}

	// A matrix's comparisons carry theirs too.
	mj := matrixJSON(m)
	if h := mj.Comparisons[0].Scenarios[0].Verdicts[2].History; h == nil || len(h.Commits) != 2 {
		t.Errorf("the matrix document's comparison has history %+v, want the 2 commits", h)
	}

	m.Trends = nil
	b.Reset()
	if err := WriteMatrix(&b, m, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"history"`) {
		t.Errorf("no trends, yet a history:\n%s", b.String())
	}
}
