//go:build ignore

/* irq.bpf.c: the time interrupts take, in the manner of bcc's hardirqs and
 * softirqs: a hardirq handler's duration by its action's name
 * (irq_handler_entry to irq_handler_exit), and per softirq vector the
 * latency from raise to entry and the duration from entry to exit.
 *
 * Interrupts belong to no task: they are counted on every CPU, or on the
 * CPUs of targ_cpus. The evidence of a slow one is the task it
 * interrupted (the current task) and that task's stacks.
 *
 * State is per CPU: hardirq handlers do not nest, softirqs do not nest, and
 * a raised vector runs on the CPU that raised it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "irq.h"

/* targ_cpu_filter: count only on the CPUs set in targ_cpus. */
const volatile bool targ_cpu_filter = false;
const volatile __u64 targ_cpus[IRQ_MAX_CPUS / 64] = {};

/* Per vector, 1 + the metric index of its raise-to-entry latency and of its
 * entry-to-exit duration; 0 when not counted. */
const volatile __u8 targ_vec_latency[IRQ_VECTORS] = {};
const volatile __u8 targ_vec_duration[IRQ_VECTORS] = {};

/* The hardirq actions counted: name -> metric index. Filled before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HIST_MAX_METRICS);
	__type(key, struct irq_name);
	__type(value, __u32);
} irq_metric SEC(".maps");

struct cpu_state {
	__u64 hard_start; /* 0: no counted handler running */
	__u32 hard_metric;
	__u32 soft_vec;
	__u64 soft_start; /* 0: no counted softirq running */
	/* First raise of each vector not yet run; 0: none. Raises of a
	 * vector already pending coalesce into its next run, as the kernel's
	 * pending bits do. */
	__u64 raised[IRQ_VECTORS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} state SEC(".maps");

HIST_MAPS;

static __always_inline struct cpu_state *this_cpu(void)
{
	__u32 zero = 0, cpu;

	if (targ_cpu_filter) {
		cpu = bpf_get_smp_processor_id();
		if (cpu >= IRQ_MAX_CPUS || !(targ_cpus[cpu / 64] & (1ULL << (cpu % 64))))
			return NULL;
	}
	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline void hard_entry(struct irqaction *action)
{
	struct irq_name key = {};
	struct cpu_state *s;
	__u32 *m;

	s = this_cpu();
	if (!s)
		return;
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), BPF_CORE_READ(action, name));
	m = bpf_map_lookup_elem(&irq_metric, &key);
	if (!m)
		return;
	s->hard_metric = *m;
	s->hard_start = bpf_ktime_get_ns();
}

static __always_inline void hard_exit(void *ctx)
{
	struct cpu_state *s = this_cpu();
	__u64 delta;

	if (!s || !s->hard_start)
		return;
	delta = bpf_ktime_get_ns() - s->hard_start;
	s->hard_start = 0;
	hist_record(s->hard_metric, delta);
	evidence_current(ctx, s->hard_metric, delta);
}

static __always_inline void soft_raise(unsigned int vec)
{
	struct cpu_state *s;

	if (vec >= IRQ_VECTORS || !targ_vec_latency[vec])
		return;
	s = this_cpu();
	if (s && !s->raised[vec])
		s->raised[vec] = bpf_ktime_get_ns();
}

static __always_inline void soft_entry(void *ctx, unsigned int vec)
{
	struct cpu_state *s;
	__u64 now, raised;
	__u32 m;

	if (vec >= IRQ_VECTORS)
		return;
	s = this_cpu();
	if (!s)
		return;
	now = bpf_ktime_get_ns();
	if (targ_vec_latency[vec]) {
		raised = s->raised[vec];
		if (raised) {
			s->raised[vec] = 0;
			m = targ_vec_latency[vec] - 1;
			hist_record(m, now - raised);
			evidence_current(ctx, m, now - raised);
		}
	}
	if (targ_vec_duration[vec]) {
		s->soft_vec = vec;
		s->soft_start = bpf_ktime_get_ns();
	}
}

static __always_inline void soft_exit(void *ctx, unsigned int vec)
{
	struct cpu_state *s;
	__u64 delta;
	__u32 m;

	if (vec >= IRQ_VECTORS || !targ_vec_duration[vec])
		return;
	s = this_cpu();
	if (!s || !s->soft_start || s->soft_vec != vec)
		return;
	delta = bpf_ktime_get_ns() - s->soft_start;
	s->soft_start = 0;
	m = targ_vec_duration[vec] - 1;
	hist_record(m, delta);
	evidence_current(ctx, m, delta);
}

/* tp_btf variant */

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_handler_entry_btf, int irq, struct irqaction *action)
{
	hard_entry(action);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_handler_exit_btf, int irq, struct irqaction *action, int ret)
{
	hard_exit(ctx);
	return 0;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(softirq_raise_btf, unsigned int vec)
{
	soft_raise(vec);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry_btf, unsigned int vec)
{
	soft_entry(ctx, vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit_btf, unsigned int vec)
{
	soft_exit(ctx, vec);
	return 0;
}

/* raw_tp variant */

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(irq_handler_entry_raw, int irq, struct irqaction *action)
{
	hard_entry(action);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(irq_handler_exit_raw, int irq, struct irqaction *action, int ret)
{
	hard_exit(ctx);
	return 0;
}

SEC("raw_tp/softirq_raise")
int BPF_PROG(softirq_raise_raw, unsigned int vec)
{
	soft_raise(vec);
	return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(softirq_entry_raw, unsigned int vec)
{
	soft_entry(ctx, vec);
	return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(softirq_exit_raw, unsigned int vec)
{
	soft_exit(ctx, vec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
