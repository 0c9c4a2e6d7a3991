package stats

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// CalibrationSchema is the version of the Calibration document this
// package writes.
// Schema 2 added Statistic; a schema 1 document was measured on the
// quantile of each run's merged trials.
const CalibrationSchema = 2

// CalibrationConfidence is the confidence of the upper bounds a
// Calibration stores and comparisons use.
const CalibrationConfidence = 0.90

// Calibration is the spread between separate runs of one target, beyond
// what the bootstrap sees inside one run: what a comparison with a stored
// baseline must add, because the baseline's run and the candidate's each
// drew their own run-level offset (another boot, another day, another
// runner). It is measured by Calibrate from K separate runs.
type Calibration struct {
	Schema        int       `json:"schema"`
	Target        string    `json:"target"`
	KernelRelease string    `json:"kernel_release"`
	Created       time.Time `json:"created"`
	Runs          int       `json:"runs"`
	// Statistic is what the spreads were measured on: StatisticTrialCentre,
	// or "" (schema 1) for the quantile of each run's merged trials. A
	// comparison with the stored baseline uses the same statistic.
	Statistic string `json:"statistic,omitempty"`
	// Confidence is that of every Spread's UpperSD.
	Confidence float64 `json:"confidence"`
	// Scenarios maps scenario → metric → percentile → spread.
	Scenarios map[string]map[string]map[string]Spread `json:"scenarios"`
}

// Spread is the between-run spread of one scenario, metric and percentile,
// as standard deviations of a run's log centre (the Calibration's
// Statistic).
type Spread struct {
	// Trials is the fewest trials of a run it was measured with.
	Trials int `json:"trials"`
	// BetweenSD is the sd across the runs; WithinSD the root mean square
	// of each run's own bootstrap standard error, which BetweenSD includes.
	BetweenSD float64 `json:"between_sd"`
	WithinSD  float64 `json:"within_sd"`
	// ExcessSD is the point estimate of the run-level spread:
	// √max(0, BetweenSD² − WithinSD²). UpperSD is its upper confidence
	// bound (at the Calibration's Confidence): the variance across K runs
	// is known to K−1 degrees of freedom, so its bound is
	// (K−1)·BetweenSD²/χ²(K−1, 1−Confidence), less WithinSD², floored at
	// 0. Comparisons add UpperSD. With few runs it is much larger than
	// ExcessSD (the bound on BetweenSD is 8× BetweenSD at 2 runs, 1.9× at
	// 5, 1.5× at 10): the honest price of a short calibration.
	ExcessSD float64 `json:"excess_sd"`
	UpperSD  float64 `json:"upper_sd"`
}

// Excess returns the between-run sd to add per side for a scenario,
// metric and percentile, and whether the calibration has it.
func (c *Calibration) Excess(scenario, metric, percentile string) (float64, bool) {
	if c == nil {
		return 0, false
	}
	s, ok := c.Scenarios[scenario][metric][percentile]
	if !ok || math.IsNaN(s.UpperSD) {
		return 0, false
	}
	return s.UpperSD, true
}

// Errors a reader of calibrations can test for.
var (
	ErrCalibrationSchema = errors.New("calibration schema is newer than this tailgate")
	ErrTooFewRuns        = errors.New("calibration needs at least 2 separate runs")
)

// NewCalibration is an empty Calibration of runs separate runs of target
// on kernel release, the latest ending at created; Spreads fills it.
func NewCalibration(target, kernelRelease string, created time.Time, runs int) *Calibration {
	return &Calibration{
		Schema: CalibrationSchema, Target: target, KernelRelease: kernelRelease, Created: created,
		Runs: runs, Confidence: CalibrationConfidence, Statistic: StatisticTrialCentre,
		Scenarios: map[string]map[string]map[string]Spread{},
	}
}

// Add records the spread of a scenario's metric at a percentile.
func (c *Calibration) Add(scenario, metric, percentile string, sp Spread) {
	if c.Scenarios[scenario] == nil {
		c.Scenarios[scenario] = map[string]map[string]Spread{}
	}
	if c.Scenarios[scenario][metric] == nil {
		c.Scenarios[scenario][metric] = map[string]Spread{}
	}
	c.Scenarios[scenario][metric][percentile] = sp
}

// SpreadAcross measures one percentile of one metric across K ≥ 2
// separate runs, each given as its trials' histograms: the variance
// across runs of each run's trial centre (the Hodges-Lehmann centre of
// its trials' log quantiles: StatisticTrialCentre), less the mean
// bootstrap variance of one run's centre, and its upper bound at
// CalibrationConfidence. false when a run has fewer than two trials with
// events, and for the max, which has no bootstrap spread to speak of.
func SpreadAcross(runs [][]*hist.Histogram, metric string, p Percentile) (Spread, bool) {
	if len(runs) < 2 || p.Q >= 1 {
		return Spread{}, false
	}
	sp := Spread{Trials: -1}
	var xs []float64
	var within float64
	for _, trials := range runs {
		logs := trialLogs(trials, p.Q)
		if len(logs) < 2 {
			return Spread{}, false
		}
		rng := seeded(seedFor(contentHash(trials, nil), metric, p.Name))
		c, w := trialCentre(logs, rng, DefaultResamples)
		if math.IsNaN(w) {
			return Spread{}, false
		}
		x := math.Exp(c)
		within += math.Max(w, bucketVariance(x))
		xs = append(xs, math.Log(x))
		if sp.Trials < 0 || len(trials) < sp.Trials {
			sp.Trials = len(trials)
		}
	}
	k := float64(len(xs))
	var mean float64
	for _, x := range xs {
		mean += x / k
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	between := ss / (k - 1)
	within /= k
	sp.BetweenSD = math.Sqrt(between)
	sp.WithinSD = math.Sqrt(within)
	sp.ExcessSD = math.Sqrt(math.Max(0, between-within))
	upperFactor := (k - 1) / chi2Quantile(1-CalibrationConfidence, k-1)
	sp.UpperSD = math.Sqrt(math.Max(0, upperFactor*between-within))
	return sp, true
}

// ParseCalibration decodes and checks a Calibration document.
func ParseCalibration(b []byte) (*Calibration, error) {
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	switch {
	case c.Schema > CalibrationSchema:
		return nil, fmt.Errorf("%w: schema %d, this tailgate reads up to %d; upgrade tailgate", ErrCalibrationSchema, c.Schema, CalibrationSchema)
	case c.Schema < 1:
		return nil, fmt.Errorf("calibration: schema %d: not a tailgate calibration", c.Schema)
	case c.Runs < 2:
		return nil, fmt.Errorf("calibration: %d runs: %w", c.Runs, ErrTooFewRuns)
	}
	return &c, nil
}

// MarshalCalibration encodes c as indented JSON.
func MarshalCalibration(c *Calibration) ([]byte, error) {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
