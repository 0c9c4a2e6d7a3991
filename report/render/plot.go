package render

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/tailgate-ci/tailgate/report"
)

// The plots are SVG written here and inlined in the HTML report: no
// scripts, no fonts or images fetched, and no plotting library, whose
// embedded fonts (4.4 MB) would ride in every binary and every guest's
// initramfs. Text is left to the browser's own sans-serif font.

// seriesColors tell the targets apart; the reference (first) is dark grey.
var seriesColors = []string{"#444444", "#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"}

func seriesColor(i int) string { return seriesColors[i%len(seriesColors)] }

// tailSeries is one distribution's tail on a tail plot.
type tailSeries struct {
	Name   string
	Points []report.TailPoint
}

// point is one (x, y) of a plot, in data units.
type point struct{ X, Y float64 }

// tailPlotSVG draws 1−CDF against latency, both on log axes, one line per
// series: the tail, squeezed into a corner on linear axes, gets most of
// the picture.
func tailPlotSVG(title string, series []tailSeries) (string, error) {
	var lines [][]point
	xmin, xmax, ymin := math.Inf(1), math.Inf(-1), 1.0
	for _, s := range series {
		if len(s.Points) < 2 {
			lines = append(lines, nil)
			continue
		}
		pts := make([]point, len(s.Points))
		for i, p := range s.Points {
			pts[i] = point{X: p.Ns, Y: p.Slower}
		}
		lines = append(lines, pts)
		for _, p := range pts {
			xmin, xmax, ymin = math.Min(xmin, p.X), math.Max(xmax, p.X), math.Min(ymin, p.Y)
		}
	}
	if math.IsInf(xmin, 1) {
		return "", nil
	}
	c := newCanvas(title, 768, 384)
	c.x.log, c.x.min, c.x.max = true, xmin, math.Max(xmax, xmin*1.01)
	c.y.log, c.y.min, c.y.max = true, ymin, 1
	c.frame(nsLogTicks(c.x.min, c.x.max), survivalTicks(c.y.min, c.y.max), "latency", "fraction slower (1 − CDF)")
	var legend []legendEntry
	for i, pts := range lines {
		if pts == nil {
			continue
		}
		c.polyline(pts, seriesColor(i), 2)
		legend = append(legend, legendEntry{series[i].Name, seriesColor(i)})
	}
	c.legend(legend)
	return c.String(), nil
}

// trialSeries is one target on a per-trial plot.
type trialSeries struct {
	Name   string
	Trials []float64 // each trial's own value of the percentile
	Value  float64   // the percentile of the merged trials
	Lo, Hi float64   // an interval to draw around Value; NaN for none
}

