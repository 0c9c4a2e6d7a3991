//go:build ignore

/* sched.bpf.c: run-queue latency of the workload's tasks, in the manner of
 * runqlat: from wakeup (or wakeup of a new task, or preemption) to the moment
 * the task is switched in.
 *
 * tp_btf programs get trusted task pointers and keep the enqueue time in task
 * storage; raw_tp programs (kernels without tp_btf, and guests, whose tracers
 * relocate against a cut of their kernel's BTF) fall back to a hash keyed by
 * pid.
 *
 * The evidence of a slow wait carries the woken task's kernel stack, which
 * is where it slept (or was preempted). tp_btf programs read it at
 * switch-in from the task itself (bpf_get_task_stack of next), only for
 * the events above the evidence floor; raw_tp programs get no trusted task
 * pointer, so while evidence is on they keep each traced task's stack at
 * its switch-out, as offcpu does.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "sched.h"

#define TASK_RUNNING 0
#define PF_EXITING 0x4

struct enqueued {
	__u64 ts;
	__u32 kind;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct enqueued);
} start SEC(".maps");

/* Not preallocated: only the raw_tp fallback uses it, and 64k preallocated
 * entries cost tens of ms at load (seconds under TCG). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct enqueued);
} start_pid SEC(".maps");

/* raw_tp with evidence: each traced task's kernel stack at its last
 * switch-out, by tid. Entries go when their task exits, and exiting tasks
 * make none. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct kept_stack);
} left_stacks SEC(".maps");

static const struct kept_stack no_stack = {};

HIST_MAPS;

/* evidence of a run-queue wait: the woken task, the task switched out for
 * it, and the woken task's kernel stack, which is where it had slept: read
 * from the task (tp_btf: it needs a trusted task) or kept at its switch-out
 * (raw_tp). */
static __always_inline void evidence_runq(__u32 m, __u64 delta, struct task_struct *next,
					  struct task_struct *prev, bool btf)
{
	struct evidence_event *ev = evidence_begin(m, delta);
	struct kept_stack *ls;
	__u32 pid;

	if (!ev)
		return;
	evidence_fill_task(ev, next, prev);
	if (btf) {
		ev->kstack_len = bpf_get_task_stack(next, ev->kstack, sizeof(ev->kstack), 0);
	} else {
		pid = BPF_CORE_READ(next, pid);
		ls = bpf_map_lookup_elem(&left_stacks, &pid);
		if (ls)
			evidence_kept_stack(ev, ls);
	}
	evidence_submit(ev);
}

static __always_inline void record(struct enqueued *e, struct task_struct *next,
				   struct task_struct *prev, bool btf)
{
	__u64 delta = bpf_ktime_get_ns() - e->ts;
	__u32 m = e->kind == KIND_PREEMPTED ? METRIC_RUNQ_PREEMPTED : METRIC_RUNQ;

	/* Two places evidence_runq is inlined, not one per kind: each copy
	 * is verified apart, and the verifier's time is much of a guest's
	 * attach under TCG. */
	hist_record(m, delta);
	evidence_runq(m, delta, next, prev, btf);
	if (e->kind == KIND_WAKEUP_NEW) {
		hist_record(METRIC_WAKEUP_NEW, delta);
		evidence_runq(METRIC_WAKEUP_NEW, delta, next, prev, btf);
	}
	e->ts = 0;
}

/* tp_btf variant */

static __always_inline void enqueue_btf(struct task_struct *p, __u32 kind)
{
	struct enqueued *e;

	if (!follow_traced_task(p, p->pid, p->tgid))
		return;
	e = bpf_task_storage_get(&start, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		hist_miss();
		return;
	}
	e->kind = kind;
	e->ts = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_btf, struct task_struct *p)
{
	enqueue_btf(p, KIND_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_btf, struct task_struct *p)
{
	enqueue_btf(p, KIND_WAKEUP_NEW);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct enqueued *e;

	if (prev_state == TASK_RUNNING)
		enqueue_btf(prev, KIND_PREEMPTED);
	if (!follow_traced_task(next, next->pid, next->tgid))
		return 0;
	/* A traced task that was enqueued has storage; NULL here (with
	 * F_CREATE, which only allocates for a task never enqueued) means
	 * the storage was busy and the event is lost. */
	e = bpf_task_storage_get(&start, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e)
		hist_miss();
	else if (e->ts)
		record(e, next, prev, true);
	return 0;
}

/* raw_tp variant */

static __always_inline void enqueue_raw(struct task_struct *p, __u32 kind)
{
	struct enqueued e = { .kind = kind };
	__u32 pid;

	pid = BPF_CORE_READ(p, pid);
	if (!follow_traced_task(p, pid, BPF_CORE_READ(p, tgid)))
		return;
	e.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&start_pid, &pid, &e, BPF_ANY))
		hist_miss();
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw, struct task_struct *p)
{
	enqueue_raw(p, KIND_WAKEUP);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw, struct task_struct *p)
{
	enqueue_raw(p, KIND_WAKEUP_NEW);
	return 0;
}

/* keep_stack keeps prev's kernel stack, prev being the current task. */
static __always_inline void keep_stack(void *ctx, struct task_struct *prev)
{
	struct kept_stack *ls;
	__u32 pid;

	pid = BPF_CORE_READ(prev, pid);
	if (!pid || (BPF_CORE_READ(prev, flags) & PF_EXITING) ||
	    !follow_traced_task(prev, pid, BPF_CORE_READ(prev, tgid)))
		return;
	ls = bpf_map_lookup_elem(&left_stacks, &pid);
	if (!ls) {
		bpf_map_update_elem(&left_stacks, &pid, &no_stack, BPF_NOEXIST);
		ls = bpf_map_lookup_elem(&left_stacks, &pid);
	}
	if (ls)
		evidence_keep_stack(ctx, ls);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct enqueued *e;
	__u32 pid;

	if (prev_state == TASK_RUNNING)
		enqueue_raw(prev, KIND_PREEMPTED);
	pid = BPF_CORE_READ(next, pid);
	e = bpf_map_lookup_elem(&start_pid, &pid);
	if (e) {
		record(e, next, prev, false);
		bpf_map_delete_elem(&start_pid, &pid);
	}
	return 0;
}

/* A program of its own, so that the verifier explores it apart from the
 * one above rather than across every path of both (under TCG, the
 * verifier's time is much of a guest's attach). */
SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_stack_raw, bool preempt, struct task_struct *prev)
{
	if (evidence_on)
		keep_stack(ctx, prev);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(task_exit_raw, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&left_stacks, &pid);
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
