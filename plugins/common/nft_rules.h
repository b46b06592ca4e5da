/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rules and base chains of the ruleset, for naming what a trace event
 * refers to by handle: the text of a rule, the hook of a chain.  Built in
 * one go by sl_nft_rules_load(), looked up without allocating; nftrace
 * reloads it when the ruleset changed.
 *
 * The text is the rule as nft prints it (`tcp dport 22 counter packets 0
 * bytes 0 accept comment "ssh ok"`), without " # handle N": libnftables'
 * listing of the ruleset, the rendering `nft monitor trace` uses.  Hooks and
 * the generation id come from libnftnl requests (a netlink chain dump,
 * NFT_MSG_GETGEN), which bracket the listing so that it is of one generation.
 */
#ifndef SLUICE_NFT_RULES_H
#define SLUICE_NFT_RULES_H

#include <stddef.h>
#include <stdint.h>

struct sl_nft_rules;

struct sl_nft_rules *sl_nft_rules_new(void);
void sl_nft_rules_free(struct sl_nft_rules *rs);

/*
 * Read the ruleset of the network namespace of nsfd (netns_open.h; -1:
 * ours, the default) from now on: the request socket is made there, and
 * each listing runs on a short-lived thread that joined it.  nsfd stays
 * the caller's, open while rs is used.  Call before the first request.
 */
void sl_nft_rules_set_netns(struct sl_nft_rules *rs, int nsfd);

/*
 * Replace the contents by a fresh dump of every family's chains and rules
 * (retried when the ruleset changed during the dump): 0, or -errno (then
 * the old contents stay).
 */
int sl_nft_rules_load(struct sl_nft_rules *rs);

/*
 * Whether the ruleset's generation differs from the one loaded (one
 * NFT_MSG_GETGEN round trip): 1 or 0, or -errno.  For when change events
 * may have been lost (ENOBUFS): cheaper than dumping again.
 */
int sl_nft_rules_changed(struct sl_nft_rules *rs);

/*
 * nft's JSON listing of the ruleset (`nft -j -a list ruleset`) of one
 * generation: the listing between two NFT_MSG_GETGEN answers that agree
 * (listed again when they do not).  cb(arg, json, len, gen) gets the text,
 * valid during the call; returns what cb returned, or -errno (libnftables'
 * message in sl_nft_rules_error()).  The contents of rs are not changed.
 */
int sl_nft_rules_json(struct sl_nft_rules *rs,
		      int (*cb)(void *arg, const char *json, size_t len, uint32_t gen), void *arg);

/* The ruleset's generation now (one NFT_MSG_GETGEN round trip): 0 or -errno. */
int sl_nft_rules_gen(struct sl_nft_rules *rs, uint32_t *gen);

/* libnftables' message of the last failed load ("" if none), for the log. */
const char *sl_nft_rules_error(const struct sl_nft_rules *rs);

/* Rules known, for the log. */
size_t sl_nft_rules_count(const struct sl_nft_rules *rs);

/* Text of rule `handle` of family/table/chain, and its length; NULL if unknown. */
const char *sl_nft_rules_text(const struct sl_nft_rules *rs, uint8_t family, const char *table,
			      uint32_t table_len, const char *chain, uint32_t chain_len,
			      uint64_t handle, uint32_t *len);

/* Hook number of a base chain; -1 for a regular chain or one not known. */
int sl_nft_rules_hook(const struct sl_nft_rules *rs, uint8_t family, const char *table,
		      uint32_t table_len, const char *chain, uint32_t chain_len);

#endif
