/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dropping and inserting records in one walk over a batch: see splice.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "splice.h"

int sl_splice_begin(struct sl_splice *s, struct sl_batch *b)
{
	if (s->cap < b->capacity) {
		struct sl_record **grown = realloc(s->spare, b->capacity * sizeof(*grown));

		if (!grown)
			return -1;
		s->spare = grown;
		s->cap = b->capacity;
	}
	s->b = b;
	s->r = s->w = 0;
	s->n = b->count;
	s->nspare = 0;
	return 0;
}

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
	struct sl_record *r;

	/* a place in rec[]: a gap left by a drop, or room to shift the rest by one */
	if (s->w == s->r && s->n >= b->capacity)
		return NULL;
	if (s->nspare && reusable(s->spare[s->nspare - 1], avoid)) {
		r = s->spare[--s->nspare];
	} else if (b->filled < b->capacity) {
		r = (struct sl_record *)(b->storage + (size_t)b->filled * b->stride);
		b->filled++;
	} else {
		return NULL;
	}
	if (s->w == s->r) {
		memmove(&b->rec[s->r + 1], &b->rec[s->r], (s->n - s->r) * sizeof(*b->rec));
		s->n++;
		s->r++;
	}
	memset(r->present, 0, sizeof(r->present));
	b->rec[s->w++] = r;
	return r;
}

void sl_splice_free(struct sl_splice *s)
{
	free(s->spare);
	s->spare = NULL;
	s->cap = 0;
}
