package render

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
	"github.com/tailgate-ci/tailgate/report/stats/judgetest"
)

// TestFixturesArePossible holds every verdict built by hand for the
// renderers' tests to the judge's rule (judgetest.Possible): a golden
// must not show a verdict the judge could not give.
func TestFixturesArePossible(t *testing.T) {
	for name, r := range map[string]*report.Report{
		"sampleReport": sampleReport(),
		"pairedReport": pairedReport(),
	} {
		for _, s := range r.Scenarios {
			for _, v := range s.Verdicts {
				if err := judgetest.Possible(v); err != nil {
					t.Errorf("%s: %s %s %s: %v", name, s.Name, v.Metric, v.Quantile, err)
				}
			}
		}
	}
}

// renderedVerdict is one verdict as a golden shows it.
type renderedVerdict struct {
	where                         string // file:line
	metric, pctl                  string
	delta, ci, threshold, verdict string
}

// The parts of a verdict line, whatever the format lays them out with:
// a delta, an interval, a threshold (on the next line in narrow text)
// and a verdict, with only punctuation, markup and their labels between.
var (
	verdictLine = regexp.MustCompile(`([+-]?\d+\.\d%|×[\d.e+]+)[^\w\[×+-]*?(?:95% CI:?\s*)?(\[[^\]]*\]|-|too few rounds \(\d+\))[^\w±-]*?(?:(?:threshold:?\s*)?(±[\d.]+%|-)[^\w]*?)?(REGRESSION|regression|improvement|no change|inconclusive|not gated)`)
	pctlWord    = regexp.MustCompile(`\b(p\d+(?:\.\d+)?|max)\b`)
	metricWord  = regexp.MustCompile(`\b([a-z_]+\.[a-z_][\w.:]*)\b`)
	fewEvents   = regexp.MustCompile(`([a-z_]+\.[a-z_][\w.:]*) (p\d+(?:\.\d+)?|max): few events beyond`)
	nextThresh  = regexp.MustCompile(`^\s+threshold: (±[\d.]+%|-)`)
	githubTitle = regexp.MustCompile(`^::\w+ title=.*?\s(regression|improvement|inconclusive|no change)::(.*)$`)
	htmlTag     = regexp.MustCompile(`<[^>]+>`)
)

// renderedVerdicts finds the verdict lines of a text golden (text,
// Markdown, HTML, JUnit, GitHub annotations, one target or a matrix).
func renderedVerdicts(name, text string) (vs []renderedVerdict, few map[string]bool) {
	few = map[string]bool{}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		line = html.UnescapeString(htmlTag.ReplaceAllString(line, " | "))
		line = strings.NewReplacer("%25", "%", "%3A", ":").Replace(line)
		if m := githubTitle.FindStringSubmatch(line); m != nil && !verdictLine.MatchString(m[2]) {
			line = m[2] + ": " + m[1]
		}
		lines[i] = line
		for _, m := range fewEvents.FindAllStringSubmatch(line, -1) {
			few[m[1]+" "+m[2]] = true
		}
	}
	metric := ""
	for i, line := range lines {
		locs := verdictLine.FindAllStringSubmatchIndex(line, -1)
		if len(locs) == 0 {
			if ms := metricWord.FindAllString(line, -1); len(ms) > 0 {
				metric = ms[len(ms)-1]
			}
			continue
		}
		head := line[:locs[0][0]]
		if ms := metricWord.FindAllString(head, -1); len(ms) > 0 {
			metric = ms[len(ms)-1]
		}
		pctl := ""
		if ps := pctlWord.FindAllString(head, -1); len(ps) > 0 {
			pctl = ps[len(ps)-1]
		}
		for _, l := range locs {
			v := renderedVerdict{where: fmt.Sprintf("%s:%d", name, i+1), metric: metric, pctl: pctl,
				delta: line[l[2]:l[3]], ci: line[l[4]:l[5]], verdict: line[l[8]:l[9]]}
			switch {
			case l[6] >= 0:
				v.threshold = line[l[6]:l[7]]
			case i+1 < len(lines) && nextThresh.MatchString(lines[i+1]):
				v.threshold = nextThresh.FindStringSubmatch(lines[i+1])[1]
			case v.verdict == "not gated":
				// Narrow text gives a threshold a line of its own, and
				// an ungated row none.
				v.threshold = "-"
			}
			// JUnit puts a verdict's warnings after it, unnamed.
			if strings.Contains(line[l[1]:], "few events beyond "+pctl+" ") {
				few[metric+" "+pctl] = true
			}
			vs = append(vs, v)
		}
	}
	return vs, few
}