// trialPlotSVG draws each target's per-trial values as points, the merged
// value as a bar, and the interval, over a band of ±threshold around the
// reference (the first series): an interval clear of the band is what a
// regression or improvement looks like. The latency axis is logarithmic,
// so that one slow trial or a wide interval does not flatten the rest
// into a line; values of 0 ns, which it cannot show, are left out.
func trialPlotSVG(title string, series []trialSeries, threshold float64) (string, error) {
	ymin, ymax := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if v > 0 && !math.IsInf(v, 0) {
			ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
		}
	}
	drawn := 0
	for _, s := range series {
		for _, v := range s.Trials {
			if v > 0 {
				see(v)
				drawn++
			}
		}
		see(s.Value)
		if s.Lo > 0 && !math.IsNaN(s.Hi) {
			see(s.Lo)
			see(s.Hi)
		}
	}
	if drawn == 0 {
		return "", nil
	}
	var ref, low, high float64
	band := len(series) > 0 && threshold > 0 && series[0].Value > 0
	if band {
		ref = series[0].Value
		low, high = ref*math.Max(1-threshold, 0.01), ref*(1+threshold)
		see(low)
		see(high)
		title += fmt.Sprintf(" (band: reference ±%s)", FormatPercent(threshold))
	}
	c := newCanvas(title, 768, 307)
	// A tenth of a decade (at least) of room above and below the data.
	pad := math.Max(math.Pow(ymax/ymin, 0.05), 1.05)
	c.y.log, c.y.min, c.y.max = true, ymin/pad, ymax*pad
	c.x.min, c.x.max = -0.6, float64(len(series))-0.4
	var xt []tick
	for i, s := range series {
		xt = append(xt, tick{Value: float64(i), Label: s.Name})
	}
	c.frame(xt, nsLogTicks(c.y.min, c.y.max), "", "latency (log)")
	if band {
		x0, x1 := c.x.px(c.x.min), c.x.px(c.x.max)
		y0, y1 := c.y.px(high), c.y.px(low)
		fmt.Fprintf(&c.body, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#eeeeee"/>`, x0, y0, x1-x0, y1-y0)
	}
	for i, s := range series {
		col := seriesColor(i)
		for k, v := range s.Trials {
			if !(v > 0) {
				continue
			}
			// Trials side by side, in run order, so none hides another.
			off := 0.0
			if len(s.Trials) > 1 {
				off = -0.2 + 0.4*float64(k)/float64(len(s.Trials)-1)
			}
			fmt.Fprintf(&c.body, `<circle class="trial" cx="%.1f" cy="%.1f" r="3.3" fill="%s"/>`, c.x.px(float64(i)+off), c.y.px(v), col)
		}
		if !(s.Value > 0) {
			continue
		}
		c.polyline([]point{{float64(i) - 0.28, s.Value}, {float64(i) + 0.28, s.Value}}, col, 2.7)
		if s.Lo > 0 && !math.IsNaN(s.Hi) {
			x := c.x.px(float64(i) + 0.3)
			ylo, yhi := c.y.px(s.Lo), c.y.px(s.Hi)
			fmt.Fprintf(&c.body, `<path class="interval" d="M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8" stroke="%s" stroke-width="2" fill="none"/>`,
				x, ylo, yhi, x-4, ylo, x-4, yhi, col)
		}
	}
	return c.String(), nil
}

// tick is a mark on an axis; one without a label is a minor tick.
type tick struct {
	Value float64
	Label string
}

// axis maps data values onto pixels between lo and hi, on a log or a
// linear scale.
type axis struct {
	log      bool
	min, max float64
	lo, hi   float64
}

func (a axis) px(v float64) float64 {
	f := (v - a.min) / (a.max - a.min)
	if a.log {
		f = math.Log(v/a.min) / math.Log(a.max/a.min)
	}
	if a.max == a.min || math.IsNaN(f) {
		f = 0.5
	}
	return a.lo + f*(a.hi-a.lo)
}

// canvas is one SVG plot: a title, a plotting area with two axes, and
// what is drawn in it.
type canvas struct {
	w, h  float64
	title string
	x, y  axis
	body  strings.Builder
}

// The margins around the plotting area, in pixels.
const (
	marginLeft, marginRight, marginTop, marginBottom = 72, 16, 28, 44
)

func newCanvas(title string, w, h float64) *canvas {
	c := &canvas{w: w, h: h, title: title}
	c.x.lo, c.x.hi = marginLeft, w-marginRight
	c.y.lo, c.y.hi = h-marginBottom, marginTop
	return c
}

