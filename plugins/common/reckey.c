/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A record's key from a list of fields: see reckey.h. */
#include <stdio.h>
#include <string.h>

#include "reckey.h"

void sl_reckey_init(struct sl_reckey *k, uint64_t seed)
{
	memset(k, 0, sizeof(*k));
	k->seed = seed;
}

static unsigned slot_len(enum sl_type type)
{
	switch (type) {
	case SL_T_U64:
	case SL_T_MAC:
		return 8 + 8;
	case SL_T_ADDR:
	case SL_T_TIME:
		return 8 + 16;
	case SL_T_STRING:
	case SL_T_BYTES:
		return 8 + SL_RECKEY_STR_INLINE;
	}
	return 0;
}

int sl_reckey_add(struct sl_reckey *k, sl_field id, enum sl_type type, const char *name)
{
	unsigned len = slot_len(type);
	struct sl_reckey_field *f;

	if (!len || k->n == SL_RECKEY_MAX_FIELDS || k->len + len > SL_RECKEY_MAX_BYTES)
		return -1;
	f = &k->f[k->n++];
	f->id = id;
	f->type = (uint8_t)type;
	f->off = (uint16_t)k->len;
	f->len = (uint16_t)len;
	snprintf(f->name, sizeof(f->name), "%s", name);
	k->len += len;
	return 0;
}

uint64_t sl_reckey_hash_bytes(uint64_t seed, const uint8_t *p, size_t n)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), v;

	for (; n >= 8; n -= 8, p += 8) {
		memcpy(&v, p, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	if (n) {
		v = 0;
		memcpy(&v, p, n);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* A string slot: header word (1, length) at s, the value after it. */
static void put_bytes(const struct sl_reckey *k, uint8_t *s, const struct sl_bytes *v)
{
	uint64_t w[SL_RECKEY_STR_INLINE / 8] = {0}, hdr;

	if (v->len <= SL_RECKEY_STR_INLINE) {
		hdr = 1 | (uint64_t)v->len << 8;
		if (v->len)
			memcpy(w, v->ptr, v->len);
	} else {
		uint64_t h = sl_reckey_hash_bytes(k->seed, v->ptr, v->len);

		hdr = 1 | (uint64_t)0xff << 8;
		memcpy(w, v->ptr, SL_RECKEY_STR_HEAD);
		w[SL_RECKEY_STR_HEAD / 8] = h;
	}
	memcpy(s, &hdr, 8);
	memcpy(s + 8, w, sizeof(w));
}

void sl_reckey_build(const struct sl_reckey *k, const struct sl_record *r, uint8_t *out)
{
	static const uint64_t one = 1, zero[SL_RECKEY_MAX_BYTES / 8];

	/* the usual key, [src_addr]: without the loop */
	if (k->n == 1 && k->f[0].type == SL_T_ADDR) {
		if (sl_has(r, k->f[0].id)) {
			memcpy(out, &one, 8);
			memcpy(out + 8, r->v[k->f[0].id].addr, 16);
		} else {
			memset(out, 0, 24);
		}
		return;
	}
	for (unsigned i = 0; i < k->n; i++) {
		const struct sl_reckey_field *f = &k->f[i];
		const union sl_value *v = &r->v[f->id];
		uint8_t *s = out + f->off;
		uint64_t w;

		if (!sl_has(r, f->id)) {
			memcpy(s, zero, f->len);
			continue;
		}
		switch (f->type) {
		case SL_T_U64:
			memcpy(s, &one, 8);
			memcpy(s + 8, &v->u64, 8);
			break;
		case SL_T_ADDR:
			memcpy(s, &one, 8);
			memcpy(s + 8, v->addr, 16);
			break;
		case SL_T_MAC:
			w = 0;
			memcpy(&w, v->addr, 6);
			memcpy(s, &one, 8);
			memcpy(s + 8, &w, 8);
			break;
		case SL_T_TIME:
			w = v->time.nsec;
			memcpy(s, &one, 8);
			memcpy(s + 8, &v->time.sec, 8);
			memcpy(s + 16, &w, 8);
			break;
		default:
			put_bytes(k, s, &v->bytes);
			break;
		}
	}
}

static void format_bytes(const struct sl_reckey_field *f, const uint8_t *s, struct sl_fmt_buf *b)
{
	bool cut = s[1] == 0xff;
	unsigned n = cut ? SL_RECKEY_STR_HEAD : s[1] > SL_RECKEY_STR_INLINE ? SL_RECKEY_STR_INLINE : s[1];

	if (f->type == SL_T_STRING)
		sl_fmt_mem(b, s + 8, n);
	else
		sl_fmt_hexbytes(b, s + 8, n, 0);
	if (cut)
		sl_fmt_str(b, "...");
}

void sl_reckey_format(const struct sl_reckey *k, const uint8_t *key, struct sl_fmt_buf *b)
{
	for (unsigned i = 0; i < k->n; i++) {
		const struct sl_reckey_field *f = &k->f[i];
		const uint8_t *s = key + f->off;
		uint64_t u;
		int64_t sec;
		uint32_t nsec;

		if (i)
			sl_fmt_chr(b, ' ');
		sl_fmt_str(b, f->name);
		sl_fmt_chr(b, '=');
		if (!s[0]) {
			sl_fmt_chr(b, '-');	/* the record had no such field */
			continue;
		}
		switch (f->type) {
		case SL_T_U64:
			memcpy(&u, s + 8, 8);
			sl_fmt_u64(b, u);
			break;
		case SL_T_ADDR:
			sl_fmt_addr(b, s + 8);
			break;
		case SL_T_MAC:
			sl_fmt_mac(b, s + 8);
			break;
		case SL_T_TIME:
			memcpy(&sec, s + 8, 8);
			memcpy(&nsec, s + 16, 4);
			sl_fmt_i64(b, sec);
			sl_fmt_chr(b, '.');
			nsec %= 1000000000u;
			for (uint32_t d = 100000000; d; d /= 10)
				sl_fmt_chr(b, (char)('0' + nsec / d % 10));
			break;
		default:
			format_bytes(f, s, b);
			break;
		}
	}
}
