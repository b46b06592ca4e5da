/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Building a rule index (rule_index.h), shared by its two readers: nft's
 * JSON listing (rule_index_json.c) and the kernel's netlink dump
 * (rule_index_nl.c).  A reader adds the chains first (with the hook of a
 * base chain), then each rule holding a `log group` statement with its
 * statements, the jumps and gotos of every rule and the jump/goto targets
 * of verdict maps; sl_ri_finish() carries the base chains' hooks along the
 * jumps and makes the keys.  Out of memory sets b->nomem; the calls after
 * it do nothing harmful and sl_ri_finish() fails.
 */
#ifndef SLUICE_RULE_INDEX_INT_H
#define SLUICE_RULE_INDEX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rule_index.h"

struct chain {
	int pf;			/* NFPROTO_* of its table */
	char *table, *name;
	uint32_t hooks;		/* bit h: hook h reaches it */
};

/* A jump or goto from chain `from` to `to` (or to every target of map `to` when map). */
struct edge {
	size_t from;
	int pf;
	char *table, *to;
	bool map;
};

/* A named verdict map's jump/goto target. */
struct map_target {
	int pf;
	char *table, *map, *to;
};

struct logst {
	size_t rule, chain;
	uint16_t group;
	char *prefix;
	uint32_t plen;
};

/* The build's working state; zeroed, then ix set by sl_ri_begin(). */
struct build {
	struct sl_rule_index *ix;
	struct chain *chains;
	size_t nchains, capchains;
	size_t last_chain;	/* find_chain's last answer + 1 (rules come chain by chain) */
	struct edge *edges;
	size_t nedges, capedges;
	struct map_target *mt;
	size_t nmt, capmt;
	struct logst *logs;
	size_t nlogs, caplogs;
	size_t logs_done;	/* logs of the rules added (the rest: of the rule to come) */
	bool nomem;
};

/* Room for one more element of *v (n used of *cap, of size sz): false when out of memory. */
bool sl_ri_grow(void **v, size_t *cap, size_t n, size_t sz);
#define SL_RI_GROW(b, arr, n, cap) \
	(sl_ri_grow((void **)&(arr), &(cap), (n), sizeof(*(arr))) || ((b)->nomem = true, false))

/* A new build with its empty index: -1 when out of memory. */
int sl_ri_begin(struct build *b);

/* strdup(), b->nomem when out of memory. */
char *sl_ri_dup(struct build *b, const char *s);

/* A chain of table (family pf), hook h (-1: a regular chain). */
void sl_ri_add_chain(struct build *b, int pf, const char *table, const char *name, int hook);
/* The chain's index; SIZE_MAX if not added. */
size_t sl_ri_find_chain(struct build *b, int pf, const char *table, const char *name);
/* A jump or goto of chain `from` (an index) to chain `to`, or to the targets of map `to`. */
void sl_ri_add_edge(struct build *b, size_t from, int pf, const char *table, const char *to,
		    bool map);
/* Map `map` of the table jumps or goes to chain `to`. */
void sl_ri_add_map_target(struct build *b, int pf, const char *table, const char *map,
			  const char *to);
/* A `log group` statement of the rule added next (its index: b->ix->nrules) in chain `chain`. */
void sl_ri_add_log(struct build *b, size_t chain, uint16_t group, const char *prefix,
		   uint32_t plen);
/*
 * The rule, when it added statements with sl_ri_add_log() since the last
 * rule (else nothing): comment and verdict NULL for none.
 */
void sl_ri_add_rule(struct build *b, const char *family, const char *table, const char *chain,
		    uint64_t handle, const char *comment, const char *verdict);
/* Forget the statements added since the last rule (a rule not to add). */
void sl_ri_drop_logs(struct build *b);

/*
 * The index, or NULL with why in err (errlen bytes): reader_err (a
 * reader's complaint, NULL if none) or out of memory.  The build is freed.
 */
struct sl_rule_index *sl_ri_finish(struct build *b, const char *reader_err, char *err,
				   size_t errlen);

#endif
