package render

import (
	"encoding/json"
	"io"
	"math"
	"time"

	"github.com/tailgate-ci/tailgate/report"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// JSONSchemaVersion is the version of a comparison's JSON document
// (docs/compare.schema.json).
const JSONSchemaVersion = 1

// JSONReport is a comparison's JSON document. Numbers that do not exist
// (a quantile of no events, an interval not computed) are null.
type JSONReport struct {
	Schema    int            `json:"schema"`
	Headline  string         `json:"headline"`
	Baseline  JSONSide       `json:"baseline"`
	Candidate JSONSide       `json:"candidate"`
	Warnings  []string       `json:"warnings"`
	Scenarios []JSONScenario `json:"scenarios"`
	// Look is the look of a sequential run (absent for a single look);
	// alpha and beta the levels spent at it over a family of tests.
	Look   int     `json:"look,omitempty"`
	Alpha  float64 `json:"alpha,omitempty"`
	Beta   float64 `json:"beta,omitempty"`
	Tests  int     `json:"tests,omitempty"`
	Stored bool    `json:"stored_baseline,omitempty"`
	// CalibrationRuns is the runs behind the calibration applied, if any.
	CalibrationRuns int `json:"calibration_runs,omitempty"`
	// Run is how a sequential gate run went: rounds, seconds and why it
	// stopped; absent for a single comparison.
	Run *JSONRun `json:"run,omitempty"`
	// Differs is what the two Results record differently (Differences):
	// empty for an A/A; absent for a report built without its Results.
	Differs []report.Difference `json:"differs,omitempty"`
}

// JSONRun is how a sequential gate run went.
type JSONRun struct {
	Rounds  int     `json:"rounds"`
	Seconds float64 `json:"seconds"`
	// Slice is the longest slice, in seconds, of trials that took turns
	// within each round; absent when they ran whole.
	Slice  float64 `json:"slice_s,omitempty"`
	Reason string  `json:"stop_reason"`
	Text   string  `json:"text"`
}

// JSONSide describes one compared Result.
type JSONSide struct {
	Target        string `json:"target"`
	KernelRelease string `json:"kernel_release"`
	Accel         string `json:"accel,omitempty"`
	Clock         string `json:"clock,omitempty"`
}

func jsonSide(s report.Side) JSONSide {
	return JSONSide{Target: s.Target, KernelRelease: s.KernelRelease, Accel: s.Accel, Clock: s.Clock}
}

// JSONScenario is one scenario's verdicts.
type JSONScenario struct {
	Name     string        `json:"name"`
	Warnings []string      `json:"warnings"`
	Verdicts []JSONVerdict `json:"verdicts"`
}

// JSONVerdict is one stats.Verdict.
type JSONVerdict struct {
	Metric         string     `json:"metric"`
	Percentile     string     `json:"percentile"`
	BaseNs         *float64   `json:"baseline_ns"`
	CandNs         *float64   `json:"candidate_ns"`
	Ratio          *float64   `json:"ratio"`
	Lo             *float64   `json:"ci_lo"`
	Hi             *float64   `json:"ci_hi"`
	Threshold      *float64   `json:"threshold"` // null when not gated
	Gated          bool       `json:"gated"`
	Verdict        stats.Kind `json:"verdict"`
	TrialsToSettle int        `json:"trials_to_settle,omitempty"`
	BaseTrials     int        `json:"baseline_trials"`
	CandTrials     int        `json:"candidate_trials"`
	Warnings       []string   `json:"warnings"`
	// P is the one-sided p-value and Level the level it was judged at,
	// for gated verdicts; SE the standard error of log(ratio) and DF its
	// degrees of freedom; ExcessSD the calibrated between-run sd per side.
	P        *float64 `json:"p_value,omitempty"`
	Level    *float64 `json:"level,omitempty"`
	SE       *float64 `json:"se_log_ratio,omitempty"`
	DF       *float64 `json:"df,omitempty"`
	ExcessSD *float64 `json:"excess_sd,omitempty"`
	// Rounds is the number of paired rounds of a same-job gate's verdict
	// (0: two samples of trials). Detectable is the smallest shift, as a
	// fraction, the gated test could have called at its level.
	Rounds     int      `json:"rounds,omitempty"`
	Detectable *float64 `json:"detectable,omitempty"`
	// History is the gated percentile on --history's branch (a report.Trend):
	// absent without --history and for a verdict not gated.
	History *JSONHistory `json:"history,omitempty"`
}

// JSONHistory is one gated percentile's report.Trend: the branch's last commits
// in the history store, oldest first (none when the store has none of
// it), and the candidate's value taken as theirs are, the median over
// its trials.
type JSONHistory struct {
	Ref     string              `json:"ref"`
	Target  string              `json:"target"` // the history's target; "" when no commit has it
	CandNs  *float64            `json:"candidate_ns"`
	Commits []JSONHistoryCommit `json:"commits"`
}

// JSONHistoryCommit is one commit of a JSONHistory: its median over its
// trials of the percentile, ns (null when it has none).
type JSONHistoryCommit struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	ValueNs *float64  `json:"value_ns"`
}

