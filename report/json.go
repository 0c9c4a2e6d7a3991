package report

import (
	"encoding/json"
	"io"
	"math"
)

// JSONReport is the document WriteJSON writes. Numbers that do not exist
// (a quantile of no events, an interval not computed) are null.
type JSONReport struct {
	Headline  string         `json:"headline"`
	Baseline  JSONSide       `json:"baseline"`
	Candidate JSONSide       `json:"candidate"`
	Warnings  []string       `json:"warnings"`
	Scenarios []JSONScenario `json:"scenarios"`
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
}

func num(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
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
		Headline:  r.Headline(),
		Baseline:  JSONSide(r.Base),
		Candidate: JSONSide(r.Cand),
		Warnings:  nonNil(r.Warnings),
		Scenarios: []JSONScenario{},
	}
	for _, s := range r.Scenarios {
		js := JSONScenario{Name: s.Name, Warnings: nonNil(s.Warnings), Verdicts: []JSONVerdict{}}
		for _, v := range s.Verdicts {
			jv := JSONVerdict{
				Metric: v.Metric, Percentile: v.Quantile,
				BaseNs: num(v.Base), CandNs: num(v.Cand), Ratio: num(v.Ratio), Lo: num(v.Lo), Hi: num(v.Hi),
				Gated: v.Gated, Verdict: v.Kind, TrialsToSettle: v.TrialsToSettle,
				BaseTrials: v.BaseTrials, CandTrials: v.CandTrials,
				Warnings: nonNil(v.Warnings),
			}
			if v.Gated {
				jv.Threshold = num(v.Threshold)
			}
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
