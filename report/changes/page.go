package changes

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// The trend page is one self-contained HTML file: styles inline, a plot
// per series as inline SVG drawn here (so that each point can carry its
// own link and tooltip), no scripts, nothing fetched.

// PageOptions shape the page.
type PageOptions struct {
	Title string
	// CommitURL is a commit page's address with %s for the commit
	// (https://github.com/OWNER/REPO/commit/%s); empty for no links.
	CommitURL string
	// RecordURL is where a record is, with %s for its path in the store
	// (the page is served from the store's branch: "%s"); empty for none.
	RecordURL string
}

// plot geometry, in SVG user units.
const (
	plotW, plotH         = 860.0, 260.0
	padL, padR, padT, pb = 64.0, 12.0, 12.0, 34.0
)

type pagePlot struct {
	Title   string
	Gated   bool
	SVG     template.HTML
	Changes []pageChange
}

type pageChange struct {
	Commit, Prev, Time, Kind, Before, After, Shift, P string
	URL                                               string
}

// WritePage writes the trend page: a plot per gated series (every series
// when none is gated) with each commit's median and interval on a log
// latency axis, change points marked.
func (r *Report) WritePage(w io.Writer, opt PageOptions) error {
	if opt.Title == "" {
		opt.Title = "tailgate history"
	}
	anyGated := slices.ContainsFunc(r.Series, func(t Tested) bool { return t.Gated })
	var plots []pagePlot
	for _, s := range r.Series {
		if anyGated && !s.Gated {
			continue
		}
		var cs []Change
		for _, c := range r.Changes {
			if c.Key == s.Key {
				cs = append(cs, c)
			}
		}
		pp := pagePlot{Title: s.Key.String(), Gated: s.Gated, SVG: template.HTML(svgSeries(s, cs, opt))}
		for _, c := range cs {
			kind, before, after, shift := c.words()
			pp.Changes = append(pp.Changes, pageChange{
				Commit: shortCommit(c.Commit), Prev: shortCommit(c.Prev), Time: c.Time.UTC().Format("2006-01-02 15:04"),
				Kind: kind, Before: before, After: after, Shift: shift, P: fmt.Sprintf("%.2g (level %.2g)", c.P, c.Alpha),
				URL: link(opt.CommitURL, c.Commit),
			})
		}
		plots = append(plots, pp)
	}
	var warns []string
	for _, x := range r.Warnings {
		warns = append(warns, x.word())
	}
	return pageTemplate.Execute(w, map[string]any{
		"Title": opt.Title, "Plots": plots, "Level": r.Level, "Series": len(r.Series),
		"Changes": len(r.Changes), "Warnings": warns, "Generated": time.Now().UTC().Format(time.RFC3339),
	})
}

func link(format, v string) string {
	if format == "" {
		return ""
	}
	if strings.Contains(format, "%s") {
		return strings.ReplaceAll(format, "%s", v)
	}
	return format + v
}

// yRange is the log axis' range: the 2nd to 98th percentile of the
// intervals' ends, widened to hold every center unless one is an outlier
// far beyond the rest, so that one wild commit does not squash the plot.
func yRange(pts []Point) (lo, hi float64) {
	var ends, centers []float64
	for _, p := range pts {
		ends = append(ends, math.Log(math.Max(p.Lo, 1)), math.Log(math.Max(p.Hi, 1)))
		centers = append(centers, math.Log(math.Max(p.Center, 1)))
	}
	slices.Sort(ends)
	slices.Sort(centers)
	q := func(s []float64, f float64) float64 { return s[int(f*float64(len(s)-1))] }
	lo, hi = q(ends, 0.02), q(ends, 0.98)
	lo, hi = math.Min(lo, q(centers, 0.01)), math.Max(hi, q(centers, 0.99))
	if hi-lo < 0.1 {
		mid := (hi + lo) / 2
		lo, hi = mid-0.05, mid+0.05
	}
	pad := (hi - lo) * 0.06
	return lo - pad, hi + pad
}

