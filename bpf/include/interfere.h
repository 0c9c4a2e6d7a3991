/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* interfere.h: the per-CPU log of what ran on each CPU, written by
 * bpf/interfere and read by evidence.bpf.h when an event is slow enough
 * to be kept.
 *
 * A CPU's time is cut into segments, each of one context: a task, a
 * hardirq handler (or the local timer interrupt) or a softirq vector. An
 * interrupt closes the segment of what it interrupted and opens its own;
 * its exit reopens the interrupted one. So segments never overlap, and the
 * time of a window on that CPU is the sum of the segments' overlaps with
 * it. Idle (pid 0) is not logged.
 *
 * Must match bpf/interfere's Go mirror (interfere.go).
 */
#ifndef __INTERFERE_H
#define __INTERFERE_H

#define INTERFERE_LOG 64 /* segments per CPU; a power of 2 */
#define INTERFERE_NAME 16
#define INTERFERE_DEPTH 4 /* task, softirq, hardirq, and a spare */

enum interfere_kind {
	INTERFERE_NONE = 0,
	INTERFERE_HARDIRQ = 1,
	INTERFERE_SOFTIRQ = 2,
	INTERFERE_TASK = 3,
};

/* The local timer has no irq number; its id is the vector with this bit. */
#define INTERFERE_VECTOR 0x80000000u

/* A context: for a hardirq the irq number and the action's name, for a
 * softirq the vector, for a task its tid and comm. */
struct interfere_ctx {
	__u32 kind;
	__u32 id;
	char name[INTERFERE_NAME];
};

struct interfere_seg {
	__u64 start; /* bpf_ktime_get_ns() */
	__u64 end;
	struct interfere_ctx ctx;
};

struct interfere_cpu {
	__u64 head;       /* segments logged so far; the next goes to head % LOG */
	__u64 valid_from; /* the log holds everything of this CPU since then */
	__u64 open_start; /* start of the open segment, stack[depth]; 0: none */
	__u32 depth;
	__u32 pad;
	struct interfere_ctx stack[INTERFERE_DEPTH];
	struct interfere_seg log[INTERFERE_LOG];
};

/* Declared alike in bpf/interfere's object and in every object built with
 * evidence.bpf.h, whose copy the loader replaces with the former's. */
#define INTERFERE_MAP                                         \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);      \
		__uint(max_entries, 1);                       \
		__type(key, __u32);                           \
		__type(value, struct interfere_cpu);          \
	} interfere_log SEC(".maps")

#endif /* __INTERFERE_H */
