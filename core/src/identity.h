/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What makes two elements one instance, and which instances may not both
 * exist.  Both compare parsed values, never option text: `group: 5` and
 * `group: 0x5` are one value, and an option left out equals its default
 * written out.  Prefix sharing and a reload's graph diff use the same key.
 */
#ifndef SLUICE_IDENTITY_H
#define SLUICE_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

struct graph;
struct sl_instance;

/*
 * The identity of a configured instance (inst->opt filled, core keys
 * parsed): its plugin, every option of the plugin's table as the typed
 * value the table parsed, and the core keys (thread, when_full, queue) as
 * parsed.  Equal keys mean the same plugin with the same effective
 * configuration.  A malloc'ed string (binary-safe separators), or NULL
 * when out of memory.
 */
char *identity_key(const struct sl_instance *inst);

/*
 * Options flagged SL_OPT_EXCLUSIVE name a resource only one instance can
 * hold (an NFLOG group, a conntrack event subscription).  Report, at each
 * later instance in file order, one that holds the same resource as an
 * earlier instance of the same plugin (lists compared as sets).  Instances
 * whose options had errors are left out.  0, or -1 after errors.
 */
int identity_check_exclusive(struct graph *g);
/*
 * Do a and b (configured instances) hold the same such resource?  If so,
 * what it is ("group 5") in what[len].
 */
bool identity_same_resource(const struct sl_instance *a, const struct sl_instance *b, char *what,
			    size_t len);

#endif
