/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's disk spool (spool.h): a batch that could not be written
 * goes to disk as rows, one spool record per row holding its cells ('R',
 * the number of cells, then each cell: its kind and value), and is written
 * from there, oldest first, in batches of up to batch_size rows decoded
 * into a batch of the spool's own.  A row counts as sent (acknowledged to
 * the spool) once the database committed the batch holding it.
 *
 * Rows rather than whole batches: max_size then drops exact rows, and the
 * spool's batches need not match the ones first tried.  Counters are
 * published only by sql_spool_publish(), which the output calls where the
 * core has counted every batch it handed over (host->dropped_add moves
 * records out of `out`).
 */
#ifndef SLUICE_SQL_SPOOL_H
#define SLUICE_SQL_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/plugin.h>

#include "spool.h"
#include "spool_counters.h"
#include "sql.h"

/* Write a batch from the spool: what the database said. */
typedef enum sql_result (*sql_write_fn)(void *ctx, const struct sql_batch *b);

struct sql_spool {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct sl_spool *sp;
	struct sl_spool_counters ctr;	/* spooled, spool_sent, spool_bytes, spool_dropped */
	struct iovec *iov;
	unsigned max_rows;
	struct sql_batch b;		/* rows read back, reused */
	char *rec;			/* one row being appended */
	size_t rec_cap;
	uint64_t retry_min, retry_max, delay;
	uint64_t next_try;		/* CLOCK_MONOTONIC ms of the next write from the spool */
	uint64_t rejected;		/* rows the database refused, not yet reported */
	bool down_logged;
};

/* The counters (at configure: after the output's own). */
void sql_spool_counters(struct sql_spool *ss, const struct sl_host *host, struct sl_instance *inst);
/* At start; -1 (logged) when dir is unusable or memory is short. */
int sql_spool_open(struct sql_spool *ss, const char *dir, uint64_t max_size, unsigned ncol,
		   unsigned batch_size, uint64_t retry_min, uint64_t retry_max);
void sql_spool_close(struct sql_spool *ss);

/* The spool may take rows now (its lock is ours). */
bool sql_spool_ready(struct sql_spool *ss);
/* Rows wait in the spool: newer ones must go behind them. */
bool sql_spool_pending(const struct sql_spool *ss);
/* Append the batch's rows (one write); a row past max_size is dropped, counted. */
void sql_spool_batch(struct sql_spool *ss, const struct sql_batch *b);
/* The next write from the spool waits at least retry_min. */
void sql_spool_backoff(struct sql_spool *ss);
/*
 * Write from the spool for at most budget_ms: 0 when it is empty, else
 * the ms until it should be tried again.  *rows gets the rows committed.
 */
uint64_t sql_spool_drain(struct sql_spool *ss, sql_write_fn write, void *ctx, uint64_t budget_ms,
			 uint64_t *rows, uint64_t *batches);
/* Counters, and rows refused by the database (as dropped). */
void sql_spool_publish(struct sql_spool *ss);

#endif /* SLUICE_SQL_SPOOL_H */
