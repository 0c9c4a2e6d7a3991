package render

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tailgate-ci/tailgate/internal/result"
	"github.com/tailgate-ci/tailgate/report/stats"
)

// Catalog is what tailgate list shows: the built-in scenarios, the tracers
// and the metrics of each workload kind. The engine fills it from the
// registries; report only lays it out.
type Catalog struct {
	Scenarios []CatalogScenario
	Tracers   []CatalogTracer
	// WorkloadMetrics are the metrics workloads measure themselves.
	WorkloadMetrics []CatalogMetric
}

// CatalogScenario is one built-in scenario.
type CatalogScenario struct {
	Name, Workload, Description string
	Tracers                     []string // in the tracers' registry order
	Metrics                     []string
	Gate                        result.GatePolicy
}

// CatalogTracer is one tracer of the registry.
type CatalogTracer struct {
	Name, Description string
	Metrics           []string
	// ValueKeys are its config keys whose values tailgate list KEY prints.
	ValueKeys []string
}

// CatalogMetric is a metric a workload kind measures.
type CatalogMetric struct {
	Kind, Name, Description string
}

// CatalogWidth is the most columns tailgate list takes.
const CatalogWidth = 100

// catalogWhatWidth is the width of the "what" column of the tracers.
const catalogWhatWidth = 44

// WriteCatalog lays c out within width columns (at most CatalogWidth;
// 0 for CatalogWidth): the scenarios as a table, then a paragraph each,
// then the tracers and workload metrics as a table. A table too wide is
// laid out narrower (FitTable).
func WriteCatalog(w io.Writer, c *Catalog, width int) error {
	if width <= 0 || width > CatalogWidth {
		width = CatalogWidth
	}
	fmt.Fprintln(w, "Scenarios (built in; run with 'tailgate run NAME'):")
	t := &FitTable{Width: width, Columns: []Column{{Header: "scenario"}, {Header: "workload", Fold: 2}, {Header: "tracers", Fold: 1}, {Header: "gated"}}}
	for _, s := range c.Scenarios {
		// Built in, not from a file: the cells' line breaks are kept.
		t.Rows = append(t.Rows, []string{s.Name, s.Workload, strings.Join(s.Tracers, ","), gatedList(s.Gate)})
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range c.Scenarios {
		fmt.Fprint(w, wrapText(s.Name+": "+s.Description+". Metrics: "+strings.Join(s.Metrics, ", ")+".", width, "    "))
	}
	fmt.Fprintln(w, "\nTracers:")
	t = &FitTable{Width: width, Columns: []Column{{Header: "tracer"}, {Header: "metrics"}, {Header: "what", Wrap: 24}}}
	whatWidth := min(catalogWhatWidth, width-narrowRoom(c))
	for _, k := range c.Tracers {
		what := wrapText(k.Description, whatWidth, "")
		for _, key := range k.ValueKeys {
			what += "(names: tailgate list " + key + ")"
		}
		t.Rows = append(t.Rows, []string{k.Name, strings.Join(k.Metrics, "\n"), strings.TrimSuffix(what, "\n")})
	}
	for _, m := range c.WorkloadMetrics {
		what := wrapText(m.Description, whatWidth, "")
		t.Rows = append(t.Rows, []string{"(" + m.Kind + " workload)", m.Name, strings.TrimSuffix(what, "\n")})
	}
	return t.Render(w)
}

// narrowRoom is the columns the tracers table's first two columns take
// laid out narrow, with the gaps after them: what the third leaves.
func narrowRoom(c *Catalog) int {
	tracer, metric := len("tracer"), len("metrics")
	for _, k := range c.Tracers {
		tracer = max(tracer, textWidth(k.Name))
		for _, m := range k.Metrics {
			metric = max(metric, textWidth(m))
		}
	}
	for _, m := range c.WorkloadMetrics {
		tracer = max(tracer, textWidth("("+m.Kind+" workload)"))
		metric = max(metric, textWidth(m.Name))
	}
	return tracer + gap + metric + gap
}

// gatedList names what a policy gates, one line each, metrics sorted and
// percentiles in quantile order: "syscall.read p99 10%".
func gatedList(gate result.GatePolicy) string {
	var out []string
	pcts := stats.PercentilesFor(gate, nil)
	for _, m := range slices.Sorted(maps.Keys(gate)) {
		for _, p := range pcts {
			if v, ok := gate[m][p.Name]; ok {
				out = append(out, fmt.Sprintf("%s %s %g%%", m, p.Name, v*100))
			}
		}
	}
	return strings.Join(out, "\n")
}

// wrapText breaks s at spaces into lines of at most width columns, the
// lines after the first indented; a word longer than a line stays whole.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width:
			b.WriteString(line + "\n")
			line = indent + w
		default:
			line += " " + w
		}
	}
	if line != "" {
		b.WriteString(line + "\n")
	}
	return b.String()
}
