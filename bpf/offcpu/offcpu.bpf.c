//go:build ignore

/* offcpu.bpf.c: how long the workload's tasks are off the CPU, in the
 * manner of offcputime: from a task's switch-out to its next switch-in,
 * split by why it left: blocked (its state at switch-out was not
 * TASK_RUNNING: it waits for something) or runnable (preempted, or it
 * yielded: it waits for a CPU).
 *
 * The evidence of a slow event carries the kernel stack the task left the
 * CPU with, which says what it waited for. tp_btf programs read it at
 * switch-in from the task itself (bpf_get_task_stack of next): a task that
 * has not run since its switch-out still holds the stack it left with, and
 * reading it only for the events above the evidence floor keeps the cost
 * near zero. raw_tp programs get no trusted task pointer, so they take the
 * stack at every switch-out while evidence is on and keep it with the
 * timestamp.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "offcpu.h"

#define TASK_RUNNING 0
#define PF_EXITING 0x4

struct switched_out {
	__u64 ts; /* 0: not switched out while traced */
	__u32 runnable;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct switched_out);
} start SEC(".maps");

/* raw_tp: by tid, with the stack at switch-out. Entries are removed when
 * their task exits, and exiting tasks make none. */
struct switched_out_stack {
	__u64 ts;
	__u32 runnable;
	struct kept_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct switched_out_stack);
} start_pid SEC(".maps");

static const struct switched_out_stack empty = {};

HIST_MAPS;

/* runnable reports whether prev leaves the CPU runnable: preempted (the
 * scheduler ignores its state then and keeps it queued) or still
 * TASK_RUNNING (yield, a preemption point). */
static __always_inline __u32 runnable(bool preempt, unsigned int prev_state)
{
	return preempt || prev_state == TASK_RUNNING;
}

static __always_inline __u32 metric_of(__u32 runnable)
{
	return runnable ? METRIC_RUNNABLE : METRIC_BLOCKED;
}

/* tp_btf variant */

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct evidence_event *ev;
	struct switched_out *o;
	__u64 now = bpf_ktime_get_ns(), delta;
	__u32 m;

	/* An exiting task is not timed: its last switch-out has no
	 * switch-in. */
	if (prev->pid && !(prev->flags & PF_EXITING) && follow_traced(prev->pid, prev->tgid)) {
		o = bpf_task_storage_get(&start, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!o) {
			hist_miss();
		} else {
			o->ts = now;
			o->runnable = runnable(preempt, prev_state);
		}
	}
	if (!next->pid || !follow_traced_task(next, next->pid, next->tgid))
		return 0;
	/* A traced task switched out while traced has storage; NULL here
	 * (with F_CREATE, which only allocates for a task never switched
	 * out) means the storage was busy and the event is lost. */
	o = bpf_task_storage_get(&start, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!o) {
		hist_miss();
		return 0;
	}
	if (!o->ts)
		return 0;
	delta = now - o->ts;
	m = metric_of(o->runnable);
	o->ts = 0;
	hist_record(m, delta);
	ev = evidence_begin(m, delta);
	if (ev) {
		evidence_fill_task(ev, next, prev);
		ev->kstack_len = bpf_get_task_stack(next, ev->kstack, sizeof(ev->kstack), 0);
		evidence_submit(ev);
	}
	return 0;
}

/* raw_tp variant */

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw, bool preempt, struct task_struct *prev,
	     struct task_struct *next, unsigned int prev_state)
{
	struct switched_out_stack *o;
	struct evidence_event *ev;
	__u64 now = bpf_ktime_get_ns(), delta;
	__u32 pid, m;

	pid = BPF_CORE_READ(prev, pid);
	if (pid && !(BPF_CORE_READ(prev, flags) & PF_EXITING) &&
	    follow_traced(pid, BPF_CORE_READ(prev, tgid))) {
		o = bpf_map_lookup_elem(&start_pid, &pid);
		if (!o) {
			bpf_map_update_elem(&start_pid, &pid, &empty, BPF_NOEXIST);
			o = bpf_map_lookup_elem(&start_pid, &pid);
		}
		if (!o) {
			hist_miss();
		} else {
			o->ts = now;
			o->runnable = runnable(preempt, prev_state);
			/* prev is the current task: its stack is this one. */
			if (evidence_on)
				evidence_keep_stack(ctx, &o->stack);
		}
	}
	pid = BPF_CORE_READ(next, pid);
	if (!pid)
		return 0;
	o = bpf_map_lookup_elem(&start_pid, &pid);
	if (!o || !o->ts)
		return 0;
	delta = now - o->ts;
	m = metric_of(o->runnable);
	o->ts = 0;
	hist_record(m, delta);
	ev = evidence_begin(m, delta);
	if (ev) {
		evidence_fill_task(ev, next, prev);
		evidence_kept_stack(ev, &o->stack);
		evidence_submit(ev);
	}
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(task_exit_raw, struct task_struct *p)
{
	__u32 pid = BPF_CORE_READ(p, pid);

	bpf_map_delete_elem(&start_pid, &pid);
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
