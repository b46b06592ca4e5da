/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The summary records of the summarising filters (dedup, ratelimit): one
 * record standing for the records a filter dropped, with the fields
 * `suppressed` (how many) and `key` (whose).  A summary goes right before
 * the walk's next record (sl_summary_here(): a free slot or a dropped
 * record's storage, splice.h) or, when the batch has no room for it, into
 * the filter's own batch (sl_summary_out()), which sl_summary_emit()
 * sends on before the batch being processed.  Every summary written is
 * counted in c_summaries; one that fits nowhere in c_lost and as an error.
 *
 * Time, for both filters, is a record's own timestamp, else the wall clock
 * of the batch (sl_summary_rec_time()); a summary carries the time of the
 * last record it stands for (sl_summary_set_time()).
 */
#ifndef SLUICE_SUMMARY_H
#define SLUICE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/plugin.h>

#include "reckey.h"
#include "splice.h"
#include "time_clamp.h"

struct sl_summary {
	const struct sl_host *host;
	struct sl_instance *inst;
	const uint64_t *avoid;	/* what a reused record must not have (splice.h); NULL: nothing */
	unsigned attempts;	/* own batches tried: a full one is sent on before the next */
	int f_suppressed, f_key;
	int c_summaries, c_lost;	/* registered by the filter, in its counters' order */
	struct sl_batch *out;	/* summaries that could not go in place */
};

/*
 * Fill summary record r, its strings in b's arena: false when they do not
 * fit.  The strings are written by one fmt_buf into SL_SUMMARY_ROOM bytes:
 *
 *	mem = sl_summary_room(b, &fb, &mark); NULL: false
 *	fmt_...(&fb, ...);			text, key...
 *	if (!sl_summary_fits(b, mem, &fb, mark)) return false;
 *	sl_set_bytes(r, ..., mem, ...);		then the fields
 */
typedef bool (*sl_summary_fill_fn)(void *arg, struct sl_batch *b, struct sl_record *r);

#define SL_SUMMARY_ROOM 1024

/* SL_SUMMARY_ROOM bytes of b's arena behind fb, *mark to give them back; NULL when full. */
char *sl_summary_room(struct sl_batch *b, struct sl_fmt_buf *fb, size_t *mark);

/* After the writes: true with the room cut to what fb holds, or false with it given back. */
bool sl_summary_fits(struct sl_batch *b, char *mem, const struct sl_fmt_buf *fb, size_t mark);

/*
 * For configure(): host, inst, avoid and attempts set, the ids of the
 * fields `suppressed` and `key` (which the filter provides) looked up; the
 * counters stay the filter's to register.  0, or -1 after config_error().
 */
int sl_summary_init(struct sl_summary *s, const struct sl_host *host, struct sl_instance *inst,
		    const uint64_t *avoid, unsigned attempts);

/*
 * For configure(): the fields of a `key` list option into k, each needed
 * from the stack above.  0, or -1 after the error was reported.
 */
int sl_summary_key(struct sl_reckey *k, const struct sl_host *host, struct sl_instance *inst,
		   const struct sl_strlist *key);

/* A summary before the walk's next record, in place when there is room, else sl_summary_out(). */
void sl_summary_here(struct sl_summary *s, struct sl_splice *sp, sl_summary_fill_fn fill,
		     void *arg);

/* A summary in the filter's own batch. */
void sl_summary_out(struct sl_summary *s, sl_summary_fill_fn fill, void *arg);

/* Send the filter's own batch on, if it holds anything. */
void sl_summary_emit(struct sl_summary *s);

/* For stop(): give the filter's own batch back unsent. */
void sl_summary_stop(struct sl_summary *s);

/* A record's time in ns: its timestamp (clamped: no overflow), else wall. */
static inline int64_t sl_summary_rec_time(const struct sl_record *r, int64_t wall)
{
	if (sl_has(r, SL_F_TIMESTAMP))
		return sl_time_ns_clamped(r->v[SL_F_TIMESTAMP].time);
	return wall;
}

/* The summary's timestamp: ns since the epoch. */
static inline void sl_summary_set_time(struct sl_record *r, int64_t ns)
{
	int64_t s = ns / 1000000000, n = ns % 1000000000;

	if (n < 0) {
		s--;
		n += 1000000000;
	}
	sl_set_time(r, SL_F_TIMESTAMP, s, (uint32_t)n);
}

#endif /* SLUICE_SUMMARY_H */
