/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table of live connections behind nfct's overrun recovery: a chained
 * hash of struct sl_ct_info keyed by conntrack id, original tuple and zone,
 * entries in one array (indices, not pointers, so it can grow with one
 * realloc) with a free list.  Kept apart from the plugin so unit tests can
 * drive it; what the states mean is nfct's business (see nfct.c).
 */
#ifndef SLUICE_CT_TABLE_H
#define SLUICE_CT_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ct_attrs.h"

#define SL_CT_NIL UINT32_MAX

/* Entry states: free, alive, destroyed during a dump (a tombstone), missing from a dump. */
enum { SL_CT_FREE, SL_CT_LIVE, SL_CT_DEAD, SL_CT_MISSING };

struct sl_ct_entry {
	struct sl_ct_info ci;
	uint32_t next;	/* hash chain, or free list */
	uint32_t gen;	/* dump generation that last saw or touched it */
	uint8_t state;
};

struct sl_ct_table {
	struct sl_ct_entry *e;
	uint32_t cap, used;	/* entries allocated, handed out (high-water) */
	uint32_t live;		/* entries not free */
	uint32_t free_head;
	uint32_t *bucket;
	uint32_t nbuckets;	/* power of two */
	uint64_t max;		/* most live entries */
};

void sl_ct_table_init(struct sl_ct_table *t, uint64_t max);
void sl_ct_table_free(struct sl_ct_table *t);

static inline bool sl_ct_table_full(const struct sl_ct_table *t)
{
	return t->live >= t->max;
}

/* The entry of ci's connection, or NULL; *link (if asked) is what points to it. */
struct sl_ct_entry *sl_ct_find(struct sl_ct_table *t, const struct sl_ct_info *ci, uint32_t **link);

/*
 * A new entry for ci (state SL_CT_LIVE, generation gen, without ci's
 * per-message timeout), or NULL when the table is full or out of memory.
 * The caller knows ci is not in the table.
 */
struct sl_ct_entry *sl_ct_insert(struct sl_ct_table *t, const struct sl_ct_info *ci, uint32_t gen);

/* Remove e, found with its link by sl_ct_find() or sl_ct_sweep(). */
void sl_ct_remove(struct sl_ct_table *t, struct sl_ct_entry *e, uint32_t *link);

/* Newer information over older: only what src's message carried. */
void sl_ct_merge(struct sl_ct_info *dst, const struct sl_ct_info *src);

/* Call fn on every entry; the entries it returns true for are removed. */
void sl_ct_sweep(struct sl_ct_table *t, bool (*fn)(struct sl_ct_entry *e, void *arg), void *arg);

#endif /* SLUICE_CT_TABLE_H */
