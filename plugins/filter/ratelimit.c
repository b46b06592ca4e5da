/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ratelimit: a token bucket of `rate` records per second holding at most
 * `burst` tokens, one for the whole stream or one per `key` (a list of
 * fields, e.g. [src_addr]) in a bounded table of `max_keys` buckets with
 * CLOCK eviction (second chance, keytable.h).  A record that finds its
 * bucket empty is dropped and counted ("suppressed").  When a key is let through again after a
 * suppression, one summary record goes right before that record, like
 * printk's "callbacks suppressed":
 *
 *   text = "<prefix>N records suppressed", suppressed = N, key = "src_addr=..."
 *
 * (prefix: the prefix of the first suppressed record, as the kernel prints
 * it at the start of its line).  A summary also goes out when its key is
 * evicted from a full table and at flush(): no suppressed count is lost
 * without a record of it.
 *
 * Time is the records' own timestamp (the kernel's, or the capture's for
 * replay), else the wall clock of the batch: a replayed capture is limited
 * in capture time, so it gives the same records however fast it is read,
 * and live traffic in real time.  Tokens are counted in 1e-9 of a record,
 * so refilling is exact integer arithmetic: (t - last) ns * rate.
 *
 * Per record: one key built into a fixed-size buffer, one hash lookup,
 * no allocation.  Lookups are pipelined with prefetches (process_keyed),
 * so the cache misses of a large table overlap.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "fmt.h"
#include "keytable.h"
#include "plugin_state.h"
#include "reckey.h"
#include "splice.h"
#include "summary.h"

#define TOKEN 1000000000ULL	/* one record's worth of tokens */
#define PREFIX_MAX 62

struct rl_cfg {
	int64_t rate;
	int64_t burst;
	struct sl_strlist key;
	int64_t max_keys;
};

/* A bucket: 24 bytes, so that with a key of up to 24 bytes an entry is one cache line. */
struct bucket {
	uint64_t tokens;	/* in 1/TOKEN records */
	int64_t last;		/* ns since the epoch of the last refill */
	uint64_t suppressed;	/* since the last record let through */
};

/* The prefix of a bucket's first suppressed record: apart, touched only then. */
struct pfx {
	uint8_t len;
	bool has;
	char p[PREFIX_MAX];
};

struct rl_state {
	SL_STATE_HEAD(struct rl_cfg);
	uint64_t rate, cap;		/* tokens per ns, most tokens */
	uint64_t fill_ns;		/* cap / rate: from empty to full */
	bool keyed;
	struct sl_reckey key;
	struct sl_keytable tab;
	uint32_t max_keys;
	struct bucket one;		/* no key: the only bucket */
	struct pfx one_pfx;
	struct pfx *pfx;		/* per table entry */
	struct sl_splice sp;
	uint64_t avoid[SL_PRESENCE_WORDS];	/* text: written, not provided */
	struct sl_summary sum;
	bool started;
	int c_suppressed, c_evicted;
};

static const struct sl_option rl_options[] = {
	SL_OPT_INT("rate", struct rl_cfg, rate, SL_REQUIRED, 1, 1000000000,
		   "records per second let through (per key)"),
	SL_OPT_INT("burst", struct rl_cfg, burst, "0", 0, 1000000000,
		   "records let through at once after a quiet spell; 0: rate (one second's worth)"),
	SL_OPT_LIST("key", struct rl_cfg, key, NULL,
		    "fields whose values make one bucket each (e.g. [src_addr]); none: one bucket"),
	SL_OPT_INT("max_keys", struct rl_cfg, max_keys, "65536", 1, 1 << 24,
		   "buckets held at once (about 140 bytes each); when full one not used lately goes (CLOCK)"),
	SL_OPT_END
};

/*
 * Set only in summary records.  Not text: a stack with ratelimit and no
 * converter must still fail the check of an output needing text.  Summary
 * text is written in a reused record only when it had none (splice.h).
 */
static const struct sl_field_decl rl_provides[] = {
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	{"suppressed", SL_T_U64},
	{"key", SL_T_STRING},
	SL_FIELD_END
};

