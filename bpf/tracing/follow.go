package tracing

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
)

// followBias keeps followed (follow.bpf.h) from reaching 0 once user space
// has added processes: the programs update it atomically, user space can
// only read and write it, and a count that a lost update left one too low
// would end the lookups while followed processes remain. The bias costs a
// map lookup per event of other processes, which is what following costs
// anyway.
const followBias = 1 << 32

// noTask is a tgid no task has (follow.bpf.h's fast path compares it
// first): what programs that stay attached between Tracers count.
const noTask = ^uint32(0)

// stopCounting sets follow.bpf.h's variables to count no task: no tgid,
// no cgroup, no process followed, and a new generation for the verdicts
// tasks keep. Tracers that count every task (AllTasks) go on counting,
// into maps the next Tracer resets.
func (t *Tracer) stopCounting() error {
	for _, v := range []struct {
		name  string
		value any
	}{{"targ_tgid", noTask}, {"targ_cgroup", uint64(0)}, {"followed", uint64(0)}} {
		tv, ok := t.vars[v.name]
		if !ok {
			continue
		}
		if err := tv.Set(v.value); err != nil {
			return fmt.Errorf("%s: stop counting: %w", t.name, err)
		}
	}
	return t.bumpGen()
}

// FollowProcess counts process tgid, and the processes it forks from now
// on, as the fork program does for the children of the traced process: a
// process tree that was running before the tracer attached (attach --pid)
// is counted whole.
func (t *Tracer) FollowProcess(tgid int) error {
	m, ok := t.coll.Maps["tgids"]
	v, okv := t.vars["followed"]
	if !ok || !okv {
		return fmt.Errorf("%s: object has no tgids map (include follow.bpf.h)", t.name)
	}
	if err := m.Update(uint32(tgid), uint8(1), ebpf.UpdateNoExist); err != nil && !errors.Is(err, ebpf.ErrKeyExist) {
		return fmt.Errorf("%s: follow process %d: %w", t.name, tgid, err)
	}
	if t.biased {
		return nil
	}
	var n uint64
	if err := v.Get(&n); err != nil {
		return fmt.Errorf("%s: read followed: %w", t.name, err)
	}
	if err := v.Set(n + followBias); err != nil {
		return fmt.Errorf("%s: set followed: %w", t.name, err)
	}
	t.biased = true
	return nil
}
