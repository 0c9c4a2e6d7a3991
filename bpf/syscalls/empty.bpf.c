//go:build ignore

/* empty.bpf.c: programs that do nothing on the tracepoints the syscall tracer
 * uses, and programs that only read the clock there. The cost benchmark
 * measures the tracer against them, so that what the tracer's own work
 * costs is told apart from the cost of the hook and of the clock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/sys_enter")
int BPF_PROG(empty_enter, struct pt_regs *regs, long id)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(empty_exit, struct pt_regs *regs, long ret)
{
	return 0;
}

/* The floor of any latency tracer: one clock read per hook, nothing kept. */
__u64 sink = 0;

SEC("tp_btf/sys_enter")
int BPF_PROG(clock_enter, struct pt_regs *regs, long id)
{
	sink = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(clock_exit, struct pt_regs *regs, long ret)
{
	sink = bpf_ktime_get_ns();
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
