package report

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// MatrixTarget is one column of a matrix: a target's Result, its trials
// merged.
type MatrixTarget struct {
	Name string
	// Description says what sets the target apart: its kernel and command
	// line, or the sysctls of a host variant.
	Description string
	Result      *result.Result
}

// Matrix compares several targets with the first, the reference. Each
// verdict comes from Compare of the reference and that target, exactly as
// 'tailgate compare REF.json TARGET.json' would judge it.
type Matrix struct {
	Targets []MatrixTarget // Targets[0] is the reference
	// Pairs[i-1] is the comparison of Targets[0] (baseline) with
	// Targets[i] (candidate).
	Pairs     []*Report
	Scenarios []MatrixScenario
	// Warnings are the pairs' report-wide warnings, deduplicated.
	Warnings []MatrixWarning
}

// MatrixScenario is one scenario of the reference.
type MatrixScenario struct {
	Name    string
	Metrics []MatrixMetric
	// Warnings come from the pairwise comparisons.
	Warnings []MatrixWarning
}

// MatrixMetric is one metric: a row per percentile.
type MatrixMetric struct {
	Name string
	Rows []MatrixRow // in Percentiles order
}

// MatrixRow is one percentile of one metric across the targets.
type MatrixRow struct {
	Quantile string
	Cells    []MatrixCell // one per target, in Targets order
}

// MatrixCell is one target's value of a percentile.
type MatrixCell struct {
	Present bool    // the target measured this metric
	Value   float64 // the percentile of the merged trials, ns
	// Lo and Hi are the 95% interval of Value, from the bootstrap
	// variance of its log as a comparison estimates it for each side (NaN
	// for max and for no events).
	Lo, Hi float64
	// Trials holds each trial's own value of the percentile.
	Trials []float64
	// Verdict is the comparison with the reference; nil for the reference
	// itself and where the pair was not compared.
	Verdict *Verdict
}

