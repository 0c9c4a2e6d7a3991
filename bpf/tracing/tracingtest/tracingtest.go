// Package tracingtest has what the tracers' tests share.
package tracingtest

import (
	"sync"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/goccy/go-yaml/parser"

	"github.com/tailgate-ci/tailgate/bpf/tracing"
	"github.com/tailgate-ci/tailgate/internal/config"
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

// ThreadHook is a workload's thread hook (scenarios.ThreadHook): it adds
// each thread the workload starts to every tracer of trs and removes it
// when it stops, reporting a failure to t.
func ThreadHook(t testing.TB, trs ...*tracing.Tracer) func(tid int, running bool) {
	var mu sync.Mutex
	return func(tid int, running bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, tr := range trs {
			var err error
			if running {
				err = tr.AddThread(tid)
			} else {
				err = tr.RemoveThread(tid)
			}
			if err != nil {
				t.Error(err)
			}
		}
	}
}

// programInfos reads the info of each program of ids (a Tracer's
// ProgramIDs, say).
func programInfos(t testing.TB, ids []ebpf.ProgramID) []*ebpf.ProgramInfo {
	t.Helper()
	var infos []*ebpf.ProgramInfo
	for _, id := range ids {
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			t.Fatal(err)
		}
		info, err := p.Info()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	return infos
}

// ProgramNames are the names of the programs of ids.
func ProgramNames(t testing.TB, ids []ebpf.ProgramID) []string {
	t.Helper()
	var names []string
	for _, info := range programInfos(t, ids) {
		names = append(names, info.Name)
	}
	return names
}

// ProgramMap opens the map called name that a program of ids uses; t's
// cleanup closes it.
func ProgramMap(t testing.TB, ids []ebpf.ProgramID, name string) *ebpf.Map {
	t.Helper()
	for _, info := range programInfos(t, ids) {
		mapIDs, _ := info.MapIDs()
		for _, mid := range mapIDs {
			m, err := ebpf.NewMapFromID(mid)
			if err != nil {
				t.Fatal(err)
			}
			if mi, err := m.Info(); err == nil && mi.Name == name {
				t.Cleanup(func() { m.Close() })
				return m
			}
			m.Close()
		}
	}
	t.Fatalf("no map %s among the programs' maps", name)
	return nil
}