static const struct sl_field_decl rl_reads[] = {
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_END
};

/* ---- time and tokens ---- */

/* Take a token at time t: true if the record may pass. */
static inline bool take(const struct rl_state *st, struct bucket *bk, int64_t t)
{
	if (t > bk->last) {
		uint64_t dt = (uint64_t)(t - bk->last);

		/*
		 * Past fill_ns an empty bucket is full; below it dt * rate <=
		 * cap <= 1e18 and tokens + that fits in 64 bits: exact, and no
		 * division per record.
		 */
		if (dt > st->fill_ns)
			bk->tokens = st->cap;
		else if ((bk->tokens += dt * st->rate) > st->cap)
			bk->tokens = st->cap;
		bk->last = t;
	}
	if (bk->tokens >= TOKEN) {
		bk->tokens -= TOKEN;
		return true;
	}
	return false;
}

static void new_bucket(const struct rl_state *st, struct bucket *bk, int64_t t)
{
	memset(bk, 0, sizeof(*bk));
	bk->tokens = st->cap;
	bk->last = t;
}

/* A record over the limit: count it, and remember the prefix of the first. */
static inline void suppress(struct bucket *bk, struct pfx *px, const struct sl_record *r)
{
	if (bk->suppressed++)
		return;
	px->has = sl_has(r, SL_F_PREFIX);
	if (px->has) {
		uint32_t n = r->v[SL_F_PREFIX].bytes.len;

		px->len = (uint8_t)(n < PREFIX_MAX ? n : PREFIX_MAX);
		memcpy(px->p, r->v[SL_F_PREFIX].bytes.ptr, px->len);
	}
}

/* ---- summaries ---- */

/* What a summary is of: bucket bk of key `key` (NULL: no key), at time t. */
struct rl_summary {
	struct rl_state *st;
	const struct bucket *bk;
	const struct pfx *px;
	const uint8_t *key;
	int64_t t;
};

/*
 * Fill summary r (in batch b, whose arena holds its strings): false when
 * the arena is full (sl_summary_fill_fn).
 */
static bool fill_summary(void *arg, struct sl_batch *b, struct sl_record *r)
{
	const struct rl_summary *a = arg;
	struct rl_state *st = a->st;
	const struct bucket *bk = a->bk;
	const struct pfx *px = a->px;
	const uint8_t *key = a->key;
	struct sl_fmt_buf fb;
	size_t mark, tlen;
	char *mem = sl_summary_room(b, &fb, &mark);

	if (!mem)
		return false;
	if (px->has)
		sl_fmt_mem(&fb, px->p, px->len);
	sl_fmt_u64(&fb, bk->suppressed);
	sl_fmt_lit(&fb, " records suppressed");
	tlen = fb.len;
	if (key)
		sl_reckey_format(&st->key, key, &fb);
	if (!sl_summary_fits(b, mem, &fb, mark))
		return false;
	sl_set_bytes(r, SL_F_TEXT, mem, (uint32_t)tlen);
	if (key)
		sl_set_bytes(r, (sl_field)st->sum.f_key, mem + tlen, (uint32_t)(fb.len - tlen));
	if (px->has)
		sl_set_bytes(r, SL_F_PREFIX, mem, px->len);
	sl_set_u64(r, (sl_field)st->sum.f_suppressed, bk->suppressed);
	sl_summary_set_time(r, a->t);
	return true;
}

/* A summary in the filter's own batch (emitted before the batch being processed). */
static void summary_out(struct rl_state *st, const struct bucket *bk, const struct pfx *px,
			const uint8_t *key, int64_t t)
{
	struct rl_summary a = { st, bk, px, key, t };

	sl_summary_out(&st->sum, fill_summary, &a);
}

/* The summary before the walk's next record, in place when there is room. */
static void summary_here(struct rl_state *st, const struct bucket *bk, const struct pfx *px,
			 const uint8_t *key, int64_t t)
{
	struct rl_summary a = { st, bk, px, key, t };

	sl_summary_here(&st->sum, &st->sp, fill_summary, &a);
}

