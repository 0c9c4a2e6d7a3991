package loadfile

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// parseHdrLog reads an HdrHistogram interval log (.hlog), as jHiccup,
// HdrHistogram's HistogramLogWriter in Java, Go or C, and wrk2 forks
// write it: comment lines (#), a legend, then one line per interval,
//
//	[Tag=NAME,]START,LENGTH,MAX,BASE64-COMPRESSED-HISTOGRAM
//
// The intervals are added up, tags and all. The log does not say what a
// value stands for: unit does. Each HdrHistogram bucket's count is
// recorded at the bucket's middle.
func parseHdrLog(name string, b []byte, unit time.Duration, l *Latencies) error {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	line, intervals := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '"' {
			continue
		}
		if err := hlogInterval(text, unit, l); err != nil {
			return &Error{name, line, err.Error()}
		}
		intervals++
	}
	if err := sc.Err(); err != nil {
		return &Error{name, line + 1, err.Error()}
	}
	if intervals == 0 {
		return &Error{Name: name, Msg: "no interval lines; want an HdrHistogram interval log (START,LENGTH,MAX,HISTOGRAM lines)"}
	}
	return nil
}

func hlogInterval(text string, unit time.Duration, l *Latencies) error {
	if strings.HasPrefix(text, "Tag=") {
		_, rest, ok := strings.Cut(text, ",")
		if !ok {
			return fmt.Errorf("a Tag= line without an interval")
		}
		text = rest
	}
	f := strings.Split(text, ",")
	if len(f) != 4 {
		return fmt.Errorf("want START,LENGTH,MAX,HISTOGRAM, got %d fields", len(f))
	}
	for i, what := range []string{"start", "length", "max"} {
		if _, err := strconv.ParseFloat(f[i], 64); err != nil {
			return fmt.Errorf("interval %s %q is not a number", what, f[i])
		}
	}
	h, err := hdrhistogram.Decode([]byte(f[3]))
	if err != nil {
		return fmt.Errorf("the interval's histogram does not decode: %v", err)
	}
	for _, bar := range h.Distribution() {
		if bar.Count <= 0 {
			continue
		}
		mid := (float64(bar.From) + float64(bar.To)) / 2 * float64(unit)
		if err := record(l, mid); err != nil {
			return err
		}
		if bar.Count > 1 {
			l.Hist.RecordN(uint64(mid+0.5), uint64(bar.Count-1))
		}
	}
	return nil
}
