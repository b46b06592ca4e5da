/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dedup: collapse runs of identical records, as syslogd does.  Records are
 * the same when their `text` is (default), or the values of the fields
 * listed in `key` are.  The first record of a run passes; the identical
 * ones that follow within `window` of it are dropped and counted; when the
 * run ends one record follows:
 *
 *   text = "last message repeated N times", suppressed = N
 *   (and key = "src_addr=..." with a key list; prefix = the run's prefix)
 *
 * A run ends when a different record arrives (the summary goes right
 * before it), when an identical one arrives after the window (the summary,
 * then that record starts a new run), when the window has passed with no
 * such record (a timer sends the summary), and at flush().
 *
 * Time is the records' timestamp, else the wall clock of the batch; the
 * timer runs on the newest record time advanced by the monotonic clock
 * since it was seen (as in flow.c), so a replayed capture ends its runs in
 * capture time and live traffic in real time.
 *
 * Only the last run is held: a few kilobytes, nothing allocated per record.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "fmt.h"
#include "plugin_state.h"
#include "reckey.h"
#include "splice.h"
#include "summary.h"

#define TEXT_KEEP 2048		/* text bytes compared verbatim; a longer text: and a hash of all */
#define PREFIX_MAX 64

struct dd_cfg {
	uint64_t window;	/* ms */
	struct sl_strlist key;
};

struct dd_state {
	SL_STATE_HEAD(struct dd_cfg);
	int64_t window_ns;
	bool keyed;
	struct sl_reckey key;

	/* the run */
	bool active;
	uint64_t count;			/* records dropped in it */
	int64_t first, last;		/* ns */
	uint32_t tlen;			/* text mode: length of the whole text */
	uint64_t thash;			/* and its hash, when longer than TEXT_KEEP */
	uint8_t kbuf[TEXT_KEEP];	/* the run's key bytes, or its text */
	uint8_t plen;
	bool has_prefix;
	char prefix[PREFIX_MAX];

	bool clk_set;
	int64_t clk_max, clk_mono;

	struct sl_splice sp;
	struct sl_summary sum;
	struct sl_timer *timer;
	bool started;
	int c_repeated, c_no_text;
};

static const struct sl_option dd_options[] = {
	SL_OPT_DURATION("window", struct dd_cfg, window, "30s", 1, 86400000,
			"identical records this long after the first of a run are collapsed"),
	SL_OPT_LIST("key", struct dd_cfg, key, NULL,
		    "fields that make records identical; none: the text field"),
	SL_OPT_END
};

/*
 * Set only in summary records; declared (text too) because a summary may
 * be written into the storage of a dropped record, which the core then
 * restores for another branch (splice.h).  dedup by text needs text
 * before it anyway.
 */
static const struct sl_field_decl dd_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	{"suppressed", SL_T_U64},
	{"key", SL_T_STRING},
	SL_FIELD_END
};

static const struct sl_field_decl dd_reads[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_END
};

/* ---- the run's key ---- */

/* Whether r is the run's record (the caller knows r has text in text mode). */
static bool same(const struct dd_state *st, const struct sl_record *r, const uint8_t *k)
{
	const struct sl_bytes *t;

	if (st->keyed)
		return memcmp(st->kbuf, k, st->key.len) == 0;
	t = &r->v[SL_F_TEXT].bytes;
	if (t->len != st->tlen)
		return false;
	if (t->len <= TEXT_KEEP)
		return memcmp(st->kbuf, t->ptr, t->len) == 0;
	return memcmp(st->kbuf, t->ptr, TEXT_KEEP) == 0 &&
	       sl_reckey_hash_bytes(st->key.seed, t->ptr, t->len) == st->thash;
}

static void start_run(struct dd_state *st, const struct sl_record *r, const uint8_t *k, int64_t t)
{
	st->active = true;
	st->count = 0;
	st->first = st->last = t;
	if (st->keyed) {
		memcpy(st->kbuf, k, st->key.len);
	} else {
		const struct sl_bytes *tx = &r->v[SL_F_TEXT].bytes;

		st->tlen = tx->len;
		memcpy(st->kbuf, tx->ptr, tx->len < TEXT_KEEP ? tx->len : TEXT_KEEP);
		if (tx->len > TEXT_KEEP)
			st->thash = sl_reckey_hash_bytes(st->key.seed, tx->ptr, tx->len);
	}
	st->has_prefix = sl_has(r, SL_F_PREFIX);
	if (st->has_prefix) {
		uint32_t n = r->v[SL_F_PREFIX].bytes.len;

		st->plen = (uint8_t)(n < PREFIX_MAX ? n : PREFIX_MAX);
		memcpy(st->prefix, r->v[SL_F_PREFIX].bytes.ptr, st->plen);
	}
}

/* ---- summaries ---- */

/* The run's summary (sl_summary_fill_fn). */
static bool fill_summary(void *arg, struct sl_batch *b, struct sl_record *r)
{
	struct dd_state *st = arg;
	struct sl_fmt_buf fb;
	size_t mark, tlen;
	char *mem = sl_summary_room(b, &fb, &mark);

	if (!mem)
		return false;
	sl_fmt_lit(&fb, "last message repeated ");
	sl_fmt_u64(&fb, st->count);
	sl_fmt_lit(&fb, " times");	/* syslogd's words, also for 1 */
	tlen = fb.len;
	if (st->keyed)
		sl_reckey_format(&st->key, st->kbuf, &fb);
	if (st->has_prefix)
		sl_fmt_mem(&fb, st->prefix, st->plen);
	if (!sl_summary_fits(b, mem, &fb, mark))
		return false;
	sl_set_bytes(r, SL_F_TEXT, mem, (uint32_t)tlen);
	if (st->keyed)
		sl_set_bytes(r, (sl_field)st->sum.f_key, mem + tlen, (uint32_t)(fb.len - tlen - st->plen * st->has_prefix));
	if (st->has_prefix)
		sl_set_bytes(r, SL_F_PREFIX, mem + fb.len - st->plen, st->plen);
	sl_set_u64(r, (sl_field)st->sum.f_suppressed, st->count);
	sl_summary_set_time(r, st->last);
	return true;
}

