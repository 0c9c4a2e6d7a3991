package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// The HTML report is one self-contained file: styles inline, plots as
// inline SVG, no script and nothing fetched, so it opens the same from a CI
// artifact, a mail attachment or a laptop offline.

// htmlDoc is what the page template lays out; WriteHTML and
// WriteMatrixHTML fill it from a Report and a Matrix.
type htmlDoc struct {
	Title     string
	Headlines []string
	Sides     []htmlSide
	Warnings  []string
	Scenarios []htmlScenario
}

type htmlSide struct {
	Role, Description string
	Color             string // the plots' colour for this side
}

type htmlScenario struct {
	Name, ID string
	Metrics  []htmlMetric
	Warnings []string
}

type htmlMetric struct {
	Name, ID     string
	Tail, Trials template.HTML // inline <svg>, empty when nothing to draw
	Note         string        // why a plot is missing
	Header       []string
	Rows         []htmlRow
	// Evidence is a regressed metric's slowest events, both sides.
	EvidenceHeader []string
	Evidence       [][]string
}

type htmlRow struct {
	Class string
	Cells []string
}

// plotSide is one side's data for the plots of a metric.
type plotSide struct {
	name   string
	metric *result.Metric // nil when the side lacks the metric
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// htmlID makes an element id from names: "timer-1ms", "timer.lateness" →
// "timer-1ms--timer-lateness".
func htmlID(parts ...string) string {
	for i, p := range parts {
		parts[i] = strings.Trim(idUnsafe.ReplaceAllString(p, "-"), "-")
	}
	return strings.Join(parts, "--")
}

func rowClass(v *Verdict) string {
	if v == nil {
		return "ref"
	}
	return "v-" + strings.ReplaceAll(string(v.Kind), " ", "-")
}

// metricPlots draws a metric's tail plot and its per-trial p99 plot. p99
// holds each side's p99 verdict against the first side (nil for the first
// and where not compared): its interval, applied to the first side's p99,
// is the bar drawn on that side.
func metricPlots(scenario, metric string, sides []plotSide, p99 []*Verdict) (tail, trials string, err error) {
	var ts []tailSeries
	var tr []trialSeries
	threshold := 0.0
	ref := math.NaN()
	for i, s := range sides {
		if s.metric == nil {
			ts = append(ts, tailSeries{Name: s.name, H: hist.New()})
			tr = append(tr, trialSeries{Name: s.name, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()})
			continue
		}
		merged := s.metric.Merged()
		ts = append(ts, tailSeries{Name: s.name, H: merged})
		t := trialSeries{Name: s.name, Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
		for _, trial := range s.metric.Trials {
			v := math.NaN()
			if trial.Histogram != nil && trial.Histogram.Count() > 0 {
				v = trial.Histogram.Quantile(0.99)
			}
			t.Trials = append(t.Trials, v)
		}
		if merged.Count() > 0 {
			t.Value = merged.Quantile(0.99)
		}
		if i == 0 {
			ref = t.Value
		}
		if v := p99[i]; v != nil {
			if v.Gated && threshold == 0 {
				threshold = v.Threshold
			}
			if !math.IsNaN(v.Lo) && !math.IsNaN(ref) {
				t.Lo, t.Hi = ref*v.Lo, ref*v.Hi
			}
		}
		tr = append(tr, t)
	}
	if tail, err = tailPlotSVG(fmt.Sprintf("%s %s: tail", scenario, metric), ts); err != nil {
		return "", "", fmt.Errorf("tail plot of %s %s: %w", scenario, metric, err)
	}
	if trials, err = trialPlotSVG(fmt.Sprintf("%s %s: p99 per trial", scenario, metric), tr, threshold); err != nil {
		return "", "", fmt.Errorf("trial plot of %s %s: %w", scenario, metric, err)
	}
	return tail, trials, nil
}

func (m *htmlMetric) setPlots(tail, trials string) {
	m.Tail, m.Trials = template.HTML(tail), template.HTML(trials)
	if tail == "" {
		m.Note = "no events to plot"
	}
}

func colorCSS(i int) string {
	c := seriesColor(i)
	return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B)
}

// WriteHTML writes r as a self-contained HTML page: per metric, the tail
// of both distributions, each trial's p99 with the interval, and the
// verdicts. Without the Results behind r (a Report built by hand) the
// page has the tables alone.
func WriteHTML(w io.Writer, r *Report) error {
	doc := htmlDoc{
		Title:     "tailgate: " + r.Cand.Target + " vs " + r.Base.Target,
		Headlines: []string{r.Headline()},
		Sides: []htmlSide{
			{Role: "baseline", Description: describeSide(r.Base), Color: colorCSS(0)},
			{Role: "candidate", Description: describeSide(r.Cand), Color: colorCSS(1)},
		},
		Warnings: warningStrings(r.Warnings),
	}
	evidence := r.RegressionEvidence()
	for _, s := range r.Scenarios {
		hs := htmlScenario{Name: s.Name, ID: htmlID("scenario", s.Name), Warnings: verdictWarnings(s)}
		var bs, cs *result.Scenario
		if r.BaseResult != nil && r.CandResult != nil {
			bs, cs = r.BaseResult.Find(s.Name), r.CandResult.Find(s.Name)
		}
		for i := 0; i < len(s.Verdicts); {
			name := s.Verdicts[i].Metric
			hm := htmlMetric{Name: name, ID: htmlID(s.Name, name),
				Header: []string{"pctl", "baseline", "candidate", "delta", "95% CI", "threshold", "verdict"}}
			var p99 *Verdict
			for ; i < len(s.Verdicts) && s.Verdicts[i].Metric == name; i++ {
				v := &s.Verdicts[i]
				if v.Quantile == "p99" {
					p99 = v
				}
				hm.Rows = append(hm.Rows, htmlRow{Class: rowClass(v), Cells: []string{
					v.Quantile, FormatNs(v.Base), FormatNs(v.Cand), FormatDelta(v.Ratio),
					FormatCI(v.Lo, v.Hi), thresholdLabel(*v), verdictLabel(*v)}})
			}
			if bs != nil && cs != nil {
				tail, trials, err := metricPlots(s.Name, name,
					[]plotSide{{"baseline", bs.Metrics[name]}, {"candidate", cs.Metrics[name]}},
					[]*Verdict{nil, p99})
				if err != nil {
					return err
				}
				hm.setPlots(tail, trials)
			} else {
				hm.Note = "the compared Results are not at hand: no plots"
			}
			for _, e := range evidence {
				if e.Scenario == s.Name && e.Metric == name {
					hm.EvidenceHeader, hm.Evidence = evidenceHeader, evidenceRows(e)
				}
			}
			hs.Metrics = append(hs.Metrics, hm)
		}
		doc.Scenarios = append(doc.Scenarios, hs)
	}
	return pageTemplate.Execute(w, doc)
}

// WriteMatrixHTML writes m as a self-contained HTML page: per metric, the
// tails of every target overlaid, each trial's p99, and the table.
func WriteMatrixHTML(w io.Writer, m *Matrix) error {
	doc := htmlDoc{Title: "tailgate matrix: " + m.Targets[0].Name, Headlines: m.Headlines(), Warnings: matrixReportWarnings(m)}
	for i, t := range m.Targets {
		role := "target"
		if i == 0 {
			role = "reference"
		}
		doc.Sides = append(doc.Sides, htmlSide{Role: role, Description: describeTarget(t), Color: colorCSS(i)})
	}
	for _, s := range m.Scenarios {
		hs := htmlScenario{Name: s.Name, ID: htmlID("scenario", s.Name), Warnings: matrixWarnings(m, s)}
		for _, mm := range s.Metrics {
			hm := htmlMetric{Name: mm.Name, ID: htmlID(s.Name, mm.Name), Header: matrixHeader[1:]}
			var p99 []*Verdict
			for _, row := range mm.Rows {
				if row.Quantile == "p99" {
					for _, c := range row.Cells {
						p99 = append(p99, c.Verdict)
					}
				}
			}
			for _, r := range matrixRows(m, mm, verdictLabel) {
				hm.Rows = append(hm.Rows, htmlRow{Cells: r[1:]})
			}
			// Colour rows by verdict: rows come target by target.
			k := 0
			for _, row := range mm.Rows {
				if !shownRow(row) {
					continue
				}
				for ti, c := range row.Cells {
					if ti == 0 {
						hm.Rows[k].Class = "ref"
					} else {
						hm.Rows[k].Class = rowClass(c.Verdict)
					}
					k++
				}
			}
			var sides []plotSide
			for _, t := range m.Targets {
				ps := plotSide{name: t.Name}
				if rs := t.Result.Find(s.Name); rs != nil {
					ps.metric = rs.Metrics[mm.Name]
				}
				sides = append(sides, ps)
			}
			tail, trials, err := metricPlots(s.Name, mm.Name, sides, p99)
			if err != nil {
				return err
			}
			hm.setPlots(tail, trials)
			hs.Metrics = append(hs.Metrics, hm)
		}
		doc.Scenarios = append(doc.Scenarios, hs)
	}
	return pageTemplate.Execute(w, doc)
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.ref td { color: #555; }
tr.v-regression td { background: #fde0e0; font-weight: bold; }
tr.v-improvement td { background: #e0f5e0; }
tr.v-inconclusive td { background: #fff5cc; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.4em; vertical-align: middle; }
.headline { font-size: 1.1em; font-weight: bold; margin: 0.2em 0; }
.warnings li { color: #8a5a00; }
figure { margin: 0.5em 0; }
figure svg { max-width: 100%; height: auto; }
.note { color: #777; font-style: italic; }
</style>
</head>
<body>
<h1 id="title">{{.Title}}</h1>
{{range .Headlines}}<p class="headline">{{.}}</p>
{{end}}<table id="sides">
{{range .Sides}}<tr><th><span class="swatch" style="background: {{.Color}}"></span>{{.Role}}</th><td>{{.Description}}</td></tr>
{{end}}</table>
{{if .Warnings}}<ul class="warnings" id="warnings">
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{range .Scenarios}}<section class="scenario" id="{{.ID}}">
<h2>scenario {{.Name}}</h2>
{{range .Metrics}}<section class="metric" id="metric--{{.ID}}">
<h3>{{.Name}}</h3>
{{if .Tail}}<figure class="tail" id="tail--{{.ID}}">{{.Tail}}</figure>
{{end}}{{if .Trials}}<figure class="trials" id="trials--{{.ID}}">{{.Trials}}</figure>
{{end}}{{if .Note}}<p class="note">{{.Note}}</p>
{{end}}<table class="verdicts" id="verdicts--{{.ID}}">
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr class="{{.Class}}">{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Evidence}}<table class="evidence" id="evidence--{{.ID}}">
<caption>slowest events</caption>
<tr>{{range .EvidenceHeader}}<th>{{.}}</th>{{end}}</tr>
{{range .Evidence}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}</section>
{{end}}{{if .Warnings}}<ul class="warnings">
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul>
{{end}}</section>
{{end}}<p class="note">Tail plots: latency on a log axis against the fraction of events slower (1 − CDF) on a log axis, so p99 and p99.9 get as much room as the median. Per-trial plots: each trial's p99 as a point, the merged p99 as a bar, and beside it the 95% interval of the ratio to the reference applied to the reference's p99, over the reference's ±threshold band.</p>
</body>
</html>
`))
