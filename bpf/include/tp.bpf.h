/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* tp.bpf.h: one body for a tracepoint's two program variants. */
#ifndef __TP_BPF_H
#define __TP_BPF_H

#include <bpf/bpf_tracing.h>

#define ___tp_prog(sec, name, hook, args...)                                 \
	SEC(sec)                                                             \
	int name(unsigned long long *ctx)                                    \
	{                                                                    \
		_Pragma("GCC diagnostic push")                               \
		_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")       \
		return ____##hook(___bpf_ctx_cast(args));                    \
		_Pragma("GCC diagnostic pop")                                \
	}

/* TP_PROGS(hook, args...) { body } defines the programs <hook>_btf
 * (tp_btf/<hook>) and <hook>_raw (raw_tp/<hook>), of which the loader
 * attaches one, around one body written as BPF_PROG's (ctx and the
 * tracepoint's arguments in scope). A raw_tp's pointers are untrusted: the
 * body reads through them with BPF_CORE_READ. A tracepoint whose tp_btf
 * program reads its pointers directly writes its two programs out. */
#define TP_PROGS(hook, args...)                                              \
	static __always_inline int ____##hook(unsigned long long *ctx, ##args); \
	___tp_prog("tp_btf/" #hook, hook##_btf, hook, ##args)                \
	___tp_prog("raw_tp/" #hook, hook##_raw, hook, ##args)                \
	static __always_inline int ____##hook(unsigned long long *ctx, ##args)

#endif /* __TP_BPF_H */
