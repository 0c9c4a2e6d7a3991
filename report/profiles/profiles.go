// Package profiles lays out the stacks a Result's trials sampled in their
// slowest requests (result.Profile) as pprof profiles, one per side of a
// comparison, so that
//
//	go tool pprof -normalize -diff_base base.pb.gz head.pb.gz
//
// shows what grew. It computes nothing: the samples are counted where
// the trials ran, and report.GrownFrames ranks the frames.
package profiles

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/internal/safefile"
	"github.com/tailgate-ci/tailgate/report"
)

// kernelFile is the file name a kernel frame's function carries, which
// pprof shows beside it (as perf names the kernel's map).
const kernelFile = "[kernel]"

// Of returns the samples of a scenario's metric over all trials of res as
// a pprof profile, or nil when res has none. Each sample's value is its
// count and the CPU time it stands for (count × period); its stack is the
// kernel's frames, innermost first, then the user's. A frame is a
// function: the offsets within functions are dropped, so that one
// function's samples add up.
func Of(res *result.Result, scenario, metric string) *profile.Profile {
	ps := report.Profiles(res, scenario, metric)
	if len(ps) == 0 {
		return nil
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     int64(ps[0].PeriodNs),
		Comments: []string{fmt.Sprintf("tailgate: on-CPU stacks of %s's requests above p%g of %s, %d trials",
			scenario, 100*ps[0].Quantile, metric, len(ps))},
	}
	type fkey struct {
		name   string
		kernel bool
	}
	locs := map[fkey]*profile.Location{}
	loc := func(frame string, kernel bool) *profile.Location {
		k := fkey{report.Function(frame), kernel}
		if l, ok := locs[k]; ok {
			return l
		}
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: k.name, SystemName: k.name}
		if kernel {
			fn.Filename = kernelFile
		}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[k] = l
		return l
	}
	for _, tp := range ps {
		for _, st := range tp.Samples {
			s := &profile.Sample{Value: []int64{int64(st.Count), int64(st.Count) * int64(tp.PeriodNs)}}
			for _, f := range st.Kernel {
				s.Location = append(s.Location, loc(f, true))
			}
			for _, f := range st.User {
				s.Location = append(s.Location, loc(f, false))
			}
			p.Sample = append(p.Sample, s)
		}
	}
	return p
}

// Write writes p, gzipped as pprof writes it, to path, replacing any file
// there whole.
func Write(path string, p *profile.Profile) error {
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return err
	}
	return safefile.Write(path, b.Bytes(), safefile.Options{})
}

// Written is one profile a side got.
type Written struct {
	Scenario, Metric, Side, Path string
}

// WriteSides writes, for each scenario and metric whose samples base or
// cand has, DIR/SCENARIO.METRIC/base.pb.gz and head.pb.gz (a side without
// samples gets no file), and returns what it wrote.
func WriteSides(dir string, base, cand *result.Result) ([]Written, error) {
	var out []Written
	for _, s := range cand.Scenarios {
		for _, m := range result.MetricNames(cand) {
			if s.Metrics[m] == nil {
				continue
			}
			sub := filepath.Join(dir, pathSafe(s.Name+"."+m))
			made := false
			for _, side := range []struct {
				name string
				res  *result.Result
			}{{"base", base}, {"head", cand}} {
				p := Of(side.res, s.Name, m)
				if p == nil {
					continue
				}
				if !made {
					if err := safefile.MkdirAll(sub, 0o755); err != nil {
						return out, err
					}
					made = true
				}
				path := filepath.Join(sub, side.name+".pb.gz")
				if err := Write(path, p); err != nil {
					return out, err
				}
				out = append(out, Written{Scenario: s.Name, Metric: m, Side: side.name, Path: path})
			}
		}
	}
	return out, nil
}

// pathSafe keeps a name to one path element.
func pathSafe(name string) string {
	return strings.NewReplacer("/", "_", "\x00", "_").Replace(name)
}
