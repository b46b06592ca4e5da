/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stddef.h>
#include <string.h>

#include "core_keys.h"

static const char *const core_keys[] = {"thread", "when_full", "queue", NULL};

bool inst_key_is_core(const char *key)
{
	for (int i = 0; core_keys[i]; i++)
		if (strcmp(key, core_keys[i]) == 0)
			return true;
	return false;
}

unsigned inst_plugin_flags(const struct sl_plugin *d)
{
	if (d->size < offsetof(struct sl_plugin, flags) + sizeof(d->flags))
		return 0;
	return d->flags;
}

bool inst_default_thread(const struct sl_plugin *d)
{
	return d->kind == SL_KIND_OUTPUT && (inst_plugin_flags(d) & SL_PLUGIN_NETWORK);
}
