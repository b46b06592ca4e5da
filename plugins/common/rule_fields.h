/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule a record was attributed to (nflog's `rules: true`): the ids of
 * the rule_* fields nflog registers, found by name, for the outputs and
 * filters that write them (otlp attributes, cef's act= and rule key,
 * syslog's structured data).  A field no loaded plugin registers, or one
 * registered with another type, is -1; so is every one where the host
 * is older than field names (nothing of the rule is then written).
 *
 *   rule_family, rule_table, rule_chain, rule_comment, rule_verdict: strings
 *   rule_handle: u64 (nftrace registers it too, for its trace records)
 *
 * nflog sets them together, only on an attributed record: table and chain
 * always, comment and verdict when the rule has them.  A record has "a
 * rule" (sl_rule_of) when it has both table and chain.
 */
#ifndef SLUICE_RULE_FIELDS_H
#define SLUICE_RULE_FIELDS_H

#include <stdbool.h>

#include <sluice/plugin.h>

struct sl_rule_fields {
	int family, table, chain, handle, comment, verdict;
};

/* Every id -1: what a formatter starts from when no host looked them up. */
#define SL_RULE_FIELDS_NONE { -1, -1, -1, -1, -1, -1 }

/*
 * Look the fields up for instance inst, each marked as read (ABI 1.3's
 * read_field, so that a queue in front copies it).  Call from configure.
 */
void sl_rule_fields_find(struct sl_rule_fields *f, const struct sl_host *host, struct sl_instance *inst);

/* Field id's string on r, or NULL when id is -1 or r lacks it. */
static inline const struct sl_bytes *sl_rule_str(const struct sl_record *r, int id)
{
	return id >= 0 && sl_has(r, (sl_field)id) ? &r->v[id].bytes : NULL;
}

/* Whether r was attributed to a rule: it has the rule's table and chain. */
static inline bool sl_rule_of(const struct sl_rule_fields *f, const struct sl_record *r)
{
	return sl_rule_str(r, f->table) && sl_rule_str(r, f->chain);
}

#endif /* SLUICE_RULE_FIELDS_H */
