package tracing

// MaxMetrics is the most metrics one tracer measures (HIST_MAX_METRICS
// of hist.bpf.h): a scenario's parser refuses more before anything runs.
const MaxMetrics = maxMetrics
