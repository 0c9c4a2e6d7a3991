// Package tracingtest has what the tracers' tests share.
package tracingtest

import (
	"testing"

	"github.com/goccy/go-yaml/parser"

	"github.com/tailgate-ci/tailgate/internal/config"
	"github.com/tailgate-ci/tailgate/internal/tracing"
)

// ParseEntry parses src, one entry under tracers: of a scenario named
// file ("irq: {cpus: [0]}"), with k's Parse for workload w, as the
// scenario parser hands it over.
func ParseEntry(t testing.TB, k tracing.Kind, file, src string, w tracing.Workload) (tracing.Config, error) {
	t.Helper()
	f, err := parser.ParseBytes([]byte(src), 0)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := config.NewNode(file, f.Docs[0].Body).Fields("tracers", nil)
	if err != nil || len(fs) != 1 {
		t.Fatalf("fields: %v, %v", fs, err)
	}
	return k.Parse(fs[0], w)
}
