//go:build ignore

/* ufunc.bpf.c: latency of user-space functions of a binary or shared
 * library, entry to return, for the workload's tasks, the attach cookie
 * each probe's metric index. The probes fire in every process that runs
 * the code; follow_traced keeps the workload's.
 *
 * C and other code: a uprobe/uretprobe pair attached once per function.
 *
 * Go code (amd64, Go 1.17 or later): a uretprobe would plant its return
 * address on a goroutine's stack, which the runtime moves and walks, so
 * ufunc_go_entry is attached at the function's entry and ufunc_go_return
 * at each of its RET instructions. A goroutine may block in the function
 * and return on another thread, so the start time is not the thread's:
 * it is keyed by the goroutine, the g the register ABI keeps in R14, and
 * by the call's depth on the goroutine's stack, g.stack.hi - SP, which
 * tells a recursive call from its caller and stays the same when the
 * runtime copies the stack to a larger one (SP at the entry and at the
 * RET both point at the return address).
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

/* A call of a Go function in flight: the process, the metric, the
 * goroutine (its g) and the call's depth on its stack. */
struct go_call {
	__u32 tgid;
	__u32 metric;
	__u64 g;
	__u64 depth;
};

/* GO_MAX_CALLS bounds the Go calls in flight at once. A call that never
 * reaches a RET (a panic through it, runtime.Goexit) leaves its start
 * behind; the next call at the same depth of the same g replaces it, and
 * the least recently used go first when the map is full. */
#define GO_MAX_CALLS 16384

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GO_MAX_CALLS);
	__type(key, struct go_call);
	__type(value, __u64);
} go_start SEC(".maps");

/* GO_G_STACK_HI is the offset of stack.hi in the runtime's g: its first
 * field is stack, {lo, hi}. */
#define GO_G_STACK_HI 8

/* go_call_of fills k for the current call of the traced Go process tgid:
 * false when R14 holds no g (an assembly function). */
static __always_inline bool go_call_of(struct pt_regs *ctx, __u32 tgid, struct go_call *k)
{
	__u64 g = ctx->r14, hi = 0;

	if (!g || bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + GO_G_STACK_HI)) || hi < ctx->sp)
		return false;
	k->tgid = tgid;
	k->metric = bpf_get_attach_cookie(ctx);
	k->g = g;
	k->depth = hi - ctx->sp;
	return true;
}

SEC("uprobe")
int ufunc_go_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ts;
	struct go_call k = {};

	if (!follow_traced((__u32)id, id >> 32))
		return 0;
	if (!go_call_of(ctx, id >> 32, &k)) {
		hist_miss();
		return 0;
	}
	/* A call that grows its goroutine's stack enters twice: the check
	 * at its entry calls runtime.morestack, which copies the stack and
	 * runs the function again from its entry, at the same depth. The
	 * second entry's time replaces the first's. */
	ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&go_start, &k, &ts, BPF_ANY))
		hist_miss();
	return 0;
}

/* go_evidence is evidence_current at a Go function's RET, whose user
 * stack would miss the function's caller: the frame pointer is the
 * caller's again, so the unwinder goes from the function to its caller's
 * caller. The caller is the return address at SP, put in after the
 * function's own frame. */
static __always_inline void go_evidence(struct pt_regs *ctx, __u32 m, __u64 v)
{
	struct evidence_event *e = evidence_begin(m, v);
	__u64 id, ret = 0;
	long n;

	if (!e)
		return;
	id = bpf_get_current_pid_tgid();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->kstack_len = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	n = bpf_get_stack(ctx, &e->ustack[1], sizeof(e->ustack) - sizeof(e->ustack[0]), BPF_F_USER_STACK);
	if (n > 0 && !bpf_probe_read_user(&ret, sizeof(ret), (void *)ctx->sp)) {
		e->ustack[0] = e->ustack[1];
		e->ustack[1] = ret;
		n += sizeof(e->ustack[0]);
	} else if (n > 0) {
		n = bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK);
	}
	e->ustack_len = n;
	evidence_interference(e);
	evidence_submit(e);
}

SEC("uprobe")
int ufunc_go_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), *ts, v;
	struct go_call k = {};

	if (!follow_traced((__u32)id, id >> 32) || !go_call_of(ctx, id >> 32, &k))
		return 0;
	ts = bpf_map_lookup_elem(&go_start, &k);
	if (!ts)
		return 0; /* a call that began before the probes */
	v = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&go_start, &k);
	hist_record(k.metric, v);
	go_evidence(ctx, k.metric, v);
	return 0;
}

FOLLOW_PROGS

char LICENSE[] SEC("license") = "Dual BSD/GPL";
