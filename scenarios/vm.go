package scenarios

import (
	"fmt"
	"strings"

	"github.com/tailgate-ci/tailgate/bpf/tracers"
)

// HostOnly says why s cannot run in a VM guest (its workload kind or a
// tracer needs this host's programs), "" if it can.
func (s *Scenario) HostOnly() string {
	var why []string
	if k, ok := lookupKind(s.Workload.Kind); ok && k.HostOnly != "" {
		why = append(why, fmt.Sprintf("workload kind %s: %s", k.Name, k.HostOnly))
	}
	for _, k := range tracers.All {
		if _, ok := s.Tracers[k.Name]; ok && k.HostOnly != "" {
			why = append(why, fmt.Sprintf("tracer %s: %s", k.Name, k.HostOnly))
		}
	}
	return strings.Join(why, "; ")
}

// Whole says why s's trials cannot run in slices that take turns with
// another worker's (its workload kind's reason), "" if they can.
func (s *Scenario) Whole() string {
	if k, ok := lookupKind(s.Workload.Kind); ok && k.Whole != "" {
		return fmt.Sprintf("workload kind %s: %s", k.Name, k.Whole)
	}
	return ""
}
