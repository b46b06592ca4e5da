/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "strset.h"

#define STRSET_MIN_CAP 8

/*
 * FNV-1a, then a 64-bit finaliser: FNV alone leaves the low bits (the
 * ones the slot index uses) poorly mixed for names that differ only in a
 * trailing counter, like "s1.decode2", "s1.decode3".
 */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* The slot holding key, or the empty slot where it would go. */
static struct strset_slot *probe(const struct strset *s, const char *key, uint64_t h)
{
	size_t mask = s->cap - 1;

	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		struct strset_slot *sl = &s->slot[i];

		if (!sl->key || (sl->hash == h && strcmp(sl->key, key) == 0))
			return sl;
	}
}

/* Double the table (or make the first one); keys move, values stay. */
static int grow(struct strset *s)
{
	size_t cap = s->cap ? s->cap * 2 : STRSET_MIN_CAP;
	struct strset bigger = {0};

	if (cap < s->cap || cap > SIZE_MAX / sizeof(*s->slot))
		return -1;
	bigger.slot = calloc(cap, sizeof(*bigger.slot));
	if (!bigger.slot)
		return -1;
	bigger.cap = cap;
	bigger.n = s->n;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i].key)
			*probe(&bigger, s->slot[i].key, s->slot[i].hash) = s->slot[i];
	free(s->slot);
	*s = bigger;
	return 0;
}

int strset_reserve(struct strset *s, size_t more)
{
	if (more > SIZE_MAX / 2 - s->n)
		return -1;
	/* At most half full: linear probing stays short. */
	while ((s->n + more) * 2 > s->cap)
		if (grow(s))
			return -1;
	return 0;
}

int strset_add(struct strset *s, const char *key, void *value, void **existing)
{
	uint64_t h = hash_str(key);
	struct strset_slot *sl;

	if (s->cap) {
		sl = probe(s, key, h);
		if (sl->key) {
			if (existing)
				*existing = sl->value;
			return 0;
		}
	}
	if (strset_reserve(s, 1))
		return -1;
	sl = probe(s, key, h);
	sl->key = key;
	sl->value = value;
	sl->hash = h;
	s->n++;
	return 1;
}

const struct strset_slot *strset_find(const struct strset *s, const char *key)
{
	const struct strset_slot *sl;

	if (!s->n)
		return NULL;
	sl = probe(s, key, hash_str(key));
	return sl->key ? sl : NULL;
}

void *strset_get(const struct strset *s, const char *key)
{
	const struct strset_slot *sl = strset_find(s, key);

	return sl ? sl->value : NULL;
}

void strset_free(struct strset *s)
{
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
