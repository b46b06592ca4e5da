/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded keyed table with CLOCK eviction: see keytable.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keytable.h"

int sl_kt_init(struct sl_keytable *t, uint32_t cap, uint32_t klen, uint32_t vlen, uint64_t seed)
{
	uint32_t nb = 16;

	memset(t, 0, sizeof(*t));
	if (!cap || cap > (1u << 28) || !klen || klen > SL_KT_KEY_MAX || vlen > 4096) {
		errno = EINVAL;
		return -1;
	}
	/* at most one key per two buckets: chains stay short (a second entry is a second miss) */
	while (nb < 2 * cap)
		nb <<= 1;
	t->klen = klen;
	t->vlen = vlen;
	t->voff = (uint32_t)sizeof(struct sl_kt_head) + ((klen + 7) & ~7u);
	t->stride = (t->voff + vlen + 7) & ~7u;
	/* an entry of up to a cache line is one cache line: one miss per lookup */
	if (t->stride <= 64)
		t->stride = 64;
	t->mem = aligned_alloc(64, (size_t)cap * t->stride);
	if (t->mem)
		memset(t->mem, 0, (size_t)cap * t->stride);
	t->bucket = malloc((size_t)nb * sizeof(*t->bucket));
	if (!t->mem || !t->bucket) {
		sl_kt_free(t);
		errno = ENOMEM;
		return -1;
	}
	memset(t->bucket, 0xff, (size_t)nb * sizeof(*t->bucket));	/* all NIL */
	t->bmask = nb - 1;
	t->cap = cap;
	t->seed = seed;
	for (uint32_t i = 0; i < cap; i++)
		sl_kt_entry(t, i)->hnext = i + 1 < cap ? i + 1 : SL_KT_NIL;
	t->free_head = 0;
	t->hand = 0;
	return 0;
}

void sl_kt_free(struct sl_keytable *t)
{
	free(t->mem);
	free(t->bucket);
	t->mem = NULL;
	t->bucket = NULL;
	t->cap = t->used = 0;
}

void sl_kt_remove(struct sl_keytable *t, uint32_t i)
{
	struct sl_kt_head *e = sl_kt_entry(t, i);
	uint32_t *pp = &t->bucket[e->hash & t->bmask];

	while (*pp != i)
		pp = &sl_kt_entry(t, *pp)->hnext;
	*pp = e->hnext;
	e->ref = 0;
	e->hnext = t->free_head;
	t->free_head = i;
	t->used--;
}

/*
 * Only when full, so every entry is in use.  Ends within one turn: the
 * hand clears each bit it passes, so it finds one clear at the latest
 * where it started.
 */
static uint32_t clock_victim(struct sl_keytable *t)
{
	for (;;) {
		uint32_t i = t->hand;
		struct sl_kt_head *e = sl_kt_entry(t, i);

		t->hand = i + 1 < t->cap ? i + 1 : 0;
		if (!e->ref)
			return i;
		e->ref = 0;
	}
}

uint32_t sl_kt_insert_(struct sl_keytable *t, const void *key, uint32_t h, sl_kt_evict_fn evict, void *ctx)
{
	struct sl_kt_head *e;
	uint32_t i;

	if (t->used == t->cap) {
		i = clock_victim(t);
		if (evict)
			evict(ctx, t, i);
		sl_kt_remove(t, i);
	}
	i = t->free_head;
	e = sl_kt_entry(t, i);
	t->free_head = e->hnext;
	t->used++;
	e->hash = h;
	e->ref = 0;
	e->hnext = t->bucket[h & t->bmask];
	t->bucket[h & t->bmask] = i;
	memcpy(sl_kt_key(t, i), key, t->klen);
	memset(sl_kt_value(t, i), 0, t->vlen);
	return i;
}
