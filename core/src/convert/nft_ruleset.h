/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert nft`'s view of a ruleset: nft's JSON listing
 * (`nft -j list ruleset`) read with libyaml (JSON is YAML flow syntax, so
 * the core needs no JSON library), and every printk `log` statement in it
 * (a `log` without `group`), each either convertible to `log group N` or
 * with the reason it is not.
 */
#ifndef SLUICE_NFT_RULESET_H
#define SLUICE_NFT_RULESET_H

#include <stdint.h>
#include <stdio.h>

#include "yaml_tree.h"

/* nft's log flags, as the kernel's NF_LOG_* bits (nf_log.h). */
#define NFTLOG_TCPSEQ 0x01u
#define NFTLOG_TCPOPT 0x02u
#define NFTLOG_IPOPT 0x04u
#define NFTLOG_UID 0x08u
#define NFTLOG_MACDECODE 0x20u
#define NFTLOG_ALL 0x2fu

/* printk's levels, as syslog severities 0-7 (nft's default: warn, 4). */
#define NFTLOG_LEVEL_DEFAULT 4

struct nft_logstmt {
	/* the rule: pointers into the tree */
	const char *family, *table, *chain;
	uint64_t handle;
	const struct ynode *rule;	/* the "rule" object */
	size_t expr_index;		/* the log object's index in rule.expr */
	struct ymark mark;		/* of the log statement, for messages */
	const char *prefix;		/* NULL: none */
	unsigned level;			/* 0-7 */
	const char *level_text;		/* a level that is not 0-7 (audit), as written */
	unsigned flags;			/* NFTLOG_* */
	const char *why;		/* NULL: convertible; else why not */
	unsigned group;			/* set by nft_assign_groups() */
	uint8_t pfs;			/* packet families it logs (nft_reach.h) */
	uint32_t hooks;			/* hooks that reach its chain (nft_reach.h) */
};

/* A `log group N` already in the ruleset: N is not free for the conversion. */
struct nft_used_group {
	unsigned group;
	const char *family, *table, *chain;
	uint64_t handle;
};

struct nft_ruleset {
	struct ynode *root;
	struct nft_logstmt *stmts;	/* printk log statements, in listing order */
	size_t n;
	size_t nflog;			/* log statements that already have a group */
	size_t nrules;			/* rules seen */
	struct nft_used_group *used;	/* the nflog groups of those, in listing order */
	size_t nused;
	/* nft_assign_groups() failed at stuck, which clashes with stuck_with (or NULL) */
	const struct nft_logstmt *stuck, *stuck_with;
};

/* The NFLOG groups chosen: per distinct (level, flags), more where rules would clash. */
struct nft_group {
	unsigned group, level, flags;
	size_t nstmts;
};

/*
 * Parse `text` (named `name` in messages) and collect its log statements.
 * -1 with "NAME:LINE:COL: message" in err when it is not nft's JSON.
 */
int nft_ruleset_read(struct nft_ruleset *rs, const char *name, const char *text, char *err,
		     size_t errlen);
void nft_ruleset_free(struct nft_ruleset *rs);
size_t nft_unconvertible(const struct nft_ruleset *rs);

/*
 * Give every convertible statement a group: one per distinct (level,
 * flags), numbered from `first` in order of first appearance, skipping the
 * groups a `log group N` of the ruleset already uses (two listeners on one
 * group would each get the other's packets); and a further group of the
 * same (level, flags) for a statement that would clash (nft_reach_clash():
 * same prefix, a family and hook in common, another rule) with one of each
 * group so far, so that `rules: true` attributes every converted rule.
 * Returns the number of groups (at most `max` are filled), or -1 if they
 * would pass 65535 or `max`: rs->stuck is then the statement left without
 * one, rs->stuck_with the last statement it clashes with (NULL: no clash).
 */
int nft_assign_groups(struct nft_ruleset *rs, unsigned first, struct nft_group *groups,
		      size_t max);

/* The first `log group` statement of the ruleset that uses `group`, or NULL. */
const struct nft_used_group *nft_group_user(const struct nft_ruleset *rs, unsigned group);

/*
 * The first rule that `old`'s batch would change that is not the same in
 * `now` (a later listing of the live ruleset) at the same handle, its
 * expressions and comment (counters' values may differ), or NULL if every
 * one is: applying `old`'s batch then changes exactly the rules read.
 */
const struct nft_logstmt *nft_ruleset_changed(const struct nft_ruleset *old,
					      const struct nft_ruleset *now);

const char *nft_level_name(unsigned level);		/* nft's: "warn" */
const char *nft_severity_name(unsigned level);		/* syslog's: "warning" */
/* "tcp sequence,options" etc. as nft prints them; "" for none */
void nft_flags_text(unsigned flags, char *buf, size_t len);

/* Rewriting: the JSON batch and the text preview (nft_rewrite.c). */

/*
 * The JSON batch that replaces every rule holding a convertible statement
 * by the same rule with each such `log` turned into `log group N` with the
 * same prefix: one "replace" per rule, or, for a rule holding an anonymous
 * set (nft_rule_needs_insert()), an "insert" of the new rule at the old
 * one's place and a "delete" of the old one; applied in one `nft -j -f`.
 */
int nft_write_batch(const struct nft_ruleset *rs, FILE *out);
/*
 * Whether the rule holds an anonymous set or map (`{ 22, 80-90 }`): nft
 * 1.0.6 aborts on `replace rule` of such a rule (interval_set_eval:
 * "BUG: unhandled op"), so it is inserted anew and the old one deleted.
 */
int nft_rule_needs_insert(const struct nft_logstmt *s);
/* nft's own text of a statement: `log prefix "x" level info flags skuid` */
int nft_log_text(const struct nft_logstmt *s, char *buf, size_t len);
int nft_group_text(const struct nft_logstmt *s, char *buf, size_t len);
/*
 * Rewrite one rule line of `nft -a list ruleset` (`line`, without the
 * `# handle N` comment): each of the rule's statements `stmts[0..n)`, in
 * order, must appear as nft prints it, and is replaced by its group form.
 * NULL (and nothing allocated) if one does not appear (the text and the
 * JSON disagree) or its prefix holds what nft's text cannot quote (a '"',
 * a control character); the caller then shows the JSON's statements.
 */
char *nft_rewrite_line(const char *line, const struct nft_logstmt *const *stmts, size_t n);
/*
 * The text of rule `handle` in table `family table`, chain `chain`, from a
 * listing of `nft -a list ruleset` (malloc'd, without its indentation and
 * `# handle N`), or NULL if the listing has no such rule.
 */
char *nft_listing_rule(const char *listing, const char *family, const char *table,
		       const char *chain, uint64_t handle);

#endif
