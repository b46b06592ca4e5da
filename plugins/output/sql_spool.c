/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's disk spool: see sql_spool.h.
 *
 * A row record: 'R', u16 LE number of cells, then per cell a kind byte
 * (enum sql_cell_kind) and its value: INT 8 bytes LE, TIME 8 bytes of
 * seconds and 4 of microseconds, TEXT and BLOB a u32 LE length and the
 * bytes, NULL nothing.  A record that does not parse, or has another
 * number of cells (the columns changed between runs), is skipped and
 * counted in spool_dropped.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sql_spool.h"

#define REC_TAG 'R'
#define REC_MAX (256u << 10)	/* the spool takes records up to 256 KiB - 24 */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void spool_log(void *ctx, int level, const char *msg)
{
	struct sql_spool *ss = ctx;

	ss->host->log(ss->inst, level, "%s", msg);
}

void sql_spool_counters(struct sql_spool *ss, const struct sl_host *host, struct sl_instance *inst)
{
	ss->host = host;
	ss->inst = inst;
	sl_spool_counters_new(&ss->ctr, host, inst);
}

int sql_spool_open(struct sql_spool *ss, const char *dir, uint64_t max_size, unsigned ncol,
		   unsigned batch_size, uint64_t retry_min, uint64_t retry_max)
{
	char err[600];

	ss->max_rows = batch_size;
	ss->iov = calloc(batch_size, sizeof(*ss->iov));
	ss->b.cells = calloc((size_t)batch_size * ncol, sizeof(*ss->b.cells));
	ss->b.ncol = ncol;
	ss->rec_cap = 1 << 16;
	ss->rec = malloc(ss->rec_cap);
	if (!ss->iov || !ss->b.cells || !ss->rec) {
		ss->host->log(ss->inst, SL_LOG_ERR, "spool_dir: out of memory");
		return -1;
	}
	ss->sp = sl_spool_open(dir, max_size, spool_log, ss, err, sizeof(err));
	if (!ss->sp) {
		ss->host->log(ss->inst, SL_LOG_ERR, "spool_dir: %s", err);
		return -1;
	}
	ss->retry_min = retry_min;
	ss->retry_max = retry_max;
	ss->delay = retry_min;
	ss->next_try = 0;
	return 0;
}

void sql_spool_close(struct sql_spool *ss)
{
	if (ss->sp) {
		sl_spool_flush(ss->sp);
		sql_spool_publish(ss);
		sl_spool_close(ss->sp);
	}
	ss->sp = NULL;
	free(ss->iov);
	ss->iov = NULL;
	free(ss->b.cells);
	ss->b.cells = NULL;
	free(ss->b.arena);
	ss->b.arena = NULL;
	ss->b.cap = 0;
	free(ss->rec);
	ss->rec = NULL;
}

bool sql_spool_ready(struct sql_spool *ss)
{
	return ss->sp && sl_spool_ready(ss->sp);
}

bool sql_spool_pending(const struct sql_spool *ss)
{
	return ss->sp && sl_spool_pending(ss->sp);
}

void sql_spool_publish(struct sql_spool *ss)
{
	if (ss->sp)
		sl_spool_counters_publish(&ss->ctr, ss->sp, ss->host, ss->inst);
	if (ss->rejected) {
		ss->host->counter_add(ss->inst, ss->ctr.dropped, ss->rejected);
		ss->host->dropped_add(ss->inst, ss->rejected);
	}
	ss->rejected = 0;
}

/* ---- rows into records and back ---- */

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

