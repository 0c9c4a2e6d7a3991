package tracing

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/tailgate-ci/tailgate/internal/cgroup"
)

// configureCgroup makes the programs count the tasks of cgroup v2 group id
// and of the groups below it (targ_cgroup of follow.bpf.h) instead of a
// process's; 0 leaves them counting the process. The groups below are
// found by their ancestor at the group's depth, which is looked up here;
// a group this process cannot see (another cgroup namespace) is matched
// exactly.
func configureCgroup(spec *ebpf.CollectionSpec, id uint64) error {
	if id == 0 {
		return nil
	}
	v, ok := spec.Variables["targ_cgroup"]
	if !ok {
		return fmt.Errorf("object has no targ_cgroup (include follow.bpf.h)")
	}
	if err := v.Set(id); err != nil {
		return fmt.Errorf("set targ_cgroup: %w", err)
	}
	// No task has tgid -1: the tgid compare, which comes first in
	// follow.bpf.h, never matches, and the group decides.
	if err := spec.Variables["targ_tgid"].Set(^uint32(0)); err != nil {
		return fmt.Errorf("set targ_tgid: %w", err)
	}
	level := int32(-1)
	if g, err := cgroup.ByID(id); err == nil {
		level = int32(g.Level)
	}
	if err := spec.Variables["targ_cgroup_level"].Set(level); err != nil {
		return fmt.Errorf("set targ_cgroup_level: %w", err)
	}
	return nil
}
