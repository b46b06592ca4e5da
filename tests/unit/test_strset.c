/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The string hash set behind the configuration checks: add/find agree with
 * a plain linear list on a random mix of new and repeated keys, values
 * (NULL included) come back unchanged, growth keeps every key, the table
 * never runs more than half full, and reserved room is really there.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strset.h"
#include "check.h"

static void empty(void)
{
	struct strset s = {0};

	CHECK(strset_find(&s, "a") == NULL);
	CHECK(strset_get(&s, "") == NULL);
	strset_free(&s);
	CHECK(s.slot == NULL && s.cap == 0 && s.n == 0);
	strset_free(&s);
}

static void basics(void)
{
	struct strset s = {0};
	int one = 1, two = 2;
	void *old = NULL;
	char copy[8];

	CHECK(strset_add(&s, "src", &one, NULL) == 1);
	CHECK(strset_add(&s, "src", &two, &old) == 0 && old == &one);
	CHECK(strset_get(&s, "src") == &one);
	/* Keys compare by content, not by pointer. */
	strcpy(copy, "src");
	CHECK(strset_get(&s, copy) == &one);
	CHECK(strset_get(&s, "sr") == NULL && strset_get(&s, "srcx") == NULL);
	/* A NULL value is still a member. */
	CHECK(strset_add(&s, "nothing", NULL, NULL) == 1);
	CHECK(strset_find(&s, "nothing") != NULL && strset_find(&s, "nothing")->value == NULL);
	old = &one;
	CHECK(strset_add(&s, "nothing", &two, &old) == 0 && old == NULL);
	/* The empty string is a key like any other. */
	CHECK(strset_find(&s, "") == NULL);
	CHECK(strset_add(&s, "", &two, NULL) == 1 && strset_get(&s, "") == &two);
	CHECK(s.n == 3);
	strset_free(&s);
	CHECK(s.n == 0 && strset_find(&s, "src") == NULL);
}

/* Many keys that differ only in a trailing counter, like generated names. */
static void many(void)
{
	enum { N = 200000 };
	struct strset s = {0};
	char (*keys)[24] = malloc(N * sizeof(*keys));
	char probe[24];
	size_t seen = 0;
	bool ok = true;

	if (!keys) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "s1.decode%u", i);
		ok &= strset_add(&s, keys[i], keys[i], NULL) == 1;
	}
	CHECK(ok);
	CHECK(s.n == N);
	/* A power of two, at most half full. */
	CHECK(s.cap && (s.cap & (s.cap - 1)) == 0 && s.n * 2 <= s.cap);
	ok = true;
	for (unsigned i = 0; i < N; i++) {
		snprintf(probe, sizeof(probe), "s1.decode%u", i);
		ok &= strset_get(&s, probe) == keys[i];
		snprintf(probe, sizeof(probe), "s1.decode%u", i + N);
		ok &= strset_find(&s, probe) == NULL;
		snprintf(probe, sizeof(probe), "s2.decode%u", i);
		ok &= strset_find(&s, probe) == NULL;
	}
	CHECK(ok);
	/* Walking the slots sees every key once. */
	for (size_t i = 0; i < s.cap; i++)
		if (s.slot[i].key) {
			seen++;
			ok &= s.slot[i].value == s.slot[i].key;
		}
	CHECK(ok && seen == N);
	strset_free(&s);
	free(keys);
}

/* After reserving room for k keys, k adds of new keys cannot fail or move the table. */
static void reserve(void)
{
	static char keys[1000][8];
	struct strset s = {0};
	struct strset_slot *before;
	bool ok = true;

	CHECK(strset_add(&s, "first", NULL, NULL) == 1);
	CHECK(strset_reserve(&s, 1000) == 0);
	CHECK((s.n + 1000) * 2 <= s.cap);
	before = s.slot;
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%u", i);
		ok &= strset_add(&s, keys[i], keys[i], NULL) == 1;
	}
	CHECK(ok && s.slot == before && s.n == 1001);
	CHECK(strset_reserve(&s, 0) == 0 && s.slot == before);
	CHECK(strset_reserve(&s, SIZE_MAX) == -1 && s.slot == before && s.n == 1001);
	for (unsigned i = 0; i < 1000; i++)
		ok &= strset_get(&s, keys[i]) == keys[i];
	CHECK(ok);
	strset_free(&s);
}

/* Random adds, half of them repeats, against a linear list as the oracle. */
static void against_linear(void)
{
	enum { OPS = 20000, SPACE = 6000 };
	static char names[SPACE][16];
	static const char *list[SPACE];
	static void *vals[SPACE];
	size_t nlist = 0;
	struct strset s = {0};
	unsigned x = 12345;
	bool ok = true;

	for (unsigned i = 0; i < SPACE; i++)
		snprintf(names[i], sizeof(names[i]), "%x.%u", i * 2654435761u, i % 7);
	for (unsigned op = 0; op < OPS; op++) {
		size_t k, j;
		void *old = NULL;
		int r;

		x = x * 1103515245u + 12345u;
		k = (x >> 8) % SPACE;
		for (j = 0; j < nlist && strcmp(list[j], names[k]) != 0; j++)
			;
		r = strset_add(&s, names[k], &names[k][op % 8], &old);
		if (j < nlist) {
			ok &= r == 0 && old == vals[j];
		} else {
			ok &= r == 1;
			list[nlist] = names[k];
			vals[nlist++] = &names[k][op % 8];
		}
		ok &= s.n == nlist;
	}
	CHECK(ok);
	CHECK(nlist > SPACE / 2 && nlist < SPACE); /* both cases were exercised */
	for (size_t j = 0; j < nlist; j++)
		ok &= strset_get(&s, list[j]) == vals[j];
	CHECK(ok);
	strset_free(&s);
}

int main(void)
{
	empty();
	basics();
	many();
	reserve();
	against_linear();
	printf("%d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
