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
 * With evidence_interfere, an event kept also carries what else ran on
 * its CPU while it was open: the window [end - latency, end] is walked in
 * the CPU's log of bpf/interfere (interfere.h), whose map the loader puts
 * in place of this object's interfere_log. Without it the walk is dead
 * code and the map is never read.
 *
 * Needs hist.bpf.h (HIST_MAX_METRICS) included first.
 */
#ifndef __EVIDENCE_BPF_H
#define __EVIDENCE_BPF_H

#include "interfere.h"

#define EVIDENCE_STACK 24
#define EVIDENCE_COMM 16
/* Contributors named per event, the largest (user space keeps fewer). */
#define EVIDENCE_TOP 8

/* Interference flags. */
#define EVIDENCE_INTERFERE_ON 1      /* the fields below were measured */
#define EVIDENCE_INTERFERE_PARTIAL 2 /* the window began before the log */

struct evidence_contrib {
	__u64 ns;
	struct interfere_ctx ctx;
};

/* Must match bpf/tracing.evidenceRecord. */
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
	/* What else ran on cpu in the window, ns by kind (not the event's
	 * own task, nor idle), and the largest contributors. */
	__u64 hardirq_ns;
	__u64 softirq_ns;
	__u64 task_ns;
	__u32 interfere_flags;
	__u32 pad;
	struct evidence_contrib top[EVIDENCE_TOP];
};

const volatile bool evidence_on = false;
const volatile bool evidence_interfere = false;
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

INTERFERE_MAP;

/* evidence_count adds the part of segment [start, end) of context x that
 * falls in e's window, [e->end - e->latency, e->end]. Segments of the
 * event's own task are not counted, nor an interrupt spanning the whole
 * window: that is the event itself (an irq or softirq metric).
 *
 * A global function, which the verifier checks once, alone, with its
 * arguments unknown. Inlined (or static, which it checks at each call),
 * its search of the top contributors was checked at every turn of the
 * walk's loop and at every place evidence is kept, each time with other
 * known values, so its states did not prune: that was most of the
 * verifier's time for every tracer with evidence (BENCHMARKS.md, "The
 * verifier's bill"). */
__attribute__((noinline)) int evidence_count(struct evidence_event *e, __u64 start, __u64 end,
					     struct interfere_ctx *x)
{
	__u64 from, to, lo, hi, ns, least = ~0ULL;
	__u32 kind, id, j, at = 0;

	if (!e || !x)
		return 0;
	to = e->end;
	from = to - e->latency;
	lo = start > from ? start : from;
	hi = end < to ? end : to;
	if (hi <= lo)
		return 0;
	ns = hi - lo;
	kind = x->kind;
	id = x->id;
	switch (kind) {
	case INTERFERE_TASK:
		if (id == e->tid || id == 0)
			return 0;
		e->task_ns += ns;
		break;
	case INTERFERE_HARDIRQ:
	case INTERFERE_SOFTIRQ:
		if (start <= from && end >= to)
			return 0;
		if (kind == INTERFERE_HARDIRQ)
			e->hardirq_ns += ns;
		else
			e->softirq_ns += ns;
		break;
	default:
		return 0;
	}
	for (j = 0; j < EVIDENCE_TOP; j++) {
		struct evidence_contrib *t = &e->top[j];

		if (t->ctx.kind == kind && t->ctx.id == id) {
			t->ns += ns;
			return 0;
		}
		if (t->ctx.kind == INTERFERE_NONE) {
			at = j;
			least = 0;
			break;
		}
		if (t->ns < least) {
			least = t->ns;
			at = j;
		}
	}
	/* A new contributor takes a free slot, or the smallest one's if it
	 * is larger. */
	if (at < EVIDENCE_TOP && least < ns) {
		e->top[at].ns = ns;
		e->top[at].ctx = *x;
	}
	return 0;
}

struct evidence_walk {
	struct evidence_event *e;
	struct interfere_cpu *c;
	__u64 from, head;
};

/* evidence_walk_seg counts the i-th newest logged segment; it stops the
 * walk at the first that ended before the window. */
static long evidence_walk_seg(__u64 i, void *arg)
{
	struct evidence_walk *w = arg;
	struct interfere_seg *s;

	if (i >= w->head)
		return 1;
	s = &w->c->log[(w->head - 1 - i) & (INTERFERE_LOG - 1)];
	if (s->end <= w->from)
		return 1;
	evidence_count(w->e, s->start, s->end, &s->ctx);
	return 0;
}

/* evidence_interference fills e's interference on this CPU: what ran
 * there in its window other than the event's task (e->tid). */
static __always_inline void evidence_interference(struct evidence_event *e)
{
	struct evidence_walk w = {};
	struct interfere_cpu *c;
	__u32 zero = 0;

	if (!evidence_interfere)
		return;
	c = bpf_map_lookup_elem(&interfere_log, &zero);
	if (!c)
		return;
	w.e = e;
	w.c = c;
	w.from = e->end - e->latency;
	w.head = c->head;
	e->interfere_flags = EVIDENCE_INTERFERE_ON;
	if (!c->open_start || w.from < c->valid_from)
		e->interfere_flags |= EVIDENCE_INTERFERE_PARTIAL;
	bpf_loop(INTERFERE_LOG, evidence_walk_seg, &w, 0);
	/* What is running now, since its segment opened. */
	if (c->open_start)
		evidence_count(e, c->open_start, e->end, &c->stack[c->depth & (INTERFERE_DEPTH - 1)]);
}

/* evidence_begin reserves an event for metric m of latency v when v is
 * above the metric's floor; the caller fills who and where, then calls
 * evidence_submit. */
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

/* The reader is woken when the ring holds this much, not per event: a
 * wakeup per slow event puts the reader on a CPU the workload may need
 * (in a one-vCPU guest it preempted syscall-read's loop 1,131 times in a
 * 0.5 s trial, against 107 without evidence). The trial's end flushes
 * what is left. */
#define EVIDENCE_WAKE_AT (64 * 1024)

/* evidence_submit sends e, waking the reader only past EVIDENCE_WAKE_AT. */
static __always_inline void evidence_submit(struct evidence_event *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(&evidence_events, BPF_RB_AVAIL_DATA) >= EVIDENCE_WAKE_AT)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
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
	evidence_interference(e);
	evidence_submit(e);
}

/* evidence_fill_task fills who (task), what ran instead (other) and the
 * interference on this CPU. */
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
		evidence_interference((e));                      \
	})

/* A task's kernel stack kept at its switch-out, for raw_tp programs: they
 * get no trusted task pointer to read it from at switch-in, as tp_btf
 * programs do with bpf_get_task_stack. sched and offcpu keep one per
 * traced task while evidence is on. */
struct kept_stack {
	__s32 kstack_len; /* bytes, or < 0 */
	__u64 kstack[EVIDENCE_STACK];
};

/* evidence_keep_stack keeps the current task's kernel stack in k. */
static __always_inline void evidence_keep_stack(void *ctx, struct kept_stack *k)
{
	k->kstack_len = bpf_get_stack(ctx, k->kstack, sizeof(k->kstack), 0);
}

/* evidence_kept_stack puts the stack kept in k into e: one helper call,
 * not a 1 KiB copy unrolled wherever it is inlined. */
static __always_inline void evidence_kept_stack(struct evidence_event *e, const struct kept_stack *k)
{
	if (!bpf_probe_read_kernel(e->kstack, sizeof(e->kstack), k->kstack))
		e->kstack_len = k->kstack_len;
}

#endif /* __EVIDENCE_BPF_H */
