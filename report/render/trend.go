package render

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/report"
)

// sparkBlocks are the eight heights of a sparkline, lowest first.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline is t's history as Unicode blocks, one a commit, and the
// candidate's block on the same scale: a log scale from the lowest to the
// highest of them all, so that a slower head stands out as a taller block
// and a step in main shows as one.
func sparkline(t report.Trend) (history string, cand string) {
	lo, hi := trendScale(t)
	block := func(v float64) rune {
		if math.IsNaN(v) || v <= 0 {
			return ' '
		}
		if hi-lo < 1e-9 {
			return sparkBlocks[len(sparkBlocks)/2-1]
		}
		k := int(math.Round((math.Log(v) - lo) / (hi - lo) * float64(len(sparkBlocks)-1)))
		return sparkBlocks[min(max(k, 0), len(sparkBlocks)-1)]
	}
	var b strings.Builder
	for _, v := range t.Values {
		b.WriteRune(block(v))
	}
	return b.String(), string(block(t.Cand))
}

// trendScale is the log range the sparkline and the plot share: every
// value and the candidate's.
func trendScale(t report.Trend) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range append([]float64{t.Cand}, t.Values...) {
		if v > 0 && !math.IsNaN(v) {
			lo, hi = math.Min(lo, math.Log(v)), math.Max(hi, math.Log(v))
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// trendLabel names the trend's percentile: "syscall-read syscall.read
// p99".
func trendLabel(t report.Trend) string { return t.Scenario + " " + t.Metric + " " + t.Quantile }

// trendWords says where the candidate falls and main's range: "12.3µs;
// main's last 20 commits 10.1µs to 11.8µs, above all 20".
func trendWords(t report.Trend) string {
	n := len(t.Values)
	if n == 0 {
		return fmt.Sprintf("no commit of %s in the history has it", t.Ref)
	}
	span := FormatNs(t.Min())
	if hi := FormatNs(t.Max()); hi != span {
		span += " to " + hi
	}
	main := fmt.Sprintf("%s's last %d %s %s", t.Ref, n, english.Plural(n, "commit", "commits"), span)
	if math.IsNaN(t.Cand) {
		return main + "; the candidate has no value"
	}
	below, above := t.Place()
	var place string
	switch {
	case below == n:
		place = fmt.Sprintf("above all %d", n)
	case above == n:
		place = fmt.Sprintf("below all %d", n)
	case below+above == 0:
		place = fmt.Sprintf("equal to all %d", n)
	default:
		place = fmt.Sprintf("above %d and below %d of %d", below, above, n)
	}
	return fmt.Sprintf("%s; %s, %s", FormatNs(t.Cand), main, place)
}

// trendLine is the trend as the text report's line: its label, the
// history's sparkline, the candidate's block and the words.
func trendLine(t report.Trend) string {
	if len(t.Values) == 0 {
		return trendLabel(t) + ": " + trendWords(t)
	}
	hist, cand := sparkline(t)
	return fmt.Sprintf("%s: %s → %s %s", trendLabel(t), hist, cand, trendWords(t))
}

// writeTrendsMarkdown writes the trends as a list, a line each: the
// history's sparkline in code (so its blocks keep one width), then the
// candidate's block, its value, the range and where it falls.
func writeTrendsMarkdown(w io.Writer, ts []report.Trend) {
	if len(ts) == 0 {
		return
	}
	fmt.Fprintf(w, "\nHistory (the candidate against %s's last commits, the median of each commit's trials):\n\n", mdEscape(ts[0].Ref))
	for _, t := range ts {
		if len(t.Values) == 0 {
			fmt.Fprintf(w, "- %s %s %s: %s\n", mdCode(t.Scenario), mdCode(t.Metric), mdEscape(t.Quantile), mdEscape(trendWords(t)))
			continue
		}
		hist, cand := sparkline(t)
		fmt.Fprintf(w, "- %s %s %s: %s → %s %s\n", mdCode(t.Scenario), mdCode(t.Metric), mdEscape(t.Quantile), mdCode(hist), mdCode(cand), mdEscape(trendWords(t)))
	}
}

// htmlTrend is a trend as the HTML report lays it out.
type htmlTrend struct {
	Label string
	SVG   template.HTML
	Words string
}

// trendGeometry of the small inline plot, in SVG units.
const trendW, trendH, trendPad = 160.0, 28.0, 3.0

func htmlTrends(ts []report.Trend) []htmlTrend {
	var out []htmlTrend
	for _, t := range ts {
		out = append(out, htmlTrend{Label: trendLabel(t), SVG: template.HTML(trendSVG(t)), Words: trendWords(t)})
	}
	return out
}

// trendSVG draws the history as a line of points, oldest at the left,
// and the candidate as a red point at the right on the same log scale,
// with a faint line at its height across the history; empty when there
// is no history.
func trendSVG(t report.Trend) string {
	if len(t.Values) == 0 {
		return ""
	}
	lo, hi := trendScale(t)
	y := func(v float64) float64 {
		if hi-lo < 1e-9 {
			return trendH / 2
		}
		return trendPad + (trendH-2*trendPad)*(1-(math.Log(v)-lo)/(hi-lo))
	}
	plotW := trendW - 16 // the candidate's column at the right
	x := func(i int) float64 {
		if len(t.Values) == 1 {
			return plotW / 2
		}
		return trendPad + (plotW-2*trendPad)*float64(i)/float64(len(t.Values)-1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" role="img" aria-label="%s">`,
		trendW, trendH, trendW, trendH, template.HTMLEscapeString(trendLabel(t)+": "+trendWords(t)))
	candY := math.NaN()
	if t.Cand > 0 {
		candY = y(t.Cand)
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-opacity="0.3" stroke-dasharray="2 2"/>`, trendPad, trendW-trendPad, candY, candY)
	}
	var pts []string
	for i, v := range t.Values {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
	}
	fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="1.2"/>`, strings.Join(pts, " "))
	for i, v := range t.Values {
		c := t.Commits[i]
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.6" fill="#1f77b4"><title>%s %s</title></circle>`, x(i), y(v), template.HTMLEscapeString(c[:min(12, len(c))]), FormatNs(v))
	}
	if !math.IsNaN(candY) {
		fmt.Fprintf(&b, `<circle class="candidate" cx="%g" cy="%.1f" r="3" fill="#d62728"><title>candidate %s</title></circle>`, trendW-8, candY, FormatNs(t.Cand))
	}
	b.WriteString(`</svg>`)
	return b.String()
}
