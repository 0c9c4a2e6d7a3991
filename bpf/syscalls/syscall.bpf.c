//go:build ignore

/* syscall.bpf.c: latency of selected syscalls, sys_enter to sys_exit, for the
 * workload's tasks. The start time lives in task storage: one pointer chase
 * from the current task, no global hash.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "tp.bpf.h"
#include "syscall.h"

/* targ_metric[nr] is 1 + the metric index of syscall nr, 0 if not traced. */
const volatile __u8 targ_metric[SYSCALL_NR_MAX] = {};

/* Kept per task. The filter's verdict is cached here (traced, as of
 * follow_gen gen), so the hot path needs no map lookup besides this one. */
struct start {
	__u64 ts;
	__u64 gen;
	__u32 metric;
	__u32 traced;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct start);
} start SEC(".maps");

HIST_MAPS;

static __always_inline int on_enter(long id)
{
	struct task_struct *task;
	struct start *s;
	__u64 id_tgid, gen;
	__u8 m;

	if ((unsigned long)id >= SYSCALL_NR_MAX)
		return 0;
	m = targ_metric[id];
	if (!m)
		return 0;
	task = bpf_get_current_task_btf();
	gen = follow_gen;
	s = bpf_task_storage_get(&start, task, 0, 0);
	if (!s || s->gen != gen) {
		id_tgid = bpf_get_current_pid_tgid();
		if (!follow_traced((__u32)id_tgid, id_tgid >> 32)) {
			if (s) {
				s->traced = 0;
				s->gen = gen;
			}
			return 0;
		}
		s = bpf_task_storage_get(&start, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (!s)
			return 0;
		s->traced = 1;
		s->gen = gen;
	}
	if (!s->traced)
		return 0;
	s->metric = m - 1;
	s->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_exit(void *ctx)
{
	struct start *s;
	__u64 ts, v;

	/* Only traced tasks have storage: the lookup is the filter. */
	s = bpf_task_storage_get(&start, bpf_get_current_task_btf(), 0, 0);
	if (!s || !s->ts)
		return 0;
	ts = s->ts;
	s->ts = 0;
	v = bpf_ktime_get_ns() - ts;
	hist_record(s->metric, v);
	evidence_current(ctx, s->metric, v);
	return 0;
}

TP_PROGS(sys_enter, struct pt_regs *regs, long id)
{
	return on_enter(id);
}

TP_PROGS(sys_exit, struct pt_regs *regs, long ret)
{
	return on_exit(ctx);
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
