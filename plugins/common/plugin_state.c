/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "plugin_state.h"

void *sl_state_alloc(size_t size, const struct sl_host *host, struct sl_instance *inst,
		     const void *config)
{
	uint8_t *st = calloc(1, size);

	if (!st) {
		host->config_error(inst, NULL, "out of memory");
		return NULL;
	}
	/* by memcpy: the members are read through the plugin's own struct type */
	memcpy(st + offsetof(struct sl_state_head, host), &host, sizeof(host));
	memcpy(st + offsetof(struct sl_state_head, inst), &inst, sizeof(inst));
	memcpy(st + offsetof(struct sl_state_head, cfg), &config, sizeof(config));
	return st;
}
