/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's row of cells as one spool record and back (sql.h).
 *
 * A row record: 'R', u16 LE number of cells, then per cell a kind byte
 * (enum sql_cell_kind) and its value: INT 8 bytes LE, TIME 8 bytes of
 * seconds and 4 of microseconds, TEXT and BLOB a u32 LE length and the
 * bytes, NULL nothing.  A record that does not parse, or has another
 * number of cells (the columns changed between runs), is refused, and the
 * output skips and counts it in spool_dropped; one with only the columns
 * before the optional ones (spooled by a sluice without them) gets NULLs.
 */
#include <stdlib.h>
#include <string.h>

#include "sql.h"

#define REC_TAG 'R'
#define REC_MAX (256u << 10)	/* the spool takes records up to 256 KiB - 24 */

static void put_le(char *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, v >>= 8)
		p[i] = (char)(v & 0xff);
}

static uint64_t get_le(const unsigned char *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

size_t sql_row_encode(const struct sql_batch *b, unsigned r, char **buf, size_t *cap)
{
	const struct sql_cell *row = b->cells + (size_t)r * b->ncol;
	size_t need = 3, len;
	char *o;

	for (unsigned i = 0; i < b->ncol; i++)
		need += 1 + (row[i].kind == SQL_TEXT || row[i].kind == SQL_BLOB ? 4 + (size_t)row[i].len : 12);
	if (need >= REC_MAX)
		return 0;
	if (need > *cap) {
		char *n = realloc(*buf, need);

		if (!n)
			return 0;
		*buf = n;
		*cap = need;
	}
	o = *buf;
	o[0] = REC_TAG;
	put_le(o + 1, b->ncol, 2);
	len = 3;
	for (unsigned i = 0; i < b->ncol; i++) {
		const struct sql_cell *c = &row[i];

		o[len++] = (char)c->kind;
		switch (c->kind) {
		case SQL_INT:
			put_le(o + len, (uint64_t)c->i, 8);
			len += 8;
			break;
		case SQL_TIME:
			put_le(o + len, (uint64_t)c->i, 8);
			put_le(o + len + 8, c->len, 4);
			len += 12;
			break;
		case SQL_TEXT:
		case SQL_BLOB:
			put_le(o + len, c->len, 4);
			memcpy(o + len + 4, b->arena + c->off, c->len);
			len += 4 + c->len;
			break;
		}
	}
	return len;
}

bool sql_row_decode(struct sql_batch *b, const unsigned char *p, size_t n)
{
	struct sql_cell *row = b->cells + (size_t)b->rows * b->ncol;
	size_t at = 3;
	unsigned ncells;

	if (n < 3 || p[0] != REC_TAG)
		return false;
	ncells = (unsigned)get_le(p + 1, 2);
	if (ncells != b->ncol && (ncells > b->ncol || ncells < b->nfixed))
		return false;
	/* the arena grows to hold a whole batch's bytes: at most the records' size */
	if (b->used + n > b->cap) {
		size_t cap = b->cap ? b->cap : 1 << 16;
		char *na;

		while (cap < b->used + n)
			cap *= 2;
		na = realloc(b->arena, cap);
		if (!na)
			return false;
		b->arena = na;
		b->cap = cap;
	}
	for (unsigned i = ncells; i < b->ncol; i++)
		row[i].kind = SQL_NULL;
	for (unsigned i = 0; i < ncells; i++) {
		struct sql_cell *c = &row[i];

		if (at >= n)
			return false;
		c->kind = p[at++];
		switch (c->kind) {
		case SQL_NULL:
			break;
		case SQL_INT:
		case SQL_TIME:
			if (at + (c->kind == SQL_INT ? 8 : 12) > n)
				return false;
			c->i = (int64_t)get_le(p + at, 8);
			c->len = c->kind == SQL_TIME ? (uint32_t)get_le(p + at + 8, 4) : 0;
			at += c->kind == SQL_INT ? 8 : 12;
			break;
		case SQL_TEXT:
		case SQL_BLOB:
			if (at + 4 > n || at + 4 + get_le(p + at, 4) > n)
				return false;
			c->len = (uint32_t)get_le(p + at, 4);
			c->off = b->used;
			memcpy(b->arena + b->used, p + at + 4, c->len);
			b->used += c->len;
			at += 4 + c->len;
			break;
		default:
			return false;
		}
	}
	if (at != n)
		return false;
	b->rows++;
	return true;
}
