package history

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/tailgate-ci/tailgate/internal/hist"
	"github.com/tailgate-ci/tailgate/internal/result"
)

// SummariesDir holds one summary per record, at the record's path with
// RecordsDir replaced: each trial's quantiles, what a series needs, so
// that reading a long history decodes no histogram. A summary is derived
// from its record and names the record's digest; one missing, torn or
// naming another digest is ignored and the record read instead, so stores
// written before summaries existed read as they did. Older tailgates
// neither read nor prune this directory.
const SummariesDir = "summaries"

// SummaryPercentiles are the percentiles every summary holds (report's
// Percentiles); a summary holds those its scenario's gate names too.
var SummaryPercentiles = []string{"p50", "p90", "p99", "p99.9", "max"}

// Summary is a record's quantiles.
type Summary struct {
	Format int    `json:"format"`
	Commit string `json:"commit"`
	Target string `json:"target"`
	// Clock is the clock the record ran on (ClockLabel): a series never
	// mixes two. A summary without it is of an older tailgate, and its
	// record is read instead.
	Clock        string            `json:"clock"`
	RecordSHA256 string            `json:"record_sha256"`
	Scenarios    []ScenarioSummary `json:"scenarios"`
}

// ScenarioSummary is one scenario of a Summary: what decides its gate
// policy (report.GatePolicy reads Gate, else Definition), and per metric
// and percentile each non-empty trial's quantile, in trial order.
type ScenarioSummary struct {
	Name string `json:"name"`
	// Params is the scenario's parameter digest: a series never mixes two.
	Params     string                          `json:"params,omitempty"`
	Gate       result.GatePolicy               `json:"gate,omitempty"`
	Definition json.RawMessage                 `json:"definition,omitempty"`
	Metrics    map[string]map[string][]float64 `json:"metrics"`
}

// SummaryPath is where the summary of the record at recordPath lives.
func SummaryPath(recordPath string) string {
	return SummariesDir + strings.TrimPrefix(recordPath, RecordsDir)
}

// Summarize computes rec's summary; sha256 is the record's digest.
func Summarize(rec *Record, sha256 string) *Summary {
	s := &Summary{Format: Format, Commit: rec.Commit, Target: rec.Target, Clock: ClockLabel(rec.Result.Target), RecordSHA256: sha256, Scenarios: []ScenarioSummary{}}
	for i := range rec.Result.Scenarios {
		sc := &rec.Result.Scenarios[i]
		pcts := slices.Clone(SummaryPercentiles)
		for _, g := range []result.GatePolicy{sc.Gate, definitionGate(sc.Definition)} {
			for _, ps := range g {
				for p := range ps {
					if _, ok := hist.ParsePercentile(p); ok && !slices.Contains(pcts, p) {
						pcts = append(pcts, p)
					}
				}
			}
		}
		ss := ScenarioSummary{Name: sc.Name, Params: sc.Params, Gate: sc.Gate, Definition: sc.Definition, Metrics: map[string]map[string][]float64{}}
		for name, m := range sc.Metrics {
			qs := map[string][]float64{}
			for _, p := range pcts {
				q, _ := hist.ParsePercentile(p)
				xs := []float64{}
				for _, t := range m.Trials {
					if t.Histogram != nil && t.Histogram.Count() > 0 {
						xs = append(xs, t.Histogram.Quantile(q))
					}
				}
				qs[p] = xs
			}
			ss.Metrics[name] = qs
		}
		s.Scenarios = append(s.Scenarios, ss)
	}
	return s
}

// definitionGate is the gate block of a scenario's definition, to know
// which percentiles to keep; report.GatePolicy decides what is gated.
func definitionGate(def json.RawMessage) result.GatePolicy {
	var d struct {
		Gate result.GatePolicy `json:"gate"`
	}
	if len(def) == 0 || json.Unmarshal(def, &d) != nil {
		return nil
	}
	return d.Gate
}

// ParseSummary decodes a summary document.
func ParseSummary(name string, b []byte) (*Summary, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Summary
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", name, ErrCorrupt, err)
	}
	if s.Format < 1 || s.Format > Format {
		return nil, fmt.Errorf("%s: %w: format %d", name, ErrCorrupt, s.Format)
	}
	return &s, nil
}

func marshalSummary(rec *Record, sha string) ([]byte, error) {
	b, err := json.Marshal(Summarize(rec, sha))
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Summary returns e's summary: the stored one when it is whole and of
// e's record, else the record's, read and checked as Record does.
func (v *View) Summary(e Entry) (*Summary, error) {
	if s, err := v.storedSummary(e); err == nil {
		return s, nil
	}
	rec, err := v.Record(e)
	if err != nil {
		return nil, err
	}
	return Summarize(rec, e.SHA256), nil
}

// storedSummary reads e's stored summary; an error says to read the
// record instead.
func (v *View) storedSummary(e Entry) (*Summary, error) {
	b, err := v.sn.read(SummaryPath(e.Path))
	if err != nil {
		return nil, err
	}
	s, err := ParseSummary(SummaryPath(e.Path), b)
	if err != nil {
		return nil, err
	}
	if s.RecordSHA256 != e.SHA256 || s.Commit != e.Commit || s.Target != e.Target {
		return nil, fmt.Errorf("%s: %w: of another record", SummaryPath(e.Path), ErrCorrupt)
	}
	if s.Clock == "" {
		return nil, errOlderSummary
	}
	return s, nil
}

// errOlderSummary is a summary an older tailgate wrote, without what
// keeps series apart: its record is read instead.
var errOlderSummary = errors.New("a summary of an older tailgate")

// ClockLabel names the clock t ran on, as series are told apart by it:
// "real time", or "virtual time, shift N".
func ClockLabel(t result.Target) string {
	if t.Virtual() {
		return fmt.Sprintf("virtual time, shift %d", t.Shift())
	}
	return t.ClockOf() + " time"
}

// checkSummary says what is wrong with e's stored summary, given its
// record: nil when it is what Summarize makes of the record, or missing.
func (v *View) checkSummary(e Entry, rec *Record) error {
	name := SummaryPath(e.Path)
	b, err := v.sn.read(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if s, err := ParseSummary(name, b); err == nil && s.Clock == "" {
		return nil // an older tailgate's, read past
	}
	want, err := marshalSummary(rec, e.SHA256)
	if err != nil {
		return err
	}
	if !bytes.Equal(b, want) {
		return fmt.Errorf("%w: not the summary of %s (history changes ignores it and reads the record; prune rewrites nothing, so re-add the record with --replace)", ErrCorrupt, e.Path)
	}
	return nil
}
