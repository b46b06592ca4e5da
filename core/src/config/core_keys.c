/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stddef.h>
#include <string.h>

#include "core_keys.h"

static const char *const core_keys[] = {"thread", "when_full", "queue", NULL};

bool core_keys_is_core(const char *key)
{
	for (int i = 0; core_keys[i]; i++)
		if (strcmp(key, core_keys[i]) == 0)
			return true;
	return false;
}

unsigned core_keys_plugin_flags(const struct sl_plugin *d)
{
	if (d->size < offsetof(struct sl_plugin, flags) + sizeof(d->flags))
		return 0;
	return d->flags;
}

bool core_keys_default_thread(const struct sl_plugin *d)
{
	return d->kind == SL_KIND_OUTPUT && (core_keys_plugin_flags(d) & SL_PLUGIN_NETWORK);
}
