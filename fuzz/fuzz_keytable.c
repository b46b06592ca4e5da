/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a program of operations on a keytable
 * (plugins/common/keytable.c) of 1..32 entries with 1..16-byte keys:
 * get, find, remove, touch, checked against plain arrays of the slots,
 * their referenced bits and CLOCK's hand (the slot of every find and get,
 * eviction victims, counts, the hand and the bits at the end); and the rest
 * of the bytes as string and bytes fields of a record whose key
 * (reckey.c) is built and printed.  abort() on any disagreement.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keytable.h"
#include "reckey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXK 32

/* The oracle: slots (key, in use, referenced), a stack of free slots, the hand. */
static uint8_t okeys[MAXK][16];
static bool oused[MAXK], oref[MAXK];
static uint32_t ofree[MAXK], onfree, ohand, ocap;
static unsigned on, klen;
static int victim = -1;

static int ofind(const uint8_t *k)
{
	for (unsigned i = 0; i < ocap; i++)
		if (oused[i] && !memcmp(okeys[i], k, klen))
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

		ohand = (ohand + 1) % ocap;
		if (!oref[i])
			return i;
		oref[i] = false;
	}
}

static void on_evict(void *ctx, const struct sl_keytable *t, uint32_t i)
{
	(void)ctx;
	victim = (int)i;
}

static void reckey_part(const uint8_t *p, size_t n)
{
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	uint8_t key[SL_RECKEY_MAX_BYTES];
	char text[1024];
	struct sl_fmt_buf fb;
	struct sl_reckey k;
	size_t half = n / 2;

	if (!r)
		return;
	sl_reckey_init(&k, 1);
	sl_reckey_add(&k, SL_F_PREFIX, SL_T_STRING, "prefix");
	sl_reckey_add(&k, SL_F_PAYLOAD, SL_T_BYTES, "payload");
	sl_reckey_add(&k, SL_F_TIMESTAMP, SL_T_TIME, "timestamp");
	if (n)
		sl_set_bytes(r, SL_F_PREFIX, p, (uint32_t)half);
	if (n > 1)
		sl_set_bytes(r, SL_F_PAYLOAD, p + half, (uint32_t)(n - half));
	if (n >= 12) {
		int64_t s;
		uint32_t ns;

		memcpy(&s, p, 8);
		memcpy(&ns, p + 8, 4);
		sl_set_time(r, SL_F_TIMESTAMP, s, ns);
	}
	sl_reckey_build(&k, r, key);
	sl_fmt_init(&fb, text, sizeof(text));
	sl_reckey_format(&k, key, &fb);
	if (fb.overflow)
		abort();
	free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_keytable t;
	uint32_t cap;
	size_t i = 2;

	if (size < 2)
		return 0;
	cap = data[0] % MAXK + 1;
	klen = data[1] % 16 + 1;
	on = 0;
	ocap = cap;
	ohand = 0;
	onfree = cap;
	for (uint32_t j = 0; j < cap; j++) {
		oused[j] = oref[j] = false;
		ofree[j] = cap - 1 - j;
	}
	if (sl_kt_init(&t, cap, klen, 4, data[0]) < 0)
		abort();
	/* each op: one byte (op, key seed), key bytes from it */
	for (; i < size && data[i] != 0xff; i++) {
		uint8_t k[16] = {0};
		uint32_t h, e;
		int o;
		bool created;

		for (unsigned j = 0; j < klen; j++)
			k[j] = (uint8_t)((data[i] & 0x3f) * (j + 1));
		h = (data[i] & 0x40) ? data[i] & 1 : sl_kt_hash(&t, k);	/* some forced collisions */
		o = ofind(k);
		e = sl_kt_find(&t, k, h);
		if (!(data[i] & 0x40) && e != (o < 0 ? SL_KT_NIL : (uint32_t)o))
			abort();
		if (data[i] & 0x40) {
			/* a forced hash only for finds: inserts must use the real one */
			if ((data[i] & 0x80) && o >= 0) {	/* and a touch */
				sl_kt_touch(&t, (uint32_t)o);
				oref[o] = true;
			}
			continue;
		}
		if (data[i] & 0x80) {
			if (e != SL_KT_NIL) {
				sl_kt_remove(&t, e);
				odel((unsigned)o);
			}
		} else {
			unsigned want;

			victim = -1;
			e = sl_kt_get(&t, k, h, &created, on_evict, NULL);
			if (created != (o < 0) || memcmp(sl_kt_key(&t, e), k, klen))
				abort();
			if (o >= 0) {
				want = (unsigned)o;
				if (victim != -1)
					abort();
			} else {
				if (on == cap) {
					want = ovictim();
					if (victim != (int)want)
						abort();
					odel(want);
				} else if (victim != -1) {
					abort();
				}
				want = ofree[--onfree];
				memcpy(okeys[want], k, klen);
				oused[want] = true;
				on++;
			}
			if (e != want)
				abort();
			oref[want] = o >= 0;
		}
		if (t.used != on)
			abort();
	}
	if (t.hand != ohand)
		abort();
	for (uint32_t j = 0; j < cap; j++)
		if (oused[j] && (sl_kt_entry(&t, j)->ref != 0) != oref[j])
			abort();
	sl_kt_free(&t);
	if (i < size)
		reckey_part(data + i + 1, size - i - 1);
	return 0;
}
