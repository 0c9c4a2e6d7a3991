//go:build ignore

/* kfunc.bpf.c: latency of named kernel functions, entry to return, for the
 * workload's tasks. Two variants, picked at load time: fentry/fexit, where
 * one program pair is loaded per function (a trampoline program names its
 * target at load), and kprobe/kretprobe, where one pair is attached once per
 * function. Either way the attach cookie is the function's metric index.
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

/* The target is set per copy from Go (ProgramSpec.AttachTo). */
SEC("fentry")
int kfunc_entry(void *ctx)
{
	call_entry(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("fexit")
int kfunc_exit(void *ctx)
{
	call_return(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("kprobe")
int kprobe_entry(struct pt_regs *ctx)
{
	call_entry(bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("kretprobe")
int kprobe_return(struct pt_regs *ctx)
{
	call_return(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
