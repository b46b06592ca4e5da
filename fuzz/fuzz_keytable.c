/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a program of operations on a keytable
 * (plugins/common/keytable.c) of 1..32 entries with 1..16-byte keys:
 * get, find, remove, touch, checked against a plain array of the keys in
 * LRU order (finds, eviction victims, counts, the LRU walk); and the rest
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

static uint8_t okeys[MAXK][16];
static unsigned on, klen;
static int victim = -1;

static int ofind(const uint8_t *k)
{
	for (unsigned i = 0; i < on; i++)
		if (!memcmp(okeys[i], k, klen))
			return (int)i;
	return -1;
}

static void odel(unsigned i)
{
	memmove(okeys[i], okeys[i + 1], (on - i - 1) * sizeof(okeys[0]));
	on--;
}

static void oappend(const uint8_t *k)
{
	memcpy(okeys[on++], k, klen);
}

static void on_evict(void *ctx, const struct sl_keytable *t, uint32_t i)
{
	(void)ctx;
	victim = memcmp(sl_kt_key(t, i), okeys[0], klen) == 0 ? 0 : 1;
}

static void reckey_part(const uint8_t *p, size_t n)
{
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	uint8_t key[SL_RECKEY_MAX_BYTES];
	char text[1024];
	struct fmt_buf fb;
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
	fmt_init(&fb, text, sizeof(text));
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
		if ((e == SL_KT_NIL) != (o < 0) && !(data[i] & 0x40))
			abort();
		if (data[i] & 0x40)
			continue;	/* a forced hash only for finds: inserts must use the real one */
		if (data[i] & 0x80) {
			if (e != SL_KT_NIL) {
				sl_kt_remove(&t, e);
				odel((unsigned)o);
			}
		} else {
			unsigned full = on == cap;

			victim = -1;
			e = sl_kt_get(&t, k, h, &created, on_evict, NULL);
			if (created != (o < 0) || memcmp(sl_kt_key(&t, e), k, klen))
				abort();
			if (o >= 0) {
				odel((unsigned)o);
			} else if (full) {
				if (victim != 0)
					abort();
				odel(0);
			}
			oappend(k);
		}
		if (t.used != on)
			abort();
	}
	{
		unsigned n = 0;

		for (uint32_t e = sl_kt_oldest(&t); e != SL_KT_NIL; e = sl_kt_newer(&t, e), n++)
			if (n >= on || memcmp(sl_kt_key(&t, e), okeys[n], klen))
				abort();
		if (n != on)
			abort();
	}
	sl_kt_free(&t);
	if (i < size)
		reckey_part(data + i + 1, size - i - 1);
	return 0;
}
