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

// CatalogWidth is the width tailgate list keeps to.
const CatalogWidth = 100

// catalogWhatWidth is the width of the "what" column of the tracers.
const catalogWhatWidth = 44

// WriteCatalog lays c out: the scenarios as a table, then a paragraph
// each, then the tracers and workload metrics as a table.
func WriteCatalog(w io.Writer, c *Catalog) error {
	fmt.Fprintln(w, "Scenarios (built in; run with 'tailgate run NAME'):")
	t := NewTable(w)
	t.Header([]string{"scenario", "workload", "tracers", "gated"})
	for _, s := range c.Scenarios {
		if err := t.Append([]string{s.Name, s.Workload, strings.Join(s.Tracers, ","), gatedList(s.Gate)}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, s := range c.Scenarios {
		fmt.Fprint(w, wrapText(s.Name+": "+s.Description+". Metrics: "+strings.Join(s.Metrics, ", ")+".", CatalogWidth, "    "))
	}
	fmt.Fprintln(w, "\nTracers:")
	t = NewTable(w)
	t.Header([]string{"tracer", "metrics", "what"})
	for _, k := range c.Tracers {
		what := wrapText(k.Description, catalogWhatWidth, "")
		for _, key := range k.ValueKeys {
			what += "(names: tailgate list " + key + ")"
		}
		if err := t.Append([]string{k.Name, strings.Join(k.Metrics, "\n"), strings.TrimSuffix(what, "\n")}); err != nil {
			return err
		}
	}
	for _, m := range c.WorkloadMetrics {
		what := wrapText(m.Description, catalogWhatWidth, "")
		if err := t.Append([]string{"(" + m.Kind + " workload)", m.Name, strings.TrimSuffix(what, "\n")}); err != nil {
			return err
		}
	}
	return t.Render()
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
