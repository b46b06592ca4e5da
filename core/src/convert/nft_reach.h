/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert nft`: the key under which nflog's `rules: true` would
 * look each converted statement up (plugins/common/rule_index.h): the
 * packet families its table logs (inet: IPv4 and IPv6) and the hooks that
 * reach its chain: a base chain's own, a regular chain's those of every
 * base chain of its table that jumps or goes to it, directly, through
 * other regular chains or through verdict maps (anonymous or named).
 * Two converted statements of different rules whose keys meet, with the
 * same prefix, must not share a group, or the packets they log could not
 * be told apart.
 */
#ifndef SLUICE_NFT_REACH_H
#define SLUICE_NFT_REACH_H

#include <stdbool.h>

#include "nft_ruleset.h"

/* Fill each statement's `pfs` and `hooks` from the listing: 0, or -1 out of memory. */
int nft_reach_compute(struct nft_ruleset *rs);

/*
 * Whether a and b, given one group, could not be told apart: different
 * rules, a family and a hook in common, the same prefix.
 */
bool nft_reach_clash(const struct nft_logstmt *a, const struct nft_logstmt *b);

#endif