/* Row r of b as one record in ss->rec: its length, 0 when it cannot be spooled. */
static size_t encode_row(struct sql_spool *ss, const struct sql_batch *b, unsigned r)
{
	const struct sql_cell *row = b->cells + (size_t)r * b->ncol;
	size_t need = 3, len;

	for (unsigned i = 0; i < b->ncol; i++)
		need += 1 + (row[i].kind == SQL_TEXT || row[i].kind == SQL_BLOB ? 4 + (size_t)row[i].len : 12);
	if (need >= REC_MAX)
		return 0;
	if (need > ss->rec_cap) {
		char *n = realloc(ss->rec, need);

		if (!n)
			return 0;
		ss->rec = n;
		ss->rec_cap = need;
	}
	ss->rec[0] = REC_TAG;
	put_le(ss->rec + 1, b->ncol, 2);
	len = 3;
	for (unsigned i = 0; i < b->ncol; i++) {
		const struct sql_cell *c = &row[i];

		ss->rec[len++] = (char)c->kind;
		switch (c->kind) {
		case SQL_INT:
			put_le(ss->rec + len, (uint64_t)c->i, 8);
			len += 8;
			break;
		case SQL_TIME:
			put_le(ss->rec + len, (uint64_t)c->i, 8);
			put_le(ss->rec + len + 8, c->len, 4);
			len += 12;
			break;
		case SQL_TEXT:
		case SQL_BLOB:
			put_le(ss->rec + len, c->len, 4);
			memcpy(ss->rec + len + 4, b->arena + c->off, c->len);
			len += 4 + c->len;
			break;
		}
	}
	return len;
}

void sql_spool_batch(struct sql_spool *ss, const struct sql_batch *b)
{
	for (unsigned r = 0; r < b->rows; r++) {
		size_t len = encode_row(ss, b, r);

		/* a row too long: the spool refuses (and counts) an oversized record */
		sl_spool_append(ss->sp, ss->rec, len ? len : REC_MAX);
	}
	sl_spool_flush(ss->sp);	/* one write per batch */
}

void sql_spool_backoff(struct sql_spool *ss)
{
	ss->delay = ss->retry_min;
	ss->next_try = now_ms() + ss->delay;
}

/* One record as the next row of ss->b; false when it does not parse. */
static bool decode_row(struct sql_spool *ss, const unsigned char *p, size_t n)
{
	struct sql_batch *b = &ss->b;
	struct sql_cell *row = b->cells + (size_t)b->rows * b->ncol;
	size_t at = 3;

	if (n < 3 || p[0] != REC_TAG || get_le(p + 1, 2) != b->ncol)
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
	for (unsigned i = 0; i < b->ncol; i++) {
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

/*
 * The first of the n peeked records as ss->b: how many records it covers
 * (a record that does not parse is skipped and counted).
 */
static unsigned gather(struct sql_spool *ss, unsigned n)
{
	ss->b.rows = 0;
	ss->b.used = 0;
	for (unsigned i = 0; i < n; i++)
		if (!decode_row(ss, ss->iov[i].iov_base, ss->iov[i].iov_len)) {
			ss->host->log(ss->inst, SL_LOG_ERR, "spool: a row that does not fit the columns "
				      "skipped (counted in spool_dropped)");
			ss->rejected++;
		}
	return n;
}

uint64_t sql_spool_drain(struct sql_spool *ss, sql_write_fn write, void *ctx, uint64_t budget_ms,
			 uint64_t *rows, uint64_t *batches)
{
	uint64_t t = now_ms(), start = t, wait;
	unsigned n;

	*rows = *batches = 0;
	/* ready() takes the lock a reload's old instance has let go */
	if (!ss->sp || !sl_spool_ready(ss->sp) || !sl_spool_pending(ss->sp))
		return 0;
	if (t < ss->next_try)
		return ss->next_try - t;
	while ((n = sl_spool_peekv(ss->sp, ss->iov, ss->max_rows))) {
		enum sql_result r;

		n = gather(ss, n);
		r = ss->b.rows ? write(ctx, &ss->b) : SQL_OK;
		if (r == SQL_RETRY) {
			wait = ss->delay;
			ss->next_try = now_ms() + wait;
			ss->delay = ss->delay * 2 > ss->retry_max ? ss->retry_max : ss->delay * 2;
			return wait;
		}
		if (r == SQL_REJECTED) {
			/* refused for good: dropped, so the rows behind them can go */
			ss->host->log(ss->inst, SL_LOG_ERR, "spool: %u rows refused by the database dropped",
				      ss->b.rows);
			ss->rejected += ss->b.rows;
		} else {
			*rows += ss->b.rows;
			*batches += ss->b.rows > 0;
		}
		sl_spool_ack(ss->sp, n);
		ss->delay = ss->retry_min;
		ss->next_try = 0;
		if (now_ms() - start >= budget_ms)
			return sql_spool_pending(ss) ? 1 : 0;	/* the rest after the input */
	}
	/* pending but nothing readable now (a segment in use): not a busy loop */
	return sql_spool_pending(ss) ? ss->retry_min : 0;
}
