/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __SYSCALL_H
#define __SYSCALL_H

/* Syscall numbers below this can be traced (x86_64 has about 460). */
#define SYSCALL_NR_MAX 512

#endif /* __SYSCALL_H */
