package loadfile

import (
	"os"
	"testing"
)

// FuzzParse feeds any bytes to every format: a load generator's output is
// input from outside, so a parser returns an error rather than panic, and
// what it returns holds together.
func FuzzParse(f *testing.F) {
	for i, file := range []string{"wrk2.txt", "vegeta.json", "hey.csv", "ghz.json", "hlog.hlog"} {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, format uint8, b []byte) {
		name := Formats[int(format)%len(Formats)]
		l, err := Parse(name, "fuzz", b, Options{})
		if err != nil {
			return
		}
		if l.Hist == nil || l.Hist.Count()+l.Failed == 0 {
			t.Errorf("%s: no error and nothing measured", name)
		}
	})
}
