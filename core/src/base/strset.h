/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of strings, each with a value: open addressing with linear
 * probing.  The configuration checks use it wherever they would otherwise
 * compare a name with every other name (duplicate keys, instance names,
 * prefix sharing), which made checking a large file quadratic.
 *
 * Keys are borrowed: the caller keeps each key alive and unchanged while
 * it is in the set.  There is no removal; checking a configuration only
 * adds.  A zeroed struct is an empty set that has allocated nothing.
 */
#ifndef SLUICE_STRSET_H
#define SLUICE_STRSET_H

#include <stddef.h>
#include <stdint.h>

struct strset_slot {
	const char *key;	/* NULL: empty slot */
	void *value;
	uint64_t hash;
};

struct strset {
	struct strset_slot *slot;	/* cap slots, cap a power of two (or 0) */
	size_t cap;
	size_t n;			/* keys held */
};

/*
 * Add key with value.  1: added; 0: the key was there already, the set is
 * unchanged and *existing (if not NULL) is the value it holds; -1: out of
 * memory, the set is unchanged.
 */
int strset_add(struct strset *s, const char *key, void *value, void **existing);
/*
 * Make room for `more` keys: until they are added, strset_add() of a new
 * key cannot fail.  0 or -1 (out of memory, the set unchanged).
 */
int strset_reserve(struct strset *s, size_t more);
/* The slot holding key, or NULL.  Valid until the next strset_add(). */
const struct strset_slot *strset_find(const struct strset *s, const char *key);
/* The value of key, or NULL if absent (or if NULL was its value). */
void *strset_get(const struct strset *s, const char *key);
/* Free the slots (not the keys or values); the set is empty again. */
void strset_free(struct strset *s);

#endif
