/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* sample.bpf.h: stacks sampled while a request is open, for the evidence
 * of what grew (docs/evidence.md).
 *
 * A perf event of each CPU (a clock, at SAMPLE_HZ of tracing/samples.go)
 * runs the tracer's sample program, which sends the current task's kernel
 * and user stacks when it is in the middle of one of the workload's
 * requests, tagged with the request (process, tag, start). When a request
 * that got a sample ends, the tracer sends an end record with its
 * latency. User space joins the two and keeps the samples of the requests
 * beyond the trial's gated percentile: only a request's end says whether
 * it was slow, and a sample cannot wait for it in the kernel.
 *
 * The tracer opens and closes requests itself (it knows what a request
 * is) and calls sample_take from its perf_event program. Records carry
 * evidence_epoch, as evidence events do. Needs evidence.bpf.h included
 * first.
 */
#ifndef __SAMPLE_BPF_H
#define __SAMPLE_BPF_H

#define SAMPLE_KIND_STACK 1
#define SAMPLE_KIND_END 2

/* Must match bpf/tracing.sampleHeader: what both kinds of record begin
 * with. */
struct sample_head {
	__u64 start; /* the request's start, bpf_ktime_get_ns() */
	__u64 epoch;
	__u64 latency; /* ns, in an end record; 0 in a stack */
	__u32 kind;
	__u32 pid; /* tgid */
	__u32 tid;
	__s32 tag; /* the request's key within its process (an fd) */
};

/* Must match bpf/tracing.sampleRecord. */
struct sample_stack {
	struct sample_head h;
	__s32 kstack_len; /* bytes, or < 0 */
	__s32 ustack_len;
	__u64 kstack[EVIDENCE_STACK];
	__u64 ustack[EVIDENCE_STACK];
};

/* Set at load when evidence is on and the kernel has perf events. */
const volatile bool sample_on = false;
/* Records the ring had no room for. */
__u64 sample_dropped = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} sample_events SEC(".maps");

/* The request open on a task, as of its read: the perf event finds it
 * here. A thread that reads one request and another thread that answers
 * it (a Go server) leave the reader's entry behind; the tracer checks it
 * against the request's own state before a stack is sent. */
struct sample_open {
	__u64 start;
	__u64 ref; /* the tracer's own key of the request's connection */
	__s32 tag;
	__u32 sampled; /* a stack was sent, where the tracer keeps it here */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sample_open);
} sample_task SEC(".maps");

/* sample_submit sends e, waking the reader only once the ring holds
 * EVIDENCE_WAKE_AT, as evidence_submit does. */
static __always_inline void sample_submit(void *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&sample_events, BPF_RB_AVAIL_DATA) >= EVIDENCE_WAKE_AT)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* sample_opened records that the current task opened request (tag, start),
 * on the connection the tracer knows as ref. */
static __always_inline void sample_opened(__s32 tag, __u64 ref, __u64 start)
{
	struct task_struct *task;
	struct sample_open *o;

	if (!sample_on)
		return;
	task = bpf_get_current_task_btf();
	o = bpf_task_storage_get(&sample_task, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!o)
		return;
	o->start = start;
	o->ref = ref;
	o->tag = tag;
	o->sampled = 0;
}

/* sample_current returns the request open on the current task, or NULL. */
static __always_inline struct sample_open *sample_current(void)
{
	struct sample_open *o;

	if (!sample_on)
		return NULL;
	o = bpf_task_storage_get(&sample_task, bpf_get_current_task_btf(), 0, 0);
	if (!o || !o->start)
		return NULL;
	return o;
}

/* sample_take sends the current task's stacks, taken in request o. */
static __always_inline void sample_take(void *ctx, struct sample_open *o)
{
	struct sample_stack *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&sample_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&sample_dropped, 1);
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->h.start = o->start;
	e->h.epoch = evidence_epoch;
	e->h.latency = 0;
	e->h.kind = SAMPLE_KIND_STACK;
	e->h.pid = id >> 32;
	e->h.tid = (__u32)id;
	e->h.tag = o->tag;
	e->kstack_len = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	e->ustack_len = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	sample_submit(e);
}

/* sample_end sends the end of request (tag, start) of the current
 * process, latency ns, which got samples. */
static __always_inline void sample_end(__s32 tag, __u64 start, __u64 latency)
{
	struct sample_head *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&sample_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&sample_dropped, 1);
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->start = start;
	e->epoch = evidence_epoch;
	e->latency = latency;
	e->kind = SAMPLE_KIND_END;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->tag = tag;
	sample_submit(e);
}

#endif /* __SAMPLE_BPF_H */
