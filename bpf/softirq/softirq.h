/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __SOFTIRQ_H
#define __SOFTIRQ_H

/* Softirq vectors, as the kernel numbers them (NR_SOFTIRQS); softirq.go
 * names them. */
#define SOFTIRQ_VECTORS 10

/* CPUs targ_cpus can name. */
#define SOFTIRQ_MAX_CPUS 1024

#endif /* __SOFTIRQ_H */
