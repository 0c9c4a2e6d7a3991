package render

import (
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// The HTML report is one self-contained file: styles inline, plots as
// inline SVG, no script and nothing fetched, so it opens the same from a CI
// artifact, a mail attachment or a laptop offline.

// htmlDoc is what the page template lays out; writeHTML fills it.
type htmlDoc struct {
	Title     string
	Headlines []string
	Sides     []htmlSide
	Names     []string           // the targets as the plots name them
	Differ    []report.Differing // what differs between the targets
	Warnings  []string
	Trends    []htmlTrend
	TrendRef  string // the branch the trends are of
	Scenarios []htmlScenario
}

type htmlSide struct {
	Role, Description string
	Color             string // the plots' colour for this side
}

type htmlScenario struct {
	Name, ID string
	Values   string // what the tables' values are (valuesNote), or ""
	Metrics  []htmlMetric
	NoEvents string // the metrics without events, or ""
	Warnings []string
}

type htmlMetric struct {
	Name, ID     string
	Tail, Trials template.HTML // inline <svg>, empty when nothing to draw
	Note         string        // why a plot is missing
	Header       []string
	Rows         [][]htmlCell
	// Evidence is a regressed metric's slowest events, both sides, a
	// table per pair that has them.
	EvidenceHeader []string
	Evidence       []htmlEvidence
}

type htmlCell struct {
	Class, Text string
}

type htmlEvidence struct {
	ID, Caption string
	Rows        [][]string
	// GrownHead and Grown say which functions' share of the stacks
	// sampled in the slowest requests grew most.
	GrownHead string
	Grown     []string
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

// cellClass colours the cells of a target's column group by its verdict:
// a regression, an improvement or an inconclusive verdict.
func cellClass(v *stats.Verdict) string {
	if v == nil || v.Kind == stats.NoChange || v.Kind == stats.NotGated {
		return ""
	}
	return "v-" + string(v.Kind)
}

// metricPlots draws a metric's tail plot and its per-trial plot of the
// percentile the model chose (report.Plot), a series per target named as
// names says.
func metricPlots(scenario, metric string, names []string, pl *report.Plot) (tail, trials string, err error) {
	var ts []tailSeries
	var tr []trialSeries
	for i, s := range pl.Series {
		ts = append(ts, tailSeries{Name: names[i], Points: s.Tail})
		tr = append(tr, trialSeries{Name: names[i], Trials: s.Trials, Value: s.Value, Lo: s.Lo, Hi: s.Hi})
	}
	if tail, err = tailPlotSVG(fmt.Sprintf("%s %s: tail", scenario, metric), ts); err != nil {
		return "", "", fmt.Errorf("tail plot of %s %s: %w", scenario, metric, err)
	}
	if trials, err = trialPlotSVG(fmt.Sprintf("%s %s: %s per trial", scenario, metric, pl.Percentile), tr, pl.Threshold); err != nil {
		return "", "", fmt.Errorf("trial plot of %s %s: %w", scenario, metric, err)
	}
	return tail, trials, nil
}

// sideNames are the names the plots' legends and axes give the targets:
// their own, and their role beside it where two share a name (a
// comparison of two runs on one host).
func sideNames(m *report.Matrix) []string {
	count := map[string]int{}
	for _, t := range m.Targets {
		count[t.Name]++
	}
	var out []string
	for i, t := range m.Targets {
		if count[t.Name] > 1 {
			out = append(out, role(m, i)+" ("+t.Name+")")
			continue
		}
		out = append(out, t.Name)
	}
	return out
}

func (m *htmlMetric) setPlots(tail, trials string) {
	m.Tail, m.Trials = template.HTML(tail), template.HTML(trials)
	if tail == "" {
		m.Note = "no events to plot"
	}
}

func colorCSS(i int) string { return seriesColor(i) }

// writeHTML writes m as a self-contained HTML page: per metric, the tail
// of every target's distribution overlaid, each trial's p99 with the
// interval, and the verdicts. Without the Results behind m (a Report
// built by hand) the page has the tables alone.
func writeHTML(w io.Writer, m *report.Matrix) error {
	var names []string
	for _, t := range m.Targets[1:] {
		names = append(names, t.Name)
	}
	doc := htmlDoc{
		Title:     "tailgate: " + strings.Join(names, ", ") + " vs " + m.Targets[0].Name,
		Headlines: headlines(m),
		Warnings:  warnings(m),
		Names:     sideNames(m),
		Differ:    shortDigests(m.Differing()),
		Trends:    htmlTrends(m.Trends),
	}
	if len(m.Trends) > 0 {
		doc.TrendRef = m.Trends[0].Ref
	}
	for i := range m.Targets {
		doc.Sides = append(doc.Sides, htmlSide{Role: role(m, i), Description: describe(m, i), Color: colorCSS(i)})
	}
	header := tableHeader(m)[1:]
	for _, s := range m.Scenarios {
		hs := htmlScenario{Name: s.Name, ID: htmlID("scenario", s.Name), Values: valuesNote(m, s)}
		var empty []string
		empty, hs.Warnings = scenarioNotes(m, s.Name)
		if len(empty) > 0 {
			hs.NoEvents = "no events: " + strings.Join(empty, ", ")
		}
		for _, mm := range s.Metrics {
			hm := htmlMetric{Name: mm.Name, ID: htmlID(s.Name, mm.Name), Header: header}
			for _, row := range mm.Rows {
				var cells []htmlCell
				for k, text := range tableRow(mm.Name, row, verdictLabel)[1:] {
					c := htmlCell{Text: text, Class: "ref"}
					if k == 0 {
						c.Class = ""
					} else if k > 1 {
						c.Class = cellClass(row.Cells[1+(k-2)/5].Verdict)
					}
					cells = append(cells, c)
				}
				hm.Rows = append(hm.Rows, cells)
			}
			if mm.Plot != nil {
				tail, trials, err := metricPlots(s.Name, mm.Name, doc.Names, mm.Plot)
				if err != nil {
					return err
				}
				hm.setPlots(tail, trials)
			} else {
				hm.Note = "the compared Results are not at hand: no plots"
			}
			for _, p := range pairings(m) {
				for _, e := range p.r.RegressionEvidence() {
					if e.Scenario != s.Name || e.Metric != mm.Name {
						continue
					}
					he := htmlEvidence{ID: hm.ID, Caption: "slowest events", Rows: evidenceRows(e), Grown: grownLines(e)}
					if he.Grown != nil {
						he.GrownHead = grownHead(e)
					}
					if p.target != "" {
						he.ID = htmlID(s.Name, mm.Name, p.target)
						he.Caption += ": " + p.target + " vs " + p.ref
					}
					hm.EvidenceHeader = evidenceHeader
					hm.Evidence = append(hm.Evidence, he)
				}
			}
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
td.ref { color: #555; }
td.v-regression { background: #fde0e0; font-weight: bold; }
td.v-improvement { background: #e0f5e0; }
td.v-inconclusive { background: #fff5cc; }
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
{{if .Differ}}<table id="differences">
<caption>what differs between the sides</caption>
<tr><th></th>{{range .Names}}<th>{{.}}</th>{{end}}</tr>
{{range .Differ}}<tr><th>{{.What}}</th>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{if .Warnings}}<ul class="warnings" id="warnings">
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{if .Trends}}<section id="history">
<h2>history</h2>
<p class="note">The candidate (red, at the right) against {{.TrendRef}}'s last commits (blue, oldest first), each the median of its trials, on a log scale.</p>
<table class="trends">
{{range .Trends}}<tr><th>{{.Label}}</th><td>{{.SVG}}</td><td>{{.Words}}</td></tr>
{{end}}</table>
</section>
{{end}}{{range .Scenarios}}<section class="scenario" id="{{.ID}}">
<h2>scenario {{.Name}}</h2>
{{if .Values}}<p class="note">{{.Values}}</p>
{{end}}{{range .Metrics}}<section class="metric" id="metric--{{.ID}}">
<h3>{{.Name}}</h3>
{{if .Tail}}<figure class="tail" id="tail--{{.ID}}">{{.Tail}}</figure>
{{end}}{{if .Trials}}<figure class="trials" id="trials--{{.ID}}">{{.Trials}}</figure>
{{end}}{{if .Note}}<p class="note">{{.Note}}</p>
{{end}}<table class="verdicts" id="verdicts--{{.ID}}">
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{$header := .EvidenceHeader}}{{range .Evidence}}{{if .Grown}}<p class="grown">{{.GrownHead}}:</p>
<ul class="grown">{{range .Grown}}<li>{{.}}</li>{{end}}</ul>
{{end}}{{if .Rows}}<table class="evidence" id="evidence--{{.ID}}">
<caption>{{.Caption}}</caption>
<tr>{{range $header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{end}}</section>
{{end}}{{if .NoEvents}}<p class="note">{{.NoEvents}}</p>
{{end}}{{if .Warnings}}<ul class="warnings">
{{range .Warnings}}<li>{{.}}</li>
{{end}}</ul>
{{end}}</section>
{{end}}<p class="note">Tail plots: latency on a log axis against the fraction of events slower (1 − CDF) on a log axis, so p99 and p99.9 get as much room as the median. Per-trial plots, on a log axis: each trial's value of the highest gated percentile (p99 where none is gated) as a point, the value of the trials merged as a bar, and beside it the 95% interval of the ratio to the reference applied to the reference's value, over the reference's ±threshold band.</p>
</body>
</html>
`))
