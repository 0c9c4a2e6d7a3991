package loadfile

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The recorded outputs in testdata were written by the tools themselves,
// against a small Go HTTP (and gRPC health) server on this host
// (testdata/README.md says how). What each should read as was read off
// the files by other means: wrk2's own summary, the rows and lines
// themselves.
func TestRecorded(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		opts         Options
		count        uint64
		p50, max     float64 // ns
	}{
		// wrk2's spectrum: 600 requests, its 50% line 1.17 ms, its last
		// row 57.215 ms.
		{Wrk2, "wrk2.txt", Options{}, 600, 1.173e6, 57.215e6},
		// vegeta encode: 198 results, all 200; their latencies sorted.
		{Vegeta, "vegeta.json", Options{}, 198, 409261, 70300908},
		// hey -o csv: 200 rows, all 200; the 100th fastest 0.3 ms.
		{Hey, "hey.csv", Options{}, 200, 0.0003e9, 0.1223e9},
		// ghz --format json: 200 details, all OK; its slowest.
		{Ghz, "ghz.json", Options{}, 200, 517853, 7382877},
	} {
		t.Run(tc.format, func(t *testing.T) {
			l, err := Load(tc.format, "testdata/"+tc.file, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Err(); err != nil {
				t.Errorf("failures: %v", err)
			}
			if got := l.Hist.Count(); got != tc.count {
				t.Errorf("%d requests, want %d", got, tc.count)
			}
			// A percentile reads at its bucket's middle (within 0.8%);
			// the tools' rounding and which of two middle samples is the
			// median take the rest.
			if got := l.Hist.Quantile(0.5); math.Abs(got/tc.p50-1) > 0.05 {
				t.Errorf("p50 %.0f ns, want %.0f", got, tc.p50)
			}
			if got := float64(l.Hist.Max()); math.Abs(got/tc.max-1) > 0.01 {
				t.Errorf("max %.0f ns, want %.0f", got, tc.max)
			}
		})
	}
}

