package loadfile

import (
	"bufio"
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// wrk2 prints its corrected (coordinated-omission-free) latencies with
// --latency as HdrHistogram's percentile spectrum, in milliseconds:
//
//	  Detailed Percentile spectrum:
//	       Value   Percentile   TotalCount 1/(1-Percentile)
//
//	       0.050     0.000000            1         1.00
//	       ...
//	#[Max     =       52.704, Total count    =      1105036]
//
// Each row's value is the highest of its step's values and TotalCount the
// requests up to it: a step's requests are recorded at its value.
const wrk2Spectrum = "Detailed Percentile spectrum:"

var (
	wrk2Total  = regexp.MustCompile(`^#\[Max\s*=\s*[0-9.]+,\s*Total count\s*=\s*([0-9]+)\]`)
	wrk2Socket = regexp.MustCompile(`^Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)`)
	wrk2Non2xx = regexp.MustCompile(`^Non-2xx or 3xx responses: ([0-9]+)`)
)

func parseWrk2(name string, b []byte, l *Latencies) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	line, start, rows := 0, 0, 0
	var last uint64
	total := int64(-1)
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		switch {
		case start == 0:
			if text == wrk2Spectrum {
				start = line
			}
			continue
		case text == "" || strings.HasPrefix(text, "Value"):
			continue
		case strings.HasPrefix(text, "#["):
			if m := wrk2Total.FindStringSubmatch(text); m != nil {
				total, _ = strconv.ParseInt(m[1], 10, 64)
				if uint64(total) != last {
					return &Error{name, line, "total count " + m[1] + " but the spectrum counts " + strconv.FormatUint(last, 10)}
				}
			}
			continue
		}
		if m := wrk2Socket.FindStringSubmatch(text); m != nil {
			var n uint64
			for _, s := range m[1:] {
				v, _ := strconv.ParseUint(s, 10, 64)
				n += v
			}
			l.failN(n, text)
			continue
		}
		if m := wrk2Non2xx.FindStringSubmatch(text); m != nil {
			n, _ := strconv.ParseUint(m[1], 10, 64)
			l.failN(n, text)
			continue
		}
		if total >= 0 {
			continue // the summary after the spectrum
		}
		next, err := wrk2Row(text, last, l)
		if err != nil {
			return &Error{name, line, err.Error()}
		}
		last = next
		rows++
	}
	if err := sc.Err(); err != nil {
		return &Error{name, line + 1, err.Error()}
	}
	if start == 0 {
		return &Error{Name: name, Msg: `no "Detailed Percentile spectrum"; run wrk2 with --latency (-L)`}
	}
	if rows == 0 {
		return &Error{name, start, "the percentile spectrum has no rows"}
	}
	return nil
}

// wrk2Row records one row of the spectrum, whose TotalCount must not be
// below last, and returns its TotalCount.
func wrk2Row(text string, last uint64, l *Latencies) (uint64, error) {
	f := strings.Fields(text)
	if len(f) != 4 {
		return 0, errorf("want a row of Value, Percentile, TotalCount and 1/(1-Percentile), got %q", text)
	}
	ms, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0, errorf("value %q is not a number of milliseconds", f[0])
	}
	count, err := strconv.ParseUint(f[2], 10, 64)
	if err != nil || count < last {
		return 0, errorf("total count %q is not a count from %d up", f[2], last)
	}
	if count > last {
		if err := record(l, ms*1e6); err != nil {
			return 0, err
		}
		if n := count - last - 1; n > 0 {
			l.Hist.RecordN(uint64(ms*1e6+0.5), n)
		}
	}
	return count, nil
}
