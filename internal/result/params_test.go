package result

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParamsDiff(t *testing.T) {
	def := func(s string) *Scenario { return &Scenario{Definition: json.RawMessage(s)} }
	base := `{"name":"syscall-read","workload":{"kind":"syscall","syscall":"read","size":4096},"tracers":{"sched":{}},"trials":80,"duration":500000000}`
	for _, c := range []struct {
		name string
		b    string
		want []ParamDiff
	}{
		{"duration", `{"name":"syscall-read","workload":{"kind":"syscall","syscall":"read","size":4096},"tracers":{"sched":{}},"trials":80,"duration":200000000}`,
			[]ParamDiff{{"duration", "500ms", "200ms"}}},
		{"workload field and a tracer", `{"workload":{"kind":"syscall","syscall":"read","size":8192},"tracers":{"sched":{},"syscall":{"syscalls":["read"]}},"duration":500000000}`,
			[]ParamDiff{{"workload.size", "4096", "8192"}, {"tracers.syscall", "(none)", `{"syscalls":["read"]}`}}},
		// Trials and the name are not parameters: runs of more trials compare.
		{"not parameters", `{"name":"other","workload":{"kind":"syscall","syscall":"read","size":4096},"tracers":{"sched":{}},"trials":5,"duration":500000000}`, nil},
		{"unreadable", `not json`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, ParamsDiff(def(base), def(c.b))); diff != "" {
				t.Errorf("ParamsDiff (-want +got):\n%s", diff)
			}
		})
	}
}
