//go:build ignore

/* ufunc.bpf.c: latency of user-space functions of a binary or shared
 * library, entry to return, for the workload's tasks: a uprobe/uretprobe
 * pair attached once per function, the attach cookie its metric index. The
 * probes fire in every process that runs the code; follow_traced keeps the
 * workload's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
HIST_MAPS;

#include "call.bpf.h"

SEC("uprobe")
int ufunc_entry(struct pt_regs *ctx)
{
	call_entry(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe")
int ufunc_return(struct pt_regs *ctx)
{
	call_return(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
