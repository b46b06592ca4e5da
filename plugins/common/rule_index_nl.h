/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index (rule_index.h) read from the kernel's own netlink
 * messages, as a dump of the ruleset gives them (NFT_MSG_NEWCHAIN,
 * NEWSET, NEWSETELEM, NEWRULE; rule_dump.h asks for them): no
 * libnftables, no JSON.  What the JSON reader takes from nft's listing is
 * read from the attributes the listing is made of: a chain's hook number,
 * a rule's handle, its comment (userdata NFTNL_UDATA_RULE_COMMENT), its
 * `log` statements (group, prefix), its last expression as the verdict
 * (immediate accept/drop/jump/goto, reject), the jumps and gotos of its
 * immediates and the verdict maps it looks up, and the jump/goto targets
 * of the elements of every verdict map (anonymous ones included).
 *
 * A rule's chain must have come before it (a dump asks for chains first);
 * a rule of a chain not seen is left out, as nothing can reach it.  The
 * bytes are checked: a message that does not parse fails the index.
 */
#ifndef SLUICE_RULE_INDEX_NL_H
#define SLUICE_RULE_INDEX_NL_H

#include <stddef.h>
#include <stdint.h>

#include "rule_index.h"

struct sl_rule_nl;

/* NULL when out of memory. */
struct sl_rule_nl *sl_rule_nl_new(void);

/*
 * One message (its nlmsghdr, len bytes at msg): nf_tables' NEWCHAIN,
 * NEWSET, NEWSETELEM or NEWRULE is read, any other message ignored.  0,
 * or -1 when it does not parse (the index will fail saying so).
 */
int sl_rule_nl_msg(struct sl_rule_nl *rn, const void *msg, size_t len);

/*
 * Verdict map i of those read (sets with NFT_SET_MAP and verdict data),
 * whose elements a dump asks for: 0, or -1 when there are fewer.  The
 * strings live as long as rn.
 */
int sl_rule_nl_map(const struct sl_rule_nl *rn, size_t i, uint8_t *family, const char **table,
		   const char **name);

/*
 * Chain i of those read (its table's family, table, name), whose rules a
 * dump asks for chain by chain: 0, or -1 when there are fewer.  The
 * strings live as long as rn.
 */
int sl_rule_nl_chain(const struct sl_rule_nl *rn, size_t i, uint8_t *family, const char **table,
		     const char **name);

/* The index of what was read, or NULL with why in err; rn is freed either way. */
struct sl_rule_index *sl_rule_nl_done(struct sl_rule_nl *rn, char *err, size_t errlen);

/* Without an index (an abandoned dump). */
void sl_rule_nl_free(struct sl_rule_nl *rn);

#endif
