package stats

// WarningKind is what a Warning is about.
type WarningKind string

// Kinds of warning. The comment of each says which Warning fields it sets.
const (
	// WarnEnvironment: the environments differ in Field (one of the
	// Field* constants); Base and Cand hold its two values.
	WarnEnvironment WarningKind = "environment differs"
	// WarnPartial: Side's run is partial; Detail is its error.
	WarnPartial WarningKind = "partial run"
	// WarnEmulated: Side ran under TCG in real time.
	WarnEmulated WarningKind = "emulated"
	// WarnVirtualTime: Side (Both) ran in virtual time, 2^Detail ns an
	// instruction: what it measures is said in one line.
	WarnVirtualTime WarningKind = "virtual time"
	// WarnScenarioOneSide: Scenario is on Side only; not compared.
	WarnScenarioOneSide WarningKind = "scenario on one side"
	// WarnParamsDiffer: Scenario's parameter digests differ (Base, Cand,
	// shortened; Detail names the differing fields); compared because
	// forced.
	WarnParamsDiffer WarningKind = "parameters differ"
	// WarnTracerVariant: Scenario's tracer Detail attached as Base in the
	// baseline and as Cand in the candidate (tp_btf and raw_tp, say: a
	// guest relocating against a cut of its kernel's BTF attaches raw_tp);
	// their programs cost differently.
	WarnTracerVariant WarningKind = "tracer variant differs"
	// WarnSingleStepped: Scenario's uprobe on function Detail replaces
	// an instruction the kernel single-steps on every call (Base its
	// mnemonic, may be empty; Cand its bytes in hex), so two traps are in
	// each call's measured time, on Side or Both.
	WarnSingleStepped WarningKind = "probe single-stepped"
	// WarnDefinitionUnreadable: Scenario's definition could not be read for
	// its gate block (Detail); the default gate is used.
	WarnDefinitionUnreadable WarningKind = "definition unreadable"
	// WarnGateDiffers: the candidate's gate policy differs from the
	// baseline's at Metric ("*" for every metric), Percentile: Base and
	// Cand are the two thresholds ("" where one side does not gate it).
	// The baseline's policy is applied: a candidate does not choose its
	// own judge.
	WarnGateDiffers WarningKind = "gate policy differs"
	// WarnLevelUnreachable: at Percentile, BaseCount paired rounds are too
	// few for the exact test to reach its level (Detail) at all, whatever
	// the data; CandCount is the count that can.
	WarnLevelUnreachable WarningKind = "level unreachable"
	// WarnInterference: other work took more than DisturbedShare of the
	// CPUs of BaseCount of the baseline's Base trials and CandCount of
	// the candidate's Cand trials of Scenario (Base, Cand: the trials
	// with a CPU time, in decimal); Detail is the largest share, "28%".
	WarnInterference WarningKind = "interference"
	// WarnMetricOneSide: Metric is on Side only; not compared.
	WarnMetricOneSide WarningKind = "metric on one side"
	// WarnMetricNoEvents: Metric has no events on either side; not
	// compared.
	WarnMetricNoEvents WarningKind = "metric without events"
	// WarnNoEvents: Side has no events of the verdict's metric.
	WarnNoEvents WarningKind = "no events"
	// WarnFewTailEvents: fewer than MinTailEvents events beyond
	// Percentile on Side (Baseline, Candidate or Both); BaseCount and
	// CandCount are the events beyond it on each side.
	WarnFewTailEvents WarningKind = "few tail events"
	// WarnDecidedOnFewTail: the verdict at Percentile was decided,
	// though Side has fewer than MinTailEvents events past it, for the
	// reason Detail (StarvedInterval, StarvedCollapse). It takes the
	// place of that WarnFewTailEvents: BaseCount and CandCount are the
	// events beyond the percentile, Base and Cand the events per trial
	// of each side, in decimal.
	WarnDecidedOnFewTail WarningKind = "decided on few tail events"
	// WarnOneTrial: Side (or Both) has a single trial, so the interval
	// ignores trial-to-trial variation.
	WarnOneTrial WarningKind = "one trial"
	// WarnWithinRunOnly: the baseline is stored from another run and no
	// calibration is given, so intervals cover within-run noise only.
	// Target and Detail are the baseline's target and kernel release, for
	// the calibrate command a renderer suggests.
	WarnWithinRunOnly WarningKind = "within-run noise only"
	// WarnNotCalibrated: the calibration has no spread for Scenario,
	// Metric, Percentile (a gated test): its interval covers within-run
	// noise only.
	WarnNotCalibrated WarningKind = "not calibrated"
	// WarnCalibrationMismatch: the calibration was measured elsewhere:
	// Field (FieldTarget or FieldKernelRelease) is Base in the baseline
	// and Cand in the calibration. It is applied all the same.
	WarnCalibrationMismatch WarningKind = "calibration mismatch"
)

// Fields a WarnEnvironment or WarnCalibrationMismatch names.
const (
	FieldKernelRelease = "kernel_release"
	FieldConfigHash    = "config_hash"
	FieldCPUModel      = "cpu_model"
	FieldCPUs          = "cpus"
	FieldAccel         = "target_accel"
	FieldKind          = "target_kind"
	FieldVCPUs         = "target_vcpus"
	FieldMemMiB        = "target_mem_mib"
	FieldCmdline       = "target_cmdline"
	FieldTarget        = "target"
)

// Role is a side of a comparison.
type Role string

// Roles.
const (
	Baseline  Role = "baseline"
	Candidate Role = "candidate"
	Both      Role = "both"
)

// Warning says why a result may be less solid than it looks. It is a
// value: the renderers word it (report/render). Warnings never change
// a verdict.
type Warning struct {
	Kind                 WarningKind
	Side                 Role
	Scenario             string
	Metric               string
	Percentile           string
	Field                string
	Base, Cand           string
	BaseCount, CandCount int
	Target               string
	Detail               string
	// Band is a nuisance band as a fraction (WarnInsideBand).
	Band float64
}
