/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded keyed table with LRU eviction: see keytable.h. */
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
	t->lru_head = t->lru_tail = SL_KT_NIL;
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

static void lru_unlink(struct sl_keytable *t, uint32_t i)
{
	struct sl_kt_head *e = sl_kt_entry(t, i);

	if (e->prev != SL_KT_NIL)
		sl_kt_entry(t, e->prev)->next = e->next;
	else
		t->lru_head = e->next;
	if (e->next != SL_KT_NIL)
		sl_kt_entry(t, e->next)->prev = e->prev;
	else
		t->lru_tail = e->prev;
}

static void lru_append(struct sl_keytable *t, uint32_t i)
{
	struct sl_kt_head *e = sl_kt_entry(t, i);

	e->prev = t->lru_tail;
	e->next = SL_KT_NIL;
	if (t->lru_tail != SL_KT_NIL)
		sl_kt_entry(t, t->lru_tail)->next = i;
	else
		t->lru_head = i;
	t->lru_tail = i;
}

void sl_kt_touch(struct sl_keytable *t, uint32_t i)
{
	if (t->lru_tail == i)
		return;	/* a run of one key: nothing to move */
	lru_unlink(t, i);
	lru_append(t, i);
}

void sl_kt_remove(struct sl_keytable *t, uint32_t i)
{
	struct sl_kt_head *e = sl_kt_entry(t, i);
	uint32_t *pp = &t->bucket[e->hash & t->bmask];

	while (*pp != i)
		pp = &sl_kt_entry(t, *pp)->hnext;
	*pp = e->hnext;
	lru_unlink(t, i);
	e->hnext = t->free_head;
	t->free_head = i;
	t->used--;
}

uint32_t sl_kt_get(struct sl_keytable *t, const void *key, uint32_t h, bool *created,
		   sl_kt_evict_fn evict, void *ctx)
{
	uint32_t i = sl_kt_find(t, key, h);
	struct sl_kt_head *e;

	if (i != SL_KT_NIL) {
		sl_kt_touch(t, i);
		*created = false;
		return i;
	}
	if (t->used == t->cap) {
		if (evict)
			evict(ctx, t, t->lru_head);
		sl_kt_remove(t, t->lru_head);
	}
	i = t->free_head;
	e = sl_kt_entry(t, i);
	t->free_head = e->hnext;
	t->used++;
	e->hash = h;
	e->hnext = t->bucket[h & t->bmask];
	t->bucket[h & t->bmask] = i;
	memcpy(sl_kt_key(t, i), key, t->klen);
	memset(sl_kt_value(t, i), 0, t->vlen);
	lru_append(t, i);
	*created = true;
	return i;
}
