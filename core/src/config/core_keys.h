/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the configuration needs to know of the core's instance keys
 * (inst_keys.h) before there is a graph: their names, so the option
 * parsers let them pass beside a plugin's own options, and which plugins
 * run on a thread of their own unless `thread:` says otherwise.
 */
#ifndef SLUICE_CORE_KEYS_H
#define SLUICE_CORE_KEYS_H

#include <stdbool.h>
#include <sluice/plugin.h>

/* Is `key` one of the core's keys (not a plugin option)? */
bool core_keys_is_core(const char *key);
/* The plugin's descriptor flags (0 for a plugin built before ABI 1.2). */
unsigned core_keys_plugin_flags(const struct sl_plugin *d);
/* Does an instance of this plugin run on a thread of its own unless `thread:` says otherwise? */
bool core_keys_default_thread(const struct sl_plugin *d);

#endif /* SLUICE_CORE_KEYS_H */
