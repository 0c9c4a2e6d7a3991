package show

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/tailgate-ci/tailgate/internal/english"
	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/render"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Format is an output format of show (and run).
type Format string

// The formats.
const (
	FormatText        Format = "text"
	FormatJSON        Format = "json"
	FormatCSV         Format = "csv"
	FormatOpenMetrics Format = "openmetrics"
	FormatBenchstat   Format = "benchstat"
	// FormatGitHubActionBenchmark is github-action-benchmark's
	// customSmallerIsBetter JSON.
	FormatGitHubActionBenchmark Format = "github-action-benchmark"
	// FormatBencher is Bencher's BMF JSON.
	FormatBencher Format = "bencher"
)

// Formats lists the formats, in the order usage names them.
var Formats = []Format{FormatText, FormatJSON, FormatCSV, FormatOpenMetrics, FormatBenchstat, FormatGitHubActionBenchmark, FormatBencher}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("format %q: want %s", s, strings.Join(names, ", "))
}

// Options change how Write lays a Document out.
type Options struct {
	// Linear, when set, makes the text histograms fixed-width rows
	// instead of powers of two.
	Linear *Linear
}

// Text writes, per scenario and metric, the histogram rows, the
// percentiles of all trials and a line per trial.
func (d *Document) Text(w io.Writer, o Options) error {
	fmt.Fprintf(w, "%s on %s (%s, %d CPUs)\n", d.Target.Name, d.Environment.KernelRelease, d.Environment.CPUModel, d.Environment.CPUs)
	if d.Target.Virtual() {
		fmt.Fprintln(w, render.VirtualTimeLine(fmt.Sprint(d.Target.Shift())))
	}
	for _, s := range d.Scenarios {
		var empty []string
		for i := range s.Metrics {
			m := &s.Metrics[i]
			if m.All.Count == 0 {
				empty = append(empty, m.Name)
				continue
			}
			gated := ""
			if m.Gated {
				gated = ", gated"
			}
			fmt.Fprintf(w, "\n%s %s (%d %s, %d events%s)\n", s.Name, m.Name, len(m.Trials), english.Plural(len(m.Trials), "trial", "trials"), m.All.Count, gated)
			rows := m.Log2()
			if o.Linear != nil {
				rows = m.Linear(*o.Linear)
			}
			writeRows(w, rows)
			fmt.Fprintf(w, "  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
				render.FormatNs(m.All.P50), render.FormatNs(m.All.P90), render.FormatNs(m.All.P99), render.FormatNs(m.All.P999), render.FormatNs(m.All.Max))
			t := render.NewTable(w, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight)
			t.Header([]string{"trial", "count", "p50", "p90", "p99", "p99.9", "max"})
			for _, tr := range m.Trials {
				sm := tr.Summary
				if err := t.Append([]string{strconv.Itoa(tr.N), strconv.FormatUint(sm.Count, 10), render.FormatNs(sm.P50), render.FormatNs(sm.P90),
					render.FormatNs(sm.P99), render.FormatNs(sm.P999), render.FormatNs(sm.Max)}); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
		if len(empty) > 0 {
			fmt.Fprintf(w, "\n%s: no events: %s\n", s.Name, strings.Join(empty, ", "))
		}
	}
	if d.Partial {
		fmt.Fprintln(w, "\npartial result")
	}
	return nil
}

// barWidth is the width of the distribution column, bcc's.
const barWidth = 40

func writeRows(w io.Writer, rows []Row) {
	labels := make([]string, len(rows))
	var most uint64
	lw, cw := len("ns"), len("count")
	for i, r := range rows {
		switch {
		case r.Below:
			labels[i] = fmt.Sprintf("< %d", r.Hi)
		case r.Above:
			labels[i] = fmt.Sprintf(">= %d", r.Lo)
		default:
			labels[i] = fmt.Sprintf("[%d, %d)", r.Lo, r.Hi)
		}
		lw = max(lw, len(labels[i]))
		cw = max(cw, len(strconv.FormatUint(r.Count, 10)))
		most = max(most, r.Count)
	}
	fmt.Fprintf(w, "  %-*s  %*s  distribution\n", lw, "ns", cw, "count")
	for i, r := range rows {
		stars := 0
		if most > 0 {
			stars = int(r.Count * barWidth / most)
		}
		if r.Count > 0 && stars == 0 {
			stars = 1 // an occupied row never looks empty
		}
		fmt.Fprintf(w, "  %-*s  %*d |%-*s|\n", lw, labels[i], cw, r.Count, barWidth, strings.Repeat("*", stars))
	}
}

// jsonDocument is what JSON writes: the Document with its schema and each
// metric's power-of-two rows.
type jsonDocument struct {
	Schema int `json:"schema"`
	*Document
	Scenarios []jsonScenario `json:"scenarios"`
}

type jsonScenario struct {
	Scenario
	Metrics []jsonMetric `json:"metrics"`
}

type jsonMetric struct {
	Metric
	Log2 []jsonRow `json:"log2"`
}

type jsonRow struct {
	Lo    uint64 `json:"lo_ns"`
	Hi    uint64 `json:"hi_ns"`
	Count uint64 `json:"count"`
}

// JSON writes d as one JSON document (schema SchemaVersion).
func (d *Document) JSON(w io.Writer) error {
	out := jsonDocument{Schema: SchemaVersion, Document: d}
	for _, s := range d.Scenarios {
		js := jsonScenario{Scenario: s}
		for i := range s.Metrics {
			jm := jsonMetric{Metric: s.Metrics[i], Log2: []jsonRow{}}
			if jm.All.Count > 0 {
				for _, r := range s.Metrics[i].Log2() {
					jm.Log2 = append(jm.Log2, jsonRow{r.Lo, r.Hi, r.Count})
				}
			}
			js.Metrics = append(js.Metrics, jm)
		}
		out.Scenarios = append(out.Scenarios, js)
	}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(out)
}

// CSV writes a row per scenario, metric and trial: its target, its
// percentiles (ns), operations and duration. A trial without events has
// its count, 0, and no percentiles: the cells are empty, not 0 ns.
func (d *Document) CSV(w io.Writer) error {
	c := csv.NewWriter(w)
	c.Write([]string{"target", "scenario", "metric", "gated", "trial", "count", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns", "max_ns", "ops", "duration_s"})
	for _, s := range d.Scenarios {
		for _, m := range s.Metrics {
			for _, t := range m.Trials {
				sm := t.Summary
				ps := []string{"", "", "", "", ""}
				if sm.Count > 0 {
					ps = []string{num(sm.P50), num(sm.P90), num(sm.P99), num(sm.P999), num(sm.Max)}
				}
				row := []string{d.Target.Name, s.Name, m.Name, strconv.FormatBool(m.Gated), strconv.Itoa(t.N), strconv.FormatUint(sm.Count, 10)}
				row = append(append(row, ps...), strconv.FormatUint(t.Ops, 10), num(t.DurationS))
				c.Write(row)
			}
		}
	}
	c.Flush()
	return c.Error()
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// OpenMetrics writes, per scenario and metric with events, the merged
// histogram as an OpenMetrics histogram with the same buckets in every run
// and on every host (OpenMetricsBounds, in seconds), so that Prometheus
// adds them up, and the percentiles as a summary, for Prometheus and its
// kin.
func (d *Document) OpenMetrics(w io.Writer) error {
	type series struct {
		labels string
		m      *Metric
	}
	var all []series
	for _, s := range d.Scenarios {
		for i := range s.Metrics {
			m := &s.Metrics[i]
			if m.All.Count == 0 {
				continue
			}
			all = append(all, series{fmt.Sprintf(`scenario="%s",metric="%s",target="%s",kernel="%s"`,
				escape(s.Name), escape(m.Name), escape(d.Target.Name), escape(d.Environment.KernelRelease)), m})
		}
	}
	const hname, sname = "tailgate_latency_seconds", "tailgate_latency_quantile_seconds"
	bounds := OpenMetricsBounds()
	les := make([]string, len(bounds))
	for i, b := range bounds {
		les[i] = seconds(float64(b))
	}
	fmt.Fprintf(w, "# TYPE %s histogram\n# UNIT %s seconds\n# HELP %s Latency of a scenario's metric, all trials merged, in buckets that are the same in every run: %d per power of two, le from %s to %s, each the largest whole ns its bucket holds.\n",
		hname, hname, hname, 1<<omSubBits, les[0], les[len(les)-1])
	for _, s := range all {
		for i, c := range s.m.Cumulative() {
			fmt.Fprintf(w, "%s_bucket{%s,le=\"%s\"} %d\n", hname, s.labels, les[i], c)
		}
		fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n", hname, s.labels, s.m.All.Count)
		fmt.Fprintf(w, "%s_count{%s} %d\n", hname, s.labels, s.m.All.Count)
		fmt.Fprintf(w, "%s_sum{%s} %s\n", hname, s.labels, seconds(s.m.SumNs))
	}
	fmt.Fprintf(w, "# TYPE %s summary\n# UNIT %s seconds\n# HELP %s Percentiles of a scenario's metric, all trials merged.\n", sname, sname, sname)
	for _, s := range all {
		a := s.m.All
		for _, q := range []struct {
			q string
			v float64
		}{{"0.5", a.P50}, {"0.9", a.P90}, {"0.99", a.P99}, {"0.999", a.P999}, {"1", a.Max}} {
			fmt.Fprintf(w, "%s{%s,quantile=\"%s\"} %s\n", sname, s.labels, q.q, seconds(q.v))
		}
		fmt.Fprintf(w, "%s_count{%s} %d\n", sname, s.labels, a.Count)
		fmt.Fprintf(w, "%s_sum{%s} %s\n", sname, s.labels, seconds(s.m.SumNs))
	}
	_, err := fmt.Fprintln(w, "# EOF")
	return err
}

func seconds(ns float64) string { return strconv.FormatFloat(ns/1e9, 'g', -1, 64) }

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escape(s string) string { return labelEscaper.Replace(s) }

// Benchstat writes Go benchmark format: configuration lines, then a line
// per scenario, metric, percentile and trial, such as
// "BenchmarkSyscallRead/syscall.read/p99 1 164 ns/op", so that benchstat
// compares two runs: each trial is one of its samples. benchstat's
// statistic is not the gate's: it takes the median of the trials' values
// and compares two runs by a Mann-Whitney U test, percentile by percentile,
// where the gate reads each side's trials merged (and, in one job, pairs
// the rounds) and holds the false alarms over all gated tests.
//
// The target and the kernel, which tell a gate's base from its head, are
// "# " lines that benchstat passes over: as configuration they would put
// each side in a table of its own, where "benchstat base.bs head.bs"
// should compare them. The CPU stays configuration, as go test writes it.
func (d *Document) Benchstat(w io.Writer) error {
	config := [][3]string{{"# ", "target", d.Target.Name}, {"# ", "kernel", d.Environment.KernelRelease}, {"", "cpu", d.Environment.CPUModel}}
	for _, c := range config {
		if v := strings.Join(strings.Fields(c[2]), " "); v != "" {
			fmt.Fprintf(w, "%s%s: %s\n", c[0], c[1], v)
		}
	}
	for _, s := range d.Scenarios {
		for _, m := range s.Metrics {
			if m.All.Count == 0 {
				continue
			}
			for _, p := range stats.Percentiles {
				for _, t := range m.Trials {
					if t.Summary.Count == 0 {
						continue
					}
					fmt.Fprintf(w, "Benchmark%s/%s/%s 1 %s ns/op\n", camel(s.Name), nameSafe(m.Name), p.Name, num(pick(t.Summary, p.Name)))
				}
			}
		}
	}
	return nil
}

func pick(s result.Summary, name string) float64 {
	switch name {
	case "p50":
		return s.P50
	case "p90":
		return s.P90
	case "p99":
		return s.P99
	case "p99.9":
		return s.P999
	}
	return s.Max
}

// camel writes a scenario name as a benchmark name: syscall-read is
// SyscallRead, timer-1ms is Timer1ms.
func camel(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// nameSafe keeps a metric name one field of a benchmark line.
func nameSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, s)
}
