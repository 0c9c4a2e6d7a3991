// Command roundstat prints, for a same-job gate's two Results (-o FILE of
// tailgate gate), the spread of the rounds' log ratios of a metric's quantile,
// with rounds merged m at a time, split by which side ran first in the
// round, and against each trial's cpu_time share.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

func main() {
	metric := flag.String("metric", "sched.runq", "metric")
	q := flag.Float64("q", 0.99, "quantile")
	verbose := flag.Bool("v", false, "print each round")
	flag.Parse()
	for i := 0; i+1 < flag.NArg(); i += 2 {
		p := loadPair(flag.Arg(i), flag.Arg(i+1), *metric, *q)
		fmt.Printf("%s: %d rounds", flag.Arg(i), p.n)
		p.printMerged()
		p.printOrder()
		// the interference covariate: g = log(eps+share_head) - log(eps+share_base)
		if len(p.bc) >= p.n && len(p.hc) >= p.n {
			p.printCovariate()
			p.printSharesKept()
			if *verbose {
				p.printRounds()
			}
		}
	}
}

// pair is one gate's two Results as roundstat reads them: a metric's
// trials on each side, in round order.
type pair struct {
	q      float64
	n      int // rounds both sides ran
	bs, hs []result.Trial
	bt, ht []*hist.Histogram
	bc, hc []float64 // each trial's cpu_time share of other tasks and steal
}

// loadPair reads the base and head Results; an unreadable one ends the
// command.
func loadPair(base, head, metric string, q float64) *pair {
	b, err := result.Load(base)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h, err := result.Load(head)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p := &pair{q: q, bt: rounds(b, metric), ht: rounds(h, metric),
		bs: trials(b, metric), hs: trials(h, metric), bc: cpuShares(b, metric), hc: cpuShares(h, metric)}
	p.n = min(len(p.bt), len(p.ht))
	return p
}

// d is round r's log ratio of the quantile, head over base.
func (p *pair) d(r int) float64 {
	return math.Log(p.ht[r].Quantile(p.q)) - math.Log(p.bt[r].Quantile(p.q))
}

// printMerged prints the spread of the log ratios with rounds merged m at
// a time, and ends the line.
func (p *pair) printMerged() {
	for _, m := range []int{1, 2, 4} {
		var d []float64
		for r := 0; r+m <= p.n; r += m {
			hb, hh := hist.New(), hist.New()
			for k := r; k < r+m; k++ {
				hb.Merge(p.bt[k])
				hh.Merge(p.ht[k])
			}
			d = append(d, math.Log(hh.Quantile(p.q))-math.Log(hb.Quantile(p.q)))
		}
		fmt.Printf("  m=%d n=%d sd=%.3f mad=%.3f", m, len(d), sd(d), mad(d))
	}
	fmt.Println()
}

// printOrder prints the log ratios of the rounds base ran first in, and of
// those head ran first in (a slot effect cancels between them; a side
// effect shifts both alike).
func (p *pair) printOrder() {
	var first, second []float64
	for r := 0; r < p.n; r++ {
		if p.bs[r].Slot < p.hs[r].Slot {
			first = append(first, p.d(r))
		} else {
			second = append(second, p.d(r))
		}
	}
	if len(first) > 1 && len(second) > 1 {
		fmt.Printf("   base first: %d rounds, median d %+.3f mean %+.3f; head first: %d rounds, median d %+.3f mean %+.3f; all: median %+.3f\n",
			len(first), med(first), mean(first), len(second), med(second), mean(second), med(append(first, second...)))
	}
}

// printCovariate prints, for a few eps, the log ratios regressed on
// g = log(eps+share_head) - log(eps+share_base) and their spread before
// and after.
func (p *pair) printCovariate() {
	for _, eps := range []float64{0.01, 0.05, 0.2} {
		var d, g []float64
		for r := 0; r < p.n; r++ {
			d = append(d, p.d(r))
			g = append(g, math.Log(eps+p.hc[r])-math.Log(eps+p.bc[r]))
		}
		var sdg, sgg float64
		for i := range d {
			sdg += d[i] * g[i]
			sgg += g[i] * g[i]
		}
		beta := sdg / sgg
		res := make([]float64, len(d))
		for i := range d {
			res[i] = d[i] - beta*g[i]
		}
		fmt.Printf("   eps=%.2f beta=%.3f corr=%.2f sd %.3f -> %.3f, mad %.3f -> %.3f\n", eps, beta, corr(d, g), sd(d), sd(res), mad(d), mad(res))
	}
}

// printSharesKept prints, for a few limits tau, the spread of the rounds
// in which neither side's share passed tau, and the rounds a gate on
// those would need.
func (p *pair) printSharesKept() {
	for _, tau := range []float64{0.005, 0.01, 0.02, 0.03, 0.05} {
		var kept, dropped []float64
		onlyB, onlyH := 0, 0
		for r := 0; r < p.n; r++ {
			d := p.d(r)
			if max(p.bc[r], p.hc[r]) <= tau {
				kept = append(kept, d)
			} else {
				dropped = append(dropped, d)
				if p.bc[r] <= tau {
					onlyH++
				} else if p.hc[r] <= tau {
					onlyB++
				}
			}
		}
		if len(kept) < 3 {
			continue
		}
		need := math.Pow(2.65*1.02*mad(kept)/math.Log(1.1), 2)
		fmt.Printf("   tau=%.3f kept %d/%d (only base over %d, only head %d) sd %.3f mad %.3f median %+.3f -> rounds needed ~%.0f kept, ~%.0f run\n", tau, len(kept), p.n, onlyB, onlyH, sd(kept), mad(kept), med(kept), need, need*float64(p.n)/float64(len(kept)))
	}
}

// printRounds prints each round's log ratio and shares.
func (p *pair) printRounds() {
	for r := 0; r < p.n; r++ {
		fmt.Printf("   r%d d=%+.3f base=%.2f head=%.2f\n", r+1, p.d(r), p.bc[r], p.hc[r])
	}
}

func cpuShares(r *result.Result, metric string) []float64 {
	var out []float64
	for _, t := range trials(r, metric) {
		if t.CPUTime == nil || t.CPUTime.WindowNs == 0 {
			return nil
		}
		out = append(out, float64(t.CPUTime.OtherTasksNs+t.CPUTime.StealNs)/float64(t.CPUTime.WindowNs))
	}
	return out
}

func corr(x, y []float64) float64 {
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// trials are metric's trials of every scenario of r, each scenario's in
// round order.
func trials(r *result.Result, metric string) []result.Trial {
	var out []result.Trial
	for _, s := range r.Scenarios {
		m, ok := s.Metrics[metric]
		if !ok || m == nil {
			continue
		}
		ts := slices.Clone(m.Trials)
		slices.SortFunc(ts, func(a, b result.Trial) int { return a.Round - b.Round })
		out = append(out, ts...)
	}
	return out
}

func rounds(r *result.Result, metric string) []*hist.Histogram {
	var out []*hist.Histogram
	for _, t := range trials(r, metric) {
		out = append(out, t.Histogram)
	}
	return out
}

func sd(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	n := float64(len(x))
	return math.Sqrt((s2 - s*s/n) / (n - 1))
}

func mad(x []float64) float64 {
	c := slices.Clone(x)
	slices.Sort(c)
	med := c[len(c)/2]
	for i := range c {
		c[i] = math.Abs(c[i] - med)
	}
	slices.Sort(c)
	return 1.4826 * c[len(c)/2]
}

func med(x []float64) float64 {
	c := slices.Clone(x)
	slices.Sort(c)
	return c[len(c)/2]
}
