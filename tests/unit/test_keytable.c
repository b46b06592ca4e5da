/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The keyed table behind ratelimit (plugins/common/keytable.c), the key
 * builder (reckey.c) and the batch walk that inserts summaries (splice.c).
 * keytable: 100 000 random operations on a table of 257 entries against an
 * oracle (the slots, their referenced bits and the clock's hand as plain
 * arrays, searched linearly): the slot of every find and get, every
 * eviction victim (CLOCK's), used counts, the hand and the bits at the end;
 * second chance by hand on 4 entries; keys that collide in one bucket (a
 * table of 16 buckets with 40 keys).  reckey: absent
 * differs from zero, long strings, the text form.  splice: drops and
 * inserts keep the order, use dropped slots and free ones, and say when
 * there is no room.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "keytable.h"
#include "reckey.h"
#include "splice.h"

#define CAP 257
#define KLEN 12

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/*
 * The oracle: the table's slots as plain arrays (key, in use, referenced),
 * the free slots as a stack (the last freed is reused first; at first
 * 0, 1, 2, ...) and the clock's hand, searched linearly.  It predicts the
 * slot of every key and every victim: the first slot at or after the hand
 * not referenced, the referenced ones passed over having their bit cleared.
 */
static uint8_t okeys[CAP][KLEN];
static uint32_t ovals[CAP];
static bool oused[CAP], oref[CAP];
static uint32_t ofree[CAP], onfree, ohand;
static unsigned on, ochances;

static void oinit(void)
{
	memset(oused, 0, sizeof(oused));
	memset(oref, 0, sizeof(oref));
	for (unsigned i = 0; i < CAP; i++)
		ofree[i] = CAP - 1 - i;	/* top of the stack last */
	onfree = CAP;
	ohand = 0;
	on = 0;
}

static int ofind(const uint8_t *k)
{
	for (unsigned i = 0; i < CAP; i++)
		if (oused[i] && !memcmp(okeys[i], k, KLEN))
			return (int)i;
	return -1;
}

static void odel(unsigned i)
{
	oused[i] = oref[i] = false;
	ofree[onfree++] = i;
	on--;
}

static unsigned ovictim(void)
{
	for (;;) {
		unsigned i = ohand;

		ohand = (ohand + 1) % CAP;
		if (!oref[i])
			return i;
		oref[i] = false;
		ochances++;
	}
}

static uint8_t victim[KLEN];
static uint32_t victim_i;
static unsigned nevict;

static void on_evict(void *ctx, const struct sl_keytable *t, uint32_t i)
{
	(void)ctx;
	memcpy(victim, sl_kt_key(t, i), KLEN);
	victim_i = i;
	nevict++;
}

static void table_vs_oracle(void)
{
	struct sl_keytable t;

	oinit();
	CHECK(sl_kt_init(&t, CAP, KLEN, sizeof(uint32_t), 12345) == 0);
	for (unsigned step = 0; step < 100000; step++) {
		uint8_t k[KLEN] = {0};
		uint32_t h, i;
		int o;
		bool created;

		/* 600 distinct keys over 257 entries: hits, misses, evictions */
		snprintf((char *)k, sizeof(k), "k%u", rnd() % 600);
		h = sl_kt_hash(&t, k);
		o = ofind(k);
		switch (rnd() % 5) {
		case 0:	/* find, and every other time touch */
			i = sl_kt_find(&t, k, h);
			CHECK(i == (o < 0 ? SL_KT_NIL : (uint32_t)o), "find %s: %u, oracle %d", k, i, o);
			if (o >= 0 && i != SL_KT_NIL) {
				CHECK_EQ_U(*(uint32_t *)sl_kt_value(&t, i), ovals[o]);
				if (step & 1) {
					sl_kt_touch(&t, i);
					oref[o] = true;
				}
			}
			break;
		case 1:	/* remove */
			i = sl_kt_find(&t, k, h);
			if (i != SL_KT_NIL && o >= 0) {
				sl_kt_remove(&t, i);
				odel((unsigned)o);
			}
			break;
		default: { /* get */
			unsigned before = nevict, want;

			i = sl_kt_get(&t, k, h, &created, on_evict, NULL);
			CHECK(created == (o < 0), "created %s", k);
			if (o >= 0) {
				want = (unsigned)o;
			} else {
				if (on == CAP) {
					want = ovictim();
					CHECK(nevict == before + 1);
					CHECK(victim_i == want && !memcmp(victim, okeys[want], KLEN),
					      "victim %s in %u, oracle %s in %u", victim, victim_i, okeys[want], want);
					odel(want);
				} else {
					CHECK(nevict == before);
				}
				want = ofree[--onfree];
				CHECK_EQ_U(*(uint32_t *)sl_kt_value(&t, i), 0);
				memcpy(okeys[want], k, KLEN);
				oused[want] = true;
				on++;
			}
			CHECK(i == want, "get %s: slot %u, oracle %u", k, i, want);
			oref[want] = o >= 0;	/* a hit marks; a new entry starts clear */
			*(uint32_t *)sl_kt_value(&t, i) = step;
			ovals[want] = step;
			break;
		}
		}
		CHECK_EQ_U(t.used, on);
		if (failures)
			break;
	}
	/* the clock's state: the hand and every referenced bit */
	CHECK_EQ_U(t.hand, ohand);
	for (unsigned i = 0; i < CAP && !failures; i++)
		if (oused[i])
			CHECK((sl_kt_entry(&t, i)->ref != 0) == oref[i], "ref of slot %u", i);
	CHECK(nevict > 1000, "evictions %u", nevict);
	CHECK(ochances > 1000, "entries passed over %u", ochances);
	sl_kt_free(&t);
}

/*
 * The guarantee by hand: a b c d in a table of 4, a used; e evicts b (the
 * hand passes a, clearing its bit), f c, g d, and h a (used before the
 * hand passed it, not since).
 */
static void second_chance(void)
{
	struct sl_keytable t;
	bool created;
	const char *order = "bcda";

	CHECK(sl_kt_init(&t, 4, 8, 8, 1) == 0);
	for (uint64_t k = 'a'; k <= 'd'; k++)
		sl_kt_get(&t, &k, sl_kt_hash(&t, &k), &created, NULL, NULL);
	{
		uint64_t a = 'a';

		sl_kt_get(&t, &a, sl_kt_hash(&t, &a), &created, NULL, NULL);
		CHECK(!created);
	}
	for (uint64_t k = 'e'; k <= 'h'; k++) {
		sl_kt_get(&t, &k, sl_kt_hash(&t, &k), &created, on_evict, NULL);
		CHECK(created && victim[0] == order[k - 'e'], "%c evicted %c, want %c",
		      (char)k, victim[0], order[k - 'e']);
	}
	sl_kt_free(&t);
}

/* Many keys in few buckets: chains. */
static void collisions(void)
{
	struct sl_keytable t;
	bool created;

	CHECK(sl_kt_init(&t, 16, 8, 8, 0) == 0);
	for (uint64_t k = 0; k < 40; k++)
		sl_kt_get(&t, &k, (uint32_t)k & 3, &created, NULL, NULL);	/* 4 hashes only */
	CHECK_EQ_U(t.used, 16);
	for (uint64_t k = 0; k < 40; k++)
		CHECK((sl_kt_find(&t, &k, (uint32_t)k & 3) != SL_KT_NIL) == (k >= 24), "key %u", (unsigned)k);
	sl_kt_free(&t);
	CHECK(sl_kt_init(&t, 0, 4, 8, 0) < 0);
	CHECK(sl_kt_init(&t, 4, SL_KT_KEY_MAX + 1, 8, 0) < 0);
	sl_kt_free(&t);
}

static struct sl_record *new_rec(void)
{
	return calloc(1, sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value));
}

