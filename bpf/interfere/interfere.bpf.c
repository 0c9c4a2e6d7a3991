//go:build ignore

/* interfere.bpf.c: what ran on each CPU, recently, for the evidence of
 * slow events (in the manner of rtla timerlat's auto-analysis): hardirq
 * handlers by action name, the local timer interrupt (x86), softirqs by
 * vector, and tasks by tid and comm, as the segments of interfere.h.
 *
 * Every CPU is logged, whatever the workload: interference comes from
 * elsewhere. Each hook costs one per-CPU array lookup and a segment
 * write; the log is only read by the evidence of events above their
 * metric's floor (evidence.bpf.h).
 *
 * BPF programs of different hooks may nest on a CPU (a hardirq during the
 * softirq_entry program): a segment written meanwhile may be torn. The
 * readers take it as it is.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "interfere.h"
#include "tp.bpf.h"

INTERFERE_MAP;

static __always_inline struct interfere_cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&interfere_log, &zero);
}

/* close_open ends the open segment at now, logging it unless it is idle or
 * of an unknown context, and opens the next one at now. */
static __always_inline void close_open(struct interfere_cpu *c, __u64 now)
{
	struct interfere_ctx *x = &c->stack[c->depth & (INTERFERE_DEPTH - 1)];
	struct interfere_seg *s;
	__u64 h;

	if (!c->open_start) {
		/* The first hook run on this CPU: the log starts here. */
		c->valid_from = now;
	} else if (x->kind != INTERFERE_NONE && !(x->kind == INTERFERE_TASK && x->id == 0)) {
		h = c->head;
		s = &c->log[h & (INTERFERE_LOG - 1)];
		if (h >= INTERFERE_LOG)
			c->valid_from = s->end; /* overwritten: older is lost */
		s->start = c->open_start;
		s->end = now;
		s->ctx = *x;
		c->head = h + 1;
	}
	c->open_start = now;
}

/* push opens an interrupt's segment; the interrupted context waits below it. */
static __always_inline struct interfere_ctx *push(struct interfere_cpu *c, __u32 kind, __u32 id)
{
	struct interfere_ctx *x;
	__u64 now = bpf_ktime_get_ns(), pid, d;

	/* The task running when the log started is known from the first
	 * interrupt that finds it. */
	if (c->depth == 0 && c->stack[0].kind == INTERFERE_NONE) {
		pid = bpf_get_current_pid_tgid();
		c->stack[0].kind = INTERFERE_TASK;
		c->stack[0].id = (__u32)pid;
		bpf_get_current_comm(c->stack[0].name, sizeof(c->stack[0].name));
	}
	close_open(c, now);
	d = c->depth;
	if (d >= INTERFERE_DEPTH - 1)
		return NULL; /* exits were lost; keep the deepest */
	d++;
	c->depth = d;
	/* Keep the mask: the verifier cannot follow the compiler's bound. */
	asm volatile("" : "+r"(d));
	x = &c->stack[d & (INTERFERE_DEPTH - 1)];
	x->kind = kind;
	x->id = id;
	return x;
}

/* pop closes the interrupt of this kind, if it is the open one, and reopens
 * what it interrupted. */
static __always_inline void pop(__u32 kind)
{
	struct interfere_cpu *c = this_cpu();

	if (!c || c->depth == 0 || c->stack[c->depth & (INTERFERE_DEPTH - 1)].kind != kind)
		return;
	close_open(c, bpf_ktime_get_ns());
	c->depth--;
}

static __always_inline void hardirq_entry(int irq, struct irqaction *action)
{
	struct interfere_cpu *c = this_cpu();
	struct interfere_ctx *x;

	if (!c)
		return;
	x = push(c, INTERFERE_HARDIRQ, irq);
	if (x)
		bpf_probe_read_kernel_str(x->name, sizeof(x->name), BPF_CORE_READ(action, name));
}

static __always_inline void timer_entry(int vector)
{
	static const char name[INTERFERE_NAME] = "local_timer";
	struct interfere_cpu *c = this_cpu();
	struct interfere_ctx *x;

	if (!c)
		return;
	x = push(c, INTERFERE_HARDIRQ, INTERFERE_VECTOR | (__u32)vector);
	if (x)
		__builtin_memcpy(x->name, name, sizeof(x->name));
}

static __always_inline void softirq_entry(unsigned int vec)
{
	struct interfere_cpu *c = this_cpu();
	struct interfere_ctx *x;

	if (!c)
		return;
	x = push(c, INTERFERE_SOFTIRQ, vec);
	if (x)
		x->name[0] = 0;
}

/* switched closes prev's segment and opens next's. */
static __always_inline void switched(__u32 pid, const char *comm)
{
	struct interfere_cpu *c = this_cpu();

	if (!c)
		return;
	close_open(c, bpf_ktime_get_ns());
	c->depth = 0; /* a switch happens in task context only */
	c->stack[0].kind = INTERFERE_TASK;
	c->stack[0].id = pid;
	bpf_probe_read_kernel_str(c->stack[0].name, sizeof(c->stack[0].name), comm);
}

TP_PROGS(irq_handler_entry, int irq, struct irqaction *action)
{
	hardirq_entry(irq, action);
	return 0;
}

TP_PROGS(irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	pop(INTERFERE_HARDIRQ);
	return 0;
}

TP_PROGS(softirq_entry, unsigned int vec)
{
	softirq_entry(vec);
	return 0;
}

TP_PROGS(softirq_exit, unsigned int vec)
{
	pop(INTERFERE_SOFTIRQ);
	return 0;
}

/* x86 only: loaded where the kernel has the tracepoint. */
TP_PROGS(local_timer_entry, int vector)
{
	timer_entry(vector);
	return 0;
}

TP_PROGS(local_timer_exit, int vector)
{
	pop(INTERFERE_HARDIRQ);
	return 0;
}

/* Written out: tp_btf reads next's pid directly, raw_tp with BPF_CORE_READ. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	switched(next->pid, next->comm);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	switched(BPF_CORE_READ(next, pid), next->comm);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
