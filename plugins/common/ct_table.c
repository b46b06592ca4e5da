/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nfct's table of live connections: see ct_table.h. */
#include <stdlib.h>
#include <string.h>

#include "ct_table.h"

void sl_ct_table_init(struct sl_ct_table *t, uint64_t max)
{
	memset(t, 0, sizeof(*t));
	t->free_head = SL_CT_NIL;
	t->max = max;
}

void sl_ct_table_free(struct sl_ct_table *t)
{
	free(t->e);
	free(t->bucket);
	sl_ct_table_init(t, t->max);
}

static uint32_t ct_hash(const struct sl_ct_info *ci)
{
	uint32_t h = ci->id ^ ((uint32_t)ci->osport << 16 | ci->odport) * 0x85ebca6bu;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return h;
}

static bool ct_same(const struct sl_ct_info *a, const struct sl_ct_info *b)
{
	return a->id == b->id && a->proto == b->proto && a->zone == b->zone && a->osport == b->osport &&
	       a->odport == b->odport && memcmp(a->osrc, b->osrc, 16) == 0 &&
	       memcmp(a->odst, b->odst, 16) == 0;
}

struct sl_ct_entry *sl_ct_find(struct sl_ct_table *t, const struct sl_ct_info *ci, uint32_t **link)
{
	uint32_t *l;

	if (!t->nbuckets)
		return NULL;
	for (l = &t->bucket[ct_hash(ci) & (t->nbuckets - 1)]; *l != SL_CT_NIL; l = &t->e[*l].next)
		if (ct_same(&t->e[*l].ci, ci)) {
			if (link)
				*link = l;
			return &t->e[*l];
		}
	return NULL;
}

static bool ct_rehash(struct sl_ct_table *t, uint32_t nbuckets)
{
	uint32_t *nb = malloc((size_t)nbuckets * sizeof(*nb));

	if (!nb)
		return false;
	for (uint32_t i = 0; i < nbuckets; i++)
		nb[i] = SL_CT_NIL;
	for (uint32_t i = 0; i < t->used; i++) {
		struct sl_ct_entry *e = &t->e[i];
		uint32_t h;

		if (e->state == SL_CT_FREE)
			continue;
		h = ct_hash(&e->ci) & (nbuckets - 1);
		e->next = nb[h];
		nb[h] = i;
	}
	free(t->bucket);
	t->bucket = nb;
	t->nbuckets = nbuckets;
	return true;
}

struct sl_ct_entry *sl_ct_insert(struct sl_ct_table *t, const struct sl_ct_info *ci, uint32_t gen)
{
	struct sl_ct_entry *e;
	uint32_t i, h;

	if (sl_ct_table_full(t))
		return NULL;
	if (t->free_head != SL_CT_NIL) {
		i = t->free_head;
		t->free_head = t->e[i].next;
	} else {
		if (t->used == t->cap) {
			uint32_t ncap = t->cap ? t->cap * 2 : 4096;
			struct sl_ct_entry *ne = realloc(t->e, (size_t)ncap * sizeof(*ne));

			if (!ne)
				return NULL;
			t->e = ne;
			t->cap = ncap;
		}
		i = t->used++;
		t->e[i].state = SL_CT_FREE;	/* not yet in a chain: a rehash must skip it */
	}
	if (t->live + 1 > t->nbuckets && !ct_rehash(t, t->nbuckets ? t->nbuckets * 2 : 4096)) {
		t->e[i].state = SL_CT_FREE;
		t->e[i].next = t->free_head;
		t->free_head = i;
		return NULL;
	}
	e = &t->e[i];
	e->ci = *ci;
	e->ci.have &= ~SL_CI_TIMEOUT;
	e->state = SL_CT_LIVE;
	e->gen = gen;
	h = ct_hash(ci) & (t->nbuckets - 1);
	e->next = t->bucket[h];
	t->bucket[h] = i;
	t->live++;
	return e;
}

void sl_ct_remove(struct sl_ct_table *t, struct sl_ct_entry *e, uint32_t *link)
{
	uint32_t i = (uint32_t)(e - t->e);

	*link = e->next;
	e->state = SL_CT_FREE;
	e->next = t->free_head;
	t->free_head = i;
	t->live--;
}

void sl_ct_merge(struct sl_ct_info *dst, const struct sl_ct_info *src)
{
	uint32_t h = src->have;

	if (h & SL_CI_REPLY) {
		memcpy(dst->rsrc, src->rsrc, 16);
		memcpy(dst->rdst, src->rdst, 16);
	}
	if (h & SL_CI_RPORTS) {
		dst->rsport = src->rsport;
		dst->rdport = src->rdport;
	}
	if (h & SL_CI_OCOUNT) {
		dst->opkts = src->opkts;
		dst->obytes = src->obytes;
	}
	if (h & SL_CI_RCOUNT) {
		dst->rpkts = src->rpkts;
		dst->rbytes = src->rbytes;
	}
	if (h & SL_CI_START)
		dst->start_ns = src->start_ns;
	if (h & SL_CI_MARK)
		dst->mark = src->mark;
	if (h & SL_CI_STATUS)
		dst->status = src->status;
	if (h & SL_CI_TCPSTATE)
		dst->tcp_state = src->tcp_state;
	dst->have |= h & ~(SL_CI_STOP | SL_CI_TIMEOUT);
}

void sl_ct_sweep(struct sl_ct_table *t, bool (*fn)(struct sl_ct_entry *e, void *arg), void *arg)
{
	for (uint32_t h = 0; h < t->nbuckets; h++) {
		uint32_t *link = &t->bucket[h];

		while (*link != SL_CT_NIL) {
			struct sl_ct_entry *e = &t->e[*link];

			if (fn(e, arg))
				sl_ct_remove(t, e, link);
			else
				link = &e->next;
		}
	}
}
