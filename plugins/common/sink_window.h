/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The asynchronous side of the sink engine: sending a disk spool
 * (sink_spool.h) to a destination that takes units at once and reports on
 * each later, in any order (librdkafka's delivery reports).  The output
 * supplies how a spooled record is produced and what a report means; the
 * engine keeps the window of records in flight and what the spool may
 * forget.
 *
 * A window is up to `cap` of the spool's oldest records, produced oldest
 * first (produce(ctx, rec, i): i + 1 is the output's tag for the reports),
 * and only while the destination holds none of the output's other records
 * (ops->busy() false: those are older than the spool).  A record is TODO,
 * IN FLIGHT or DONE.  produce() puts it in flight, or DONE (it cannot be
 * sent: the output counted it failed), or refuses it for now (queue full:
 * it and the rest wait for the next window).  Each report
 * (sl_sink_window_report) makes an in-flight record DONE (delivered, or
 * failed for good and counted by the output) or TODO again (failed, worth
 * another try).  Only when no report is outstanding is the DONE prefix
 * acknowledged to the spool: a delivered record after a failed one is
 * not acknowledged but remembered DONE, and the next window produces only
 * the TODO ones (each once per window), so no record is sent twice after
 * a success and the spool is acknowledged in order.  After a failure
 * (`retry`) the next window waits for the timer.
 *
 * The timer (every `period` ms from open to close) takes the spool's lock
 * over after a reload, retries stalled and failed windows, and publishes
 * the counters.
 *
 * While the spool holds anything, new units go behind it
 * (sl_sink_window_takes); except when the window in flight holds all the
 * spool has (`tail`, the peek reached its end): then they go straight to
 * the destination again, behind the window, so a steady stream leaves the
 * spool instead of going through it for ever.  An append
 * (sl_sink_window_append) or a failed report ends that.
 *
 * At stop, sl_sink_window_front_begin(): with no window in flight, units
 * that come back from the destination (all older than the spool) go in
 * front of it until close.
 *
 * Usage (every call from the output's thread; the reports too):
 *   configure:  sl_sink_spool_init(&w.ss, ...);
 *   start:      sl_sink_window_open(&w, cfg, cap, period_ms, &ops, ctx);
 *   a unit:     sl_sink_window_takes() ? sl_sink_window_append() : send it;
 *   a report of one of the window's (tag i + 1):
 *               sl_sink_window_report(&w, i, SL_WIN_*);
 *   when the destination may have room or went idle: sl_sink_window_fill();
 *   stop:       sl_sink_window_close(&w, where, destroying).
 */
#ifndef SLUICE_SINK_WINDOW_H
#define SLUICE_SINK_WINDOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <sluice/plugin.h>

#include "sink_spool.h"

/* What produce() did with a spooled record. */
enum sl_win_produced {
	SL_WIN_IN_FLIGHT,	/* a report will come */
	SL_WIN_FULL,		/* not taken now: it and the rest wait for the next window */
	SL_WIN_GONE,		/* cannot be sent (unreadable, refused): counted by the output */
};

/* What a report says of a record in flight. */
enum sl_win_report {
	SL_WIN_DELIVERED,	/* counted by the output */
	SL_WIN_FAILED,		/* for good, counted by the output: taken off */
	SL_WIN_AGAIN,		/* worth another try: produced again by a later window */
};

struct sl_sink_window_ops {
	/* Produce spooled record rec, the window's i-th (its reports are tagged i + 1). */
	enum sl_win_produced (*produce)(void *ctx, const struct iovec *rec, unsigned i);
	/* The destination holds records older than the spool, or the output stops: no window. */
	bool (*busy)(void *ctx);
};

struct sl_sink_window {
	struct sl_sink_spool ss;	/* the spool; ss.sp is NULL without spool_dir */
	const struct sl_sink_window_ops *ops;
	void *ctx;
	struct iovec *iov;		/* the window, as peeked */
	uint8_t *state;			/* per window record: TODO, IN FLIGHT, DONE */
	unsigned cap;			/* records per window at most */
	unsigned n, out;		/* records in the window, reports outstanding */
	bool retry;			/* one failed: the next window by the timer */
	bool tail;			/* the window is all the spool: new units go direct */
	struct sl_timer *timer;		/* created at the first open, kept to destroy */
};

/* In start(), with spool_dir (else nothing, 0): the spool, the window, the timer.  -1 logged. */
int sl_sink_window_open(struct sl_sink_window *w, const char *dir, uint64_t max_size, unsigned cap,
			uint64_t period_ms, const struct sl_sink_window_ops *ops, void *ctx);
/* Must a new unit go to the spool (order: behind what it holds)? */
bool sl_sink_window_takes(const struct sl_sink_window *w);
/* One unit behind the spool's (in front after front_begin); ends `tail`. */
void sl_sink_window_append(struct sl_sink_window *w, const void *rec, size_t len);
/* A report on the window's i-th record: false when it is not in flight (then nothing changes). */
bool sl_sink_window_report(struct sl_sink_window *w, unsigned i, enum sl_win_report r);
/* The next window, when none is in flight, none failed since the timer, and !busy(). */
void sl_sink_window_fill(struct sl_sink_window *w);
/* Reports still to come from the window. */
static inline unsigned sl_sink_window_outstanding(const struct sl_sink_window *w)
{
	return w->out;
}
/* A record of the window failed: no new window before the timer. */
static inline bool sl_sink_window_failing(const struct sl_sink_window *w)
{
	return w->retry;
}
/* At stop, before what the destination holds comes back: 0 when it goes in front. */
int sl_sink_window_front_begin(struct sl_sink_window *w);
/*
 * In stop() (the timer disarmed) or destroy() (destroying: the loop may
 * be gone, the timer is left alone): the spool closed as
 * sl_sink_spool_close(where), the window freed.
 */
void sl_sink_window_close(struct sl_sink_window *w, const char *where, bool destroying);

#endif /* SLUICE_SINK_WINDOW_H */
