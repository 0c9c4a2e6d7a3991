package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestParseRefusesForgedResults: every Result is read as strictly as a
// guest's reply once was alone: a scenario or a metric named twice (by
// the document or by a JSON key given twice), a key given twice anywhere,
// a name holding a NUL or a line break, a name past its limit, a trial
// whose summary is not its histogram's, a field that is not the
// schema's, in a histogram too. Once, a Result file took every one of
// these, and show printed a forged p99 of 1.8e308.
func TestParseRefusesForgedResults(t *testing.T) {
	good, err := Marshal(sample("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(good); err != nil {
		t.Fatalf("the sample is refused: %v", err)
	}
	edit := func(f func(r *Result)) []byte {
		r, err := Parse(good)
		if err != nil {
			t.Fatal(err)
		}
		f(r)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	replace := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the sample holds no %q", old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"scenario twice", edit(func(r *Result) { r.Scenarios[1].Name = "a" }), `scenario "a" appears twice`},
		{"metric key twice", replace(`"metrics": {
        "m": {`, `"metrics": {
        "m": {"unit": "ns", "trials": []},
        "m": {`), `key "m" appears twice`},
		{"key twice, escaped", replace(`"schema": 1,`, `"schema": 1, "sch\u0065ma": 1,`), `key "schema" appears twice`},
		{"target key twice", replace(`"kind": "host"`, `"kind": "host", "name": "other"`), `key "name" appears twice`},
		{"NUL in a scenario name", edit(func(r *Result) { r.Scenarios[0].Name = "a\x00b" }), "holds a control character"},
		{"newline in a metric name", edit(func(r *Result) {
			r.Scenarios[0].Metrics["m\n::error::x"] = r.Scenarios[0].Metrics["m"]
			delete(r.Scenarios[0].Metrics, "m")
		}), "holds a control character"},
		{"scenario name too long", edit(func(r *Result) { r.Scenarios[0].Name = strings.Repeat("a", 300) }), "is 300 bytes; the limit is 64"},
		{"kernel release too long", edit(func(r *Result) { r.Environment.KernelRelease = strings.Repeat("6", 200) }), "the limit is 64"},
		{"forged p99", edit(func(r *Result) { r.Scenarios[0].Metrics["m"].Trials[0].Summary.P99 = 1.7e308 }), "its summary (count 10, p99 1.7e+308"},
		{"forged count", edit(func(r *Result) { r.Scenarios[0].Metrics["m"].Trials[0].Summary.Count = 1 }), "is not its histogram's"},
		{"unknown field in a histogram", replace(`"scheme":`, `"evil": 1, "scheme":`), `unknown field "evil"`},
		{"key twice in another case", replace(`"kernel_release": "6.1.0"`, `"kernel_release": "6.1.0", "Kernel_Release": "6.12.0"`), `key "Kernel_Release" appears twice`},
		{"a field in another case", replace(`"kernel_release"`, `"Kernel_Release"`), `key "Kernel_Release" at .environment is a field's name in another case`},
		{"key twice, folded", replace(`"kind": "host"`, `"kind": "host", "\u212aind": "vm"`), `key "\u212aind" appears twice`},
		{"a clock that is none", edit(func(r *Result) { r.Target.Kind, r.Target.Clock = "vm", "bogus" }), `clock "bogus" is neither real nor virtual`},
		{"the host in virtual time", edit(func(r *Result) { r.Target.Clock = ClockVirtual }), "is the host, which has no clock"},
		{"a shift in real time", edit(func(r *Result) {
			shift := 3
			r.Target.Kind, r.Target.Clock, r.Target.IcountShift = "vm", ClockReal, &shift
		}), "has an icount shift but runs on clock real"},
		{"ten copies of one trial", edit(func(r *Result) {
			m := r.Scenarios[0].Metrics["m"]
			for range 9 {
				m.Trials = append(m.Trials, m.Trials[0])
			}
		}), "trial 2 is a copy of trial 1"},
		{"a phase seed of no layout", edit(func(r *Result) { r.Scenarios[0].Metrics["m"].Trials[0].PhaseSeed = 2 }), "phase seed 2 of no layout seed"},
		{"a negative threshold", edit(func(r *Result) { r.Scenarios[0].Gate = GatePolicy{"*": {"p99": -1}} }), "threshold -1 is not between 0 and 10"},
		{"a threshold that passes anything", edit(func(r *Result) { r.Scenarios[0].Gate = GatePolicy{"m": {"p99": 100000}} }), "threshold 100000 is not between 0 and 10"},
		{"a definition's threshold that passes anything", edit(func(r *Result) { r.Scenarios[0].Definition = json.RawMessage(`{"gate":{"*":{"p99":100000}}}`) }), "definition's gate * p99 threshold 100000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse(tc.doc)
			if r != nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, %v; want ErrCorrupt saying %q", r != nil, err, tc.want)
			}
		})
	}
}
