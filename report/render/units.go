package render

import (
	"fmt"
	"math"
)

// FormatNs formats a duration in nanoseconds with three significant digits
// in the unit that suits it: "850ns", "12.3µs", "4.56ms", "1.20s". NaN
// formats as "-".
func FormatNs(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "-"
	}
	return withUnit(ns, [4]string{"ns", "µs", "ms", "s"})
}

// FormatRate formats a rate per second with three significant digits:
// "850", "12.3k", "4.56M". NaN formats as "-".
func FormatRate(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "-"
	}
	return withUnit(r, [4]string{"", "k", "M", "G"})
}

// withUnit writes x in the largest of units, each a thousand times the
// one before, that keeps it at 1 or more (the last takes any larger):
// whole in the first, with three significant digits in the others.
func withUnit(x float64, units [4]string) string {
	switch a := math.Abs(x); {
	case a < 999.5:
		return fmt.Sprintf("%.0f", x) + units[0]
	case a < 999.5e3:
		return sig3(x/1e3) + units[1]
	case a < 999.5e6:
		return sig3(x/1e6) + units[2]
	}
	return sig3(x/1e9) + units[3]
}

// sig3 formats x (1 ≤ |x| < 1000, or seconds beyond) with three
// significant digits.
func sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case a < 9.995:
		return fmt.Sprintf("%.2f", x)
	case a < 99.95:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}

// FormatDelta formats a ratio as a signed percentage change: 1.123 →
// "+12.3%".
func FormatDelta(ratio float64) string {
	if math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		return "-"
	}
	d := (ratio - 1) * 100
	if math.Abs(d) < 0.05 {
		return "0.0%"
	}
	if ratio >= 10 {
		// A tenfold change reads better as a factor, and the upper end of
		// a wide interval (two trials) stays a few characters wide.
		return fmt.Sprintf("×%.3g", ratio)
	}
	return fmt.Sprintf("%+.1f%%", d)
}

// FormatCI formats a ratio interval as percentage changes: "[+2.1%, +9.8%]".
func FormatCI(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "-"
	}
	return "[" + FormatDelta(lo) + ", " + FormatDelta(hi) + "]"
}

// FormatPercent formats a fraction as a percentage: 0.1 → "10%".
func FormatPercent(f float64) string {
	return fmt.Sprintf("%g%%", math.Round(f*1000)/10)
}
