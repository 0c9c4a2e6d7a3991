/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* follow.bpf.h: which tasks a tracer counts. The workload's process is
 * targ_tgid; processes it forks are added to the tgids map by the
 * sched_process_fork program and removed when they exit. With targ_threads,
 * only the threads of targ_tgid in the tids map count (the workload's own,
 * registered from user space, and threads they create), and only processes
 * they fork are followed. The fast path for the common case (no followed
 * children, no thread filter) is one compare, no map lookup.
 *
 * With targ_cgroup, the tasks counted are instead those of one cgroup v2
 * group (the id of its directory) and of the groups below it, whatever
 * process they belong to: an exec workload's command and all it starts,
 * or a group named with --cgroup. Children need no following then: they
 * are born in their parent's group.
 *
 * targ_tgid and the targ_cgroup pair are variables, not load-time
 * constants: a program verified once serves every trial's worker, each a
 * process (and a group) of its own, set before the worker attaches it.
 */
#ifndef __FOLLOW_BPF_H
#define __FOLLOW_BPF_H

/* Needs hist.bpf.h (hist_miss) included first. */
#ifndef EEXIST
#define EEXIST 17
#endif

#define FOLLOW_MAX_TGIDS 16384
#define FOLLOW_MAX_TIDS 4096

volatile __u32 targ_tgid = 0;

/* targ_threads: in targ_tgid, count only the threads in tids (the
 * workload's own threads, registered from user space, and threads they
 * create), not every thread of the process. */
const volatile bool targ_threads = false;

/* targ_cgroup: count the tasks of this cgroup v2 group and of the groups
 * below it; targ_cgroup_level is its depth below the root (0 for the root
 * itself), or -1 to count its own tasks only. */
volatile __u64 targ_cgroup = 0;
volatile __s32 targ_cgroup_level = -1;

/* followed counts entries in tgids; while it is zero no lookup is needed. */
__u64 followed = 0;

/* follow_gen changes whenever user space adds or removes a thread, so that
 * a tracer caching a task's verdict (in task storage) knows to ask again. */
__u64 follow_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* rarely written; cheap to load */
	__uint(max_entries, FOLLOW_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, FOLLOW_MAX_TIDS);
	__type(key, __u32);
	__type(value, __u8);
} tids SEC(".maps");

/* Kernels before 6.1 keep the ids of a group's ancestors instead of
 * pointers to them. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* follow_cgroup_task reports whether task's cgroup v2 group is targ_cgroup
 * or below it. The ancestor at targ_cgroup_level of a group as deep or
 * deeper is the group's own ancestry (ancestors[level] is the group). */
static __always_inline bool follow_cgroup_task(struct task_struct *task)
{
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	struct cgroup *anc = NULL;
	__u64 id = 0;
	int lvl = targ_cgroup_level;

	if (BPF_CORE_READ(cg, kn, id) == targ_cgroup)
		return true;
	if (lvl < 0 || BPF_CORE_READ(cg, level) <= lvl)
		return false;
	if (bpf_core_field_exists(cg->ancestors)) {
		bpf_probe_read_kernel(&anc, sizeof(anc), (void *)cg +
				      bpf_core_field_offset(struct cgroup, ancestors) +
				      (__u64)lvl * sizeof(anc));
		return anc && BPF_CORE_READ(anc, kn, id) == targ_cgroup;
	}
	bpf_probe_read_kernel(&id, sizeof(id), (void *)cg +
			      bpf_core_field_offset(struct cgroup___ids, ancestor_ids) +
			      (__u64)lvl * sizeof(id));
	return id == targ_cgroup;
}

/* follow_cgroup_current is follow_cgroup_task for the current task, from
 * the helpers that read its group directly. */
static __always_inline bool follow_cgroup_current(void)
{
	if (bpf_get_current_cgroup_id() == targ_cgroup)
		return true;
	return targ_cgroup_level >= 0 &&
	       bpf_get_current_ancestor_cgroup_id(targ_cgroup_level) == targ_cgroup;
}

/* follow_traced reports whether the current task, pid of process tgid, is
 * counted. With targ_cgroup, user space sets targ_tgid to a tgid no task
 * has (-1): the compare that is the fast path without a cgroup comes
 * first, unchanged. */
static __always_inline bool follow_traced(__u32 pid, __u32 tgid)
{
	if (tgid == targ_tgid)
		return !targ_threads || bpf_map_lookup_elem(&tids, &pid) != NULL;
	if (targ_cgroup)
		return follow_cgroup_current();
	if (!followed)
		return false;
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

/* follow_traced_task reports whether task, pid of process tgid, is counted;
 * task need not be the current task. */
static __always_inline bool follow_traced_task(struct task_struct *task, __u32 pid,
					       __u32 tgid)
{
	if (tgid == targ_tgid)
		return !targ_threads || bpf_map_lookup_elem(&tids, &pid) != NULL;
	if (targ_cgroup)
		return follow_cgroup_task(task);
	if (!followed)
		return false;
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

static __always_inline void follow_fork(__u32 parent_pid, __u32 parent_tgid,
					__u32 child_pid, __u32 child_tgid)
{
	__u8 one = 1;
	long err;

	/* Without a cgroup, parent is the current task. With one, a child is
	 * born in its parent's group: nothing to follow. */
	if (targ_cgroup || !follow_traced(parent_pid, parent_tgid))
		return;
	/* A new thread of the traced process: counted when its creator is. */
	if (parent_tgid == child_tgid) {
		if (targ_threads && child_tgid == targ_tgid &&
		    bpf_map_update_elem(&tids, &child_pid, &one, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&tids, &child_pid))
			hist_miss();
		return;
	}
	err = bpf_map_update_elem(&tgids, &child_tgid, &one, BPF_NOEXIST);
	if (err == 0)
		__sync_fetch_and_add(&followed, 1);
	else if (err != -EEXIST)
		hist_miss(); /* a child not followed: its events are lost */
}

static __always_inline void follow_exit(__u32 pid, __u32 tgid)
{
	if (tgid == targ_tgid) {
		if (targ_threads)
			bpf_map_delete_elem(&tids, &pid);
		return;
	}
	/* Only the group leader's exit ends a followed process. */
	if (targ_cgroup || pid != tgid || !followed)
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
		follow_fork(parent->pid, parent->tgid, child->pid,            \
			    child->tgid);                                     \
		return 0;                                                     \
	}                                                                     \
	SEC("raw_tp/sched_process_fork")                                      \
	int BPF_PROG(sched_process_fork_raw, struct task_struct *parent,      \
		     struct task_struct *child)                               \
	{                                                                     \
		follow_fork(BPF_CORE_READ(parent, pid),                       \
			    BPF_CORE_READ(parent, tgid),                      \
			    BPF_CORE_READ(child, pid),                        \
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
