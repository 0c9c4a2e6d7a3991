// Package loadfile reads the request latencies that load generators
// write: wrk2's --latency report, vegeta's results, hey's CSV, ghz's JSON
// report and HdrHistogram interval logs. Parse is pure; Load reads a file
// and parses it.
package loadfile

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tailgate-ci/tailgate/internal/hist"
)

// The formats, by the name a scenario gives them.
const (
	Wrk2   = "wrk2"   // wrk2 --latency: its detailed percentile spectrum
	Vegeta = "vegeta" // vegeta's results: JSON lines (vegeta encode), gob or CSV
	Hey    = "hey"    // hey -o csv
	Ghz    = "ghz"    // ghz --format json
	HdrLog = "hlog"   // an HdrHistogram interval log
)

// Formats are the formats' names, in the order messages list them.
var Formats = []string{Wrk2, Vegeta, Hey, Ghz, HdrLog}

// Latencies is what a load generator's output says of its requests.
type Latencies struct {
	// Hist holds the latencies of the requests answered, in ns.
	Hist *hist.Histogram
	// Failed counts the requests that got no good answer (an error, an
	// HTTP status of 400 or more, a gRPC status other than OK), as far
	// as the format tells; FirstError describes the first.
	Failed     uint64
	FirstError string
}

func (l *Latencies) fail(what string) { l.failN(1, what) }

func (l *Latencies) failN(n uint64, what string) {
	if n == 0 {
		return
	}
	if l.Failed == 0 {
		l.FirstError = what
	}
	l.Failed += n
}

// Err is the failure the output reports, nil when every request it
// counts was answered.
func (l Latencies) Err() error {
	if l.Failed == 0 {
		return nil
	}
	return fmt.Errorf("%d requests failed; the first: %s", l.Failed, l.FirstError)
}

// Error is output that does not read as its format: where and what.
type Error struct {
	Name string // the file, or what stood for it ("load's stdout")
	Line int    // 1-based; 0 when the format has no lines (gob)
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Name + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// Options are what a format does not say itself.
type Options struct {
	// Unit is what one of an HdrHistogram log's values stands for; 0
	// means a nanosecond. The other formats name their units.
	Unit time.Duration
}

// Parse reads b, the output of a load generator in format; name is what
// errors call it.
func Parse(format, name string, b []byte, opts Options) (Latencies, error) {
	l := Latencies{Hist: hist.New()}
	var err error
	switch format {
	case Wrk2:
		err = parseWrk2(name, b, &l)
	case Vegeta:
		err = parseVegeta(name, b, &l)
	case Hey:
		err = parseHey(name, b, &l)
	case Ghz:
		err = parseGhz(name, b, &l)
	case HdrLog:
		unit := opts.Unit
		if unit == 0 {
			unit = time.Nanosecond
		}
		err = parseHdrLog(name, b, unit, &l)
	default:
		return l, fmt.Errorf("unknown load output format %q; allowed: %s", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return l, err
	}
	if l.Hist.Count() == 0 && l.Failed == 0 {
		return l, &Error{Name: name, Msg: "no requests in it; was the load generator's run cut before it wrote its results?"}
	}
	return l, nil
}

// CheckFormat checks a format's name.
func CheckFormat(format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("unknown format %q; allowed: %s", format, strings.Join(Formats, ", "))
	}
	return nil
}

// MaxSize bounds what Load reads.
const MaxSize = 1 << 30

// Load reads and parses the file at path.
func Load(format, path string, opts Options) (Latencies, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Latencies{}, err
	}
	if st.Size() > MaxSize {
		return Latencies{}, fmt.Errorf("%s: %d bytes; the limit is %d", path, st.Size(), MaxSize)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Latencies{}, err
	}
	return Parse(format, path, b, opts)
}

// record adds one latency of d, refusing what no clock measures.
func record(l *Latencies, d float64) error {
	if d < 0 || d > float64(time.Hour*24*365) || d != d {
		return fmt.Errorf("latency %v ns is out of range", d)
	}
	l.Hist.Record(uint64(d + 0.5))
	return nil
}

// lineOf is the 1-based line of byte offset off in b.
func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + strings.Count(string(b[:off]), "\n")
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
