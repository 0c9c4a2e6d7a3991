package stats

// WarningKind is what a Warning is about.
type WarningKind string

// Kinds of warning. The comment of each says which Warning fields it sets.
const (
	// WarnLevelUnreachable: at Percentile, BaseCount paired rounds are too
	// few for the exact test to reach its level (Detail) at all, whatever
	// the data; CandCount is the count that can.
	WarnLevelUnreachable WarningKind = "level unreachable"
	// WarnInterference: other work took more than DisturbedShare of the
	// CPUs of BaseCount of the baseline's Base trials and CandCount of
	// the candidate's Cand trials of Scenario (Base, Cand: the trials
	// with a CPU time, in decimal); Detail is the largest share, "28%".
	WarnInterference WarningKind = "interference"
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
	FieldTailgate      = "tailgate"
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
