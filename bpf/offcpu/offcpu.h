/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __OFFCPU_H
#define __OFFCPU_H

/* Metric indexes; offcpu.go names them. */
#define METRIC_BLOCKED 0
#define METRIC_RUNNABLE 1

#endif /* __OFFCPU_H */