// jsonHistory is t as a JSONHistory.
func jsonHistory(t report.Trend) *JSONHistory {
	h := &JSONHistory{Ref: t.Ref, Target: t.Target, CandNs: positive(t.Cand), Commits: []JSONHistoryCommit{}}
	for i, c := range t.Commits {
		jc := JSONHistoryCommit{Commit: c, ValueNs: num(t.Values[i])}
		if i < len(t.Times) {
			jc.Time = t.Times[i].UTC()
		}
		h.Commits = append(h.Commits, jc)
	}
	return h
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// positive is f when it is a positive number, else nil.
func positive(f float64) *float64 {
	if !(f > 0) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// reportJSON is r's JSON document.
func reportJSON(r *report.Report) JSONReport {
	out := JSONReport{
		Schema:    JSONSchemaVersion,
		Headline:  headline(r),
		Baseline:  jsonSide(r.Base),
		Candidate: jsonSide(r.Cand),
		Warnings:  nonNil(warningStrings(r.Warnings)),
		Scenarios: []JSONScenario{},
		Look:      r.Look, Alpha: r.Alpha, Beta: r.Beta, Tests: r.Tests, Stored: r.Stored,
	}
	if r.Calibration != nil {
		out.CalibrationRuns = r.Calibration.Runs
	}
	out.Differs = report.Differences(r.BaseResult, r.CandResult)
	if r.Run != nil {
		out.Run = &JSONRun{Rounds: r.Run.Rounds, Seconds: r.Run.Seconds, Slice: r.Run.Slice.Seconds(), Reason: string(r.Run.Stop.Reason), Text: runText(*r.Run)}
	}
	for _, s := range r.Scenarios {
		js := JSONScenario{Name: s.Name, Warnings: nonNil(warningStrings(s.Warnings)), Verdicts: []JSONVerdict{}}
		for _, v := range s.Verdicts {
			jv := JSONVerdict{
				Metric: v.Metric, Percentile: v.Quantile,
				BaseNs: num(v.Base), CandNs: num(v.Cand), Ratio: num(v.Ratio), Lo: num(v.Lo), Hi: num(v.Hi),
				Gated: v.Gated, Verdict: v.Kind, TrialsToSettle: v.TrialsToSettle,
				BaseTrials: v.BaseTrials, CandTrials: v.CandTrials,
				Warnings: nonNil(warningStrings(v.Warnings)),
			}
			if v.Gated {
				jv.Threshold = num(v.Threshold)
			}
			if v.Level > 0 {
				jv.P, jv.Level = num(v.P), num(v.Level)
			}
			jv.SE, jv.DF, jv.ExcessSD = positive(v.SE), positive(v.DF), positive(v.ExcessSD)
			jv.Rounds = v.Rounds
			if v.Gated {
				jv.Detectable = positive(v.Detectable)
			}
			js.Verdicts = append(js.Verdicts, jv)
		}
		out.Scenarios = append(out.Scenarios, js)
	}
	return out
}

// MatrixJSONSchemaVersion is the version of a matrix's JSON document
// (docs/matrix.schema.json).
const MatrixJSONSchemaVersion = 1

// JSONMatrix is the document a matrix's JSON is. Comparisons holds, per
// target after the reference, the same document 'tailgate compare --format
// json REF TARGET' writes.
type JSONMatrix struct {
	Schema      int                  `json:"schema"`
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
	Target   string      `json:"target"`
	ValueNs  *float64    `json:"value_ns"`
	Lo       *float64    `json:"ci_lo_ns"`
	Hi       *float64    `json:"ci_hi_ns"`
	TrialsNs []*float64  `json:"trials_ns"`
	Ratio    *float64    `json:"ratio"`
	RatioLo  *float64    `json:"ratio_ci_lo"`
	RatioHi  *float64    `json:"ratio_ci_hi"`
	Verdict  *stats.Kind `json:"verdict"`
}

// matrixJSON is m's JSON document.
func matrixJSON(m *report.Matrix) JSONMatrix {
	out := JSONMatrix{
		Schema:    MatrixJSONSchemaVersion,
		Headlines: headlines(m), Reference: m.Targets[0].Name,
		Warnings: nonNil(warnings(m)), Scenarios: []JSONMatrixScenario{}, Comparisons: []JSONReport{},
	}
	for i, t := range m.Targets {
		jt := JSONMatrixTarget{Name: t.Name, Description: t.Description}
		if i == 0 {
			jt.KernelRelease, jt.Accel = m.Pairs[0].Base.KernelRelease, m.Pairs[0].Base.Accel
		} else {
			jt.KernelRelease, jt.Accel = m.Pairs[i-1].Cand.KernelRelease, m.Pairs[i-1].Cand.Accel
		}
		out.Targets = append(out.Targets, jt)
	}
	for _, s := range m.Scenarios {
		empty, warns := scenarioNotes(m, s.Name)
		for _, metric := range empty {
			warns = append(warns, "metric "+metric+" has no events on any target; not compared")
		}
		js := JSONMatrixScenario{Name: s.Name, Warnings: nonNil(warns), Metrics: []JSONMatrixMetric{}}
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
	for i := range m.Pairs {
		out.Comparisons = append(out.Comparisons, pairJSON(m, i))
	}
	return out
}

// pairJSON is the compare document of m.Pairs[i] with the history of
// each gated verdict from m.Trends: the trend of its scenario, metric and
// percentile drawn for that pair's candidate.
func pairJSON(m *report.Matrix, i int) JSONReport {
	r := m.Pairs[i]
	doc := reportJSON(r)
	if len(m.Trends) == 0 {
		return doc
	}
	for si, s := range r.Scenarios {
		for vi, v := range s.Verdicts {
			if !v.Gated {
				continue
			}
			for _, t := range m.Trends {
				if t.Scenario == s.Name && t.Metric == v.Metric && t.Quantile == v.Quantile && (t.Candidate == "" || t.Candidate == r.Cand.Target) {
					doc.Scenarios[si].Verdicts[vi].History = jsonHistory(t)
					break
				}
			}
		}
	}
	return doc
}

// writeJSON writes a document as indented JSON.
func writeJSON(w io.Writer, doc any) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
