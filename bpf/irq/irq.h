/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __IRQ_H
#define __IRQ_H

/* Bytes of an irq action's name the programs compare, NUL included; irq.go
 * truncates the names it configures the same way. */
#define IRQ_NAME_LEN 32

/* CPUs targ_cpus can name. */
#define IRQ_MAX_CPUS 1024

/* Key of irq_metric: an action's name, zero-padded. */
struct irq_name {
	char name[IRQ_NAME_LEN];
};

#endif /* __IRQ_H */
