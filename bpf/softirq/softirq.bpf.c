//go:build ignore

/* softirq.bpf.c: per softirq vector, how long a raised softirq waits to
 * run (softirq_raise to softirq_entry) and how long it runs (softirq_entry
 * to softirq_exit), in the manner of bcc's softirqs.
 *
 * Softirqs belong to no task: they are counted on every CPU, or on the
 * CPUs of targ_cpus. The evidence of a slow one is the task it interrupted
 * (the current task: the one that enabled bottom halves, an interrupted
 * one, or ksoftirqd) and that task's stacks.
 *
 * State is per CPU: softirqs do not nest, and a raised vector runs on the
 * CPU that raised it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.bpf.h"
#include "follow.bpf.h"
#include "evidence.bpf.h"
#include "tp.bpf.h"
#include "softirq.h"

/* targ_cpu_filter: count only on the CPUs set in targ_cpus. */
const volatile bool targ_cpu_filter = false;
const volatile __u64 targ_cpus[SOFTIRQ_MAX_CPUS / 64] = {};

/* Per vector, 1 + the metric index of its raise-to-entry latency and of its
 * entry-to-exit duration; 0 when not counted. */
const volatile __u8 targ_latency[SOFTIRQ_VECTORS] = {};
const volatile __u8 targ_duration[SOFTIRQ_VECTORS] = {};

struct cpu_state {
	__u64 start; /* 0: no counted softirq running */
	__u32 vec;
	__u32 pad;
	/* First raise of each vector not yet run; 0: none. Raises of a
	 * vector already pending coalesce into its next run, as the kernel's
	 * pending bits do. */
	__u64 raised[SOFTIRQ_VECTORS];
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
		if (cpu >= SOFTIRQ_MAX_CPUS || !(targ_cpus[cpu / 64] & (1ULL << (cpu % 64))))
			return NULL;
	}
	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline void on_raise(unsigned int vec)
{
	struct cpu_state *s;

	if (vec >= SOFTIRQ_VECTORS || !targ_latency[vec])
		return;
	s = this_cpu();
	if (s && !s->raised[vec])
		s->raised[vec] = bpf_ktime_get_ns();
}

static __always_inline void on_entry(void *ctx, unsigned int vec)
{
	struct cpu_state *s;
	__u64 raised, delta;
	__u32 m;

	if (vec >= SOFTIRQ_VECTORS)
		return;
	s = this_cpu();
	if (!s)
		return;
	if (targ_latency[vec]) {
		raised = s->raised[vec];
		if (raised) {
			s->raised[vec] = 0;
			delta = bpf_ktime_get_ns() - raised;
			m = targ_latency[vec] - 1;
			hist_record(m, delta);
			evidence_current(ctx, m, delta);
		}
	}
	if (targ_duration[vec]) {
		s->vec = vec;
		/* After the latency's evidence: its cost is not the run's. */
		s->start = bpf_ktime_get_ns();
	}
}

static __always_inline void on_exit(void *ctx, unsigned int vec)
{
	struct cpu_state *s;
	__u64 delta;
	__u32 m;

	if (vec >= SOFTIRQ_VECTORS || !targ_duration[vec])
		return;
	s = this_cpu();
	if (!s || !s->start || s->vec != vec)
		return;
	delta = bpf_ktime_get_ns() - s->start;
	s->start = 0;
	m = targ_duration[vec] - 1;
	hist_record(m, delta);
	evidence_current(ctx, m, delta);
}

TP_PROGS(softirq_raise, unsigned int vec)
{
	on_raise(vec);
	return 0;
}

TP_PROGS(softirq_entry, unsigned int vec)
{
	on_entry(ctx, vec);
	return 0;
}

TP_PROGS(softirq_exit, unsigned int vec)
{
	on_exit(ctx, vec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
