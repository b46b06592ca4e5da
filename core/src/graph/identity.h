/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What makes two elements one instance, and which instances may not both
 * exist.  Both compare parsed values, never option text: `group: 5` and
 * `group: 0x5` are one value, and an option left out equals its default
 * written out.  Prefix sharing and a reload's graph diff use the same key.
 * It sees plugins and their filled option structs, never the graph, so
 * graph.c (and reload.c) can use it from above.
 */
#ifndef SLUICE_IDENTITY_H
#define SLUICE_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>

struct diag;
struct sl_option;
struct sl_plugin;
struct ymark;

/*
 * The identity of a configured instance of plugin desc (config: the
 * struct its option table filled; the core keys as parsed): the plugin,
 * every option of the table as the typed value it holds, and the core
 * keys (thread, when_full, queue).  Equal keys mean the same plugin with
 * the same effective configuration.  A malloc'ed string (binary-safe
 * separators), or NULL when out of memory.
 */
char *identity_key(const struct sl_plugin *desc, const void *config, bool thread,
		   unsigned queue_batches, bool block_when_full);

/*
 * Options flagged SL_OPT_EXCLUSIVE name a resource only one instance can
 * hold (an NFLOG group, a conntrack event subscription).  The first such
 * option of desc's table, or NULL: its instances hold nothing exclusive.
 */
const struct sl_option *identity_first_exclusive(const struct sl_plugin *desc);

/* A configured instance that holds an exclusive resource. */
struct identity_holder {
	const char *name;
	const struct sl_plugin *desc;
	const void *config;		/* its filled option struct */
	const struct ymark *mark;	/* where it is written: file order */
	const struct ymark *at;		/* where its first exclusive option is */
};
/*
 * Report, at each later holder in file order, one that holds the same
 * resource as an earlier holder of the same plugin (lists compared as
 * sets), into diag.  0, or -1 after errors.
 */
int identity_check_exclusive(const struct identity_holder *h, size_t n, struct diag *diag);
/*
 * Do configured instances a and b (plugin and filled option struct each)
 * hold the same such resource?  If so, what it is ("group 5") in
 * what[len].
 */
bool identity_same_resource(const struct sl_plugin *da, const void *ca, const struct sl_plugin *db,
			    const void *cb, char *what, size_t len);

#endif