// CompareMatrix compares every target with the first. opt applies to every
// pair, as to Compare, and the gated tests of all pairs form one family:
// the family-wise false-alarm rate holds for the matrix as a whole.
func CompareMatrix(targets []MatrixTarget, opt Options) (*Matrix, error) {
	if len(targets) < 2 {
		return nil, fmt.Errorf("a matrix needs at least two targets, got %d", len(targets))
	}
	m := &Matrix{Targets: targets}
	ref := targets[0]
	seen := map[MatrixWarning]bool{}
	for _, t := range targets[1:] {
		rep, err := compare(ref.Result, t.Result, opt)
		if err != nil {
			return nil, fmt.Errorf("%s vs %s: %w", t.Name, ref.Name, err)
		}
		m.Pairs = append(m.Pairs, rep)
		for _, w := range rep.Warnings {
			mw := MatrixWarning{Target: t.Name, Warning: w}
			if !seen[mw] {
				seen[mw] = true
				m.Warnings = append(m.Warnings, mw)
			}
		}
	}
	judgeReports(m.Pairs, opt)
	resamples := opt.Resamples
	if resamples <= 0 {
		resamples = DefaultResamples
	}
	for _, rs := range ref.Result.Scenarios {
		ms := MatrixScenario{Name: rs.Name}
		var names []string
		for _, t := range targets {
			if s := t.Result.Find(rs.Name); s != nil {
				for n := range s.Metrics {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
		slices.Sort(names)
		for i, rep := range m.Pairs {
			for _, sr := range rep.Scenarios {
				if sr.Name != rs.Name {
					continue
				}
				for _, w := range sr.Warnings {
					ms.Warnings = append(ms.Warnings, MatrixWarning{Target: targets[i+1].Name, Warning: w})
				}
			}
		}
		for _, name := range names {
			if noEvents(targets, rs.Name, name) {
				// Compare notes it once in the scenario's warnings.
				continue
			}
			mm := MatrixMetric{Name: name}
			for _, p := range Percentiles {
				row := MatrixRow{Quantile: p.Name}
				for ti, t := range targets {
					c := MatrixCell{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
					if s := t.Result.Find(rs.Name); s != nil && s.Metrics[name] != nil {
						c = cellOf(trialsOf(s.Metrics[name]), p, resamples, name)
					}
					if ti > 0 {
						c.Verdict = m.Pairs[ti-1].find(rs.Name, name, p.Name)
					}
					row.Cells = append(row.Cells, c)
				}
				mm.Rows = append(mm.Rows, row)
			}
			ms.Metrics = append(ms.Metrics, mm)
		}
		m.Scenarios = append(m.Scenarios, ms)
	}
	return m, nil
}

func (r *Report) find(scenario, metric, quantile string) *Verdict {
	for _, s := range r.Scenarios {
		if s.Name != scenario {
			continue
		}
		for i := range s.Verdicts {
			if v := &s.Verdicts[i]; v.Metric == metric && v.Quantile == quantile {
				return v
			}
		}
	}
	return nil
}

// cellOf is one target's percentile with its own 95% interval, from the
// estimate a comparison makes of each side: the bootstrap variance of the
// log quantile (logVariance, as Estimate's BaseVar and CandVar), at least
// the bucket's own resolution, as exp(log Value ± t·SE) with the trials
// less one degrees of freedom.
func cellOf(trials []*hist.Histogram, p Percentile, resamples int, metric string) MatrixCell {
	c := MatrixCell{Present: true, Lo: math.NaN(), Hi: math.NaN()}
	s := newSide(trials)
	for _, h := range trials {
		c.Trials = append(c.Trials, quantileOf(h, p))
	}
	c.Value = quantileOf(s.merged, p)
	if p.Q >= 1 || !(c.Value > 0) {
		return c
	}
	seed := seedFor(contentHash(trials, nil), metric, p.Name)
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(seed[:8]), binary.LittleEndian.Uint64(seed[8:16])))
	v := s.logVariance(r, p.Q, resamples)
	if math.IsNaN(v) {
		return c
	}
	se := math.Sqrt(math.Max(v, bucketVariance(c.Value)))
	half := tQuantile(0.025, float64(max(len(trials)-1, 1))) * se
	c.Lo, c.Hi = c.Value*math.Exp(-half), c.Value*math.Exp(half)
	return c
}

// noEvents reports whether no target has an event of the metric.
func noEvents(targets []MatrixTarget, scenario, metric string) bool {
	for _, t := range targets {
		if s := t.Result.Find(scenario); s != nil && s.Metrics[metric] != nil && s.Metrics[metric].Merged().Count() > 0 {
			return false
		}
	}
	return true
}

func quantileOf(h *hist.Histogram, p Percentile) float64 {
	if h.Count() == 0 {
		return math.NaN()
	}
	if p.Q >= 1 {
		return float64(h.Max())
	}
	return h.Quantile(p.Q)
}

// Tally counts the gated verdicts of every pair.
func (m *Matrix) Tally() Counts {
	var c Counts
	for _, r := range m.Pairs {
		t := r.Tally()
		c.Gated += t.Gated
		c.Regressions += t.Regressions
		c.Improvements += t.Improvements
		c.Inconclusive += t.Inconclusive
	}
	return c
}

// Failed reports whether any target regressed against the reference (or,
// with strict, any verdict is inconclusive).
func (m *Matrix) Failed(strict bool) bool {
	for _, r := range m.Pairs {
		if r.Failed(strict) {
			return true
		}
	}
	return false
}

// Decided reports whether every gated test of every pair is decided (see
// Report.Decided).
func (m *Matrix) Decided() bool {
	for _, r := range m.Pairs {
		if !r.Decided() {
			return false
		}
	}
	return true
}

// Stopping says whether a sequential matrix run stops after this look (see
// Report.Stopping); its tests are those of every pair.
func (m *Matrix) Stopping(budgetSpent bool) Stopping {
	return stopping(m.Pairs, budgetSpent)
}

// Headlines is one line per target: its comparison's headline.
func (m *Matrix) Headlines() []string {
	var out []string
	for _, p := range m.pairings() {
		out = append(out, p.headline())
	}
	return out
}

// shownRow reports whether a row belongs in a table: p50, p99 and p99.9
// always; another percentile when some target's verdict on it is more than
// "no change", so that nothing behind the exit code is hidden.
func shownRow(row MatrixRow) bool {
	switch row.Quantile {
	case "p50", "p99", "p99.9":
		return true
	}
	for _, c := range row.Cells {
		if v := c.Verdict; v != nil && v.Gated && v.Kind != NoChange {
			return true
		}
	}
	return false
}

// matrixRows lays a metric out as table rows: a row per shown percentile
// and target. The metric and percentile are named on their first row only.
func matrixRows(m *Matrix, mm MatrixMetric, markVerdict func(Verdict) string) [][]string {
	var rows [][]string
	first := true
	for _, row := range mm.Rows {
		if !shownRow(row) {
			continue
		}
		for ti, c := range row.Cells {
			metric, pctl := "", ""
			if ti == 0 {
				pctl = row.Quantile
				if first {
					metric = mm.Name
					first = false
				}
			}
			rows = append(rows, cellColumns(m.Targets[ti].Name, ti == 0, metric, pctl, c, markVerdict))
		}
	}
	return rows
}

// MatrixHeader names the columns of matrixRows.
var matrixHeader = []string{"metric", "pctl", "target", "value", "95% CI", "vs ref", "95% CI of ratio", "threshold", "verdict"}

func cellColumns(target string, ref bool, metric, pctl string, c MatrixCell, markVerdict func(Verdict) string) []string {
	value, ci := "-", "-"
	if c.Present {
		value = FormatNs(c.Value)
		if !math.IsNaN(c.Lo) {
			ci = "[" + FormatNs(c.Lo) + ", " + FormatNs(c.Hi) + "]"
		}
	}
	switch {
	case ref:
		return []string{metric, pctl, target + " (ref)", value, ci, "", "", "", ""}
	case c.Verdict == nil:
		return []string{metric, pctl, target, value, ci, "-", "-", "-", "not compared"}
	}
	v := *c.Verdict
	return []string{metric, pctl, target, value, ci, FormatDelta(v.Ratio), FormatCI(v.Lo, v.Hi), thresholdLabel(v), markVerdict(v)}
}

// describeTarget is a target's line under the headline.
func describeTarget(t MatrixTarget) string {
	d := t.Name
	if t.Description != "" {
		d += " (" + t.Description + ")"
	}
	if t.Result != nil {
		side := sideOf(t.Result)
		if side.KernelRelease != "" {
			d += ", kernel " + side.KernelRelease
		}
		if side.Accel != "" {
			d += ", " + side.Accel
		}
		trials := 0
		for _, s := range t.Result.Scenarios {
			trials = max(trials, s.Trials)
		}
		d += fmt.Sprintf(", %d %s", trials, plural(trials, "trial", "trials"))
	}
	return d
}

// WriteMatrix renders m in format f.
func WriteMatrix(w io.Writer, m *Matrix, f Format) error {
	switch f {
	case Text:
		return WriteMatrixText(w, m)
	case Markdown:
		return WriteMatrixMarkdown(w, m)
	case JSON:
		return WriteMatrixJSON(w, m)
	case JUnit:
		return WriteMatrixJUnit(w, m)
	case GitHub:
		return WriteMatrixGitHub(w, m)
	case HTML:
		return WriteMatrixHTML(w, m)
	}
	return fmt.Errorf("unknown format %q", f)
}

// WriteMatrixText writes m as plain-text tables.
func WriteMatrixText(w io.Writer, m *Matrix) error {
	ew := &errWriter{w: w}
	for _, h := range m.Headlines() {
		fmt.Fprintln(ew, h)
	}
	for i, t := range m.Targets {
		label := "target:   "
		if i == 0 {
			label = "reference:"
		}
		fmt.Fprintf(ew, "%s %s\n", label, describeTarget(t))
	}
	for _, warn := range matrixReportWarnings(m) {
		fmt.Fprintf(ew, "warning: %s\n", warn)
	}
	for _, s := range m.Scenarios {
		fmt.Fprintf(ew, "\nscenario %s\n", s.Name)
		if ew.err != nil {
			return ew.err
		}
		t := NewTable(ew, left, left, left, right, left, right, left, right, left)
		t.Header(matrixHeader)
		for _, mm := range s.Metrics {
			for _, r := range matrixRows(m, mm, verdictLabel) {
				if err := t.Append(r); err != nil {
					return err
				}
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
		for _, warn := range matrixWarnings(m, s) {
			fmt.Fprintf(ew, "warning: %s\n", warn)
		}
	}
	return ew.err
}

// matrixReportWarnings words the matrix-wide warnings, each naming the
// pair it comes from, the reference and target in place of "the
// baseline" and "the candidate".
func matrixReportWarnings(m *Matrix) []string {
	ref := m.Targets[0].Name
	var out []string
	for _, w := range m.Warnings {
		out = append(out, w.Target+" vs "+ref+": "+w.text(ref))
	}
	return out
}

// matrixWarnings are a scenario's warnings and its verdicts', each prefixed
// with the target it concerns, deduplicated.
func matrixWarnings(m *Matrix, s MatrixScenario) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range s.Warnings {
		add(w.Target + ": " + w.Warning.String())
	}
	for _, mm := range s.Metrics {
		for _, row := range mm.Rows {
			if !shownRow(row) {
				continue
			}
			for ti, c := range row.Cells {
				if c.Verdict == nil {
					continue
				}
				for _, w := range c.Verdict.Warnings {
					add(fmt.Sprintf("%s %s %s: %s", m.Targets[ti].Name, mm.Name, row.Quantile, w.String()))
				}
			}
		}
	}
	return out
}

// WriteMatrixMarkdown writes m as GitHub-flavoured Markdown.
func WriteMatrixMarkdown(w io.Writer, m *Matrix) error {
	ew := &errWriter{w: w}
	for _, h := range m.Headlines() {
		fmt.Fprintf(ew, "- %s\n", mdEscape(h))
	}
	fmt.Fprintf(ew, "\n| | target |\n|---|---|\n")
	for i, t := range m.Targets {
		role := "target"
		if i == 0 {
			role = "reference"
		}
		fmt.Fprintf(ew, "| %s | %s |\n", role, mdEscape(describeTarget(t)))
	}
	if warns := matrixReportWarnings(m); len(warns) > 0 {
		fmt.Fprintf(ew, "\n")
		for _, warn := range warns {
			fmt.Fprintf(ew, "- ⚠️ %s\n", mdEscape(warn))
		}
	}
	mark := func(v Verdict) string {
		switch v.Kind {
		case Regression:
			return "🔴 **regression**"
		case Improvement:
			return "🟢 improvement"
		case Inconclusive:
			return "🟡 " + verdictLabel(v)
		}
		return verdictLabel(v)
	}
	for _, s := range m.Scenarios {
		fmt.Fprintf(ew, "\n### %s\n\n", mdEscape(s.Name))
		fmt.Fprintf(ew, "| %s |\n", strings.Join(matrixHeader, " | "))
		fmt.Fprintf(ew, "|---|---|---|--:|---|--:|---|--:|---|\n")
		for _, mm := range s.Metrics {
			for _, r := range matrixRows(m, mm, mark) {
				if r[0] != "" {
					r[0] = "`" + r[0] + "`"
				}
				r[2] = mdEscape(r[2])
				fmt.Fprintf(ew, "| %s |\n", strings.Join(r, " | "))
			}
		}
		if warns := matrixWarnings(m, s); len(warns) > 0 {
			fmt.Fprintf(ew, "\nWarnings:\n")
			for _, warn := range warns {
				fmt.Fprintf(ew, "- %s\n", mdEscape(warn))
			}
		}
	}
	return ew.err
}

// JSONMatrix is the document WriteMatrixJSON writes. Comparisons holds, per
// target after the reference, the same document 'tailgate compare --format
// json REF TARGET' writes.
type JSONMatrix struct {
	Headlines   []string             `json:"headlines"`
	Reference   string               `json:"reference"`
	Targets     []JSONMatrixTarget   `json:"targets"`
	Warnings    []string             `json:"warnings"`
	Scenarios   []JSONMatrixScenario `json:"scenarios"`
	Comparisons []JSONReport         `json:"comparisons"`
}

// JSONMatrixTarget describes one target.
type JSONMatrixTarget struct {
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	KernelRelease string `json:"kernel_release"`
	Accel         string `json:"accel,omitempty"`
}

// JSONMatrixScenario is one scenario's metrics.
type JSONMatrixScenario struct {
	Name     string             `json:"name"`
	Warnings []string           `json:"warnings"`
	Metrics  []JSONMatrixMetric `json:"metrics"`
}

// JSONMatrixMetric is one metric's percentiles.
type JSONMatrixMetric struct {
	Metric      string          `json:"metric"`
	Percentiles []JSONMatrixRow `json:"percentiles"`
}

// JSONMatrixRow is one percentile across the targets.
type JSONMatrixRow struct {
	Percentile string           `json:"percentile"`
	Targets    []JSONMatrixCell `json:"targets"`
}

// JSONMatrixCell is one target's value; the ratio and verdict are null for
// the reference.
type JSONMatrixCell struct {
	Target   string     `json:"target"`
	ValueNs  *float64   `json:"value_ns"`
	Lo       *float64   `json:"ci_lo_ns"`
	Hi       *float64   `json:"ci_hi_ns"`
	TrialsNs []*float64 `json:"trials_ns"`
	Ratio    *float64   `json:"ratio"`
	RatioLo  *float64   `json:"ratio_ci_lo"`
	RatioHi  *float64   `json:"ratio_ci_hi"`
	Verdict  *Kind      `json:"verdict"`
}

// JSON converts m to its JSON document.
func (m *Matrix) JSON() JSONMatrix {
	out := JSONMatrix{
		Headlines: m.Headlines(), Reference: m.Targets[0].Name,
		Warnings: nonNil(matrixReportWarnings(m)), Scenarios: []JSONMatrixScenario{}, Comparisons: []JSONReport{},
	}
	for _, t := range m.Targets {
		jt := JSONMatrixTarget{Name: t.Name, Description: t.Description}
		if t.Result != nil {
			s := sideOf(t.Result)
			jt.KernelRelease, jt.Accel = s.KernelRelease, s.Accel
		}
		out.Targets = append(out.Targets, jt)
	}
	for _, s := range m.Scenarios {
		var sw []string
		for _, w := range s.Warnings {
			sw = append(sw, w.Target+": "+w.Warning.String())
		}
		js := JSONMatrixScenario{Name: s.Name, Warnings: nonNil(sw), Metrics: []JSONMatrixMetric{}}
		for _, mm := range s.Metrics {
			jm := JSONMatrixMetric{Metric: mm.Name}
			for _, row := range mm.Rows {
				jr := JSONMatrixRow{Percentile: row.Quantile}
				for ti, c := range row.Cells {
					jc := JSONMatrixCell{Target: m.Targets[ti].Name, TrialsNs: []*float64{}}
					if c.Present {
						jc.ValueNs, jc.Lo, jc.Hi = num(c.Value), num(c.Lo), num(c.Hi)
						for _, v := range c.Trials {
							jc.TrialsNs = append(jc.TrialsNs, num(v))
						}
					}
					if v := c.Verdict; v != nil {
						k := v.Kind
						jc.Ratio, jc.RatioLo, jc.RatioHi, jc.Verdict = num(v.Ratio), num(v.Lo), num(v.Hi), &k
					}
					jr.Targets = append(jr.Targets, jc)
				}
				jm.Percentiles = append(jm.Percentiles, jr)
			}
			js.Metrics = append(js.Metrics, jm)
		}
		out.Scenarios = append(out.Scenarios, js)
	}
	for _, r := range m.Pairs {
		out.Comparisons = append(out.Comparisons, r.JSON())
	}
	return out
}

// WriteMatrixJSON writes m as indented JSON.
func WriteMatrixJSON(w io.Writer, m *Matrix) error {
	b, err := json.MarshalIndent(m.JSON(), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
