// Package render lays out the comparison model, report.Matrix (a
// two-sided compare is its N = 2 case), as text, Markdown, JSON, JUnit
// XML, GitHub workflow commands and one HTML page with plots, and words
// the statistics' typed warnings. Every format reads what the model holds
// and computes no statistic. The text of the other lists tailgate prints
// (the catalog, cached kernels, stored baselines, a calibration) is laid
// out here too, with the same tables and units.
package render
