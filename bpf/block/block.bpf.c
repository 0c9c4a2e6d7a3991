//go:build ignore

/* block.bpf.c: block I/O latency of the workload's requests, in the manner
 * of biolatency: insert into the queue -> issue to the driver (block.queue)
 * and issue -> completion (block.rq).
 *
 * A request is the workload's when a traced task is the current one where
 * it is first seen: at insert (a request going through an I/O scheduler or
 * the software queues, inserted from the submitter's context, including
 * the flush of its plug) or, for one issued directly, at issue. A request
 * another task inserted is not the workload's when the workload issues it:
 * a task that runs the hardware queue (after inserting its own request,
 * say) dispatches whatever the scheduler holds, other tasks' writes and
 * discards too; others remembers those until their completion, and one
 * issued without an entry is not taken for a direct issue when it went
 * through the scheduler (see scheduled) or was made before the tracer
 * was loaded (targ_since). What the
 * kernel writes on its own behalf (writeback from a kworker, a journal
 * commit from jbd2) is not counted, nor are cache flush requests (see
 * wanted). A request the driver sends back (its queue full) keeps its
 * owner through its second issue, and one merged into another is
 * forgotten. Requests are keyed by their pointer, which every one of the
 * tracepoints gives.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "tp.bpf.h"
#include "block.h"

/* targ_since: CLOCK_MONOTONIC ns when the tracer was loaded, or set
 * again as a loaded tracer is attached for another trial. A request
 * allocated before then that is issued without an entry may have been
 * inserted by anyone before the tracer saw inserts: not counted. */
volatile __u64 targ_since = 0;

/* targ_dev_filter: count only the requests of the disks in devices (dev_t
 * in the kernel's encoding, major << 20 | minor). */
const volatile bool targ_dev_filter = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BLOCK_MAX_DEVICES);
	__type(key, __u32);
	__type(value, __u8);
} devices SEC(".maps");

struct started {
	__u64 insert; /* 0: issued without insert */
	__u64 issue;  /* 0: not issued yet */
	__u32 pid;
	__u32 tid;
	char comm[EVIDENCE_COMM];
	__s32 kstack_len; /* bytes, or < 0 */
	__u32 pad;
	__u64 kstack[EVIDENCE_STACK]; /* where it was submitted, with evidence on */
};

/* An LRU map: a request whose completion is never seen (its pointer is
 * reused for the next one, which resets the entry) cannot fill it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct started);
} start SEC(".maps");

/* others: requests of a wanted disk inserted by a task not traced, from
 * insert to completion, so that their issue from a traced task's context
 * (a requeued one's second issue too) is not taken for a direct issue of
 * the workload's. LRU, as start. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, __u8);
} others SEC(".maps");

HIST_MAPS;

/* Kernels before 5.17 keep the disk in the request. */
struct request___old {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline bool dev_wanted(struct request *rq)
{
	struct request___old *old = (void *)rq;
	struct gendisk *disk;
	__u32 dev;

	if (!targ_dev_filter)
		return true;
	if (bpf_core_field_exists(old->rq_disk))
		disk = BPF_CORE_READ(old, rq_disk);
	else
		disk = BPF_CORE_READ(rq, q, disk);
	if (!disk)
		return false;
	dev = ((__u32)BPF_CORE_READ(disk, major) << 20) | (__u32)BPF_CORE_READ(disk, first_minor);
	return bpf_map_lookup_elem(&devices, &dev) != NULL;
}

#define REQ_OP_BITS_MASK 0xff
#define REQ_OP_FLUSH_NR 2

/* wanted reports whether rq is counted: the current task's, to a wanted
 * disk, and not a cache flush. Flush requests are left out because who
 * issues one is an accident: kblockd mostly, the task whose preflush it
 * serves when the queue runs in its context, shared by every preflush
 * waiting then. */
static __always_inline bool wanted(struct request *rq)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!follow_traced((__u32)id, id >> 32))
		return false;
	if ((BPF_CORE_READ(rq, cmd_flags) & REQ_OP_BITS_MASK) == REQ_OP_FLUSH_NR)
		return false;
	return dev_wanted(rq);
}

/* scheduled reports whether rq went through the I/O scheduler
 * (RQF_USE_SCHED, 6.5 on) and not the flush machinery, which puts a data
 * write of a preflush or FUA straight on the dispatch list: such a request
 * was inserted, in its submitter's context, so one issued without an entry
 * is not the workload's, whoever issues it. Some reach the dispatch list
 * without an insert the tracer saw (inserted before it was attached, or
 * sent back by the driver), and a task running the queue issues them. */
static __always_inline bool scheduled(struct request *rq)
{
	__u32 flags;

	if (!bpf_core_enum_value_exists(enum rqf_flags, __RQF_USE_SCHED) ||
	    !bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
		return false;
	flags = BPF_CORE_READ(rq, rq_flags);
	return (flags & (1U << bpf_core_enum_value(enum rqf_flags, __RQF_USE_SCHED))) &&
	       !(flags & (1U << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ)));
}

