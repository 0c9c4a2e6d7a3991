package report

import "github.com/tailgate-ci/tailgate/report/stats"

// Kinds of warning about what is compared rather than about the numbers
// (those are report/stats'): the runs' environments, targets, tracers and
// gate policies. The comment of each says which stats.Warning fields it
// sets.
const (
	// WarnEnvironment: the environments differ in Field (one of the
	// Field* constants); Base and Cand hold its two values.
	WarnEnvironment stats.WarningKind = "environment differs"
	// WarnPartial: Side's run is partial; Detail is its error.
	WarnPartial stats.WarningKind = "partial run"
	// WarnEmulated: Side ran under TCG in real time.
	WarnEmulated stats.WarningKind = "emulated"
	// WarnVirtualTime: Side (Both) ran in virtual time, 2^Detail ns an
	// instruction: what it measures is said in one line.
	WarnVirtualTime stats.WarningKind = "virtual time"
	// WarnScenarioOneSide: Scenario is on Side only; not compared.
	WarnScenarioOneSide stats.WarningKind = "scenario on one side"
	// WarnParamsDiffer: Scenario's parameter digests differ (Base, Cand,
	// shortened; Detail names the differing fields); compared because
	// forced.
	WarnParamsDiffer stats.WarningKind = "parameters differ"
	// WarnTracerVariant: Scenario's tracer Detail attached as Base in the
	// baseline and as Cand in the candidate (tp_btf and raw_tp, say: a
	// guest relocating against a cut of its kernel's BTF attaches raw_tp);
	// their programs cost differently.
	WarnTracerVariant stats.WarningKind = "tracer variant differs"
	// WarnSingleStepped: Scenario's uprobe on function Detail replaces
	// an instruction the kernel single-steps on every call (Base its
	// mnemonic, may be empty; Cand its bytes in hex), so two traps are in
	// each call's measured time, on Side or Both.
	WarnSingleStepped stats.WarningKind = "probe single-stepped"
	// WarnDefinitionUnreadable: Scenario's definition could not be read for
	// its gate block (Detail); the default gate is used.
	WarnDefinitionUnreadable stats.WarningKind = "definition unreadable"
	// WarnGateDiffers: the candidate's gate policy differs from the
	// baseline's at Metric ("*" for every metric), Percentile: Base and
	// Cand are the two thresholds ("" where one side does not gate it).
	// The baseline's policy is applied: a candidate does not choose its
	// own judge.
	WarnGateDiffers stats.WarningKind = "gate policy differs"
	// WarnMetricOneSide: Metric is on Side only; not compared.
	WarnMetricOneSide stats.WarningKind = "metric on one side"
	// WarnCalibrationMismatch: the calibration was measured elsewhere:
	// Field (FieldTarget or FieldKernelRelease) is Base in the baseline
	// and Cand in the calibration. It is applied all the same.
	WarnCalibrationMismatch stats.WarningKind = "calibration mismatch"
)
