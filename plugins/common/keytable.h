/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A bounded table of fixed-size byte keys, each with a fixed-size value,
 * for filters that keep state per key (ratelimit's buckets).  Everything
 * is allocated once by sl_kt_init(): `cap` entries in one array (header,
 * key, value, `stride` bytes apart: one aligned cache line when they fit
 * in 64 bytes) and a power-of-two bucket array.
 *
 * Eviction is CLOCK (second chance), an approximation of LRU that costs a
 * hit nothing but the bucket head and the entry (an exact LRU list also
 * writes the entry's two neighbours: two more cache misses per record in
 * a large table).  Every entry has a referenced bit, set when it is used
 * (sl_kt_get of an existing key, sl_kt_touch) and clear in a new entry.
 * When the table is full, the hand walks the entries in index order
 * (wrapping): a referenced entry has its bit cleared and is passed over,
 * the first one found unreferenced is the victim, and the hand stops just
 * after it.  So an entry used since the hand last passed it is never
 * evicted before one that was not, and unused entries go in the order
 * the hand meets them.  The caller sees the victim first (evict callback)
 * so that nothing it holds is lost silently.  The hash is seeded: crafted
 * keys cannot build long chains when the seed is secret.
 *
 * Not shared with ct_table.c: that table grows with realloc and is keyed
 * by a conntrack tuple structure; this one never grows and knows nothing
 * of its keys but their bytes.
 */
#ifndef SLUICE_KEYTABLE_H
#define SLUICE_KEYTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SL_KT_NIL UINT32_MAX
#define SL_KT_KEY_MAX 96

struct sl_kt_head {
	uint32_t hash;
	uint32_t hnext;		/* bucket chain; free list when unused */
	uint32_t ref;		/* used since the hand last passed */
	uint32_t pad_;		/* keys stay 8-byte aligned */
};

struct sl_keytable {
	uint8_t *mem;
	uint32_t *bucket;
	uint32_t bmask;
	uint32_t cap, used;
	uint32_t klen, vlen, voff, stride;
	uint32_t free_head;
	uint32_t hand;		/* the next entry the clock looks at */
	uint64_t seed;
};

/*
 * Room for cap entries of klen-byte keys (1..SL_KT_KEY_MAX) and vlen-byte
 * values.  0, or -1 (bad sizes, out of memory; errno set).
 */
int sl_kt_init(struct sl_keytable *t, uint32_t cap, uint32_t klen, uint32_t vlen, uint64_t seed);
void sl_kt_free(struct sl_keytable *t);

static inline uint64_t sl_kt_mix_(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

/* Inline, as the lookup: they run once per record. */
static inline uint32_t sl_kt_hash(const struct sl_keytable *t, const void *key)
{
	const uint8_t *p = (const uint8_t *)key;
	uint64_t h = t->seed ^ t->klen, v;
	uint32_t n = t->klen;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&v, p, 8);
		h = sl_kt_mix_(h, v);
	}
	if (n) {
		v = 0;
		memcpy(&v, p, n);
		h = sl_kt_mix_(h, v);
	}
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(h ^ (h >> 31));
}

static inline struct sl_kt_head *sl_kt_entry(const struct sl_keytable *t, uint32_t i)
{
	return (struct sl_kt_head *)(t->mem + (size_t)i * t->stride);
}

static inline uint8_t *sl_kt_key(const struct sl_keytable *t, uint32_t i)
{
	return t->mem + (size_t)i * t->stride + sizeof(struct sl_kt_head);
}

static inline void *sl_kt_value(const struct sl_keytable *t, uint32_t i)
{
	return t->mem + (size_t)i * t->stride + t->voff;
}

/* A hint: the bucket of hash h will be read soon. */
static inline void sl_kt_prefetch(const struct sl_keytable *t, uint32_t h)
{
	__builtin_prefetch(&t->bucket[h & t->bmask]);
}

/* A hint: the first entry of hash h's bucket will be read soon. */
static inline void sl_kt_prefetch_entry(const struct sl_keytable *t, uint32_t h)
{
	uint32_t i = t->bucket[h & t->bmask];

	if (i != SL_KT_NIL)
		__builtin_prefetch(sl_kt_entry(t, i));
}

/* The first entry of hash h's bucket, or SL_KT_NIL (for prefetching). */
static inline uint32_t sl_kt_first(const struct sl_keytable *t, uint32_t h)
{
	return t->bucket[h & t->bmask];
}

static inline bool sl_kt_same_(const struct sl_keytable *t, const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y, d = 0;

	if (t->klen & 7)
		return memcmp(a, b, t->klen) == 0;
	for (uint32_t o = 0; o < t->klen; o += 8) {
		memcpy(&x, a + o, 8);
		memcpy(&y, b + o, 8);
		d |= x ^ y;
	}
	return d == 0;
}

/* The entry of key (hash h), or SL_KT_NIL.  Does not mark it used. */
static inline uint32_t sl_kt_find(const struct sl_keytable *t, const void *key, uint32_t h)
{
	for (uint32_t i = t->bucket[h & t->bmask]; i != SL_KT_NIL; i = sl_kt_entry(t, i)->hnext)
		if (sl_kt_entry(t, i)->hash == h && sl_kt_same_(t, sl_kt_key(t, i), (const uint8_t *)key))
			return i;
	return SL_KT_NIL;
}

/* Mark entry i used: the hand passes over it once before it can be evicted. */
static inline void sl_kt_touch(struct sl_keytable *t, uint32_t i)
{
	sl_kt_entry(t, i)->ref = 1;
}

/* Called with an entry about to be reused for another key. */
typedef void (*sl_kt_evict_fn)(void *ctx, const struct sl_keytable *t, uint32_t i);

/* sl_kt_get's miss: a new entry for key, evicting one when full. */
uint32_t sl_kt_insert_(struct sl_keytable *t, const void *key, uint32_t h, sl_kt_evict_fn evict, void *ctx);

/*
 * The entry of key, marked used; a new entry has a zeroed value, is not
 * marked and sets *created.  When the table is full, the clock's victim
 * (see above) is handed to evict (may be NULL) and reused.  Never fails.
 * Inline: a hit is the common case and runs once per record.
 */
static inline uint32_t sl_kt_get(struct sl_keytable *t, const void *key, uint32_t h, bool *created,
				 sl_kt_evict_fn evict, void *ctx)
{
	uint32_t i = sl_kt_find(t, key, h);

	*created = i == SL_KT_NIL;
	if (i == SL_KT_NIL)
		return sl_kt_insert_(t, key, h, evict, ctx);
	sl_kt_touch(t, i);
	return i;
}

/* Remove entry i. */
void sl_kt_remove(struct sl_keytable *t, uint32_t i);

#endif /* SLUICE_KEYTABLE_H */
