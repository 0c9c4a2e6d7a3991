/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* evidence.bpf.h: the slowest events of each metric, caught in the act.
 *
 * An event slower than its metric's floor is sent to user space through a
 * ring buffer with who it happened to, where (CPU, stacks) and, for the
 * scheduler, which task ran instead. User space keeps the K slowest per
 * metric and raises the floor to the K-th as the top fills, so once the
 * tail is known almost every event costs one array lookup and a compare.
 *
 * evidence_epoch is bumped by user space at each trial's start; events of
 * an older epoch still in the ring are discarded.
 *
 * Needs hist.bpf.h (HIST_MAX_METRICS) included first.
 */
#ifndef __EVIDENCE_BPF_H
#define __EVIDENCE_BPF_H

#define EVIDENCE_STACK 24
#define EVIDENCE_COMM 16

/* Must match internal/tracing.evidenceRecord. */
struct evidence_event {
	__u64 latency; /* ns */
	__u64 end;     /* bpf_ktime_get_ns() at the event's end */
	__u64 epoch;
	__u32 metric;
	__u32 cpu;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 other_tid; /* sched: the task switched out for this one */
	__s32 other_prio;
	__s32 kstack_len; /* bytes, or < 0 */
	__s32 ustack_len;
	char comm[EVIDENCE_COMM];
	char other_comm[EVIDENCE_COMM];
	__u64 kstack[EVIDENCE_STACK];
	__u64 ustack[EVIDENCE_STACK];
};

const volatile bool evidence_on = false;
__u64 evidence_epoch = 0;
/* Events the ring had no room for (user space was behind). */
__u64 evidence_dropped = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HIST_MAX_METRICS);
	__type(key, __u32);
	__type(value, __u64);
} evidence_floor SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} evidence_events SEC(".maps");

/* evidence_begin reserves an event for metric m of latency v when v is
 * above the metric's floor; the caller fills who and where, then calls
 * bpf_ringbuf_submit. */
static __always_inline struct evidence_event *evidence_begin(__u32 m, __u64 v)
{
	struct evidence_event *e;
	__u64 *floor;

	if (!evidence_on)
		return NULL;
	floor = bpf_map_lookup_elem(&evidence_floor, &m);
	if (!floor || v <= *floor)
		return NULL;
	e = bpf_ringbuf_reserve(&evidence_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&evidence_dropped, 1);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->latency = v;
	e->end = bpf_ktime_get_ns();
	e->epoch = evidence_epoch;
	e->metric = m;
	e->cpu = bpf_get_smp_processor_id();
	e->kstack_len = -1;
	e->ustack_len = -1;
	return e;
}

/* evidence_current records an event of the current task, with its kernel
 * and user stacks. */
static __always_inline void evidence_current(void *ctx, __u32 m, __u64 v)
{
	struct evidence_event *e = evidence_begin(m, v);
	__u64 id;

	if (!e)
		return;
	id = bpf_get_current_pid_tgid();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->kstack_len = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	e->ustack_len = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	bpf_ringbuf_submit(e, 0);
}

/* evidence_fill_task fills who (task) and what ran instead (other). */
#define evidence_fill_task(e, task, other)                                   \
	({                                                                   \
		(e)->pid = BPF_CORE_READ(task, tgid);                        \
		(e)->tid = BPF_CORE_READ(task, pid);                         \
		bpf_probe_read_kernel_str((e)->comm, sizeof((e)->comm),     \
					  &(task)->comm);                    \
		(e)->other_tid = BPF_CORE_READ(other, pid);                  \
		(e)->other_prio = BPF_CORE_READ(other, prio);                \
		bpf_probe_read_kernel_str((e)->other_comm,                   \
					  sizeof((e)->other_comm),           \
					  &(other)->comm);                   \
	})

#endif /* __EVIDENCE_BPF_H */
