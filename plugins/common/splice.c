/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dropping and inserting records in one walk over a batch: see splice.h. */
#include <stdbool.h>
#include <string.h>

#include "splice.h"

static bool reusable(const struct sl_record *r, const uint64_t *avoid)
{
	if (!avoid)
		return true;
	for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
		if (r->present[w] & avoid[w])
			return false;
	return true;
}

struct sl_record *sl_splice_insert(struct sl_splice *s, const uint64_t *avoid)
{
	struct sl_batch *b = s->b;
	struct sl_record *r = NULL;

	/* a place in rec[]: a gap left by a drop, or room to shift the rest by one */
	if (s->w == s->r && s->n >= b->capacity)
		return NULL;
	/* a dropped record from the gap, swapped to its front (the new record's place) */
	for (unsigned i = s->w; i < s->r && !r; i++)
		if (reusable(b->rec[i], avoid)) {
			r = b->rec[i];
			b->rec[i] = b->rec[s->w];
		}
	/* or a free slot; then the gap's first (not reusable, ever: avoid is the caller's) is forgotten */
	if (!r && b->filled < b->capacity) {
		r = (struct sl_record *)(b->storage + (size_t)b->filled * b->stride);
		b->filled++;
	}
	if (!r)
		return NULL;
	if (s->w == s->r) {
		memmove(&b->rec[s->r + 1], &b->rec[s->r], (s->n - s->r) * sizeof(*b->rec));
		s->n++;
		s->r++;
	}
	memset(r->present, 0, sizeof(r->present));
	b->rec[s->w++] = r;
	return r;
}
