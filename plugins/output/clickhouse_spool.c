/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clickhouse output's disk spool: see clickhouse_spool.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clickhouse_spool.h"

/*
 * Rows per INSERT from the spool, at most: a backlog goes out in a few large
 * INSERTs (a segment, at most 4 MiB, each) rather than in batch_size ones,
 * so it drains fast and makes few parts for the server to merge.
 */
#define IOV_MAX_ROWS 65536u
#define REC_MAX (256u << 10)	/* more than the spool takes as one record */
#define FMT_TAG 'F'		/* the format byte: FMT_TAG + fmt */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void spool_log(void *ctx, int level, const char *msg)
{
	struct ch_spool *cs = ctx;

	cs->host->log(cs->inst, level, "%s", msg);
}

/* The spool's counts since the last call into the counters. */
static void publish(struct ch_spool *cs)
{
	sl_spool_counters_publish(&cs->ctr, cs->sp, cs->host, cs->inst);
}

void ch_spool_counters(struct ch_spool *cs, const struct sl_host *host, struct sl_instance *inst,
		       int c_retries)
{
	cs->host = host;
	cs->inst = inst;
	cs->c_retries = c_retries;
	sl_spool_counters_new(&cs->ctr, host, inst);
}

int ch_spool_open(struct ch_spool *cs, const char *dir, uint64_t max_size, uint64_t retry_min,
		  uint64_t retry_max)
{
	char err[600];

	cs->max_rows = IOV_MAX_ROWS;
	cs->iov = calloc(cs->max_rows, sizeof(*cs->iov));
	cs->rec = malloc(REC_MAX);
	if (!cs->iov || !cs->rec) {
		cs->host->log(cs->inst, SL_LOG_ERR, "spool_dir: out of memory");
		return -1;
	}
	cs->sp = sl_spool_open(dir, max_size, spool_log, cs, err, sizeof(err));
	if (!cs->sp) {
		cs->host->log(cs->inst, SL_LOG_ERR, "spool_dir: %s", err);
		return -1;
	}
	cs->retry_min = retry_min;
	cs->retry_max = retry_max;
	cs->delay = retry_min;
	cs->next_try = 0;
	publish(cs);
	return 0;
}

void ch_spool_close(struct ch_spool *cs)
{
	if (cs->sp) {
		sl_spool_flush(cs->sp);
		publish(cs);
		sl_spool_close(cs->sp);
	}
	cs->sp = NULL;
	free(cs->iov);
	cs->iov = NULL;
	free(cs->rec);
	cs->rec = NULL;
	free(cs->buf);
	cs->buf = NULL;
	cs->cap = 0;
}

bool ch_spool_ready(struct ch_spool *cs)
{
	return cs->sp && sl_spool_ready(cs->sp);
}

bool ch_spool_pending(const struct ch_spool *cs)
{
	return cs->sp && sl_spool_pending(cs->sp);
}

void ch_spool_rows(struct ch_spool *cs, int fmt, const char *buf, const size_t *ends, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		size_t len = ends[i + 1] - ends[i];

		/* the spool refuses (and counts) a record this long before reading it */
		if (len >= REC_MAX) {
			sl_spool_append(cs->sp, cs->rec, REC_MAX);
			continue;
		}
		cs->rec[0] = (char)(FMT_TAG + fmt);
		memcpy(cs->rec + 1, buf + ends[i], len);
		sl_spool_append(cs->sp, cs->rec, len + 1);	/* a refusal is counted there */
	}
	sl_spool_flush(cs->sp);		/* one write per batch */
	publish(cs);
}

void ch_spool_backoff(struct ch_spool *cs)
{
	cs->delay = cs->retry_min;
	cs->next_try = now_ms() + cs->delay;
}

static int rec_fmt(const struct iovec *v)
{
	return v->iov_len ? *(const char *)v->iov_base - FMT_TAG : -1;
}

/*
 * The first of the n records the spool returned that share one format, as
 * one INSERT body: how many (*fmt their format), 0 when out of memory.
 */
static unsigned gather(struct ch_spool *cs, unsigned n, int *fmt, size_t *len)
{
	size_t need = 0;

	*fmt = rec_fmt(&cs->iov[0]);
	for (unsigned i = 1; i < n; i++)
		if (rec_fmt(&cs->iov[i]) != *fmt)
			n = i;
	for (unsigned i = 0; i < n; i++)
		need += cs->iov[i].iov_len - 1;
	if (need > cs->cap) {
		char *nb = realloc(cs->buf, need);

		if (!nb)
			return 0;
		cs->buf = nb;
		cs->cap = need;
	}
	*len = 0;
	for (unsigned i = 0; i < n; i++) {
		memcpy(cs->buf + *len, (const char *)cs->iov[i].iov_base + 1, cs->iov[i].iov_len - 1);
		*len += cs->iov[i].iov_len - 1;
	}
	return n;
}

uint64_t ch_spool_drain(struct ch_spool *cs, ch_post_fn post, void *ctx, uint64_t budget_ms)
{
	uint64_t t = now_ms(), start = t, wait;
	unsigned n;
	size_t len;
	int fmt;

	/* ready() takes the lock a reload's old instance has let go */
	if (!cs->sp || !sl_spool_ready(cs->sp) || !sl_spool_pending(cs->sp))
		return 0;
	if (t < cs->next_try)
		return cs->next_try - t;
	while ((n = sl_spool_peekv(cs->sp, cs->iov, cs->max_rows))) {
		n = gather(cs, n, &fmt, &len);
		if (fmt < 0 || fmt > 1) {	/* not ours: an empty or foreign record */
			cs->host->log(cs->inst, SL_LOG_ERR, "spool: a record of unknown format "
				      "skipped (counted in spool_dropped)");
			cs->host->counter_add(cs->inst, cs->ctr.dropped, 1);
			cs->host->dropped_add(cs->inst, 1);
			sl_spool_ack(cs->sp, 1);
			continue;
		}
		if (!n || !post(ctx, fmt, cs->buf, len, n)) {
			/* tried again from the caller's timer, with backoff */
			cs->host->counter_add(cs->inst, cs->c_retries, 1);
			wait = cs->delay;
			cs->next_try = now_ms() + wait;
			cs->delay = cs->delay * 2 > cs->retry_max ? cs->retry_max : cs->delay * 2;
			publish(cs);
			return wait;
		}
		sl_spool_ack(cs->sp, n);
		cs->delay = cs->retry_min;
		cs->next_try = 0;
		if (now_ms() - start >= budget_ms) {
			publish(cs);
			return ch_spool_pending(cs) ? 1 : 0;	/* the rest after the input */
		}
	}
	publish(cs);
	/* pending but nothing readable now (a segment in use): not a busy loop */
	return ch_spool_pending(cs) ? cs->retry_min : 0;
}
