package report

import (
	"encoding/json"
	"io"
	"math"
)

// JSONSchemaVersion is the version of the document WriteJSON writes
// (docs/compare.schema.json).
const JSONSchemaVersion = 1

// JSONReport is the document WriteJSON writes. Numbers that do not exist
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
}

// JSONRun is how a sequential gate run went.
type JSONRun struct {
	Rounds  int     `json:"rounds"`
	Seconds float64 `json:"seconds"`
	Reason  string  `json:"stop_reason"`
	Text    string  `json:"text"`
}

// JSONSide describes one compared Result.
type JSONSide struct {
	Target        string `json:"target"`
	KernelRelease string `json:"kernel_release"`
	Accel         string `json:"accel,omitempty"`
}

// JSONScenario is one scenario's verdicts.
type JSONScenario struct {
	Name     string        `json:"name"`
	Warnings []string      `json:"warnings"`
	Verdicts []JSONVerdict `json:"verdicts"`
}

// JSONVerdict is one Verdict.
type JSONVerdict struct {
	Metric         string   `json:"metric"`
	Percentile     string   `json:"percentile"`
	BaseNs         *float64 `json:"baseline_ns"`
	CandNs         *float64 `json:"candidate_ns"`
	Ratio          *float64 `json:"ratio"`
	Lo             *float64 `json:"ci_lo"`
	Hi             *float64 `json:"ci_hi"`
	Threshold      *float64 `json:"threshold"` // null when not gated
	Gated          bool     `json:"gated"`
	Verdict        Kind     `json:"verdict"`
	TrialsToSettle int      `json:"trials_to_settle,omitempty"`
	BaseTrials     int      `json:"baseline_trials"`
	CandTrials     int      `json:"candidate_trials"`
	Warnings       []string `json:"warnings"`
	// P is the one-sided p-value and Level the level it was judged at,
	// for gated verdicts; SE the standard error of log(ratio) and DF its
	// degrees of freedom; ExcessSD the calibrated between-run sd per side.
	P        *float64 `json:"p_value,omitempty"`
	Level    *float64 `json:"level,omitempty"`
	SE       *float64 `json:"se_log_ratio,omitempty"`
	DF       *float64 `json:"df,omitempty"`
	ExcessSD *float64 `json:"excess_sd,omitempty"`
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

// JSON converts r to its JSON document.
func (r *Report) JSON() JSONReport {
	out := JSONReport{
		Schema:    JSONSchemaVersion,
		Headline:  r.Headline(),
		Baseline:  JSONSide(r.Base),
		Candidate: JSONSide(r.Cand),
		Warnings:  nonNil(warningStrings(r.Warnings)),
		Scenarios: []JSONScenario{},
		Look:      r.Look, Alpha: r.Alpha, Beta: r.Beta, Tests: r.Tests, Stored: r.Stored,
	}
	if r.Calibration != nil {
		out.CalibrationRuns = r.Calibration.Runs
	}
	if r.Run != nil {
		out.Run = &JSONRun{Rounds: r.Run.Rounds, Seconds: r.Run.Seconds, Reason: string(r.Run.Stop.Reason), Text: r.Run.String()}
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
			js.Verdicts = append(js.Verdicts, jv)
		}
		out.Scenarios = append(out.Scenarios, js)
	}
	return out
}

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	b, err := json.MarshalIndent(r.JSON(), "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
