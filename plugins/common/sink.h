/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine of a batching network output (a sink): the batch in memory,
 * flush by size and by time, retry with backoff, the disk spool
 * (spool.h) and its counters (spool_counters.h), the shared option rows.
 * The output supplies what only it knows, as callbacks (struct
 * sl_sink_ops): encode a record into its batch, send that batch, turn one
 * unit of it into a spool record, and send spooled records back.
 *
 * A unit is one record encoded (a row: JSONEachRow text, RowBinary bytes,
 * cells).  The output owns its batch of units and its encoding; the engine
 * counts the units and decides when the batch goes, where, and how often
 * it is tried.
 *
 * Sending the batch (sl_sink_process when batch_size units are in it or,
 * with admit(), when the next record has no room left; the flush timer
 * every flush_interval; flush and stop):
 *   - while the spool holds units, the batch goes behind them, unsent;
 *   - else send(); SL_SINK_SENT: delivered ("<batch> of N rows <done> after
 *     K retries" when K > 0, notice);
 *   - SL_SINK_RETRY with the spool usable (its lock is ours): the units go
 *     to the spool at once ("N rows go to the spool, <from_spool>",
 *     notice), the next try from it after retry_min;
 *   - otherwise tried again in place after retry_min, doubled up to
 *     retry_max (the thread sleeps: the core's queue in front fills), each
 *     retry counted in the output's retries counter, at most max_retries
 *     times (2 during a flush or stop), SL_SINK_REJECTED at most
 *     reject_retries times; then "N rows dropped after K retries" (error),
 *     the units counted in the output's dropped counter and the core's
 *     dropped_add.  An output with retried() words these two lines itself.
 *
 * Sending from the spool (the retry timer, the end of each process()
 * while units wait there, at stop for SL_SINK_STOP_DRAIN_MS): the oldest
 * records, up to spool_peek at a time, go to send_spooled(), for at most
 * SL_SINK_DRAIN_BUDGET_MS per turn so the core's queue is read between.
 * SL_SINK_SENT or SL_SINK_REJECTED acknowledges what the send used
 * (delivered, or dropped and counted by the output: refused, or a record
 * it cannot read, sl_sink_spool_dropped) and resets the delay;
 * SL_SINK_RETRY acknowledges nothing and waits the delay, doubled each
 * time up to retry_max.  max_retries does not apply (units wait until
 * spool_max_size, then are dropped and counted by the spool).  A reload's
 * new instance cannot have the spool until the old one stopped: meanwhile
 * its batches are retried in place as without a spool.
 *
 * The spool's counters (spooled, spool_sent, spool_bytes, spool_dropped,
 * spool_corrupt) are created by sl_sink_init after the output's own, and
 * published after each batch appended, each turn of sending from it, at
 * open and at close.
 *
 * Clock: CLOCK_MONOTONIC in milliseconds and nanosleep, unless a test
 * sets its own (sl_sink_clock).  Every call from the output's thread.
 *
 * Not for an asynchronous destination such as librdkafka (the kafka
 * output takes only SL_SINK_OPT_SPOOL_OF and sl_sink_check): there the
 * destination's library is the batch, a unit fails long after it left the
 * batch, one by one, and spooled units are acknowledged by later reports,
 * with holes.  That is the engine's asynchronous mode, sink_window.h, on
 * the spool of an output that is not a batch, sink_spool.h.
 *
 * Usage:
 *   configure:  check with sl_sink_check(); create the output's counters
 *               (retries and dropped among them); sl_sink_init().
 *   start:      the output's connection, then sl_sink_start().
 *   process:    return sl_sink_process(&sink, batch), or
 *               sl_sink_plugin_process as the plugin's process (below);
 *   flush:      sl_sink_flush(), or sl_sink_plugin_flush (below).
 *   stop:       sl_sink_stop(), then the output's connection.
 *   destroy:    sl_sink_destroy().
 */
#ifndef SLUICE_SINK_H
#define SLUICE_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <sluice/plugin.h>

#include "plugin_state.h"
#include "sink_spool.h"

#define SL_SINK_STOP_RETRIES 2		/* at a flush or stop, do not wait the full backoff */
#define SL_SINK_DRAIN_BUDGET_MS 500	/* spool sends per turn, before the queue is read again */
#define SL_SINK_STOP_DRAIN_MS 2000	/* at a stop, spool sends for this long at most */

/* The shared options, a member of the output's config (SL_SINK_OPT_* rows). */
struct sl_sink_cfg {
	int64_t batch_size;
	uint64_t flush_interval;
	int64_t max_retries;
	uint64_t retry_min;
	uint64_t retry_max;
	const char *spool_dir;
	uint64_t spool_max_size;
};

/*
 * The option rows, in the output's table where they belong (`member`
 * names its struct sl_sink_cfg).  What differs between outputs is given:
 * batch_size's default, largest value and text; max_retries' the same;
 * what spool_dir holds ("rows that cannot be inserted") and, with
 * SL_SINK_OPT_SPOOL_OF, what spool_max_size drops ("messages").
 */
#define SL_SINK_OPT_BATCH(st, member, def, max, desc)                                      \
	SL_OPT_INT("batch_size", st, member.batch_size, def, 1, max, desc),                 \
	SL_OPT_DURATION("flush_interval", st, member.flush_interval, "1s", 10, 3600000,     \
			"longest time a row waits for its batch to fill")
#define SL_SINK_OPT_RETRY(st, member, def, max, desc)                                      \
	SL_OPT_INT("max_retries", st, member.max_retries, def, 0, max, desc),               \
	SL_OPT_DURATION("retry_min", st, member.retry_min, "200ms", 10, 3600000,            \
			"first retry delay; doubled up to retry_max"),                      \
	SL_OPT_DURATION("retry_max", st, member.retry_max, "5s", 10, 3600000,               \
			"longest retry delay")
#define SL_SINK_OPT_SPOOL(st, member, what) SL_SINK_OPT_SPOOL_OF(st, member, what, "rows")
/* The same, for an output whose units are not rows ("messages"). */
#define SL_SINK_OPT_SPOOL_OF(st, member, what, units)                                      \
	SL_SINK_OPT_SPOOL_ROWS(st, member.spool_dir, member.spool_max_size,                 \
			       "directory of a disk spool for " what " (default: none)", units)
/*
 * The same two rows for an output not in batch mode, whose options are
 * not a struct sl_sink_cfg (syslog, on sink_spool.h): its members, the
 * whole text of spool_dir, and what past spool_max_size is dropped
 * ("messages").  Names, defaults and limits are the engine's.
 */
#define SL_SINK_OPT_SPOOL_ROWS(st, dir, size, dir_desc, units)                             \
	SL_OPT_STR("spool_dir", st, dir, SL_PATH(NULL, SL_OPT_OUT_MKDIR), dir_desc),         \
	SL_OPT_SIZE("spool_max_size", st, size, "1GiB", 65536, (int64_t)1 << 40,            \
		    "largest size of the spool; past it " units " are dropped")

/* What admit() says of a record, before it is encoded. */
enum sl_sink_admit {
	SL_SINK_TAKE,		/* room for it: encode() follows */
	SL_SINK_FULL,		/* no room left: the batch is sent first, then admit() asked again */
	SL_SINK_SKIP,		/* not encoded and not a unit (the output counted it) */
};

/* What a send did. */
enum sl_sink_result {
	SL_SINK_SENT,		/* delivered (from the spool: or dropped, counted by the output) */
	SL_SINK_RETRY,		/* the destination is away or failed: try again later */
	SL_SINK_REJECTED,	/* the destination refused these units: retry a little, then drop */
};

struct sl_sink_ops {
	/* Record r into the batch as one unit; false when out of memory (nothing added). */
	bool (*encode)(void *ctx, const struct sl_record *r);
	/* Send the batch of n units.  Count what the output counts (inserts, errors). */
	enum sl_sink_result (*send)(void *ctx, unsigned n);
	/* Unit i of the batch as one spool record; NULL when it cannot be one (dropped, counted). */
	const void *(*spool_rec)(void *ctx, unsigned i, size_t *len);
	/* Empty the batch. */
	void (*reset)(void *ctx);
	/*
	 * Send the oldest spooled records rec[0..n): *used gets how many this
	 * send covered, 1..n (a leading part; SL_SINK_RETRY: ignored).
	 */
	enum sl_sink_result (*send_spooled)(void *ctx, const struct iovec *rec, unsigned n,
					    unsigned *used);
	/*
	 * Optional, for a batch that ends by its size (a datagram): whether
	 * record r has room in it; encode(r) directly follows SL_SINK_TAKE.
	 * SL_SINK_FULL with an empty batch: r dropped, counted as lost.
	 * NULL: every record is taken, a batch ends at batch_size units.
	 */
	enum sl_sink_admit (*admit)(void *ctx, const struct sl_record *r);
	/*
	 * Optional: a batch of n units that needed `retries` retries is done,
	 * sent or (sent false) given up on and counted by the engine, before
	 * reset().  Set, the output says so in its own words (each failed
	 * send already logged, rate-limited) instead of the engine's notice
	 * and error line.
	 */
	void (*retried)(void *ctx, unsigned n, int64_t retries, bool sent);
};

/* What an output is: its callbacks and the words of its log lines. */
struct sl_sink_def {
	const struct sl_sink_ops *ops;
	const char *batch;	/* "INSERT": "INSERT of 5 rows done after 2 retries" */
	const char *done;	/* "done" */
	const char *from_spool;	/* "inserted from there when the server answers" */
	unsigned spool_peek;	/* records per send_spooled at most; 0: batch_size */
	int reject_retries;	/* tries of a SL_SINK_REJECTED batch */
};

/* A clock of a test's own: now in ms, and a sleep that moves it. */
struct sl_sink_clock {
	uint64_t (*now_ms)(void *ctx);
	void (*sleep_ms)(void *ctx, uint64_t ms);
	void *ctx;
};

struct sl_sink {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct sl_sink_cfg *cfg;
	const struct sl_sink_def *def;
	void *ctx;			/* the output's, for its callbacks */
	struct sl_sink_clock clock;
	unsigned units;			/* in the batch */
	unsigned done;			/* of them delivered by a send that failed after (sl_sink_delivered) */
	bool started, stopping, oom_logged;
	int c_retries, c_dropped;	/* the output's counters */

	struct sl_timer *flush_timer;
	struct sl_timer *retry_timer;	/* the spool's next send */
	struct sl_sink_spool ss;	/* ss.sp: with spool_dir, from start to stop */
	struct iovec *iov;
	unsigned peek;
	uint64_t delay, next_try;	/* the spool's backoff; next_try: clock ms */
};

/* spool_dir (NULL: none) an absolute path, else a config error on it and -1. */
int sl_sink_check_spool_dir(const char *spool_dir, const struct sl_host *host,
			    struct sl_instance *inst);
/* In configure(), where the output checks them: -1 after a config error. */
int sl_sink_check(const struct sl_sink_cfg *cfg, const struct sl_host *host,
		  struct sl_instance *inst);
/*
 * In configure(), after the output's counters (c_retries, c_dropped are
 * two of them): the spool's counters when spool_dir is set.  cfg, def and
 * ctx must outlive the sink.
 */
void sl_sink_init(struct sl_sink *sk, const struct sl_host *host, struct sl_instance *inst,
		  const struct sl_sink_cfg *cfg, const struct sl_sink_def *def, void *ctx,
		  int c_retries, int c_dropped);
/* A test's clock, before start (the default: CLOCK_MONOTONIC, nanosleep). */
void sl_sink_clock(struct sl_sink *sk, const struct sl_sink_clock *clock);
/* The flush timer; with spool_dir the spool and its first send.  -1 logged. */
int sl_sink_start(struct sl_sink *sk);
/* Each record encoded; a full batch sent; then from the spool a while.  0. */
int sl_sink_process(struct sl_sink *sk, struct sl_batch *b);
/*
 * The batch now, with the usual retries (an output whose batch is what
 * one process() brought calls it after sl_sink_process).
 */
void sl_sink_send(struct sl_sink *sk);
/*
 * From send(), before it returns SL_SINK_RETRY or SL_SINK_REJECTED: the
 * first k units of the batch were delivered (a send of several
 * datagrams that stopped part way).  They are neither spooled nor counted
 * lost; the batch's next send() is of the same n units, and the output
 * skips the first k itself.  reset() forgets it.
 */
void sl_sink_delivered(struct sl_sink *sk, unsigned k);
/* The core's flush (before a stop or reload): the batch, with short retries. */
void sl_sink_flush(struct sl_sink *sk);
/* Timers off, the batch sent, the spool for a while, then closed. */
void sl_sink_stop(struct sl_sink *sk);
/* What stop did not (a failed start): spool closed, memory freed. */
void sl_sink_destroy(struct sl_sink *sk);
/* n spooled records could not be read: spool_dropped and the core's dropped. */
void sl_sink_spool_dropped(struct sl_sink *sk, uint64_t n);

/*
 * An output whose state begins with SL_SINK_STATE_HEAD (SL_STATE_HEAD,
 * then its sink) and is allocated by sl_sink_state_new() (a zeroed state,
 * as sl_state_new()) can take sl_sink_plugin_process() and
 * sl_sink_plugin_flush() as its process and flush: sl_sink_process() on
 * the state's sink, and sl_sink_flush() then 0 (the core flushes only
 * before a stop or a reload: the batch goes with short retries).
 */
#define SL_SINK_STATE_HEAD(cfg_type) \
	SL_STATE_HEAD(cfg_type);     \
	struct sl_sink sink

struct sl_sink_state_head {
	SL_SINK_STATE_HEAD(void);
};

/* A compile error unless `type` starts with SL_SINK_STATE_HEAD. */
#define sl_sink_state_new(type, host, inst, config) \
	sl_state_new_head(type, struct sl_sink_state_head, sink, host, inst, config)

int sl_sink_plugin_process(void *state, struct sl_batch *b);
int sl_sink_plugin_flush(void *state);

#endif /* SLUICE_SINK_H */
