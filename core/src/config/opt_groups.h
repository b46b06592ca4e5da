/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option groups: options sharing a prefix can be written nested.
 *
 *   tls: {ca_file: /etc/ssl/ca.pem, verify: true}
 *   spool: {dir: /var/spool/sluice, max_size: 2GiB}
 *
 * mean tls_ca_file, tls_verify, spool_dir and spool_max_size.  A key K is
 * written as a group when its value is a mapping, the plugin has no option
 * K but has options named K_* (K has no '_' and is not a key the core
 * reads, like `thread`); the mapping's keys S name the options K_S.  The
 * option tables stay flat (one row per option, as --describe lists them);
 * only the way of writing differs, so validation, identity keys, error
 * positions (each value keeps its own line:column) and reload diffs treat
 * both spellings alike.  One option written both ways is an error.
 */
#ifndef SLUICE_OPT_GROUPS_H
#define SLUICE_OPT_GROUPS_H

#include <sluice/plugin.h>

#include "config.h"
#include "yaml_tree.h"

/* Whether `key` names a group of d's options (no option `key`, some `key_*`). */
bool opt_groups_is(const struct sl_plugin *d, const char *key);

/*
 * The element's mapping with every group replaced, in place, by its
 * entries under their flat names.  Returns opts itself when it holds no
 * group (nothing allocated), NULL after reporting errors to diag (an
 * unknown member, or one also written flat), else a new
 * mapping for opt_groups_free() whose values are opts' own nodes.
 */
const struct ynode *opt_groups_flatten(const struct sl_plugin *d, const struct ynode *opts,
				       struct diag *diag);
/* The error for a group written as something other than a mapping (`tls: x`). */
void opt_groups_not_map(struct diag *diag, const struct sl_plugin *d, const struct ynode *k,
		       const struct ynode *v);
/* Free what opt_groups_flatten() made (flat != opts); the user's tree is untouched. */
void opt_groups_free(const struct ynode *flat, const struct ynode *opts);

#endif