/* ---- records ---- */

static void one(struct dd_state *st, int64_t wall, uint64_t *repeated, uint64_t *no_text)
{
	struct sl_record *r = sl_splice_peek(&st->sp);
	uint8_t k[SL_RECKEY_MAX_BYTES];
	int64_t t = sl_summary_rec_time(r, wall);

	if (!st->clk_set || t > st->clk_max) {
		st->clk_max = t;
		st->clk_mono = sl_clock_ns(CLOCK_MONOTONIC);
		st->clk_set = true;
	}
	if (st->keyed) {
		sl_reckey_build(&st->key, r, k);
	} else if (!sl_has(r, SL_F_TEXT)) {
		++*no_text;	/* nothing to compare: passes, the run goes on */
		sl_splice_keep(&st->sp);
		return;
	}
	if (st->active && same(st, r, k) && t - st->first <= st->window_ns) {
		st->count++;
		if (t > st->last)
			st->last = t;
		++*repeated;
		sl_splice_drop(&st->sp);
		return;
	}
	if (st->active && st->count)
		sl_summary_here(&st->sum, &st->sp, fill_summary, st);
	start_run(st, r, k, t);
	sl_splice_keep(&st->sp);
}

static int dd_process(void *state, struct sl_batch *b)
{
	struct dd_state *st = state;
	int64_t wall = sl_clock_ns(CLOCK_REALTIME);
	uint64_t repeated = 0, no_text = 0;

	sl_splice_begin(&st->sp, b);
	while (st->sp.r < st->sp.n)
		one(st, wall, &repeated, &no_text);
	sl_splice_end(&st->sp);
	if (repeated)
		st->host->counter_add(st->inst, st->c_repeated, repeated);
	if (no_text)
		st->host->counter_add(st->inst, st->c_no_text, no_text);
	sl_summary_emit(&st->sum);
	return 0;
}

/* The window of the run has passed on the records' clock: end it. */
static void on_timer(void *state)
{
	struct dd_state *st = state;
	int64_t now;

	if (!st->active || !st->clk_set)
		return;
	now = st->clk_max + (sl_clock_ns(CLOCK_MONOTONIC) - st->clk_mono);
	if (now - st->first <= st->window_ns)
		return;
	if (st->count)
		sl_summary_out(&st->sum, fill_summary, st);
	st->active = false;
	sl_summary_emit(&st->sum);
}

static int dd_flush(void *state)
{
	struct dd_state *st = state;

	if (!st->started)
		return 0;
	if (st->active && st->count)
		sl_summary_out(&st->sum, fill_summary, st);
	st->active = false;
	sl_summary_emit(&st->sum);
	return 0;
}

/* ---- lifecycle ---- */

static int dd_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			void **state)
{
	const struct dd_cfg *cfg = config;
	struct dd_state *st = sl_state_new(struct dd_state, host, inst, config);

	if (!st)
		return -1;
	st->window_ns = (int64_t)cfg->window * 1000000;
	sl_reckey_init(&st->key, 0x5eed5eed5eed5eedULL);
	if (sl_summary_key(&st->key, host, inst, &cfg->key) < 0)
		goto fail;
	st->keyed = cfg->key.n > 0;
	if (!st->keyed && host->need_field(inst, NULL, "text") < 0)
		goto fail;
	/* one own batch: a summary that does not fit is counted lost */
	if (sl_summary_init(&st->sum, host, inst, NULL, 1) < 0)
		goto fail;
	st->c_repeated = host->counter_new(inst, "repeated");
	st->sum.c_summaries = host->counter_new(inst, "summaries");
	st->c_no_text = host->counter_new(inst, "no_text");
	st->sum.c_lost = host->counter_new(inst, "lost");
	*state = st;
	return 0;
fail:
	free(st);
	return -1;
}

static int dd_start(void *state)
{
	struct dd_state *st = state;
	uint64_t period = (uint64_t)st->window_ns / 2000000;

	if (!st->timer)
		st->timer = st->host->timer_new(st->inst, on_timer, st);
	if (!st->timer) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a timer");
		return -1;
	}
	/* a run ends at most ~half a window (and at most a second) late */
	period = period < 10 ? 10 : period > 1000 ? 1000 : period;
	st->host->timer_arm(st->timer, period, period);
	st->started = true;
	return 0;
}

static void dd_stop(void *state)
{
	struct dd_state *st = state;

	/* freed here, not in destroy(): the event loop is gone by then at exit */
	if (st->timer) {
		st->host->timer_free(st->timer);
		st->timer = NULL;
	}
	sl_summary_stop(&st->sum);
	st->started = false;
}

static void dd_destroy(void *state)
{
	struct dd_state *st = state;

	free(st);
}

static const struct sl_plugin dd_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "dedup",
	.description = "collapse runs of identical records into \"last message repeated N times\"",
	.config_size = sizeof(struct dd_cfg),
	.options = dd_options,
	.provides = dd_provides,
	.configure = dd_configure,
	.start = dd_start,
	.process = dd_process,
	.flush = dd_flush,
	.stop = dd_stop,
	.destroy = dd_destroy,
	.reads = dd_reads,
};

SLUICE_PLUGIN(dd_plugin)