static void reckey(void)
{
	struct sl_reckey k;
	struct sl_record *a = new_rec(), *b = new_rec();
	uint8_t ka[SL_RECKEY_MAX_BYTES], kb[SL_RECKEY_MAX_BYTES];
	static const uint8_t v4[4] = {10, 0, 0, 1};
	const char *longp = "a prefix longer than twenty-four bytes";
	char text[256];
	struct sl_fmt_buf fb;

	sl_reckey_init(&k, 7);
	CHECK(sl_reckey_add(&k, SL_F_SRC_ADDR, SL_T_ADDR, "src_addr") == 0);
	CHECK(sl_reckey_add(&k, SL_F_DPORT, SL_T_U64, "dport") == 0);
	CHECK(sl_reckey_add(&k, SL_F_PREFIX, SL_T_STRING, "prefix") == 0);
	CHECK_EQ_U(k.len, 24 + 16 + 32);
	CHECK(sl_reckey_add(&k, SL_F_IFNAME_IN, SL_T_STRING, "ifname_in") < 0, "past 96 bytes");
	CHECK_EQ_U(k.len % 8, 0);

	sl_set_ip4(a, SL_F_SRC_ADDR, v4);
	sl_set_ip4(b, SL_F_SRC_ADDR, v4);
	sl_set_u64(a, SL_F_DPORT, 0);	/* zero, and absent in b */
	sl_reckey_build(&k, a, ka);
	sl_reckey_build(&k, b, kb);
	CHECK(memcmp(ka, kb, k.len) != 0, "absent == zero");
	sl_set_u64(b, SL_F_DPORT, 0);
	sl_reckey_build(&k, b, kb);
	CHECK(memcmp(ka, kb, k.len) == 0);

	sl_fmt_init(&fb, text, sizeof(text));
	sl_reckey_format(&k, ka, &fb);
	CHECK(fb.len == strlen("src_addr=10.0.0.1 dport=0 prefix=-") &&
	      !memcmp(text, "src_addr=10.0.0.1 dport=0 prefix=-", fb.len), "%.*s", (int)fb.len, text);

	sl_set_bytes(a, SL_F_PREFIX, "DROP: ", 6);
	sl_reckey_build(&k, a, ka);
	sl_fmt_init(&fb, text, sizeof(text));
	sl_reckey_format(&k, ka, &fb);
	CHECK(fb.len == strlen("src_addr=10.0.0.1 dport=0 prefix=DROP: "), "%.*s", (int)fb.len, text);

	/* long strings: the same head, different tails differ */
	sl_set_bytes(a, SL_F_PREFIX, longp, (uint32_t)strlen(longp));
	sl_set_bytes(b, SL_F_PREFIX, "a prefix longer than twenty-four bytez", (uint32_t)strlen(longp));
	sl_reckey_build(&k, a, ka);
	sl_reckey_build(&k, b, kb);
	CHECK(memcmp(ka, kb, k.len) != 0, "long strings differing at the end");
	sl_set_bytes(b, SL_F_PREFIX, longp, (uint32_t)strlen(longp));
	sl_reckey_build(&k, b, kb);
	CHECK(memcmp(ka, kb, k.len) == 0);
	sl_fmt_init(&fb, text, sizeof(text));
	sl_reckey_format(&k, ka, &fb);
	CHECK(fb.len == strlen("src_addr=10.0.0.1 dport=0 prefix=a prefix longer ...") &&
	      !memcmp(text + fb.len - 3, "...", 3), "%.*s", (int)fb.len, text);
	free(a);
	free(b);
}

