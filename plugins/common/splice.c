/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dropping and inserting records in one walk over a batch: see splice.h. */
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

struct sl_record *sl_splice_insert(struct sl_splice *s)
{
	struct sl_batch *b = s->b;
	struct sl_record *r;

	if (s->w < s->r) {
		/*
		 * A gap in rec[]: every gap comes from a drop, and a drop's
		 * storage is only taken here, so a spare is left.
		 */
		r = s->spare[--s->nspare];
	} else if (b->filled < b->capacity && s->n < b->capacity) {
		/* No gap: make one, and take a fresh slot. */
		r = (struct sl_record *)(b->storage + (size_t)b->filled * b->stride);
		b->filled++;
		memmove(&b->rec[s->r + 1], &b->rec[s->r], (s->n - s->r) * sizeof(*b->rec));
		s->n++;
		s->r++;
	} else {
		return NULL;
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