// frame draws the grid, the ticks with their labels, the axes' names and
// the box of the plotting area. It must come after the axes' ranges are
// set, and before the data, which it lies under.
func (c *canvas) frame(xt, yt []tick, xlabel, ylabel string) {
	b := &c.body
	for _, t := range xt {
		if t.Value < c.x.min || t.Value > c.x.max {
			continue
		}
		x := c.x.px(t.Value)
		stroke := "#f0f0f0"
		if t.Label != "" {
			stroke = "#dddddd"
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#333">%s</text>`, x, c.y.lo+16, html.EscapeString(t.Label))
		}
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, x, x, c.y.hi, c.y.lo, stroke)
	}
	for _, t := range yt {
		if t.Value < c.y.min || t.Value > c.y.max {
			continue
		}
		y := c.y.px(t.Value)
		stroke := "#f0f0f0"
		if t.Label != "" {
			stroke = "#dddddd"
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#333">%s</text>`, c.x.lo-6, y+4, html.EscapeString(t.Label))
		}
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>`, c.x.lo, c.x.hi, y, y, stroke)
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`, c.x.lo, c.y.hi, c.x.hi-c.x.lo, c.y.lo-c.y.hi)
	if xlabel != "" {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="#333">%s</text>`, (c.x.lo+c.x.hi)/2, c.h-8, html.EscapeString(xlabel))
	}
	if ylabel != "" {
		yc := (c.y.lo + c.y.hi) / 2
		fmt.Fprintf(b, `<text x="14" y="%.1f" font-size="11" text-anchor="middle" fill="#333" transform="rotate(-90 14 %.1f)">%s</text>`, yc, yc, html.EscapeString(ylabel))
	}
}

// polyline draws a line through pts, in data units.
func (c *canvas) polyline(pts []point, color string, width float64) {
	var p strings.Builder
	for i, pt := range pts {
		if i > 0 {
			p.WriteByte(' ')
		}
		fmt.Fprintf(&p, "%.1f,%.1f", c.x.px(pt.X), c.y.px(pt.Y))
	}
	fmt.Fprintf(&c.body, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%g"/>`, p.String(), color, width)
}

type legendEntry struct{ name, color string }

// legend lists the series in the plotting area's top right corner.
func (c *canvas) legend(es []legendEntry) {
	for i, e := range es {
		y := c.y.hi + 16 + 16*float64(i)
		x := c.x.hi - 8
		fmt.Fprintf(&c.body, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="end" fill="#333">%s</text><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`,
			x-26, y+4, html.EscapeString(e.name), x-22, x, y, y, e.color)
	}
}

// String is the <svg> element, ready to inline.
func (c *canvas) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %g %g" width="%g" height="%g" font-family="sans-serif" role="img" aria-label="%s">`,
		c.w, c.h, c.w, c.h, html.EscapeString(c.title))
	fmt.Fprintf(&b, `<text x="%g" y="18" font-size="13" text-anchor="middle" fill="#111">%s</text>`, c.w/2, html.EscapeString(c.title))
	b.WriteString(c.body.String())
	b.WriteString("</svg>\n")
	return b.String()
}

// nsLogTicks marks decades of nanoseconds on a log axis: 1µs, 10µs, ….
func nsLogTicks(min, max float64) []tick {
	min = math.Max(min, 1)
	// Over less than two decades, 2 and 5 get labels too.
	few := max/min < 100
	var ticks []tick
	for d := math.Pow10(int(math.Floor(math.Log10(min)))); d <= max*10; d *= 10 {
		for k := 1; k < 10; k++ {
			v := d * float64(k)
			if v < min || v > max {
				continue
			}
			t := tick{Value: v}
			if k == 1 || few && (k == 2 || k == 5) {
				t.Label = FormatNs(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// survivalTicks marks decades of 1−CDF as the percentile they start:
// 0.01 of the events are slower than p99.
func survivalTicks(min, max float64) []tick {
	var ticks []tick
	for e := 0; e >= -9; e-- {
		v := math.Pow10(e)
		if v > max*1.0001 {
			continue
		}
		if v < min/10 {
			break
		}
		label := "p0"
		if e < 0 {
			label = "p" + strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.9f", 100*(1-v)), "0"), ".")
		}
		if v >= min {
			ticks = append(ticks, tick{Value: v, Label: label})
		}
		for k := 2; k < 10; k++ {
			if m := v * float64(k) / 10; m >= min && m <= max {
				ticks = append(ticks, tick{Value: m})
			}
		}
	}
	return ticks
}
