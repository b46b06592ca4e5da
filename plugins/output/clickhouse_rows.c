/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clickhouse output's row encoders: a record as one JSONEachRow line or
 * one RowBinary row, appended to a batch buffer that is reused (it only
 * grows, to the largest batch seen).  See clickhouse_rows.h.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "grow.h"
#include "clickhouse_rows.h"
#include "time_clamp.h"

bool ch_rows_ensure(struct ch_rows *b, size_t more)
{
	return sl_grow(&b->buf, &b->cap, b->len + more);
}

/*
 * A JSON string of len bytes.  ClickHouse takes the bytes between the
 * quotes as they are (a FixedString(16) address is 16 raw bytes), so only
 * quote, backslash and control bytes are escaped, into one byte each.
 */
static char *put_json_str(char *p, const uint8_t *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";

	*p++ = '"';
	for (size_t i = 0; i < len; i++) {
		uint8_t c = s[i];

		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 15];
			p += 6;
		} else {
			*p++ = (char)c;
		}
	}
	*p++ = '"';
	return p;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/*
 * A time column: DateTime's seconds (UInt32: 1970..2106) or the :usec part,
 * of the time clamped to that range (time_clamp.h).
 */
static uint64_t time_part(const union sl_value *v, const struct ch_column *c)
{
	struct sl_time t = sl_time_clamp(v->time, 0, SL_TIME_SEC_U32_MAX);

	return c->conv == CV_USEC ? t.nsec / 1000 : (uint64_t)t.sec;
}

/* Worst case bytes one column's value takes. */
static size_t value_max(const struct sl_record *r, const struct ch_column *c)
{
	if (c->type == SL_T_STRING || c->type == SL_T_BYTES)
		return 2 + (size_t)r->v[c->field].bytes.len * 6;
	return 2 + 16 * 6;
}

static char *put_value(char *p, const struct sl_record *r, const struct ch_column *c)
{
	const union sl_value *v = &r->v[c->field];
	static const char hex[] = "0123456789abcdef";
	char tmp[64];

	switch (c->type) {
	case SL_T_U64:
		return put_u64(p, v->u64);
	case SL_T_STRING:
		return put_json_str(p, v->bytes.ptr, v->bytes.len);
	case SL_T_TIME:
		return put_u64(p, time_part(v, c));
	case SL_T_ADDR:
		if (c->conv == CV_IPV4 && !sl_addr_is_v4(v->addr))
			return put_u64(p, 0);
		if (c->conv == CV_IPV4)
			return put_u64(p, (uint32_t)v->addr[12] << 24 | (uint32_t)v->addr[13] << 16 |
				       (uint32_t)v->addr[14] << 8 | v->addr[15]);
		if (c->conv == CV_TEXT) {
			if (sl_addr_is_v4(v->addr) && !sl_fmt_rec_v6(r))	/* as the packet had it */
				snprintf(tmp, sizeof(tmp), "%u.%u.%u.%u", v->addr[12], v->addr[13],
					 v->addr[14], v->addr[15]);
			else
				inet_ntop(AF_INET6, v->addr, tmp, sizeof(tmp));
			return put_json_str(p, (const uint8_t *)tmp, strlen(tmp));
		}
		return put_json_str(p, v->addr, 16);
	case SL_T_MAC:
		for (int i = 0; i < 6; i++) {
			tmp[i * 3] = hex[v->addr[i] >> 4];
			tmp[i * 3 + 1] = hex[v->addr[i] & 15];
			tmp[i * 3 + 2] = ':';
		}
		return put_json_str(p, (const uint8_t *)tmp, 17);
	case SL_T_BYTES:
		*p++ = '"';
		for (uint32_t i = 0; i < v->bytes.len; i++) {
			*p++ = hex[v->bytes.ptr[i] >> 4];
			*p++ = hex[v->bytes.ptr[i] & 15];
		}
		*p++ = '"';
		return p;
	}
	return put_u64(p, 0);
}

/* The row just written ends at b->len. */
static void row_done(struct ch_rows *b)
{
	b->rows++;
	if (b->ends)
		b->ends[b->rows] = b->len;
}

bool ch_row_json(struct ch_rows *b, const struct ch_column *col, unsigned ncol,
		 const struct sl_record *r)
{
	size_t need = 2;
	char *p;
	bool first = true;

	for (unsigned i = 0; i < ncol; i++)
		if (sl_has(r, col[i].field))
			need += col[i].keylen + 1 + value_max(r, &col[i]);
	if (!ch_rows_ensure(b, need))
		return false;
	p = b->buf + b->len;
	*p++ = '{';
	for (unsigned i = 0; i < ncol; i++) {
		const struct ch_column *c = &col[i];

		if (!sl_has(r, c->field))
			continue;
		if (!first)
			*p++ = ',';
		first = false;
		memcpy(p, c->key, c->keylen);
		p = put_value(p + c->keylen, r, c);
	}
	*p++ = '}';
	*p++ = '\n';
	b->len = (size_t)(p - b->buf);
	row_done(b);
	return true;
}

/*
 * One record as one RowBinary row: every column in table order, a value a
 * record lacks as its type's zero (what ClickHouse stores for a missing
 * JSONEachRow key of a plain column).
 */
bool ch_row_binary(struct ch_rows *b, const struct ch_column *col, unsigned ncol,
		   const struct sl_record *r)
{
	size_t need = 0;
	uint8_t *p;

	for (unsigned i = 0; i < ncol; i++)
		need += col[i].rb != RB_STR ? 16 : !sl_has(r, col[i].field) ? 1
			: 5 + (size_t)r->v[col[i].field].bytes.len;
	if (!ch_rows_ensure(b, need))
		return false;
	p = (uint8_t *)b->buf + b->len;
	for (unsigned i = 0; i < ncol; i++) {
		const struct ch_column *c = &col[i];
		const union sl_value *v = &r->v[c->field];
		bool has = sl_has(r, c->field);
		uint64_t u;

		if (c->rb == RB_FS16) {
			if (has)
				memcpy(p, v->addr, 16);
			else
				memset(p, 0, 16);
			p += 16;
			continue;
		}
		if (c->rb == RB_STR) {
			uint32_t len = has ? v->bytes.len : 0;

			for (u = len; u >= 0x80; u >>= 7)	/* LEB128 length */
				*p++ = (uint8_t)(u | 0x80);
			*p++ = (uint8_t)u;
			if (len)
				memcpy(p, v->bytes.ptr, len);
			p += len;
			continue;
		}
		u = !has ? 0 : c->type != SL_T_TIME ? v->u64 : time_part(v, c);
		for (unsigned k = 0; k < c->rb; k++, u >>= 8)
			*p++ = (uint8_t)u;
	}
	b->len = (size_t)(p - (uint8_t *)b->buf);
	row_done(b);
	return true;
}
