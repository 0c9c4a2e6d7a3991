package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report/changepoint"
)

// The trend page is one self-contained HTML file: styles inline, a plot
// per series as inline SVG drawn here (so that each point can carry its
// own link and tooltip), no scripts, nothing fetched.

// ChangesPageOptions shape the page.
type ChangesPageOptions struct {
	Title string
	// CommitURL is a commit page's address with %s for the commit
	// (https://github.com/OWNER/REPO/commit/%s); empty for no links.
	CommitURL string
	// RecordURL is where a record is, with %s for its path in the store
	// (the page is served from the store's branch: "%s"); empty for none.
	RecordURL string
}

// plot geometry, in SVG user units: the plot's size, the room around its
// frame (the y labels on the left; the commit, date and axis title rows
// below), and inset, which keeps the first and last commits off the
// frame's sides.
const (
	plotW, plotH         = 860.0, 290.0
	padL, padR, padT, pb = 64.0, 12.0, 12.0, 56.0
	inset                = 14.0
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

// WriteChangesPage writes the trend page: a plot per gated series (every series
// when none is gated) with each commit's median and interval on a log
// latency axis, joined in commit order over their dates, change points
// marked.
func WriteChangesPage(w io.Writer, r *changepoint.Report, opt ChangesPageOptions) error {
	if opt.Title == "" {
		opt.Title = "tailgate history"
	}
	anyGated := slices.ContainsFunc(r.Series, func(t changepoint.Tested) bool { return t.Gated })
	var plots []pagePlot
	for _, s := range r.Series {
		if anyGated && !s.Gated {
			continue
		}
		var cs []changepoint.Change
		for _, c := range r.Changes {
			if c.Key == s.Key {
				cs = append(cs, c)
			}
		}
		pp := pagePlot{Title: s.Key.String(), Gated: s.Gated, SVG: template.HTML(svgSeries(s, cs, opt))}
		for _, c := range cs {
			kind, before, after, shift := changeWords(c)
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
		warns = append(warns, changeWarning(x))
	}
	return changesPageTemplate.Execute(w, map[string]any{
		"Title": opt.Title, "Plots": plots, "Headline": changesHeadline(r), "Warnings": warns,
		"Generated": time.Now().UTC().Format(time.RFC3339),
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
func yRange(pts []changepoint.Point) (lo, hi float64) {
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

// plotter places a series' commits: x by commit order, evenly, y on the
// log axis [lo, hi] (logs of ns).
type plotter struct {
	pts            []changepoint.Point
	lo, hi         float64
	innerW, innerH float64
}

func newPlotter(pts []changepoint.Point) *plotter {
	lo, hi := yRange(pts)
	return &plotter{pts: pts, lo: lo, hi: hi, innerW: plotW - padL - padR, innerH: plotH - padT - pb}
}

// x is commit i's abscissa, inset from the frame's sides.
func (p *plotter) x(i int) float64 {
	if len(p.pts) == 1 {
		return padL + p.innerW/2
	}
	return padL + inset + (p.innerW-2*inset)*float64(i)/float64(len(p.pts)-1)
}

// y is v's ordinate, clamped to the axis; out says v is beyond it.
func (p *plotter) y(v float64) (y float64, out bool) {
	l := math.Log(math.Max(v, 1))
	out = l < p.lo || l > p.hi
	l = math.Min(math.Max(l, p.lo), p.hi)
	return padT + p.innerH*(1-(l-p.lo)/(p.hi-p.lo)), out
}

// bottom is the frame's lower edge.
func (p *plotter) bottom() float64 { return padT + p.innerH }

func svgSeries(s changepoint.Tested, cs []changepoint.Change, opt ChangesPageOptions) string {
	if len(s.Points) == 0 {
		return ""
	}
	p := newPlotter(s.Points)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="100%%" role="img" aria-label="%s">`, plotW, plotH, template.HTMLEscapeString(s.Key.String()))
	p.axes(&b)
	p.levels(&b, cs)
	p.changes(&b, cs)
	p.trend(&b)
	p.points(&b, opt)
	p.xLabels(&b, opt)
	b.WriteString(`</svg>`)
	return b.String()
}

// axes draws the frame and the log axis' labels and grid lines.
func (p *plotter) axes(b *strings.Builder) {
	fmt.Fprintf(b, `<rect class="frame" x="%g" y="%g" width="%g" height="%g" fill="#fafafa" stroke="#ccc"/>`, padL, padT, p.innerW, p.innerH)
	for _, v := range logTicks(p.lo, p.hi) {
		y, _ := p.y(v)
		fmt.Fprintf(b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/><text class="tick" x="%g" y="%.1f" font-size="10" text-anchor="end" fill="#555">%s</text>`,
			padL, padL+p.innerW, y, y, padL-4, y+3, changesNS(v))
	}
}

// levels shades, between change points, the median of the commits there
// and its interval (each change's sides), so that the step reads at a
// glance.
func (p *plotter) levels(b *strings.Builder, cs []changepoint.Change) {
	for k, c := range cs {
		start := 0
		if k > 0 {
			start = cs[k-1].Index
		}
		p.level(b, start, c.Index-1, c.Before)
		if k == len(cs)-1 {
			p.level(b, c.Index, len(p.pts)-1, c.After)
		}
	}
}

func (p *plotter) level(b *strings.Builder, first, last int, s changepoint.Side) {
	ylo, _ := p.y(s.Lo)
	yhi, _ := p.y(s.Hi)
	yc, _ := p.y(s.Center)
	x0, x1 := p.x(first), p.x(last)
	tip := fmt.Sprintf("%s to %s, %s: median %s [%s, %s]", shortCommit(p.pts[first].Commit), shortCommit(p.pts[last].Commit),
		english.Count(s.Commits, "commit"), changesNS(s.Center), changesNS(s.Lo), changesNS(s.Hi))
	fmt.Fprintf(b, `<g class="level"><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#555" fill-opacity="0.15"/>`+
		`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#333" stroke-width="1.5" stroke-dasharray="6 3"/><title>%s</title></g>`,
		x0, yhi, x1-x0, math.Max(ylo-yhi, 1), x0, x1, yc, yc, template.HTMLEscapeString(tip))
}

// changes draws each change point: a dashed line between its two
// commits, labelled with its commit, change and p-value on the side
// where the label fits in the frame, the labels of neighbours staggered
// down.
func (p *plotter) changes(b *strings.Builder, cs []changepoint.Change) {
	for j, c := range cs {
		cx := (p.x(c.Index-1) + p.x(c.Index)) / 2
		color := "#2c7a2c"
		if c.Regression() {
			color = "#d62728"
		}
		label := fmt.Sprintf("%s %s p=%.2g", shortCommit(c.Commit), changesPct(c.Ratio.Center), c.P)
		tx, anchor := cx+3, "start"
		if cx+3+labelWidth(label, 10) > padL+p.innerW {
			tx, anchor = cx-3, "end"
		}
		ty := padT + 11 + 12*float64(j%3)
		fmt.Fprintf(b, `<g class="change"><line x1="%.1f" x2="%.1f" y1="%g" y2="%g" stroke="%s" stroke-width="1.5" stroke-dasharray="4 3"/>`+
			`<text x="%.1f" y="%g" font-size="10" text-anchor="%s" fill="%s" stroke="#fafafa" stroke-width="3" paint-order="stroke">%s</text><title>change point at %s: %s, p=%.2g (level %.2g)</title></g>`,
			cx, cx, padT, p.bottom(), color, tx, ty, anchor, color, label, c.Commit, changesPct(c.Ratio.Center), c.P, c.Alpha)
	}
}

// labelWidth is how wide text is at size, in SVG units, at most: 0.62
// em a character, a wide font's digits.
func labelWidth(text string, size float64) float64 {
	return 0.62 * size * float64(utf8.RuneCountInString(text))
}

// trend joins the commits' medians, oldest to newest.
func (p *plotter) trend(b *strings.Builder) {
	if len(p.pts) < 2 {
		return
	}
	b.WriteString(`<polyline class="trend" fill="none" stroke="#1f77b4" stroke-width="1" stroke-opacity="0.7" points="`)
	for i, pt := range p.pts {
		y, _ := p.y(pt.Center)
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", p.x(i), y)
	}
	b.WriteString(`"/>`)
}

// points draws each commit's interval and median, each a link to its
// commit with its values in a tooltip.
func (p *plotter) points(b *strings.Builder, opt ChangesPageOptions) {
	for i, pt := range p.pts {
		px := p.x(i)
		ylo, _ := p.y(pt.Lo)
		yhi, _ := p.y(pt.Hi)
		yc, out := p.y(pt.Center)
		tip := fmt.Sprintf("%s %s: %s [%s, %s], %s", shortCommit(pt.Commit), pt.Time.UTC().Format("2006-01-02 15:04"), changesNS(pt.Center), changesNS(pt.Lo), changesNS(pt.Hi), english.Count(len(pt.Trials), "trial"))
		open, close := "", ""
		if u := link(opt.CommitURL, pt.Commit); u != "" {
			open, close = fmt.Sprintf(`<a href="%s">`, template.HTMLEscapeString(u)), "</a>"
		}
		fmt.Fprintf(b, `<line class="interval" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#888"/>`, px, px, ylo, yhi)
		shape := fmt.Sprintf(`<circle class="point" cx="%.1f" cy="%.1f" r="2.6" fill="#1f77b4"/>`, px, yc)
		if out {
			// Beyond the axis: a triangle at its edge, pointing out.
			d := 5.0
			if yc > padT+p.innerH/2 {
				d = -5
			}
			shape = fmt.Sprintf(`<path class="point outlier" d="M%.1f %.1f l-4 %g h8 z" fill="#ff7f0e"/>`, px, yc, d)
		}
		fmt.Fprintf(b, `%s<g>%s<title>%s</title></g>%s`, open, shape, template.HTMLEscapeString(tip), close)
	}
}

// xLabels writes, under the frame, as many commits as fit without
// touching (the last always): each its short commit, a link to its
// record, and under it its date; then the axis' title.
func (p *plotter) xLabels(b *strings.Builder, opt ChangesPageOptions) {
	layout, title := dateAxis(p.pts)
	step := labelStep(len(p.pts), p.innerW)
	for i, pt := range p.pts {
		last := i == len(p.pts)-1
		if !last && (i%step != 0 || 2*(len(p.pts)-1-i) < 3*step) {
			// A regular label too near the last is left out (a centred
			// label and an end-anchored one need 1.5 widths).
			continue
		}
		// The last label ends at its point, so that the plot's edge does
		// not clip it.
		anchor := "middle"
		if last && len(p.pts) > 1 {
			anchor = "end"
		}
		px := p.x(i)
		label := fmt.Sprintf(`<text class="commit" x="%.1f" y="%g" font-size="9" text-anchor="%s" fill="#555">%s</text>`, px, p.bottom()+13, anchor, pt.Commit[:min(7, len(pt.Commit))])
		if u := link(opt.RecordURL, pt.Record); u != "" && pt.Record != "" {
			label = fmt.Sprintf(`<a href="%s">%s</a>`, template.HTMLEscapeString(u), label)
		}
		b.WriteString(label)
		fmt.Fprintf(b, `<text class="date" x="%.1f" y="%g" font-size="9" text-anchor="%s" fill="#333">%s</text>`, px, p.bottom()+25, anchor, pt.Time.UTC().Format(layout))
	}
	fmt.Fprintf(b, `<text class="axis" x="%g" y="%g" font-size="10" text-anchor="middle" fill="#555">%s</text>`, padL+p.innerW/2, plotH-6, template.HTMLEscapeString(title))
}

// dateAxis is how the commits' dates are written under them, and the
// axis' title: the day, or the time of day when every commit is of one
// day (UTC).
func dateAxis(pts []changepoint.Point) (layout, title string) {
	first, last := pts[0].Time.UTC(), pts[len(pts)-1].Time.UTC()
	n := english.Count(len(pts), "commit")
	switch {
	case len(pts) == 1:
		return time.DateOnly, "1 commit and its date (UTC)"
	case first.Format(time.DateOnly) == last.Format(time.DateOnly):
		return "15:04", fmt.Sprintf("%s, oldest first, and their times on %s (UTC)", n, first.Format(time.DateOnly))
	}
	return time.DateOnly, fmt.Sprintf("%s, oldest first, and their dates (UTC)", n)
}

// logTicks are the values the axis labels, over [lo, hi] (logs of ns):
// 1, 2 and 5 of each decade where three of them fall in it; else the
// multiples of the coarsest round step (10^k, or its half or fifth) that
// gives three, at most six, each spelled exactly in three digits; else
// two of either, so that a plot always has labels to be read by.
func logTicks(lo, hi float64) []float64 {
	var decades []float64
	for d := math.Pow10(int(math.Floor(lo / math.Ln10))); math.Log(d) <= hi; d *= 10 {
		for _, k := range []float64{1, 2, 5} {
			if l := math.Log(d * k); l >= lo && l <= hi {
				decades = append(decades, d*k)
			}
		}
	}
	if len(decades) >= 3 {
		return decades
	}
	a, b := math.Exp(lo), math.Exp(hi)
	if !(b > a) {
		return decades
	}
	// The finest step three digits spell: 10 at 1µs to 9.99µs.
	exact := math.Pow10(int(math.Floor(math.Log10(b))) - 2)
	if lin := linearTicks(a, b, 3, exact); len(lin) >= 3 {
		return lin
	}
	if len(decades) >= 2 {
		return decades
	}
	return linearTicks(a, b, 2, 0)
}

// linearTicks are the multiples in [a, b] of the coarsest round step, of
// at least finest, that gives want of them, thinned to six at most.
func linearTicks(a, b float64, want int, finest float64) []float64 {
	var out []float64
	decade := math.Pow10(int(math.Floor(math.Log10(b - a))))
	for _, step := range []float64{decade, decade / 2, decade / 5, decade / 10} {
		if step < finest {
			break
		}
		out = out[:0]
		for i := math.Ceil(a / step); i*step <= b; i++ {
			out = append(out, i*step)
		}
		if len(out) >= want {
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

// labelGap is the room a commit's labels need on the axis, in SVG units:
// its date, ten characters at font size 9, is about 50 wide, 58 in a
// wide font.
const labelGap = 66.0

// labelStep is how many commits apart the commit labels are, for n
// commits over width: as close as they go without touching.
func labelStep(n int, width float64) int {
	if n < 2 {
		return 1
	}
	return max(1, int(math.Ceil(labelGap*float64(n-1)/width)))
}

var changesPageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 62em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.5em; text-align: left; }
td.regression { background: #fde0e0; font-weight: bold; } td.improvement { background: #e0f5e0; }
.note { color: #777; font-style: italic; } p.about { font-size: 0.9em; color: #444; } .warnings li { color: #8a5a00; }
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.Headline}} (E-divisive means, tested on commits and trials).</p>
<p class="about">Each point is a commit's median over its trials, with the 95% interval of that median as a bar, joined to the next commit; the axis is logarithmic, and a commit beyond it is a triangle at its edge. Commits are evenly spaced, oldest on the left, with their dates (UTC) under them. A change point is a dashed line between its two commits, labelled with the commit, the change and its p-value; the shaded bands are the median of the commits between change points, with its 95% interval.</p>
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
