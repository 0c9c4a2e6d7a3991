package show

// About says what each of Formats writes, for the usage of the commands
// that take them: a new format's sentence goes here, beside its name in
// Formats, and no command changes.
var About = map[Format]string{
	FormatText:        "the histograms, percentiles and trials (default)",
	FormatJSON:        "the same as one JSON document (docs/show.schema.json)",
	FormatCSV:         "a row per target, scenario, metric and trial: its percentiles in ns, empty for a trial without events",
	FormatOpenMetrics: "the histogram, in buckets that are the same in every run (4 per power of two, 64ns to 68.7s), and a summary of the percentiles, in seconds, for Prometheus: sum by (le) adds runs and hosts up for histogram_quantile",
	FormatBenchstat: "Go benchmark lines, one per metric, percentile and trial (BenchmarkSyscallRead/syscall.read/p99 1 164 ns/op): " +
		"each trial is a sample for benchstat, which takes the median of the trials and compares runs by a Mann-Whitney U test per percentile; " +
		"the gate reads the trials merged and holds the false alarms over all gated tests, so the two may disagree",
	FormatGitHubActionBenchmark: "JSON for github-action-benchmark's customSmallerIsBetter tool: one value per scenario, metric and percentile (ns), the trials merged, range ± half its 95% interval",
	FormatBencher:               "Bencher Metric Format JSON: the same values in the latency measure, the interval as lower_value and upper_value",
}
