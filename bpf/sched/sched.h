/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __SCHED_H
#define __SCHED_H

/* Metric indexes; sched.go names them. */
#define METRIC_RUNQ 0
#define METRIC_RUNQ_PREEMPTED 1
#define METRIC_WAKEUP_NEW 2

#define KIND_WAKEUP 1
#define KIND_WAKEUP_NEW 2
#define KIND_PREEMPTED 3

#endif /* __SCHED_H */
