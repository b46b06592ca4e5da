/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checks of a plugin's descriptor that need no configuration: its
 * option table (names, types, flags, defaults, members inside the config
 * struct) and what it uses beyond the ABI minor it declares it needs.
 * The loader refuses a plugin with any problem; sluice --check-plugin
 * lists them all for the plugin's author.
 */
#ifndef SLUICE_PLUGIN_CHECK_H
#define SLUICE_PLUGIN_CHECK_H

#include <stddef.h>
#include <sluice/plugin.h>

/*
 * Call report(ctx, msg) once per problem found in d, loaded from `path`;
 * each message begins with the path and names the option.  Returns the
 * number of problems (0: the descriptor is sound).
 */
unsigned plugin_check(const char *path, const struct sl_plugin *d,
		      void (*report)(void *ctx, const char *msg), void *ctx);

/* The option flags ABI 1.minor defines (SL_OPT_FLAGS_1_2, _1_3 ...). */
unsigned plugin_check_opt_flags_of(unsigned minor);

#endif
