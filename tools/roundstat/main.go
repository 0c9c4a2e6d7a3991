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
		b, err := result.Load(flag.Arg(i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		h, err := result.Load(flag.Arg(i + 1))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		bt, ht := rounds(b, *metric), rounds(h, *metric)
		n := min(len(bt), len(ht))
		fmt.Printf("%s: %d rounds", flag.Arg(i), n)
		for _, m := range []int{1, 2, 4} {
			var d []float64
			for r := 0; r+m <= n; r += m {
				hb, hh := hist.New(), hist.New()
				for k := r; k < r+m; k++ {
					hb.Merge(bt[k])
					hh.Merge(ht[k])
				}
				d = append(d, math.Log(hh.Quantile(*q))-math.Log(hb.Quantile(*q)))
			}
			fmt.Printf("  m=%d n=%d sd=%.3f mad=%.3f", m, len(d), sd(d), mad(d))
		}
		fmt.Println()
		// the order within rounds: d of the rounds base ran first in,
		// and of those head ran first in (a slot effect cancels between
		// them; a side effect shifts both alike)
		bs, hs := trials(b, *metric), trials(h, *metric)
		var first, second []float64
		for r := 0; r < n; r++ {
			d := math.Log(ht[r].Quantile(*q)) - math.Log(bt[r].Quantile(*q))
			if bs[r].Slot < hs[r].Slot {
				first = append(first, d)
			} else {
				second = append(second, d)
			}
		}
		if len(first) > 1 && len(second) > 1 {
			fmt.Printf("   base first: %d rounds, median d %+.3f mean %+.3f; head first: %d rounds, median d %+.3f mean %+.3f; all: median %+.3f\n",
				len(first), med(first), mean(first), len(second), med(second), mean(second), med(append(first, second...)))
		}
		// the interference covariate: g = log(eps+share_head) - log(eps+share_base)
		bc, hc := cpuShares(b, *metric), cpuShares(h, *metric)
		if len(bc) >= n && len(hc) >= n {
			for _, eps := range []float64{0.01, 0.05, 0.2} {
				var d, g []float64
				for r := 0; r < n; r++ {
					d = append(d, math.Log(ht[r].Quantile(*q))-math.Log(bt[r].Quantile(*q)))
					g = append(g, math.Log(eps+hc[r])-math.Log(eps+bc[r]))
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
			for _, tau := range []float64{0.005, 0.01, 0.02, 0.03, 0.05} {
				var kept, dropped []float64
				onlyB, onlyH := 0, 0
				for r := 0; r < n; r++ {
					d := math.Log(ht[r].Quantile(*q)) - math.Log(bt[r].Quantile(*q))
					if max(bc[r], hc[r]) <= tau {
						kept = append(kept, d)
					} else {
						dropped = append(dropped, d)
						if bc[r] <= tau {
							onlyH++
						} else if hc[r] <= tau {
							onlyB++
						}
					}
				}
				if len(kept) < 3 {
					continue
				}
				need := math.Pow(2.65*1.02*mad(kept)/math.Log(1.1), 2)
				fmt.Printf("   tau=%.3f kept %d/%d (only base over %d, only head %d) sd %.3f mad %.3f median %+.3f -> rounds needed ~%.0f kept, ~%.0f run\n", tau, len(kept), n, onlyB, onlyH, sd(kept), mad(kept), med(kept), need, need*float64(n)/float64(len(kept)))
			}
			if *verbose {
				for r := 0; r < n; r++ {
					fmt.Printf("   r%d d=%+.3f base=%.2f head=%.2f\n", r+1, math.Log(ht[r].Quantile(*q))-math.Log(bt[r].Quantile(*q)), bc[r], hc[r])
				}
			}
		}
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
