package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// The plots are drawn with gonum/plot into SVG that the HTML report
// inlines: no scripts, no fonts or images fetched.

// seriesColors tell the targets apart; the reference (first) is dark grey.
var seriesColors = []color.RGBA{
	{0x44, 0x44, 0x44, 0xff},
	{0xd6, 0x27, 0x28, 0xff},
	{0x1f, 0x77, 0xb4, 0xff},
	{0x2c, 0xa0, 0x2c, 0xff},
	{0xff, 0x7f, 0x0e, 0xff},
	{0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff},
	{0xe3, 0x77, 0xc2, 0xff},
}

func seriesColor(i int) color.RGBA { return seriesColors[i%len(seriesColors)] }

// tailSeries is one distribution on a tail plot.
type tailSeries struct {
	Name string
	H    *hist.Histogram
}

// survival returns the points of 1−CDF of h: at the upper edge of each
// non-empty bucket, the fraction of events beyond it. The last bucket,
// where nothing is beyond, cannot sit on a log axis and is left out.
func survival(h *hist.Histogram) plotter.XYs {
	n := h.Count()
	if n == 0 {
		return nil
	}
	var pts plotter.XYs
	var cum uint64
	for i, c := range h.Counts() {
		if c == 0 {
			continue
		}
		lo, w := hist.Bounds(i)
		if len(pts) == 0 {
			pts = append(pts, plotter.XY{X: math.Max(float64(lo), 1), Y: 1})
		}
		cum += c
		if cum == n {
			break
		}
		pts = append(pts, plotter.XY{X: float64(lo + w), Y: float64(n-cum) / float64(n)})
	}
	return pts
}

// tailPlotSVG draws 1−CDF against latency, both on log axes, one line per
// series: the tail, squeezed into a corner on linear axes, gets most of
// the picture.
func tailPlotSVG(title string, series []tailSeries) (string, error) {
	p := newPlot(title)
	p.X.Label.Text = "latency"
	p.Y.Label.Text = "fraction slower (1 − CDF)"
	p.X.Scale = plot.LogScale{}
	p.Y.Scale = plot.LogScale{}
	p.X.Tick.Marker = nsLogTicks{}
	p.Y.Tick.Marker = survivalTicks{}
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, s := range series {
		pts := survival(s.H)
		if len(pts) < 2 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", err
		}
		l.Color = seriesColor(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 {
		return "", nil
	}
	p.Legend.Top = true
	return renderSVG(p, 8*vg.Inch, 4*vg.Inch)
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
	p := newPlot(title)
	p.Y.Label.Text = "latency (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = nsLogTicks{}
	p.X.Min, p.X.Max = -0.6, float64(len(series))-0.4
	var ticks plot.ConstantTicks
	for i, s := range series {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: s.Name})
	}
	p.X.Tick.Marker = ticks
	p.Add(plotter.NewGrid())
	if len(series) > 0 && threshold > 0 && series[0].Value > 0 {
		ref := series[0].Value
		low := ref * math.Max(1-threshold, 0.01)
		band, err := plotter.NewPolygon(plotter.XYs{
			{X: p.X.Min, Y: low}, {X: p.X.Max, Y: low},
			{X: p.X.Max, Y: ref * (1 + threshold)}, {X: p.X.Min, Y: ref * (1 + threshold)},
		})
		if err != nil {
			return "", err
		}
		band.Color = color.RGBA{0xee, 0xee, 0xee, 0xff}
		band.LineStyle.Width = 0
		p.Add(band)
		p.Title.Text += fmt.Sprintf(" (band: reference ±%s)", FormatPercent(threshold))
	}
	drawn := 0
	for i, s := range series {
		c := seriesColor(i)
		var pts plotter.XYs
		for k, v := range s.Trials {
			if !(v > 0) {
				continue
			}
			// Trials side by side, in run order, so none hides another.
			off := 0.0
			if len(s.Trials) > 1 {
				off = -0.2 + 0.4*float64(k)/float64(len(s.Trials)-1)
			}
			pts = append(pts, plotter.XY{X: float64(i) + off, Y: v})
		}
		if len(pts) > 0 {
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return "", err
			}
			sc.GlyphStyle.Color = c
			sc.GlyphStyle.Radius = vg.Points(2.5)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			drawn++
		}
		if !(s.Value > 0) {
			continue
		}
		bar, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.28, Y: s.Value}, {X: float64(i) + 0.28, Y: s.Value}})
		if err != nil {
			return "", err
		}
		bar.Color = c
		bar.Width = vg.Points(2)
		p.Add(bar)
		if s.Lo > 0 && !math.IsNaN(s.Hi) {
			eb, err := plotter.NewYErrorBars(errorPoint{x: float64(i) + 0.3, y: s.Value, lo: s.Value - s.Lo, hi: s.Hi - s.Value})
			if err != nil {
				return "", err
			}
			eb.Color = c
			eb.Width = vg.Points(1.5)
			p.Add(eb)
		}
	}
	if drawn == 0 {
		return "", nil
	}
	return renderSVG(p, 8*vg.Inch, 3.2*vg.Inch)
}

// errorPoint is a single point with an asymmetric Y error, for
// plotter.NewYErrorBars.
type errorPoint struct{ x, y, lo, hi float64 }

func (e errorPoint) Len() int                       { return 1 }
func (e errorPoint) XY(int) (float64, float64)      { return e.x, e.y }
func (e errorPoint) YError(int) (low, high float64) { return e.lo, e.hi }

func newPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	return p
}

// renderSVG draws p and returns the <svg> element alone, ready to inline.
func renderSVG(p *plot.Plot, w, h vg.Length) (string, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", err
	}
	s := b.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("plot: no <svg> element in the output")
	}
	return s[i:], nil
}

// nsLogTicks marks decades of nanoseconds on a log axis: 1µs, 10µs, ….
type nsLogTicks struct{}

func (nsLogTicks) Ticks(min, max float64) []plot.Tick {
	min = math.Max(min, 1)
	// Over less than two decades, 2 and 5 get labels too.
	few := max/min < 100
	var ticks []plot.Tick
	for d := math.Pow10(int(math.Floor(math.Log10(min)))); d <= max*10; d *= 10 {
		for k := 1; k < 10; k++ {
			v := d * float64(k)
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
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
type survivalTicks struct{}

func (survivalTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
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
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
		for k := 2; k < 10; k++ {
			if m := v * float64(k) / 10; m >= min && m <= max {
				ticks = append(ticks, plot.Tick{Value: m})
			}
		}
	}
	return ticks
}

// nsTicks labels a linear axis of nanoseconds in the unit that suits.
type nsTicks struct{}

func (nsTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = FormatNs(ticks[i].Value)
		}
	}
	return ticks
}
