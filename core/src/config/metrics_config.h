/* SPDX-License-Identifier: GPL-2.0-or-later */
/* daemon.metrics as configured (metrics_config.c checks it). */
#ifndef SLUICE_METRICS_CONFIG_H
#define SLUICE_METRICS_CONFIG_H

#include <stdbool.h>
#include <sys/socket.h>

#include "yaml_tree.h"

#define METRICS_DEFAULT_LISTEN "127.0.0.1:9560"

struct diag;

struct metrics_config {
	bool enabled;			/* daemon.metrics is present */
	bool allow_remote;
	char listen[64];		/* as written, for messages */
	struct sockaddr_storage addr;
	socklen_t addrlen;
};

/* daemon.metrics: { listen: ADDR:PORT, allow_remote: BOOL }; errors to d. */
void metrics_config_parse(struct metrics_config *mc, const struct ynode *map, struct diag *d);

#endif