static const struct started empty = {};

/* begin starts the entry of a traced request; insert is its time when
 * inserted, 0 when issued directly. */
static __always_inline struct started *begin(void *ctx, __u64 key, __u64 insert, __u64 issue)
{
	struct started *s;
	__u64 id;

	if (bpf_map_update_elem(&start, &key, &empty, BPF_ANY)) {
		hist_miss();
		return NULL;
	}
	s = bpf_map_lookup_elem(&start, &key);
	if (!s) {
		hist_miss();
		return NULL;
	}
	id = bpf_get_current_pid_tgid();
	s->insert = insert;
	s->issue = issue;
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->kstack_len = -1;
	if (evidence_on) {
		bpf_get_current_comm(s->comm, sizeof(s->comm));
		s->kstack_len = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	}
	return s;
}

/* record counts v for metric m of request s, with its submitter and the
 * stack it was submitted with as evidence. */
static __always_inline void record(struct started *s, __u32 m, __u64 v)
{
	struct evidence_event *ev;

	hist_record(m, v);
	ev = evidence_begin(m, v);
	if (!ev)
		return;
	ev->pid = s->pid;
	ev->tid = s->tid;
	__builtin_memcpy(ev->comm, s->comm, sizeof(ev->comm));
	ev->kstack_len = s->kstack_len;
	__builtin_memcpy(ev->kstack, s->kstack, sizeof(ev->kstack));
	evidence_submit(ev);
}

static __always_inline int on_insert(void *ctx, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct started *s;
	__u8 one = 1;

	if (!wanted(rq)) {
		/* The workload's, requeued and inserted again by kblockd. */
		s = bpf_map_lookup_elem(&start, &key);
		if (s && !s->insert && !s->issue)
			return 0;
		/* A stale entry of a request pointer reused by others. */
		bpf_map_delete_elem(&start, &key);
		if (dev_wanted(rq))
			bpf_map_update_elem(&others, &key, &one, BPF_ANY);
		return 0;
	}
	bpf_map_delete_elem(&others, &key);
	begin(ctx, key, bpf_ktime_get_ns(), 0);
	return 0;
}

static __always_inline int on_issue(void *ctx, struct request *rq)
{
	__u64 key = (__u64)rq, now = bpf_ktime_get_ns(), alloc;
	struct started *s;

	s = bpf_map_lookup_elem(&start, &key);
	if (s && !s->issue) {
		s->issue = now;
		if (s->insert)
			record(s, METRIC_QUEUE, now - s->insert);
		return 0;
	}
	/* Inserted by another task, dispatched now perhaps from the
	 * workload's context (again, after a requeue): not the workload's. */
	if (bpf_map_lookup_elem(&others, &key)) {
		if (s)
			bpf_map_delete_elem(&start, &key);
		return 0;
	}
	/* Issued without insert (or an entry left from an earlier use of
	 * the pointer): the workload's when it issues it itself, unless it
	 * was made before the tracer was loaded (start_time_ns is 0 where
	 * the queue keeps no times) or went through the I/O scheduler. */
	alloc = BPF_CORE_READ(rq, start_time_ns);
	if (!wanted(rq) || (alloc && alloc < targ_since) || scheduled(rq)) {
		if (s)
			bpf_map_delete_elem(&start, &key);
		return 0;
	}
	begin(ctx, key, 0, now);
	return 0;
}

static __always_inline int on_complete(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct started *s;

	bpf_map_delete_elem(&others, &key);
	s = bpf_map_lookup_elem(&start, &key);
	if (!s)
		return 0;
	if (s->issue)
		record(s, METRIC_RQ, bpf_ktime_get_ns() - s->issue);
	bpf_map_delete_elem(&start, &key);
	return 0;
}

/* on_requeue: a request the driver could not take (its queue full) goes
 * back to be issued again, from whichever task runs the queue next: the
 * workload's is still the workload's, timed from the issue that sticks,
 * and its queue time is not counted twice. */
static __always_inline int on_requeue(struct request *rq)
{
	__u64 key = (__u64)rq;
	struct started *s;

	s = bpf_map_lookup_elem(&start, &key);
	if (s) {
		s->insert = 0;
		s->issue = 0;
	}
	return 0;
}

/* on_merge forgets rq: merged into another request, it is freed without
 * an issue or a completion of its own, and its pointer's next use must
 * not find its entry. */
static __always_inline int on_merge(struct request *rq)
{
	__u64 key = (__u64)rq;

	bpf_map_delete_elem(&start, &key);
	bpf_map_delete_elem(&others, &key);
	return 0;
}

TP_PROGS(block_rq_insert, struct request *rq)
{
	return on_insert(ctx, rq);
}

TP_PROGS(block_rq_issue, struct request *rq)
{
	return on_issue(ctx, rq);
}

TP_PROGS(block_rq_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return on_complete(rq);
}

TP_PROGS(block_rq_merge, struct request *rq)
{
	return on_merge(rq);
}

TP_PROGS(block_rq_requeue, struct request *rq)
{
	return on_requeue(rq);
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