// jsonVerdicts finds the verdicts of a JSON golden: every object with a
// "verdict" and a "ratio".
func jsonVerdicts(name string, b []byte) ([]stats.Verdict, error) {
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	var out []stats.Verdict
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if k, ok := x["verdict"].(string); ok {
				if _, ok := x["ratio"]; ok {
					num := func(key string) float64 {
						if f, ok := x[key].(float64); ok {
							return f
						}
						return math.NaN()
					}
					v := stats.Verdict{Metric: fmt.Sprint(x["metric"]), Quantile: fmt.Sprint(x["percentile"]), Kind: stats.Kind(k),
						Ratio: num("ratio"), Lo: num("ci_lo"), Hi: num("ci_hi"), Threshold: num("threshold")}
					v.Gated = !math.IsNaN(v.Threshold)
					ws, _ := x["warnings"].([]any)
					for _, w := range ws {
						if s, _ := w.(string); strings.HasPrefix(s, "few events beyond") {
							v.Warnings = append(v.Warnings, stats.Warning{Kind: stats.WarnFewTailEvents})
						}
					}
					out = append(out, v)
				}
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return out, nil
}

// verdictOf turns what a golden shows back into the figures Possible
// reads.
func (r renderedVerdict) verdictOf(few map[string]bool) (stats.Verdict, error) {
	v := stats.Verdict{Metric: r.metric, Quantile: r.pctl, Lo: math.NaN(), Hi: math.NaN()}
	switch {
	case strings.EqualFold(r.verdict, "regression"):
		v.Kind = stats.Regression
	default:
		v.Kind = stats.Kind(r.verdict)
	}
	var err error
	if v.Ratio, err = parseRatio(r.delta); err != nil {
		return v, err
	}
	if strings.HasPrefix(r.ci, "[") {
		lo, hi, _ := strings.Cut(strings.Trim(r.ci, "[]"), ", ")
		if v.Lo, err = parseRatio(lo); err != nil {
			return v, err
		}
		if v.Hi, err = parseRatio(hi); err != nil {
			return v, err
		}
	}
	switch {
	case r.threshold == "":
		return v, fmt.Errorf("no threshold found")
	case r.threshold != "-":
		pct, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(r.threshold, "±"), "%"), 64)
		if err != nil {
			return v, err
		}
		v.Threshold, v.Gated = pct/100, true
	}
	if few[r.metric+" "+r.pctl] {
		v.Warnings = append(v.Warnings, stats.Warning{Kind: stats.WarnFewTailEvents})
	}
	return v, nil
}

// parseRatio reads a delta as FormatDelta writes it: "+12.3%", "×14.2".
func parseRatio(s string) (float64, error) {
	if x, ok := strings.CutPrefix(s, "×"); ok {
		return strconv.ParseFloat(x, 64)
	}
	pct, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return 1 + pct/100, err
}

// TestGoldenVerdictsArePossible runs every verdict line of every golden
// report through the judge's rule (judgetest.Possible): what a golden
// shows, a real gate could have printed.
func TestGoldenVerdictsArePossible(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*.golden"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no goldens in %s: %v", goldenDir, err)
	}
	total := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		var vs []stats.Verdict
		var where []string
		if strings.HasPrefix(name, "json") || strings.Contains(name, ".json.") {
			if vs, err = jsonVerdicts(name, b); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for _, v := range vs {
				where = append(where, name+": "+v.Metric+" "+v.Quantile)
			}
		} else {
			rvs, few := renderedVerdicts(name, string(b))
			for _, r := range rvs {
				v, err := r.verdictOf(few)
				if err != nil {
					t.Errorf("%s: %+v: %v", r.where, r, err)
					continue
				}
				vs = append(vs, v)
				where = append(where, r.where+": "+r.metric+" "+r.pctl)
			}
		}
		// A golden that has a verdict column or verdict lines must yield
		// them: a layout the search misses would pass unchecked.
		if strings.Contains(string(b), "verdict") && len(vs) == 0 {
			t.Errorf("%s: no verdict line found in a golden with verdicts", name)
		}
		for i, v := range vs {
			if err := judgetest.Possible(v); err != nil {
				t.Errorf("%s: %s: %v", where[i], v.Kind, err)
			}
		}
		t.Logf("%s: %d verdicts", name, len(vs))
		total += len(vs)
	}
	if total < 50 {
		t.Errorf("%d verdicts found in all goldens; the search is broken", total)
	}
}
