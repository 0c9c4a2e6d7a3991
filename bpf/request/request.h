/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __REQUEST_H
#define __REQUEST_H

/* Syscall numbers below this can be classified (x86_64 has about 460). */
#define REQUEST_NR_MAX 512

/* What a syscall does to a socket's requests; request.go fills the table
 * targ_op with these, by syscall number. */
#define OP_READ 1    /* read, readv, recvfrom, recvmsg: fd in arg 0 */
#define OP_WRITE 2   /* write, writev, sendto, sendmsg: fd in arg 0 */
#define OP_ACCEPT 3  /* accept, accept4: the new fd is the return value */
#define OP_CONNECT 4 /* connect: fd in arg 0 */
#define OP_CLOSE 5   /* close: fd in arg 0 */
#define OP_DUP 6     /* dup2, dup3: the fd replaced is arg 1 */

/* Metric indexes; request.go names them. */
#define METRIC_SERVER 0
#define METRIC_QUEUE 1

#endif /* __REQUEST_H */
