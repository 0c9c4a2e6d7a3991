//go:build ignore

/* irq.bpf.c: how long hardirq handlers run, in the manner of bcc's
 * hardirqs: irq_handler_entry to irq_handler_exit, by the name of the
 * handler's action.
 *
 * Interrupts belong to no task: they are counted on every CPU, or on the
 * CPUs of targ_cpus. The evidence of a slow one is the task it interrupted
 * (the current task) and that task's stacks.
 *
 * State is per CPU: hardirq handlers do not nest.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "tp.bpf.h"
#include "irq.h"

/* targ_cpu_filter: count only on the CPUs set in targ_cpus. */
const volatile bool targ_cpu_filter = false;
const volatile __u64 targ_cpus[IRQ_MAX_CPUS / 64] = {};

/* The actions counted: name -> metric index. Filled before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HIST_MAX_METRICS);
	__type(key, struct irq_name);
	__type(value, __u32);
} irq_metric SEC(".maps");

struct running {
	__u64 start; /* 0: no counted handler running */
	__u32 metric;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct running);
} running SEC(".maps");

HIST_MAPS;

static __always_inline struct running *this_cpu(void)
{
	__u32 zero = 0, cpu;

	if (targ_cpu_filter) {
		cpu = bpf_get_smp_processor_id();
		if (cpu >= IRQ_MAX_CPUS || !(targ_cpus[cpu / 64] & (1ULL << (cpu % 64))))
			return NULL;
	}
	return bpf_map_lookup_elem(&running, &zero);
}

static __always_inline void handler_entry(struct irqaction *action)
{
	struct irq_name key = {};
	struct running *r;
	__u32 *m;

	r = this_cpu();
	if (!r)
		return;
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), BPF_CORE_READ(action, name));
	m = bpf_map_lookup_elem(&irq_metric, &key);
	if (!m)
		return;
	r->metric = *m;
	r->start = bpf_ktime_get_ns();
}

static __always_inline void handler_exit(void *ctx)
{
	struct running *r = this_cpu();
	__u64 delta;

	if (!r || !r->start)
		return;
	delta = bpf_ktime_get_ns() - r->start;
	r->start = 0;
	hist_record(r->metric, delta);
	evidence_current(ctx, r->metric, delta);
}

TP_PROGS(irq_handler_entry, int irq, struct irqaction *action)
{
	handler_entry(action);
	return 0;
}

TP_PROGS(irq_handler_exit, int irq, struct irqaction *action, int ret)
{
	handler_exit(ctx);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
