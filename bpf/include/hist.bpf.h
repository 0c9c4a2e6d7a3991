/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* hist.bpf.h: the log-linear (HDR style) latency histogram shared by every
 * tracer. internal/hist holds the same bucket math in Go; a test runs this
 * code through BPF_PROG_TEST_RUN and checks that both agree.
 *
 * Values below 2^HIST_SUB_BITS ns have a bucket each. Above, each power of
 * two is split into 2^HIST_SUB_BITS equal sub-buckets, so a bucket is at most
 * 1/64 of its value wide. Values of 2^HIST_MAX_EXP ns and more share the last
 * bucket.
 */
#ifndef __HIST_BPF_H
#define __HIST_BPF_H

#define HIST_SUB_BITS 6
#define HIST_SUB (1 << HIST_SUB_BITS)
#define HIST_MAX_EXP 42
#define HIST_BUCKETS (HIST_SUB * (HIST_MAX_EXP - HIST_SUB_BITS + 1))

/* Upper bound of metrics one tracer object can count; the histogram map has
 * HIST_MAX_METRICS * HIST_BUCKETS slots. */
#define HIST_MAX_METRICS 16

/* hist_stats is kept per metric and per CPU beside the buckets: the exact
 * extremes, which buckets cannot give. Must match internal/hist.Stats. */
struct hist_stats {
	__u64 count;
	__u64 sum;
	__u64 min;
	__u64 max;
};

static __always_inline __u32 hist_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xFFFFFFFFULL) << 5; v >>= shift; r |= shift;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* hist_bucket maps a value in ns to its bucket index. */
static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e;

	if (v < HIST_SUB)
		return (__u32)v;
	e = hist_log2(v);
	if (e >= HIST_MAX_EXP)
		return HIST_BUCKETS - 1;
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (__u32)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* HIST_MAPS declares the two per-CPU arrays a tracer counts into. */
#define HIST_MAPS                                                     \
	struct {                                                      \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);              \
		__uint(max_entries, HIST_MAX_METRICS * HIST_BUCKETS); \
		__type(key, __u32);                                   \
		__type(value, __u64);                                 \
	} hist SEC(".maps");                                          \
	struct {                                                      \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);              \
		__uint(max_entries, HIST_MAX_METRICS);                \
		__type(key, __u32);                                   \
		__type(value, struct hist_stats);                     \
	} hist_stats SEC(".maps")

/* hist_missed counts events a tracer saw but could not time: its per-task
 * state could not be stored or read (task storage is refused while another
 * user of it on the same CPU holds it, and allocation under the scheduler's
 * locks can fail). User space reads it as Tracer.Missed. */
__u64 hist_missed = 0;

static __always_inline void hist_miss(void)
{
	__sync_fetch_and_add(&hist_missed, 1);
}

/* hist_record counts value v (ns) for metric m. Per-CPU slots need no
 * atomics: tracing programs run with migration disabled. */
#define hist_record(m, v)                                                   \
	({                                                                  \
		__u32 __m = (m);                                            \
		__u64 __v = (v);                                            \
		__u32 __k;                                                  \
		__u64 *__c;                                                 \
		struct hist_stats *__s;                                     \
		if (__m < HIST_MAX_METRICS) {                               \
			__k = __m * HIST_BUCKETS + hist_bucket(__v);        \
			__c = bpf_map_lookup_elem(&hist, &__k);             \
			if (__c)                                            \
				*__c += 1;                                  \
			__s = bpf_map_lookup_elem(&hist_stats, &__m);       \
			if (__s) {                                          \
				if (__s->count == 0 || __v < __s->min)      \
					__s->min = __v;                     \
				if (__v > __s->max)                         \
					__s->max = __v;                     \
				__s->count += 1;                            \
				__s->sum += __v;                            \
			}                                                   \
		}                                                           \
	})

#endif /* __HIST_BPF_H */
