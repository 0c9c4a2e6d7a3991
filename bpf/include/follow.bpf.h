/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* follow.bpf.h: which tasks a tracer counts. The workload's process is
 * targ_tgid; processes it forks are added to the tgids map by the
 * sched_process_fork program and removed when they exit. The fast path for
 * the common case (no followed children) is one compare, no map lookup.
 */
#ifndef __FOLLOW_BPF_H
#define __FOLLOW_BPF_H

#define FOLLOW_MAX_TGIDS 16384

const volatile __u32 targ_tgid = 0;

/* followed counts entries in tgids; while it is zero no lookup is needed. */
__u64 followed = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* rarely written; cheap to load */
	__uint(max_entries, FOLLOW_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

static __always_inline bool follow_traced(__u32 tgid)
{
	if (tgid == targ_tgid)
		return true;
	if (!followed)
		return false;
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

static __always_inline void follow_fork(__u32 parent_tgid, __u32 child_tgid)
{
	__u8 one = 1;

	/* A new thread shares its parent's tgid: nothing to add. */
	if (parent_tgid == child_tgid || !follow_traced(parent_tgid))
		return;
	if (bpf_map_update_elem(&tgids, &child_tgid, &one, BPF_NOEXIST) == 0)
		__sync_fetch_and_add(&followed, 1);
}

static __always_inline void follow_exit(__u32 pid, __u32 tgid)
{
	/* Only the group leader's exit ends the process. */
	if (pid != tgid || tgid == targ_tgid || !followed)
		return;
	if (bpf_map_delete_elem(&tgids, &tgid) == 0)
		__sync_fetch_and_add(&followed, -1);
}

/* FOLLOW_PROGS defines the fork and exit programs in both variants. */
#define FOLLOW_PROGS                                                          \
	SEC("tp_btf/sched_process_fork")                                      \
	int BPF_PROG(sched_process_fork_btf, struct task_struct *parent,      \
		     struct task_struct *child)                               \
	{                                                                     \
		follow_fork(parent->tgid, child->tgid);                       \
		return 0;                                                     \
	}                                                                     \
	SEC("raw_tp/sched_process_fork")                                      \
	int BPF_PROG(sched_process_fork_raw, struct task_struct *parent,      \
		     struct task_struct *child)                               \
	{                                                                     \
		follow_fork(BPF_CORE_READ(parent, tgid),                      \
			    BPF_CORE_READ(child, tgid));                      \
		return 0;                                                     \
	}                                                                     \
	SEC("tp_btf/sched_process_exit")                                      \
	int BPF_PROG(sched_process_exit_btf, struct task_struct *p)           \
	{                                                                     \
		follow_exit(p->pid, p->tgid);                                 \
		return 0;                                                     \
	}                                                                     \
	SEC("raw_tp/sched_process_exit")                                      \
	int BPF_PROG(sched_process_exit_raw, struct task_struct *p)           \
	{                                                                     \
		follow_exit(BPF_CORE_READ(p, pid), BPF_CORE_READ(p, tgid));   \
		return 0;                                                     \
	}

#endif /* __FOLLOW_BPF_H */
