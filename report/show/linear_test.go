package show

import (
	"strings"
	"testing"
)

// ParseLinear reads MIN:MAX:STEP durations into nanoseconds and refuses,
// in words, what draws no rows or too many.
func TestParseLinear(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Linear
	}{
		{"0:20us:1us", Linear{Min: 0, Max: 20000, Step: 1000}},
		{"1ms:2ms:100us", Linear{Min: 1e6, Max: 2e6, Step: 1e5}},
	} {
		got, err := ParseLinear(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseLinear(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"0:20us", "want MIN:MAX:STEP"},
		{"0:20:1us", `"20": want a duration`},
		{"0:-1us:1us", "want a duration"},
		{"0:20us:0", "step must be above 0"},
		{"20us:10us:1us", "max must be above min"},
		{"0:1s:1us", "at most 1000"},
	} {
		if _, err := ParseLinear(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseLinear(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}