func svgSeries(s Tested, cs []Change, opt PageOptions) string {
	pts := s.Points
	if len(pts) == 0 {
		return ""
	}
	lo, hi := yRange(pts)
	innerW, innerH := plotW-padL-padR, plotH-padT-pb
	x := func(i int) float64 {
		if len(pts) == 1 {
			return padL + innerW/2
		}
		return padL + innerW*float64(i)/float64(len(pts)-1)
	}
	clamp := func(v float64) (float64, bool) {
		l := math.Log(math.Max(v, 1))
		out := l < lo || l > hi
		l = math.Min(math.Max(l, lo), hi)
		return padT + innerH*(1-(l-lo)/(hi-lo)), out
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="100%%" role="img" aria-label="%s">`, plotW, plotH, template.HTMLEscapeString(s.Key.String()))
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="#fafafa" stroke="#ccc"/>`, padL, padT, innerW, innerH)
	for _, v := range logTicks(lo, hi) {
		y, _ := clamp(v)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/><text x="%g" y="%.1f" font-size="10" text-anchor="end" fill="#555">%s</text>`,
			padL, padL+innerW, y, y, padL-4, y+3, ns(v))
	}
	// Change points: a dashed line between the two commits, labelled on
	// its right, or its left in the plot's last quarter, so that the
	// label stays inside.
	for _, c := range cs {
		cx := (x(c.Index-1) + x(c.Index)) / 2
		color := "#2c7a2c"
		if c.Regression() {
			color = "#d62728"
		}
		tx, anchor := cx+3, "start"
		if cx > padL+innerW*0.75 {
			tx, anchor = cx-3, "end"
		}
		fmt.Fprintf(&b, `<g class="change"><line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="1.5" stroke-dasharray="4 3"/><text x="%.1f" y="%g" font-size="10" text-anchor="%s" fill="%s">%s %s</text><title>change point at %s: %s</title></g>`,
			cx, cx, padT, padT+innerH, color, tx, padT+10, anchor, color, shortCommit(c.Commit), pct(c.Ratio.Center), c.Commit, pct(c.Ratio.Center))
	}
	// Intervals, then centers, each a link to its commit.
	step := labelStep(len(pts), innerW)
	for i, p := range pts {
		px := x(i)
		ylo, _ := clamp(p.Lo)
		yhi, _ := clamp(p.Hi)
		yc, out := clamp(p.Center)
		tip := fmt.Sprintf("%s %s: %s [%s, %s], %d trials", shortCommit(p.Commit), p.Time.UTC().Format("2006-01-02 15:04"), ns(p.Center), ns(p.Lo), ns(p.Hi), len(p.Trials))
		open, close := "", ""
		if u := link(opt.CommitURL, p.Commit); u != "" {
			open, close = fmt.Sprintf(`<a href="%s">`, template.HTMLEscapeString(u)), "</a>"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#888"/>`, px, px, ylo, yhi)
		shape := fmt.Sprintf(`<circle class="point" cx="%.1f" cy="%.1f" r="2.6" fill="#1f77b4"/>`, px, yc)
		if out {
			// Beyond the axis: a triangle at its edge, pointing out.
			d := 5.0
			if yc > padT+innerH/2 {
				d = -5
			}
			shape = fmt.Sprintf(`<path class="point outlier" d="M%.1f %.1f l-4 %g h8 z" fill="#ff7f0e"/>`, px, yc, d)
		}
		fmt.Fprintf(&b, `%s<g>%s<title>%s</title></g>%s`, open, shape, template.HTMLEscapeString(tip), close)
		last := i == len(pts)-1
		if last || (i%step == 0 && 2*(len(pts)-1-i) >= 3*step) {
			// The last label ends at its point, so that the plot's edge
			// does not clip it; a regular one too near it is left out
			// (a centred label and an end-anchored one need 1.5 widths).
			anchor := "middle"
			if last && len(pts) > 1 {
				anchor = "end"
			}
			label := fmt.Sprintf(`<text x="%.1f" y="%g" font-size="9" text-anchor="%s" fill="#555">%s</text>`, px, padT+innerH+13, anchor, p.Commit[:min(7, len(p.Commit))])
			if u := link(opt.RecordURL, p.Record); u != "" && p.Record != "" {
				label = fmt.Sprintf(`<a href="%s">%s</a>`, template.HTMLEscapeString(u), label)
			}
			b.WriteString(label)
		}
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="10" text-anchor="middle" fill="#555">commit (oldest first, %d)</text>`, padL+innerW/2, plotH-4, len(pts))
	b.WriteString(`</svg>`)
	return b.String()
}

// logTicks are the values the axis labels, over [lo, hi] (logs of ns):
// 1, 2 and 5 of each decade where two of them fall in it; in a narrower
// range (a few commits alike, or one) the multiples of the coarsest
// round step (10^k, or its half or fifth) that gives two, at most six,
// so that a plot always has labels to be read by.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	for d := math.Pow10(int(math.Floor(lo / math.Ln10))); math.Log(d) <= hi; d *= 10 {
		for _, k := range []float64{1, 2, 5} {
			if l := math.Log(d * k); l >= lo && l <= hi {
				out = append(out, d*k)
			}
		}
	}
	if len(out) >= 2 {
		return out
	}
	a, b := math.Exp(lo), math.Exp(hi)
	if !(b > a) {
		return out
	}
	decade := math.Pow10(int(math.Floor(math.Log10(b - a))))
	for _, step := range []float64{decade, decade / 2, decade / 5, decade / 10} {
		out = out[:0]
		for i := math.Ceil(a / step); i*step <= b; i++ {
			out = append(out, i*step)
		}
		if len(out) >= 2 {
			break
		}
	}
	for len(out) > 6 {
		var thin []float64
		for i := 0; i < len(out); i += 2 {
			thin = append(thin, out[i])
		}
		out = thin
	}
	return out
}

// labelGap is the room a commit label needs on the axis, in SVG units:
// seven digits at font size 9 are about 40 wide, 60 in a wide font.
const labelGap = 60.0

// labelStep is how many commits apart the commit labels are, for n
// commits over width: as close as they go without touching.
func labelStep(n int, width float64) int {
	if n < 2 {
		return 1
	}
	return max(1, int(math.Ceil(labelGap*float64(n-1)/width)))
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; }
td.regression { background: #fde0e0; font-weight: bold; } td.improvement { background: #e0f5e0; }
.note { color: #777; font-style: italic; } .warnings li { color: #8a5a00; }
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.Series}} series, {{.Changes}} change points at a family-wise level of {{.Level}} (E-divisive means, permutation tests, Holm). Each point is a commit's median over its trials, with the 95% interval of that median; the axis is logarithmic, and a commit beyond it is a triangle at its edge.</p>
{{range .Plots}}<section class="series"><h2>{{.Title}}{{if .Gated}} (gated){{end}}</h2>
{{.SVG}}
{{if .Changes}}<table><tr><th>commit</th><th>after</th><th>time</th><th>change</th><th>before</th><th>after</th><th>p</th></tr>
{{range .Changes}}<tr><td>{{if .URL}}<a href="{{.URL}}">{{.Commit}}</a>{{else}}{{.Commit}}{{end}}</td><td>{{.Prev}}</td><td>{{.Time}}</td><td class="{{.Kind}}">{{.Kind}} {{.Shift}}</td><td>{{.Before}}</td><td>{{.After}}</td><td>{{.P}}</td></tr>
{{end}}</table>{{else}}<p class="note">no change point</p>{{end}}
</section>
{{end}}{{if .Warnings}}<h2>Warnings</h2><ul class="warnings">{{range .Warnings}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p class="note">generated {{.Generated}} by tailgate history page</p>
</body></html>
`))
