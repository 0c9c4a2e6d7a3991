/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* call.bpf.h: the time from a function's entry to its return, for the
 * workload's tasks: the kfunc (kernel functions) and ufunc (user functions)
 * tracers. Their programs pass the metric index, which they get from the
 * attach cookie, to call_entry and call_return.
 *
 * A task's start times live in task storage, one slot per metric, so that
 * traced functions may nest (vfs_read called from another traced function)
 * and the hot path needs no global hash. A function entered again before it
 * returns (recursion) is timed from its innermost entry. The filter's
 * verdict is cached in the same storage, as the syscall tracer does. The
 * slowest calls are kept as evidence, with the stacks they returned to.
 *
 * Needs hist.bpf.h, follow.bpf.h and evidence.bpf.h included, and HIST_MAPS
 * declared, first.
 */
#ifndef __CALL_BPF_H
#define __CALL_BPF_H

struct call_start {
	__u64 ts[HIST_MAX_METRICS];
	__u64 gen;    /* follow_gen the verdict is of */
	__u32 traced; /* the verdict */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_start);
} start SEC(".maps");

static __always_inline void call_entry(__u64 m)
{
	struct task_struct *task;
	struct call_start *s;
	__u64 id, gen;

	if (m >= HIST_MAX_METRICS)
		return;
	task = bpf_get_current_task_btf();
	gen = follow_gen;
	s = bpf_task_storage_get(&start, task, 0, 0);
	if (!s || s->gen != gen) {
		id = bpf_get_current_pid_tgid();
		if (!follow_traced((__u32)id, id >> 32)) {
			if (s) {
				s->traced = 0;
				s->gen = gen;
			}
			return;
		}
		s = bpf_task_storage_get(&start, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!s) {
			hist_miss(); /* a traced call that cannot be timed */
			return;
		}
		s->traced = 1;
		s->gen = gen;
	}
	if (!s->traced)
		return;
	s->ts[m & (HIST_MAX_METRICS - 1)] = bpf_ktime_get_ns();
}

/* call_return times the call that returns now; ctx is the program's, for
 * the stacks of evidence. */
static __always_inline void call_return(void *ctx, __u64 m)
{
	struct call_start *s;
	__u64 ts, v;

	if (m >= HIST_MAX_METRICS)
		return;
	m &= HIST_MAX_METRICS - 1;
	/* Only traced tasks have storage: the lookup is the filter. */
	s = bpf_task_storage_get(&start, bpf_get_current_task_btf(), 0, 0);
	if (!s)
		return;
	ts = s->ts[m];
	if (!ts)
		return;
	s->ts[m] = 0;
	v = bpf_ktime_get_ns() - ts;
	hist_record(m, v);
	evidence_current(ctx, m, v);
}

#endif /* __CALL_BPF_H */
