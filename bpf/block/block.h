/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef __BLOCK_H
#define __BLOCK_H

/* Metric indexes; block.go names them. */
#define METRIC_QUEUE 0
#define METRIC_RQ 1

/* Most devices a scenario may name in tracers.block.devices. */
#define BLOCK_MAX_DEVICES 16

#endif /* __BLOCK_H */