/* A batch of n records with ids 0..n-1 in SL_F_MARK; capacity cap. */
static struct sl_batch *new_batch(unsigned n, unsigned cap)
{
	struct sl_batch *b = calloc(1, sizeof(*b));
	unsigned stride = sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value);

	b->capacity = cap;
	b->stride = stride;
	b->storage = calloc(cap, stride);
	b->rec = calloc(cap, sizeof(*b->rec));
	for (unsigned i = 0; i < n; i++)
		sl_set_u64(sl_batch_add(b), SL_F_MARK, i);
	return b;
}

static void free_batch(struct sl_batch *b)
{
	free(b->storage);
	free(b->rec);
	free(b);
}

static bool avoid_text;

/* Walk: drop marks in `drop`, insert a record (mark 1000+i) before marks in `ins`. */
static void walk(struct sl_splice *s, struct sl_batch *b, const char *drop, const char *ins, char *got)
{
	uint64_t avoid[SL_PRESENCE_WORDS] = {0};
	unsigned inserted = 0;

	avoid[SL_F_TEXT >> 6] |= 1ull << (SL_F_TEXT & 63);
	sl_splice_begin(s, b);
	while (s->r < s->n) {
		unsigned m = (unsigned)sl_splice_peek(s)->v[SL_F_MARK].u64;
		struct sl_record *r;

		if (strchr(ins, 'a' + (int)m)) {
			r = sl_splice_insert(s, avoid_text ? avoid : NULL);
			if (r)
				sl_set_u64(r, SL_F_MARK, 1000 + m);
			else
				inserted++;	/* no room: counted as 'missing' */
		}
		if (strchr(drop, 'a' + (int)m))
			sl_splice_drop(s);
		else
			sl_splice_keep(s);
	}
	sl_splice_end(s);
	for (unsigned i = 0; i < b->count; i++) {
		uint64_t m = b->rec[i]->v[SL_F_MARK].u64;

		*got++ = m >= 1000 ? (char)('A' + (m - 1000)) : (char)('a' + m);
	}
	*got++ = inserted ? '!' : 0;
	*got = 0;
}

