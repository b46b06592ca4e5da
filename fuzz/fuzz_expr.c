/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a `where` expression (plugins/common/
 * expr.h), up to the first NUL; the bytes after it make a record.  The
 * compiler must reject or accept every text without reading outside it,
 * and a compiled expression is matched against that record and an empty
 * one: the record's presence bits, numbers, addresses and strings all come
 * from the input, strings exactly as long as the bytes left (no NUL).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const enum sl_type types[] = {
#define X(id, n, t, d) t,
	SL_WELL_KNOWN_FIELDS(X)
#undef X
};

static int lookup(void *ctx, const char *name, enum sl_type *type)
{
	(void)ctx;
	for (int i = 0; i < SL_F_WELL_KNOWN_COUNT; i++)
		if (strcmp(name, sl_well_known_names[i]) == 0) {
			*type = types[i];
			return i;
		}
	return -1;
}

static _Alignas(16) uint8_t store[2][sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value)];
static volatile unsigned sink;

/* Every well-known field from the bytes: a presence byte, then its value. */
static void fill(struct sl_record *r, const uint8_t *p, size_t n)
{
	size_t at = 0;

	memset(r->present, 0, sizeof(r->present));
	for (int f = 0; f < SL_F_WELL_KNOWN_COUNT && at < n; f++) {
		if (!(p[at++] & 1))
			continue;
		if (types[f] == SL_T_STRING || types[f] == SL_T_BYTES) {
			/* the rest of the input, cut at a length byte */
			uint32_t len = at < n ? p[at++] : 0;

			if (len > n - at)
				len = (uint32_t)(n - at);
			sl_set_bytes(r, (sl_field)f, len ? p + at : NULL, len);
			at += len;
			continue;
		}
		memset(r->v[f].addr, 0, 16);
		memcpy(r->v[f].addr, p + at, n - at < 16 ? n - at : 16);
		at += n - at < 16 ? n - at : 16;
		sl_mark(r, (sl_field)f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	struct sl_record *full = (struct sl_record *)store[0], *empty = (struct sl_record *)store[1];
	struct sl_expr_error err;
	struct sl_expr *e;
	char *text;

	/* an exact-size copy, so reading past the NUL is caught */
	if (!(text = malloc(tlen + 1)))
		return 0;
	memcpy(text, data, tlen);
	text[tlen] = 0;
	e = sl_expr_compile(text, lookup, NULL, &err);
	free(text);
	if (!e) {
		if (err.column < 1 || err.column > tlen + 1 || !err.msg[0])
			abort();	/* an error always says where and what */
		return 0;
	}
	fill(full, nul ? nul + 1 : data + size, nul ? size - tlen - 1 : 0);
	memset(empty->present, 0, sizeof(empty->present));
	sink += sl_expr_match(e, full) + sl_expr_match(e, empty) + sl_expr_nfields(e);
	sl_expr_free(e);
	return 0;
}
