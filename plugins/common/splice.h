/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Walking a batch while dropping records and putting new ones in between
 * (ratelimit's and dedup's summaries, which go right before the record
 * that ends a suppression).  The walk compacts rec[] in place: keep() and
 * drop() consume the next record; insert() returns a fresh record placed
 * before it.  The fresh record's storage is the storage of a record
 * dropped earlier in this walk, or a free slot of the batch (filled <
 * capacity).  The dropped records wait in the gap the walk leaves in
 * rec[] (between the records written and those not read yet): a keep
 * swaps the next record with the gap's first, so a walk needs no memory of
 * its own and allocates nothing (a plugin's process() under strict mode).
 *
 * A dropped record's storage is still the record of the next branch of a
 * fan-out above: the core restores every presence bit for that branch,
 * but the values only of the fields that plugins below the fan-out
 * declare in `provides`.  So the caller may write into a reused record
 * only fields its plugin provides, or fields the dropped record did not
 * have (its presence bit is restored as clear, so the value is unseen):
 * `avoid` lists the fields the caller writes without providing them, and
 * a dropped record that has any of them is not reused.  When no storage
 * or no place in rec[] is left, insert() returns NULL and the caller
 * emits the record in its own batch instead.
 */
#ifndef SLUICE_SPLICE_H
#define SLUICE_SPLICE_H

#include <sluice/record.h>

struct sl_splice {
	struct sl_batch *b;
	/*
	 * next record to read, next place to write, records; rec[w..r) holds
	 * the dropped records not reused yet
	 */
	unsigned r, w, n;
};

/* Start a walk over b. */
static inline void sl_splice_begin(struct sl_splice *s, struct sl_batch *b)
{
	s->b = b;
	s->r = s->w = 0;
	s->n = b->count;
}

static inline struct sl_record *sl_splice_peek(const struct sl_splice *s)
{
	return s->b->rec[s->r];
}

static inline void sl_splice_keep(struct sl_splice *s)
{
	struct sl_record *kept = s->b->rec[s->r];

	/* the gap's first dropped record moves to the gap's end */
	s->b->rec[s->r++] = s->b->rec[s->w];
	s->b->rec[s->w++] = kept;
}

/* The record stays where it is, in the gap, for a later insert(). */
static inline void sl_splice_drop(struct sl_splice *s)
{
	s->r++;
}

/*
 * A record with no field present, before the next one, or NULL.  avoid:
 * presence words (SL_PRESENCE_WORDS) of fields a reused record must not
 * have; NULL: any.
 */
struct sl_record *sl_splice_insert(struct sl_splice *s, const uint64_t *avoid);

/* Take back the record insert() just returned (unfilled): its storage is reusable again. */
static inline void sl_splice_uninsert(struct sl_splice *s)
{
	s->w--;
}

/* End the walk: the batch holds what was kept and inserted. */
static inline void sl_splice_end(struct sl_splice *s)
{
	s->b->count = s->w;
}

#endif /* SLUICE_SPLICE_H */
