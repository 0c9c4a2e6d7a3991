// Package stats holds the statistics of a comparison: given the trials of
// two sides, it estimates each percentile's ratio with its interval (a
// hierarchical bootstrap, or the exact signed-rank test of paired rounds),
// judges the gated ones as one family (Holm's procedure over looks
// planned in advance), and measures the spread between runs a stored
// baseline adds (Calibrate). Its functions are pure and return values:
// what they doubt is said in typed Warnings, which never change a
// verdict and which the renderers word. Nothing here prints.
package stats
