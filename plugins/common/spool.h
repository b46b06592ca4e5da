/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A disk spool for network outputs (at-least-once delivery).
 *
 * An output that cannot hand a record to its destination (the destination
 * is down, or slower than the input and the memory queue is full) appends
 * the record's bytes here; when the destination is back it sends the
 * spooled records, oldest first, BEFORE anything newer, and acknowledges
 * them once they count as delivered (TCP: written to the socket; RELP:
 * acknowledged; Kafka: delivery report; ClickHouse: HTTP 200).  The spool
 * never interprets the bytes: store what you will send (syslog stores the
 * framed wire message).
 *
 * Layout: a directory holding numbered segment files seg-<16 hex>.spl,
 * sent in number order, and a lock file.  A segment is
 *
 *   "SLSPOOL1"  u64 LE acked   then records:  u32 LE len  u32 LE crc  len bytes
 *
 * where crc is CRC32C over the four length bytes and the data (a torn
 * length is caught too) and `acked` is the file offset of the first record
 * not yet acknowledged (rewritten by sl_spool_ack with one pwrite).  At
 * read time a record whose length or CRC is wrong is skipped up to the next
 * offset where a record with a sound length and CRC starts (or the end: the
 * torn tail of a write cut by kill -9 or a crash); the skipped bytes are
 * never sent, counted in torn_bytes, logged, and counted as one record in
 * `corrupt` (how many records they held cannot be known).  A segment is
 * deleted once all its records are acknowledged.  sl_spool_open() reads the
 * directory, so segments left by a previous run are sent first after a
 * restart.
 *
 * Memory does not depend on what is on disk: a segment is read in pieces
 * of 1 MiB (a record is at most SL_SPOOL_MAX_RECORD), its header checked
 * before anything else, holes in a sparse file skipped unread.  A file
 * named like a segment that is not one (no header, not a regular file, a
 * symbolic link, or numbered past 2^64 - 2^32 - 1, where the numbers would
 * wrap) is set aside: renamed seg-<16 hex>.bad, logged and counted in
 * `corrupt`.  It is not deleted.
 *
 * What kill -9 can cost: appended records are in a user-space buffer until
 * sl_spool_flush() (call it once per batch: one write(2) per batch, not
 * per record); records acknowledged since the last sl_spool_ack() pwrite
 * are sent again (at most one ack's worth).  Written data is in the page
 * cache, which survives the process; fsync is not done (a power cut may
 * lose the last seconds, as for every file output).
 *
 * Usage (one thread per spool; all calls from the output's thread):
 *
 *   sp = sl_spool_open(dir, max_size, log, ctx, err, sizeof(err));
 *   on a record the memory queue cannot take, or whenever
 *   sl_spool_pending(sp) (order: once spooling, keep spooling):
 *       sl_spool_append(sp, bytes, len);       // 0, or -1: dropped (counted)
 *   end of the input batch:  sl_spool_flush(sp);
 *   destination up and memory queue empty:
 *       n = sl_spool_peekv(sp, iov, max);      // oldest n records, in order
 *       ... deliver some k <= n of them in order ...
 *       sl_spool_ack(sp, k);                   // deletes finished segments
 *   at stop, records still in the memory queue (older than everything in
 *   the spool) go in front:  sl_spool_front_begin(sp); sl_spool_append()...;
 *   sl_spool_front_end(sp);  then sl_spool_close(sp).
 *
 * Counters: sl_spool_stats() gives monotonic spooled/sent/dropped/corrupt and the
 * current bytes on disk; the caller publishes deltas (dropped ones are also
 * the output's host->dropped_add).  Past max_size (segment files plus
 * buffered bytes) an append is refused and counted as dropped; a write
 * error (ENOSPC) drops and counts the records of that buffer and cuts the
 * file back to its last good record.
 *
 * The directory is created 0700 if missing and checked as docs/SECURITY.md
 * requires of output directories (safefile.h): refused when everyone can
 * write to it without the sticky bit, and refused when it is owned by
 * anyone but the daemon's user (geteuid() at open time) or root, since its
 * owner could put records in it.  Only segments owned by the daemon's user
 * or root are read (others are logged and left alone).  Files are opened
 * O_NOFOLLOW, created O_EXCL.  An exclusive flock on dir/lock keeps two
 * instances (a reload starts the new one before the old stops) from sharing
 * a spool: until the lock is free the spool is unavailable, appends are
 * dropped and counted, and the lock is tried again at most every 20 ms.
 */
#ifndef SLUICE_SPOOL_H
#define SLUICE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "crc32c.h"

#define SL_SPOOL_MAGIC "SLSPOOL1"
#define SL_SPOOL_HDR 16u		/* magic + acked offset */
#define SL_SPOOL_REC_HDR 8u		/* len + crc */
/* what sl_spool_append takes (its 256 KiB buffer); longer lengths are damage */
#define SL_SPOOL_MAX_RECORD ((256u << 10) - 24)

struct sl_spool;

struct sl_spool_stats {
	uint64_t spooled;	/* records appended */
	uint64_t sent;		/* records acknowledged */
	uint64_t dropped;	/* records refused (full) or lost to a write error */
	uint64_t torn_bytes;	/* damaged bytes skipped in segments */
	uint64_t corrupt;	/* damaged stretches skipped + segments set aside */
	uint64_t bytes;		/* now: segment files plus buffered bytes */
};

/* Messages for the output's log (level: SL_LOG_*). */
typedef void (*sl_spool_log_fn)(void *ctx, int level, const char *msg);

/* NULL with a reason in err when dir is unusable (bad mode, not a directory). */
struct sl_spool *sl_spool_open(const char *dir, uint64_t max_size, sl_spool_log_fn log, void *ctx,
			       char *err, size_t errlen);
/* Flushes the buffer, closes, frees.  Segments stay on disk. */
void sl_spool_close(struct sl_spool *sp);

/* Is the lock ours (tried again at most every 20 ms)? */
bool sl_spool_ready(struct sl_spool *sp);
/* Anything spooled not yet acknowledged (then newer records must follow). */
bool sl_spool_pending(const struct sl_spool *sp);
/*
 * 0, or -1 when the record is dropped (counted in stats.dropped): the
 * spool is full, not ours yet, or the record is longer than
 * SL_SPOOL_MAX_RECORD (256 KiB - 24).
 */
int sl_spool_append(struct sl_spool *sp, const void *rec, size_t len);
/* Write what append buffered.  No syscall when nothing is buffered. */
void sl_spool_flush(struct sl_spool *sp);

/*
 * Up to max of the oldest unacknowledged records, in order, pointing into
 * the spool's read buffer (valid until the next ack/append/flush).  0 when
 * nothing is pending.  Returns records of one piece of one segment at a
 * time: fewer than max does not mean there are no more.
 */
unsigned sl_spool_peekv(struct sl_spool *sp, struct iovec *iov, unsigned max);
/* The first n peeked records are delivered. */
void sl_spool_ack(struct sl_spool *sp, unsigned n);
/*
 * Nothing is pending beyond the piece peekv reads: a peek that stopped
 * short of max returned every record still to send (kafka: newer records
 * may then be produced behind them).
 */
bool sl_spool_tail_loaded(const struct sl_spool *sp);

/* Appends between these go before everything already spooled. */
int sl_spool_front_begin(struct sl_spool *sp);
void sl_spool_front_end(struct sl_spool *sp);

const struct sl_spool_stats *sl_spool_stats(const struct sl_spool *sp);

#endif /* SLUICE_SPOOL_H */