// The HdrHistogram log is checked against HdrHistogram's own reading of
// it: the intervals' counts added up, their p50 and max, in µs (the
// unit the writer recorded in).
func TestRecordedHdrLog(t *testing.T) {
	b, err := os.ReadFile("testdata/hlog.hlog")
	if err != nil {
		t.Fatal(err)
	}
	var all *hdrhistogram.Histogram
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(b))
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if all == nil {
			all = h
		} else {
			all.Merge(h)
		}
	}
	l, err := Parse(HdrLog, "hlog.hlog", b, Options{Unit: time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.Hist.Count(), uint64(all.TotalCount()); got != want || want < 100 {
		t.Errorf("%d values, HdrHistogram reads %d (want at least 100)", got, want)
	}
	for _, q := range []float64{0.5, 0.99} {
		want := float64(all.ValueAtQuantile(q*100)) * 1e3
		if got := l.Hist.Quantile(q); math.Abs(got/want-1) > 0.01 {
			t.Errorf("q%g %.0f ns, HdrHistogram reads %.0f", q, got, want)
		}
	}
	ns, err := Parse(HdrLog, "hlog.hlog", b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ns.Hist.Quantile(0.5)*1000, l.Hist.Quantile(0.5); math.Abs(got/want-1) > 0.01 {
		t.Errorf("p50 in ns ×1000 = %.0f, in µs %.0f: the unit is not applied", got, want)
	}
}

// vegeta's binary results (what vegeta attack writes) and its CSV read
// as its JSON lines do.
func TestVegetaEncodings(t *testing.T) {
	b, err := os.ReadFile("testdata/vegeta.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(Vegeta, "vegeta.json", b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, enc := range map[string]func(*bytes.Buffer) vegeta.Encoder{
		"gob": func(w *bytes.Buffer) vegeta.Encoder { return vegeta.NewEncoder(w) },
		"csv": func(w *bytes.Buffer) vegeta.Encoder { return vegeta.NewCSVEncoder(w) },
	} {
		var out bytes.Buffer
		e := enc(&out)
		dec := vegeta.NewJSONDecoder(bytes.NewReader(b))
		for {
			var r vegeta.Result
			if err := dec.Decode(&r); err != nil {
				break
			}
			if err := e.Encode(&r); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Parse(Vegeta, name, out.Bytes(), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Hist.Count() != want.Hist.Count() || got.Hist.Quantile(0.99) != want.Hist.Quantile(0.99) {
			t.Errorf("%s: %d requests, p99 %.0f; JSON lines: %d, %.0f", name, got.Hist.Count(), got.Hist.Quantile(0.99), want.Hist.Count(), want.Hist.Quantile(0.99))
		}
	}
}

// Failed requests are counted, not measured, and make Err say so.
func TestFailures(t *testing.T) {
	for _, tc := range []struct {
		format, in string
		failed     uint64
		first      string
	}{
		{Vegeta, `{"seq":0,"code":200,"latency":1000,"error":""}` + "\n" + `{"seq":1,"code":503,"latency":900,"error":"503 Service Unavailable","url":"http://x/"}` + "\n" + `{"seq":2,"code":0,"latency":5,"error":"connection refused"}`,
			2, "HTTP status 503 from http://x/"},
		{Hey, "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset\n0.0010,0,0,0,0,0,200,0\n0.0020,0,0,0,0,0,500,0\n", 1, "HTTP status 500"},
		{Ghz, `{"count":2,"details":[{"latency":1000,"status":"OK"},{"latency":9,"error":"rpc error: code = Unavailable","status":"Unavailable"}]}`, 1, "rpc error: code = Unavailable"},
		{Wrk2, "  Detailed Percentile spectrum:\n  Value Percentile TotalCount 1/(1-Percentile)\n\n  1.000 0.0 1 1.00\n  2.000 1.0 2 inf\n#[Max = 2.000, Total count = 2]\n  Socket errors: connect 0, read 1, write 0, timeout 2\n  Non-2xx or 3xx responses: 4\n", 7, "Socket errors: connect 0, read 1, write 0, timeout 2"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			l, err := Parse(tc.format, "x", []byte(tc.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if l.Failed != tc.failed || l.FirstError != tc.first {
				t.Errorf("%d failed, the first %q; want %d, %q", l.Failed, l.FirstError, tc.failed, tc.first)
			}
			if l.Hist.Count() == 0 {
				t.Error("the answered requests were not measured")
			}
			if err := l.Err(); err == nil || !strings.Contains(err.Error(), tc.first) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
}

// Bad input is one line naming the file and, where the format has lines,
// the line.
func TestBadInput(t *testing.T) {
	recorded, err := os.ReadFile("testdata/hlog.hlog")
	if err != nil {
		t.Fatal(err)
	}
	hlogLine := strings.Split(string(recorded), "\n")[3] + "\n"
	for _, tc := range []struct {
		name, format, in, want string
	}{
		{"wrk2 without --latency", Wrk2, "Running 3s test\n  Latency 1.00ms\n", `out.txt: no "Detailed Percentile spectrum"; run wrk2 with --latency (-L)`},
		{"wrk2 bad row", Wrk2, "  Detailed Percentile spectrum:\n  Value Percentile TotalCount 1/(1-Percentile)\n\n  0.1 0.0 1 1.00\n  x 0.5 2 2.00\n", `out.txt:5: value "x" is not a number of milliseconds`},
		{"wrk2 counts going down", Wrk2, "  Detailed Percentile spectrum:\n  1.0 0.1 5 1.11\n  2.0 0.2 3 1.25\n", `out.txt:3: total count "3" is not a count from 5 up`},
		{"wrk2 total disagrees", Wrk2, "  Detailed Percentile spectrum:\n  1.0 1.0 5 inf\n#[Max = 1.0, Total count = 6]\n", `out.txt:3: total count 6 but the spectrum counts 5`},
		{"wrk2 empty spectrum", Wrk2, "  Detailed Percentile spectrum:\n#[Max = 1.0, Total count = 0]\n", `out.txt:1: the percentile spectrum has no rows`},
		{"vegeta not results", Vegeta, "hello world\n", `out.txt: not vegeta results`},
		{"vegeta bad line", Vegeta, `{"seq":0,"code":200,"latency":5}` + "\n" + `{"seq":1,"code":200,"latency":"x"}` + "\n", `out.txt:2: not a vegeta result (vegeta encode's JSON)`},
		{"vegeta negative latency", Vegeta, `{"seq":0,"code":200,"latency":-5}`, `out.txt:1: latency -5 ns is out of range`},
		{"hey not csv", Hey, "Summary:\n  Total: 1 secs\n", `out.txt:1: not hey's CSV (hey -o csv)`},
		{"hey bad time", Hey, "response-time,status-code\n0.1,200\nabc,200\n", `out.txt:3: response-time "abc" is not a number of seconds`},
		{"hey short row", Hey, "response-time,status-code\n0.1\n", `out.txt:2: want 2 fields as the header has, got 1`},
		{"hey empty", Hey, "", `out.txt: empty; want hey's CSV (hey -o csv)`},
		{"ghz not json", Ghz, "{\n  \"count\": 1,\n  oops\n}", `out.txt:3: not ghz's JSON report`},
		{"ghz wrong type", Ghz, "{\n  \"count\": 1,\n  \"details\": [{\"latency\": \"fast\", \"status\": \"OK\"}]\n}", `out.txt:3: details.latency must be int64, got string`},
		{"ghz summary only", Ghz, `{"count": 3, "average": 5}`, `out.txt:1: ghz's report has no details`},
		{"ghz something else", Ghz, `{"rps": 3}`, `out.txt:1: not ghz's JSON report (ghz --format json): no count`},
		{"hlog nothing", HdrLog, "#[StartTime: 1 (seconds since epoch)]\n", `out.txt: no interval lines`},
		{"hlog bad histogram", HdrLog, hlogLine + "0.2,1.0,2.0,HISTnotbase64!\n", `out.txt:2: the interval's histogram does not decode`},
		{"hlog bad start", HdrLog, "x,1.0,2.0,HISTF\n", `out.txt:1: interval start "x" is not a number`},
		{"hlog fields", HdrLog, "1.0,2.0\n", `out.txt:1: want START,LENGTH,MAX,HISTOGRAM, got 2 fields`},
		{"no requests", Hey, "response-time,status-code\n", `out.txt: no requests in it`},
		{"unknown format", "jmeter", "x", `unknown load output format "jmeter"; allowed: wrk2, vegeta, hey, ghz, hlog`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.format, "out.txt", []byte(tc.in), Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n\t%v\nwant one starting\n\t%s", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}
