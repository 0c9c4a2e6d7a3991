//go:build ignore

/* empty.bpf.c: programs that do nothing on the tracepoints the syscall tracer
 * uses. The cost benchmark measures the tracer against them, so that what
 * the tracer's own work costs is told apart from the cost of the hook.
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
