/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clickhouse output's disk spool (spool.h): what cannot be inserted is
 * kept as encoded rows, one spool record per row (a format byte, then the
 * JSONEachRow line or the RowBinary row), and inserted again from there,
 * oldest first, in INSERTs of one segment's rows of one format.  A row
 * counts as sent (acknowledged to the spool) once its INSERT got HTTP 200.
 * The format byte lets rows spooled before a change of `format` go out in
 * the format they were encoded in.
 *
 * Rows rather than whole batches: a batch (10,000 rows, megabytes) is
 * larger than the spool's largest record, max_size then drops exact rows,
 * and the spool's batches need not match the ones first tried.
 */
#ifndef SLUICE_CLICKHOUSE_SPOOL_H
#define SLUICE_CLICKHOUSE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/plugin.h>

#include "spool.h"
#include "spool_counters.h"

/* One INSERT of len bytes holding rows rows of format fmt (0, 1): true on HTTP 200. */
typedef bool (*ch_post_fn)(void *ctx, int fmt, const char *buf, size_t len, unsigned rows);

struct ch_spool {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct sl_spool *sp;
	struct sl_spool_counters ctr;	/* spooled, spool_sent, ... */
	struct iovec *iov;
	unsigned max_rows;		/* rows per INSERT from the spool */
	char *buf;			/* one INSERT from the spool, reused */
	size_t cap;
	char *rec;			/* one record being appended: format byte + row */
	uint64_t retry_min, retry_max, delay;
	uint64_t next_try;		/* CLOCK_MONOTONIC ms of the next INSERT try */
	int c_retries;
};

/* The counters (at configure: after the output's own). */
void ch_spool_counters(struct ch_spool *cs, const struct sl_host *host, struct sl_instance *inst,
		       int c_retries);
/* At start; -1 (logged) when dir is unusable. */
int ch_spool_open(struct ch_spool *cs, const char *dir, uint64_t max_size, uint64_t retry_min,
		  uint64_t retry_max);
void ch_spool_close(struct ch_spool *cs);

/* The spool may take rows now (its lock is ours). */
bool ch_spool_ready(struct ch_spool *cs);
/* Rows wait in the spool: newer ones must go behind them. */
bool ch_spool_pending(const struct ch_spool *cs);
/*
 * Append n rows of format fmt, row i at buf + ends[i] .. buf + ends[i + 1];
 * rows past max_size are dropped, counted.
 */
void ch_spool_rows(struct ch_spool *cs, int fmt, const char *buf, const size_t *ends, unsigned n);
/*
 * Insert spooled rows, oldest first, while the server answers 200 and for at
 * most budget_ms; after a failure not before the backoff delay has passed.
 * Returns the ms until the next try is due (0: nothing left to send).
 */
uint64_t ch_spool_drain(struct ch_spool *cs, ch_post_fn post, void *ctx, uint64_t budget_ms);
/* A failed INSERT was spooled: first try again after retry_min. */
void ch_spool_backoff(struct ch_spool *cs);

#endif /* SLUICE_CLICKHOUSE_SPOOL_H */