static void on_evict(void *ctx, const struct sl_keytable *t, uint32_t i)
{
	struct rl_state *st = ctx;
	const struct bucket *bk = sl_kt_value(t, i);

	st->host->counter_add(st->inst, st->c_evicted, 1);
	/* only during a walk: in place, after the evicted key's records of this batch */
	if (bk->suppressed)
		summary_here(st, bk, &st->pfx[i], sl_kt_key(t, i), bk->last);
}

/* ---- records ---- */

/* One record through its bucket. */
static inline void one(struct rl_state *st, struct bucket *bk, struct pfx *px, const uint8_t *key,
		       int64_t t, uint64_t *dropped)
{
	struct sl_record *r = sl_splice_peek(&st->sp);

	if (!take(st, bk, t)) {
		suppress(bk, px, r);
		sl_splice_drop(&st->sp);
		++*dropped;
		return;
	}
	if (bk->suppressed) {
		summary_here(st, bk, px, key, t);
		bk->suppressed = 0;
	}
	sl_splice_keep(&st->sp);
}

/*
 * A software pipeline over the batch: record x has its key built and its
 * bucket prefetched, D records later its table entry is prefetched, D
 * later (when the first entry is another key's) the next entry of the
 * chain, and D later it goes through.  A hit writes nothing but its own
 * entry (CLOCK's referenced bit), so there is nothing else to fetch.  So the cache misses of a table larger
 * than the cache overlap instead of being paid one after the other.  The
 * prefetches are only hints: the records go through in order, exactly as
 * one at a time.  A summary inserted in a free slot shifts the records
 * not yet seen one place on (sp.n grows with it): their index follows.
 */
#define D 16
#define RING 64		/* a power of two above 3 * D */

static void process_keyed(struct rl_state *st, int64_t wall, uint64_t *dropped)
{
	uint8_t k[RING][SL_RECKEY_MAX_BYTES];
	uint32_t h[RING], first[RING];
	unsigned n0 = st->sp.n;

	for (unsigned x = 0; x < n0 + 3 * D; x++) {
		unsigned y;

		if (x < n0) {
			const struct sl_record *r = st->sp.b->rec[x + (st->sp.n - n0)];

			sl_reckey_build(&st->key, r, k[x % RING]);
			h[x % RING] = sl_kt_hash(&st->tab, k[x % RING]);
			sl_kt_prefetch(&st->tab, h[x % RING]);
		}
		y = x - D;
		if (x >= D && y < n0) {
			first[y % RING] = sl_kt_first(&st->tab, h[y % RING]);
			if (first[y % RING] != SL_KT_NIL)
				__builtin_prefetch(sl_kt_entry(&st->tab, first[y % RING]), 1);
		}
		y = x - 2 * D;
		if (x >= 2 * D && y < n0 && first[y % RING] != SL_KT_NIL) {
			const struct sl_kt_head *e = sl_kt_entry(&st->tab, first[y % RING]);

			/* another key's entry: the next in the chain */
			if (e->hash != h[y % RING] && e->hnext != SL_KT_NIL)
				__builtin_prefetch(sl_kt_entry(&st->tab, e->hnext), 1);
		}
		y = x - 3 * D;
		if (x >= 3 * D && y < n0) {
			int64_t t = sl_summary_rec_time(sl_splice_peek(&st->sp), wall);
			bool created;
			uint32_t i = sl_kt_get(&st->tab, k[y % RING], h[y % RING], &created, on_evict, st);
			struct bucket *bk = sl_kt_value(&st->tab, i);

			if (created)
				new_bucket(st, bk, t);
			one(st, bk, &st->pfx[i], k[y % RING], t, dropped);
		}
	}
}

static int rl_process(void *state, struct sl_batch *b)
{
	struct rl_state *st = state;
	int64_t wall = sl_clock_ns(CLOCK_REALTIME);
	uint64_t dropped = 0;

	sl_splice_begin(&st->sp, b);
	if (st->keyed) {
		process_keyed(st, wall, &dropped);
	} else {
		while (st->sp.r < st->sp.n)
			one(st, &st->one, &st->one_pfx, NULL,
			    sl_summary_rec_time(sl_splice_peek(&st->sp), wall), &dropped);
	}
	sl_splice_end(&st->sp);
	if (dropped)
		st->host->counter_add(st->inst, st->c_suppressed, dropped);
	sl_summary_emit(&st->sum);
	return 0;
}

