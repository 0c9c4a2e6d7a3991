/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __TCP_H
#define __TCP_H

/* Metric indexes; tcp.go names them. */
#define METRIC_DELIVER 0
#define METRIC_RCVQ 1

#endif /* __TCP_H */