static void splice(void)
{
	struct sl_splice s = {0};
	struct sl_batch *b;
	char got[64];

	/* room at the end of the batch: inserts with no drop before */
	b = new_batch(5, 8);
	walk(&s, b, "", "ac", got);
	CHECK_STREQ(got, "AabCcde");
	free_batch(b);
	/* full batch: inserts take dropped slots */
	b = new_batch(6, 6);
	walk(&s, b, "bc", "de", got);
	CHECK_STREQ(got, "aDdEef");
	free_batch(b);
	/* drops between keeps: the dropped records wait in the gap, in any order */
	b = new_batch(6, 6);
	walk(&s, b, "bd", "ef", got);
	CHECK_STREQ(got, "acEeFf");
	free_batch(b);
	/* an insert taken back (its summary did not fit) leaves its storage for the next */
	b = new_batch(3, 3);
	sl_splice_begin(&s, b);
	sl_splice_drop(&s);
	{
		struct sl_record *r = sl_splice_insert(&s, NULL), *again;

		CHECK(r != NULL);
		sl_splice_uninsert(&s);
		again = sl_splice_insert(&s, NULL);
		CHECK(again == r);
		sl_set_u64(again, SL_F_MARK, 1000);
	}
	sl_splice_keep(&s);
	sl_splice_keep(&s);
	sl_splice_end(&s);
	CHECK(b->count == 3 && b->rec[0]->v[SL_F_MARK].u64 == 1000 && b->rec[1]->v[SL_F_MARK].u64 == 1 &&
	      b->rec[2]->v[SL_F_MARK].u64 == 2);
	free_batch(b);
	/* full batch, no drop before: no room */
	b = new_batch(4, 4);
	walk(&s, b, "", "a", got);
	CHECK_STREQ(got, "abcd!");
	free_batch(b);
	/* drop everything, insert before each: every slot reused */
	b = new_batch(4, 4);
	walk(&s, b, "abcd", "bcd", got);
	CHECK_STREQ(got, "BCD");
	free_batch(b);
	/* dropped records with text are not reused when text is to be avoided */
	b = new_batch(4, 5);
	for (unsigned i = 0; i < 4; i++)
		sl_set_bytes(b->rec[i], SL_F_TEXT, "x", 1);
	avoid_text = true;
	walk(&s, b, "ab", "cd", got);	/* c takes the one free slot, d finds none */
	CHECK_STREQ(got, "Ccd!");
	free_batch(b);
	b = new_batch(4, 4);
	sl_set_bytes(b->rec[0], SL_F_TEXT, "x", 1);
	walk(&s, b, "ab", "cd", got);	/* b had no text: reused for C; a's has text */
	CHECK_STREQ(got, "Ccd!");
	avoid_text = false;
	free_batch(b);
}

int main(void)
{
	table_vs_oracle();
	second_chance();
	collisions();
	reckey();
	splice();
	return check_summary("keytable");
}
