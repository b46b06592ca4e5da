/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which rule logged a packet: an index of the `log group` statements of
 * one ruleset generation, built from nft's JSON listing (`nft -j list
 * ruleset`, as libnftables prints it), looked up by what an NFLOG event
 * carries: the packet's family, the hook, the group and the prefix.
 *
 * A statement in a base chain is keyed by that chain's hook; one in a
 * regular chain by the hooks of every base chain of its table that jumps or
 * goes to it, directly or through other regular chains (jump/goto
 * statements, verdict maps anonymous or named).  An `inet` table's
 * statement is keyed for IPv4 and IPv6 packets.  A key that two different
 * rules share cannot be told apart from the packet: the lookup says
 * "shared" and sl_rule_index_shared() names those rules.
 *
 * Building allocates; looking up does not (a hash of the prefix and one
 * probe sequence), and the index is read-only once built, so it can be
 * read by the thread that owns it while another index is being built.
 */
#ifndef SLUICE_RULE_INDEX_H
#define SLUICE_RULE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A rule holding a `log group` statement.  Strings are NUL-terminated. */
struct sl_rule {
	const char *family;	/* the table's family as nft names it: "inet" */
	const char *table, *chain;
	const char *comment;	/* NULL: none */
	const char *verdict;	/* "accept", "drop", "reject", "jump X", "goto X"; NULL: none */
	uint32_t family_len, table_len, chain_len, comment_len, verdict_len;
	uint64_t handle;
	/*
	 * The owner's per-rule counts (nflog's metrics): written by the one
	 * thread that attributes records, read by others with relaxed atomics.
	 */
	uint64_t records, bytes;
};

struct sl_rule_index;

enum sl_rule_match {
	SL_RULE_NONE,	/* no statement logs this key */
	SL_RULE_ONE,	/* one rule does: *rule */
	SL_RULE_SHARED,	/* several rules do */
};

/*
 * The index of the ruleset listed in json[0..len): NULL on a malformed
 * listing or out of memory, with why in err (errlen bytes).
 */
struct sl_rule_index *sl_rule_index_from_json(const char *json, size_t len, char *err,
					      size_t errlen);
void sl_rule_index_free(struct sl_rule_index *ix);

/* Rules with a `log group` statement. */
size_t sl_rule_index_count(const struct sl_rule_index *ix);
/* Rule i of them (i < count), in listing order. */
struct sl_rule *sl_rule_index_rule(struct sl_rule_index *ix, size_t i);

/*
 * Who logs (pf: NFPROTO_* of the packet, as the NFLOG header says; hook;
 * group; prefix without its NUL, plen 0 for none).  No allocation, no
 * system call.
 */
enum sl_rule_match sl_rule_index_find(const struct sl_rule_index *ix, uint8_t pf, uint8_t hook,
				      uint16_t group, const char *prefix, uint32_t plen,
				      const struct sl_rule **rule);

/*
 * Each key of `group` (-1: every group) that several rules share, as one
 * line for the log: `group 5 prefix "in" (ipv4 input): inet filter input
 * #6, inet filter output #9`, names and prefix escaped.  cb is called per
 * line; returns how many keys are shared.
 */
size_t sl_rule_index_shared(const struct sl_rule_index *ix, int group,
			    void (*cb)(void *arg, const char *line), void *arg);

/*
 * Each key of the index: cb(arg, pf, hook, group, prefix, plen, rule),
 * rule NULL for a key several rules share.  Returns how many keys.  For
 * comparing two indexes (bench/rules_read.c -c).
 */
size_t sl_rule_index_keys(const struct sl_rule_index *ix,
			  void (*cb)(void *arg, uint8_t pf, uint8_t hook, uint16_t group,
				     const char *prefix, uint32_t plen, const struct sl_rule *rule),
			  void *arg);

/* Whether a and b say the same of a packet: family, table, chain, handle, comment, verdict. */
bool sl_rule_same(const struct sl_rule *a, const struct sl_rule *b);

#endif
