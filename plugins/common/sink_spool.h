/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk spool of a network output that is not a batch (sink.h's batch
 * mode): a stream (syslog) or an asynchronous destination (kafka, with
 * sink_window.h).  What every such output did alike, once: the spool's
 * counters (spool_counters.h), its log lines, opening it, taking its lock
 * over from a reload's old instance, appending one unit, acknowledging a
 * count of the oldest records, putting a queue in front at stop, closing.
 * The output keeps what only it knows: a unit's bytes (framed wire bytes,
 * a kafka record), how spooled units are sent, and when the destination
 * counts them delivered (then sl_sink_spool_ack()).
 *
 * Order: once the spool holds anything, every newer unit goes behind it
 * (sl_sink_spool_takes()), and what the output still queues in memory is
 * older than all of the spool, so it is sent first; at stop that queue
 * goes in front of the spool (sl_sink_spool_save_queue(), or
 * sl_sink_spool_front_begin() for units that come back one by one).
 *
 * A reload starts the new instance before the old one stops: until the old
 * one has closed the spool, the lock is not the new one's, its appends are
 * dropped and counted by the spool (spool.h), and it queues in memory.
 * sl_sink_spool_adopt() takes the lock once it is free; the units queued
 * meanwhile are newer than all of that spool, so when it holds anything
 * they go behind it ("took over the spool: N queued messages appended
 * behind it", notice).
 *
 * Counters: created by sl_sink_spool_init() (spooled, spool_sent,
 * spool_bytes, spool_dropped, spool_corrupt) where the output creates its
 * own; published at open, by each call here that changes the spool, by
 * sl_sink_spool_publish() (the output calls it after its own appends and
 * acks, once per batch or turn), and at close.
 *
 * Usage (every call from the output's thread):
 *   configure:  sl_sink_spool_init(&ss, host, inst, spool_dir);
 *   start:      sl_sink_spool_open(&ss, spool_dir, spool_max_size);
 *   process:    sl_sink_spool_append() per unit when the queue is full or
 *               sl_sink_spool_takes(); sl_spool_flush(ss.sp) and publish
 *               once per batch;
 *   sending:    sl_spool_peekv(ss.sp, ...), then sl_sink_spool_ack(n);
 *   stop:       sl_sink_spool_save_queue(), sl_sink_spool_close().
 * ss.sp is NULL without spool_dir (and before open, after close): every
 * call but init and close needs it open.
 */
#ifndef SLUICE_SINK_SPOOL_H
#define SLUICE_SINK_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <sluice/plugin.h>

#include "spool.h"
#include "spool_counters.h"

#define SL_SINK_SPOOL_ACK_STEP 64u	/* records peeked per step of sl_sink_spool_ack */

/* Moves every unit the output queues to the spool (sl_sink_spool_append), oldest first: how many. */
typedef unsigned (*sl_sink_requeue_fn)(void *ctx);

struct sl_sink_spool {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct sl_spool *sp;		/* from open to close, with spool_dir */
	struct sl_spool_counters ctr;
	struct iovec *iov;		/* sl_sink_spool_ack's peeks */
	bool adopted;			/* the lock was ours once (sl_sink_spool_adopt) */
	bool front;			/* appends go in front (sl_sink_spool_front_begin) */
};

/* In configure(): the spool's counters, when spool_dir is set (NULL: none). */
void sl_sink_spool_init(struct sl_sink_spool *ss, const struct sl_host *host,
			struct sl_instance *inst, const char *spool_dir);
/* In start(): the spool opened (its lock tried), counters published; -1 logged ("spool_dir: ..."). */
int sl_sink_spool_open(struct sl_sink_spool *ss, const char *dir, uint64_t max_size);
/* The spool's counts since the last publish into the counters. */
void sl_sink_spool_publish(struct sl_sink_spool *ss);
/* Must a new unit go to the spool (it holds older ones)? */
bool sl_sink_spool_takes(const struct sl_sink_spool *ss);
/* One unit behind the others (or in front, see front_begin): 0, -1 dropped and counted by the spool. */
int sl_sink_spool_append(struct sl_sink_spool *ss, const void *rec, size_t len);
/* The spool's n oldest records are delivered (they may span segments). */
void sl_sink_spool_ack(struct sl_sink_spool *ss, uint64_t n);
/*
 * Take the lock when it is free (once: true from then on, without a
 * call into the spool).  Then, if the spool holds anything, the output's
 * queue goes behind it (requeue), flushed, published, logged.  The output
 * must not call it while a unit is half sent: that one is finished first.
 * Whether the spool is the output's.
 */
bool sl_sink_spool_adopt(struct sl_sink_spool *ss, sl_sink_requeue_fn requeue, void *ctx);
/*
 * At stop: n > 0 units the output still queues (all older than the
 * spool) go in front of it (requeue); "N queued messages for <where> kept
 * in the spool at shutdown" (notice).  Nothing when the spool is not the
 * output's.  How many were moved.
 */
unsigned sl_sink_spool_save_queue(struct sl_sink_spool *ss, unsigned n, sl_sink_requeue_fn requeue,
				  void *ctx, const char *where);
/* From now to close, appends go in front of everything spooled; -1 when the spool is not ours. */
int sl_sink_spool_front_begin(struct sl_sink_spool *ss);
/*
 * Flush, publish, close (the segments stay); with where, "N bytes for
 * <where> stay in the spool for the next start" (notice) when some do.
 * Nothing without an open spool.
 */
void sl_sink_spool_close(struct sl_sink_spool *ss, const char *where);

#endif /* SLUICE_SINK_SPOOL_H */