/* Shutdown (and reload): a summary for every key still suppressing. */
static int rl_flush(void *state)
{
	struct rl_state *st = state;

	if (!st->started)
		return 0;
	if (!st->keyed) {
		if (st->one.suppressed)
			summary_out(st, &st->one, &st->one_pfx, NULL, st->one.last);
		st->one.suppressed = 0;
	} else {
		/*
		 * In table order: the entries' cache lines one after the other, not
		 * a miss at every entry.  Entries never used are zero (not suppressing);
		 * this table never frees one but to reuse it at once.
		 */
		for (uint32_t i = 0; i < st->tab.cap; i++) {
			struct bucket *bk = sl_kt_value(&st->tab, i);

			if (bk->suppressed)
				summary_out(st, bk, &st->pfx[i], sl_kt_key(&st->tab, i), bk->last);
			bk->suppressed = 0;
		}
	}
	sl_summary_emit(&st->sum);
	return 0;
}

/* ---- lifecycle ---- */

static int rl_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			void **state)
{
	const struct rl_cfg *cfg = config;
	struct rl_state *st = sl_state_new(struct rl_state, host, inst, config);
	uint64_t burst = cfg->burst ? (uint64_t)cfg->burst : (uint64_t)cfg->rate;

	if (!st)
		return -1;
	st->rate = (uint64_t)cfg->rate;
	st->cap = burst * TOKEN;
	st->fill_ns = st->cap / st->rate;
	st->max_keys = (uint32_t)cfg->max_keys;
	st->avoid[SL_F_TEXT >> 6] |= 1ull << (SL_F_TEXT & 63);
	sl_reckey_init(&st->key, 0);
	/* two own batches: a full one is sent on and the summary tried once more */
	if (sl_summary_key(&st->key, host, inst, &cfg->key) < 0 ||
	    sl_summary_init(&st->sum, host, inst, st->avoid, 2) < 0) {
		free(st);
		return -1;
	}
	st->keyed = cfg->key.n > 0;
	st->c_suppressed = host->counter_new(inst, "suppressed");
	st->sum.c_summaries = host->counter_new(inst, "summaries");
	st->c_evicted = host->counter_new(inst, "evicted");
	st->sum.c_lost = host->counter_new(inst, "lost");
	*state = st;
	return 0;
}

static int rl_start(void *state)
{
	struct rl_state *st = state;
	uint64_t seed;

	/* A secret seed: crafted sources cannot pile into one chain. */
	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (uint64_t)sl_clock_ns(CLOCK_REALTIME) ^ (uint64_t)(uintptr_t)st;
	st->key.seed = seed;
	if (st->keyed && !st->tab.mem &&
	    (sl_kt_init(&st->tab, st->max_keys, st->key.len, sizeof(struct bucket), seed) < 0 ||
	     !(st->pfx = calloc(st->max_keys, sizeof(*st->pfx))))) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot allocate a table of %u keys", st->max_keys);
		return -1;
	}
	st->started = true;
	return 0;
}

static void rl_stop(void *state)
{
	struct rl_state *st = state;

	sl_summary_stop(&st->sum);
	st->started = false;
}

static void rl_destroy(void *state)
{
	struct rl_state *st = state;

	sl_kt_free(&st->tab);
	free(st->pfx);
	free(st);
}

static const struct sl_plugin rl_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "ratelimit",
	.description = "token bucket per key: drop records over rate/burst, then one summary record",
	.config_size = sizeof(struct rl_cfg),
	.options = rl_options,
	.provides = rl_provides,
	.configure = rl_configure,
	.start = rl_start,
	.process = rl_process,
	.flush = rl_flush,
	.stop = rl_stop,
	.destroy = rl_destroy,
	.reads = rl_reads,
};

SLUICE_PLUGIN(rl_plugin)
