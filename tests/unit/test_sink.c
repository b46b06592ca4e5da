/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sink engine (plugins/common/sink.c) with a fake destination and a
 * fake host whose timers the test fires itself, on a clock of the test's
 * own: a batch sent when batch_size units are in it and by the flush
 * timer; a failed send retried in place with the delay doubled up to
 * retry_max and each retry counted; given up after max_retries (2 during
 * a flush), a refused batch after reject_retries, the units counted as
 * dropped; a batch ended by admit() (no room for the next record), a
 * record it skips, one no batch holds; retried() in place of the
 * engine's retry lines; with a spool, a batch the destination does not take goes to
 * disk, newer batches behind it, tried again no sooner than the backoff
 * (doubled after each failure), then sent back oldest first in order and
 * acknowledged; what is left at stop stays on disk for the next run; a
 * spooled record the output cannot read skipped and counted; the spool's
 * option rows and their texts, and spool_dir's check, which syslog (its own spool) shares;
 * sl_sink_plugin_process/flush on a state that begins with its sink.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fake_host.h"
#include "sink.h"

/* ---- the clock ---- */

static uint64_t now;
static uint64_t slept[64];
static unsigned nslept;

static uint64_t t_now(void *ctx)
{
	(void)ctx;
	return now;
}

static void t_sleep(void *ctx, uint64_t ms)
{
	(void)ctx;
	if (nslept < 64)
		slept[nslept] = ms;
	nslept++;
	now += ms;
}

/* ---- a destination: units are numbers; it fails `fails` more sends ---- */

#define MAXU 4096

static struct {
	uint32_t batch[MAXU];	/* the output's batch */
	unsigned rows;
	uint32_t next;		/* the number the next encoded record gets */
	uint32_t got[MAXU];	/* what the destination took, in order */
	unsigned ngot, sends, spooled_sends;
	int fails;		/* sends to fail (-1: all) */
	enum sl_sink_result fail_as;
	bool oom;
	uint32_t rec;
	unsigned part;		/* a failing send delivers up to this many units first */
	unsigned done;		/* of the batch, delivered by earlier sends */
} D;

static bool d_encode(void *ctx, const struct sl_record *r)
{
	(void)ctx;
	(void)r;
	if (D.oom)
		return false;
	D.batch[D.rows++] = D.next++;
	return true;
}

static bool d_fails(void)
{
	if (!D.fails)
		return false;
	if (D.fails > 0)
		D.fails--;
	return true;
}

static enum sl_sink_result d_send(void *ctx, unsigned n)
{
	(void)ctx;
	CHECK_EQ_U(n, D.rows);
	D.sends++;
	if (d_fails()) {
		/* a send of several datagrams that stopped part way: the engine is told */
		for (; D.part && D.done < n && D.done < D.part; D.done++)
			D.got[D.ngot++] = D.batch[D.done];
		if (D.done)
			sl_sink_delivered(ctx, D.done);
		return D.fail_as;
	}
	memcpy(D.got + D.ngot, D.batch + D.done, (n - D.done) * sizeof(D.got[0]));
	D.ngot += n - D.done;
	return SL_SINK_SENT;
}

static const void *d_spool_rec(void *ctx, unsigned i, size_t *len)
{
	(void)ctx;
	D.rec = D.batch[i];
	*len = sizeof(D.rec);
	return &D.rec;
}

static void d_reset(void *ctx)
{
	(void)ctx;
	D.rows = 0;
	D.done = 0;
}

/* Takes at most 5 records per send; a record of another length is skipped. */
static enum sl_sink_result d_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					  unsigned *used)
{
	struct sl_sink *sk = ctx;

	D.spooled_sends++;
	if (rec[0].iov_len != sizeof(uint32_t)) {
		sl_sink_spool_dropped(sk, 1);
		*used = 1;
		return SL_SINK_SENT;
	}
	if (d_fails())
		return SL_SINK_RETRY;
	if (n > 5)
		n = 5;
	for (unsigned i = 0; i < n; i++) {
		if (rec[i].iov_len != sizeof(uint32_t)) {
			n = i;
			break;
		}
		memcpy(&D.got[D.ngot++], rec[i].iov_base, sizeof(uint32_t));
	}
	*used = n;
	return SL_SINK_SENT;
}

static const struct sl_sink_ops ops = {
	.encode = d_encode,
	.send = d_send,
	.spool_rec = d_spool_rec,
	.reset = d_reset,
	.send_spooled = d_send_spooled,
};

static const struct sl_sink_def def = {
	.ops = &ops,
	.batch = "batch",
	.done = "sent",
	.from_spool = "sent from there later",
	.reject_retries = 2,
};

/*
 * A datagram-like output: admit() takes `room` units per batch, skips a
 * record while `skip` is set, finds none fits while `huge` is; retried()
 * notes what the engine told it.
 */
static struct {
	unsigned room, skipped, calls;
	bool skip, huge;
	unsigned n;
	int64_t retries;
	bool sent;
} A;

static enum sl_sink_admit a_admit(void *ctx, const struct sl_record *r)
{
	(void)ctx;
	(void)r;
	if (A.skip) {
		A.skipped++;
		return SL_SINK_SKIP;
	}
	return A.huge || D.rows >= A.room ? SL_SINK_FULL : SL_SINK_TAKE;
}

static void a_retried(void *ctx, unsigned n, int64_t retries, bool sent)
{
	(void)ctx;
	A.calls++;
	A.n = n;
	A.retries = retries;
	A.sent = sent;
}

static const struct sl_sink_ops dgram_ops = {
	.encode = d_encode,
	.send = d_send,
	.reset = d_reset,
	.admit = a_admit,
	.retried = a_retried,
};

static const struct sl_sink_def dgram_def = {
	.ops = &dgram_ops,
	.batch = "datagram",
	.done = "sent",
};

/* ---- the sink under test ---- */

static struct sl_sink sink;
static struct sl_sink_cfg cfg;
static struct sl_record rec_dummy;
static struct sl_record *recs[MAXU];
static char base[64];

/* sk from scratch, started: the fake host, the destination, the clock. */
static void fresh_sink(struct sl_sink *sk, const char *spool_dir, const struct sl_sink_def *d)
{
	static const struct sl_sink_clock clock = { t_now, t_sleep, NULL };
	int c_retries, c_dropped;

	fake_host_reset();
	memset(&D, 0, sizeof(D));
	nslept = 0;
	now = 1000000;
	cfg = (struct sl_sink_cfg){
		.batch_size = 4, .flush_interval = 1000, .max_retries = 8,
		.retry_min = 200, .retry_max = 1000, .spool_dir = spool_dir,
		.spool_max_size = 1 << 20,
	};
	c_retries = fake_host.counter_new(NULL, "retries");
	c_dropped = fake_host.counter_new(NULL, "dropped_rows");
	sl_sink_init(sk, &fake_host, NULL, &cfg, d, sk, c_retries, c_dropped);
	sl_sink_clock(sk, &clock);
	CHECK(sl_sink_start(sk) == 0);
}

static void fresh_def(const char *spool_dir, const struct sl_sink_def *d)
{
	fresh_sink(&sink, spool_dir, d);
}

static void fresh(const char *spool_dir)
{
	fresh_def(spool_dir, &def);
}

/* n records through process(). */
static void feed(unsigned n)
{
	struct sl_batch b = { .count = n, .rec = recs };

	for (unsigned i = 0; i < n; i++)
		recs[i] = &rec_dummy;
	CHECK(sl_sink_process(&sink, &b) == 0);
}

static bool got_in_order(unsigned n)
{
	if (D.ngot != n)
		return false;
	for (unsigned i = 0; i < n; i++)
		if (D.got[i] != i)
			return false;
	return true;
}

/* Flush by size: a batch of batch_size units goes at once; the rest waits for the timer. */
static void test_flush_by_size_and_time(void)
{
	struct sl_timer *flush;

	fresh(NULL);
	flush = &H.timers[0];
	CHECK(flush->armed && flush->delay == 1000 && flush->period == 1000,
	      "flush timer %d %" PRIu64 " %" PRIu64, flush->armed, flush->delay, flush->period);
	feed(3);
	CHECK_EQ_U(D.sends, 0);
	feed(6);			/* 9: two batches of 4, one unit left */
	CHECK_EQ_U(D.sends, 2);
	CHECK_EQ_U(D.rows, 1);
	fake_fire(flush);
	CHECK_EQ_U(D.sends, 3);
	CHECK(got_in_order(9));
	fake_fire(flush);			/* nothing in the batch: nothing sent */
	CHECK_EQ_U(D.sends, 3);
	sl_sink_stop(&sink);
	CHECK(!flush->armed);
	sl_sink_destroy(&sink);
}

/* Fails three times, then takes it: three retries after 200, 400, 800 ms. */
static void test_retry_backoff(void)
{
	fresh(NULL);
	D.fails = 3;
	D.fail_as = SL_SINK_RETRY;
	feed(4);
	CHECK_EQ_U(D.sends, 4);
	CHECK_EQ_U(nslept, 3);
	CHECK_EQ_U(slept[0], 200);
	CHECK_EQ_U(slept[1], 400);
	CHECK_EQ_U(slept[2], 800);
	CHECK_EQ_U(fake_counter("retries"), 3);
	CHECK(got_in_order(4));
	CHECK_STREQ(H.last_log, "batch of 4 rows sent after 3 retries");
	/* capped at retry_max */
	D.fails = 5;
	nslept = 0;
	feed(4);
	CHECK_EQ_U(nslept, 5);
	CHECK_EQ_U(slept[3], 1000);
	CHECK_EQ_U(slept[4], 1000);
	CHECK_EQ_U(fake_counter("dropped_rows"), 0);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/* A destination that never answers: dropped after max_retries, counted twice over. */
static void test_give_up(void)
{
	fresh(NULL);
	cfg.max_retries = 3;
	D.fails = -1;
	D.fail_as = SL_SINK_RETRY;
	feed(4);
	CHECK_EQ_U(D.sends, 4);
	CHECK_EQ_U(fake_counter("retries"), 3);
	CHECK_EQ_U(fake_counter("dropped_rows"), 4);
	CHECK_EQ_U(H.dropped, 4);
	CHECK_STREQ(H.last_log, "4 rows dropped after 3 retries");
	CHECK_EQ_U(D.rows, 0);
	/* refused: reject_retries (2), not max_retries */
	cfg.max_retries = 30;
	D.sends = 0;
	D.fail_as = SL_SINK_REJECTED;
	feed(4);
	CHECK_EQ_U(D.sends, 3);
	CHECK_EQ_U(fake_counter("dropped_rows"), 8);
	/* a flush (stop, reload) does not wait the full backoff: 2 retries */
	D.sends = 0;
	D.fail_as = SL_SINK_RETRY;
	feed(1);
	sl_sink_flush(&sink);
	CHECK_EQ_U(D.sends, 3);
	CHECK_EQ_U(fake_counter("dropped_rows"), 9);
	/* out of memory for a record: dropped and counted, the rest goes on */
	D.oom = true;
	feed(2);
	CHECK_EQ_U(fake_counter("dropped_rows"), 11);
	CHECK_EQ_U(H.dropped, 11);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/*
 * A batch that ends by its size: sent when the next record has no room,
 * before batch_size; a skipped record is no unit; one that fits no batch
 * is dropped and counted.
 */
static void test_admit(void)
{
	memset(&A, 0, sizeof(A));
	fresh_def(NULL, &dgram_def);
	A.room = 3;
	feed(7);			/* 3 + 3 sent by admit(), before batch_size (4) */
	CHECK_EQ_U(D.sends, 2);
	CHECK_EQ_U(D.rows, 1);
	CHECK(got_in_order(6));
	A.skip = true;
	feed(5);
	A.skip = false;
	CHECK_EQ_U(A.skipped, 5);
	CHECK_EQ_U(D.rows, 1);		/* no unit, nothing sent */
	CHECK_EQ_U(D.sends, 2);
	CHECK_EQ_U(fake_counter("dropped_rows"), 0);
	A.huge = true;
	feed(1);			/* the batch sent, and still no room */
	A.huge = false;
	CHECK_EQ_U(D.sends, 3);
	CHECK(got_in_order(7));
	CHECK_EQ_U(fake_counter("dropped_rows"), 1);
	CHECK_EQ_U(H.dropped, 1);
	A.room = 100;
	feed(4);			/* batch_size still ends a batch */
	CHECK_EQ_U(D.sends, 4);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/* retried(): the output words the end of a retried batch; the engine still counts. */
static void test_retried(void)
{
	memset(&A, 0, sizeof(A));
	fresh_def(NULL, &dgram_def);
	A.room = 100;
	D.fails = 2;
	D.fail_as = SL_SINK_RETRY;
	feed(4);
	CHECK_EQ_U(A.calls, 1);
	CHECK(A.n == 4 && A.retries == 2 && A.sent, "retried(%u, %lld, %d)", A.n,
	      (long long)A.retries, A.sent);
	CHECK_EQ_U(fake_counter("retries"), 2);
	CHECK_STREQ(H.last_log, "");	/* no "datagram of 4 rows sent after 2 retries" */
	feed(4);			/* sent at once: not a retried batch */
	CHECK_EQ_U(A.calls, 1);
	cfg.max_retries = 1;
	D.fails = -1;
	feed(4);
	CHECK_EQ_U(A.calls, 2);
	CHECK(A.n == 4 && A.retries == 1 && !A.sent, "retried(%u, %lld, %d)", A.n,
	      (long long)A.retries, A.sent);
	CHECK_EQ_U(fake_counter("dropped_rows"), 4);
	CHECK_EQ_U(H.dropped, 4);
	CHECK_STREQ(H.last_log, "");	/* no "4 rows dropped after 1 retries" */
	D.fails = 0;
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/*
 * Down: the batch goes to the spool, newer ones behind it without a send;
 * no send from the spool before the backoff; each failure doubles it;
 * back: every unit in order, acknowledged, counted.
 */
static void test_spool_down_then_back(void)
{
	char dir[128];
	struct sl_timer *retry;

	snprintf(dir, sizeof(dir), "%s/down", base);
	fresh(dir);
	retry = &H.timers[1];
	CHECK(retry->armed && retry->delay == 0, "first spool turn at start");
	fake_fire(retry);			/* nothing spooled yet */
	CHECK_EQ_U(D.spooled_sends, 0);
	D.fails = -1;
	D.fail_as = SL_SINK_RETRY;
	feed(4);
	CHECK_EQ_U(D.sends, 1);		/* not retried in place */
	CHECK_EQ_U(nslept, 0);
	CHECK_EQ_U(fake_counter("spooled"), 4);
	CHECK_STREQ(H.last_log, "4 rows go to the spool, sent from there later");
	CHECK(retry->armed && retry->delay == 200);
	/* the end of process() tried the spool: too early, nothing sent */
	CHECK_EQ_U(D.spooled_sends, 0);
	feed(8);			/* behind the spooled ones, unsent */
	CHECK_EQ_U(D.sends, 1);
	CHECK_EQ_U(fake_counter("spooled"), 12);
	CHECK(retry->armed && retry->delay == 200);
	now += 100;
	fake_fire(retry);
	CHECK_EQ_U(D.spooled_sends, 0);
	CHECK(retry->armed && retry->delay == 100, "the rest of the delay: %" PRIu64, retry->delay);
	now += 100;
	fake_fire(retry);			/* due, still down: 200, then 400 */
	CHECK_EQ_U(D.spooled_sends, 1);
	CHECK(retry->armed && retry->delay == 200, "delay %" PRIu64, retry->delay);
	now += 200;
	fake_fire(retry);
	CHECK_EQ_U(D.spooled_sends, 2);
	CHECK(retry->armed && retry->delay == 400, "delay %" PRIu64, retry->delay);
	D.fails = 0;			/* back */
	now += 400;
	fake_fire(retry);
	CHECK(got_in_order(12), "got %u", D.ngot);
	CHECK_EQ_U(fake_counter("spool_sent"), 12);
	CHECK_EQ_U(fake_counter("spool_bytes"), 0);
	CHECK_EQ_U(fake_counter("retries"), 0);
	/* the spool is empty: the next batch goes straight out */
	feed(4);
	CHECK_EQ_U(D.sends, 2);
	CHECK(got_in_order(16));
	CHECK_EQ_U(fake_counter("spooled"), 12);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/*
 * A send that delivered part of the batch before failing
 * (sl_sink_delivered): retried, only the rest goes; given up, only the
 * rest is counted lost; with a spool, only the rest is spooled; nothing
 * twice.  sl_sink_send() sends a batch short of batch_size.
 */
static void test_delivered_part(void)
{
	char dir[128];

	fresh(NULL);
	D.fails = 1;
	D.fail_as = SL_SINK_RETRY;
	D.part = 3;
	feed(4);
	CHECK_EQ_U(D.sends, 2);
	CHECK(got_in_order(4), "got %u", D.ngot);
	/* given up after 3 retries: 2 delivered, 2 lost */
	cfg.max_retries = 3;
	D.fails = -1;
	D.part = 2;
	feed(4);
	CHECK_EQ_U(D.ngot, 6);
	CHECK_EQ_U(fake_counter("dropped_rows"), 2);
	CHECK_EQ_U(H.dropped, 2);
	CHECK_STREQ(H.last_log, "2 rows dropped after 3 retries");
	/* sent before the batch is full */
	D.fails = 0;
	feed(2);
	CHECK_EQ_U(D.rows, 2);
	sl_sink_send(&sink);
	CHECK_EQ_U(D.rows, 0);
	CHECK_EQ_U(D.ngot, 8);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);

	snprintf(dir, sizeof(dir), "%s/part", base);
	fresh(dir);
	D.fails = -1;
	D.fail_as = SL_SINK_RETRY;
	D.part = 1;
	feed(4);
	CHECK_EQ_U(fake_counter("spooled"), 3);
	CHECK_STREQ(H.last_log, "3 rows go to the spool, sent from there later");
	D.fails = 0;
	now += 200;
	fake_fire(&H.timers[1]);
	CHECK(got_in_order(4), "got %u", D.ngot);
	CHECK_EQ_U(fake_counter("spool_sent"), 3);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

/* Still down at stop: the spool keeps the units; the next run sends them first. */
static void test_spool_across_runs(void)
{
	char dir[128];
	struct sl_timer *retry;

	snprintf(dir, sizeof(dir), "%s/runs", base);
	fresh(dir);
	D.fails = -1;
	D.fail_as = SL_SINK_RETRY;
	feed(6);			/* 4 spooled, 2 in the batch */
	sl_sink_stop(&sink);		/* the 2 behind them; the stop's turn fails */
	sl_sink_destroy(&sink);
	CHECK_EQ_U(D.ngot, 0);
	CHECK_EQ_U(fake_counter("spooled"), 6);

	fresh(dir);
	D.next = 6;
	retry = &H.timers[1];
	feed(2);			/* units 6, 7 wait in the batch */
	CHECK_EQ_U(D.sends, 0);
	CHECK(got_in_order(6), "the end of process() sent the spool: got %u", D.ngot);
	fake_fire(retry);
	feed(2);			/* 6..9: a full batch, the spool is empty */
	CHECK_EQ_U(D.sends, 1);
	CHECK(got_in_order(10), "got %u", D.ngot);
	CHECK_EQ_U(fake_counter("spool_sent"), 6);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

static void quiet(void *ctx, int level, const char *msg)
{
	(void)ctx;
	(void)level;
	(void)msg;
}

/* A spooled record the output cannot read: skipped, counted, the rest sent. */
static void test_spool_skip(void)
{
	char dir[128], err[256];
	struct sl_spool *sp;
	uint32_t v = 0;
	static const char junk[3] = "xyz";

	snprintf(dir, sizeof(dir), "%s/skip", base);
	sp = sl_spool_open(dir, 1 << 20, quiet, NULL, err, sizeof(err));
	CHECK(sp != NULL, "%s", err);
	if (!sp)
		return;
	sl_spool_append(sp, junk, sizeof(junk));
	sl_spool_append(sp, &v, sizeof(v));
	sl_spool_close(sp);
	fresh(dir);
	D.next = 1;
	fake_fire(&H.timers[1]);
	CHECK(got_in_order(1), "got %u", D.ngot);
	CHECK_EQ_U(fake_counter("spool_dropped"), 1);
	CHECK_EQ_U(H.dropped, 1);
	CHECK_EQ_U(fake_counter("spool_sent"), 2);
	sl_sink_stop(&sink);
	sl_sink_destroy(&sink);
}

static void test_check(void)
{
	struct sl_sink_cfg c = { .retry_min = 300, .retry_max = 200 };

	CHECK(sl_sink_check(&c, &fake_host, NULL) < 0);
	CHECK(strstr(H.last_log, "retry_min") != NULL, "%s", H.last_log);
	c.retry_max = 300;
	c.spool_dir = "rel/dir";
	CHECK(sl_sink_check(&c, &fake_host, NULL) < 0);
	CHECK(strstr(H.last_log, "spool_dir") != NULL, "%s", H.last_log);
	c.spool_dir = "/abs";
	CHECK(sl_sink_check(&c, &fake_host, NULL) == 0);
	/* kafka's: only the spool's fields set */
	c = (struct sl_sink_cfg){ .spool_dir = "/abs" };
	CHECK(sl_sink_check(&c, &fake_host, NULL) == 0);
}

/* The spool's rows keep their names, defaults and --describe texts; the noun is the output's. */
struct rows_cfg {
	int other;
	struct sl_sink_cfg sink;
};

static void test_spool_rows(void)
{
	static const struct sl_option rows[] = {
		SL_SINK_OPT_SPOOL(struct rows_cfg, sink, "rows that cannot be inserted"),
		SL_SINK_OPT_SPOOL_OF(struct rows_cfg, sink, "what the queue cannot hold", "messages"),
	};

	CHECK(strcmp(rows[0].name, "spool_dir") == 0);
	CHECK(strcmp(rows[0].description,
		     "directory of a disk spool for rows that cannot be inserted (default: none)") == 0,
	      "%s", rows[0].description);
	CHECK_EQ_U(rows[0].offset, offsetof(struct rows_cfg, sink.spool_dir));
	CHECK(strcmp(rows[1].name, "spool_max_size") == 0);
	CHECK(strcmp(rows[1].def, "1GiB") == 0);
	CHECK(rows[1].min == 65536 && rows[1].max == (int64_t)1 << 40);
	CHECK(strcmp(rows[1].description, "largest size of the spool; past it rows are dropped") == 0,
	      "%s", rows[1].description);
	CHECK_EQ_U(rows[1].offset, offsetof(struct rows_cfg, sink.spool_max_size));
	CHECK(strcmp(rows[2].description,
		     "directory of a disk spool for what the queue cannot hold (default: none)") == 0,
	      "%s", rows[2].description);
	CHECK(strcmp(rows[3].description,
		     "largest size of the spool; past it messages are dropped") == 0,
	      "%s", rows[3].description);
}

/*
 * The spool's option rows for an output with its own spool (syslog): the
 * engine's names, defaults, limits and flags, the output's members and
 * texts.  SL_SINK_OPT_SPOOL is the same rows on a struct sl_sink_cfg.
 */
struct own_spool_cfg {
	int before;
	const char *dir;
	uint64_t max;
};

static void test_spool_rows_own(void)
{
	static const struct sl_option own[] = {
		SL_SINK_OPT_SPOOL_ROWS(struct own_spool_cfg, dir, max, "where it goes", "messages"),
		SL_OPT_END
	};
	struct engine_cfg {
		struct sl_sink_cfg sink;
	};
	static const struct sl_option eng[] = {
		SL_SINK_OPT_SPOOL(struct engine_cfg, sink, "rows that cannot be inserted"),
		SL_OPT_END
	};

	CHECK_STREQ(own[0].name, "spool_dir");
	CHECK(own[0].type == SL_OPT_STRING);
	CHECK_EQ_U(own[0].offset, offsetof(struct own_spool_cfg, dir));
	CHECK(own[0].def == NULL);
	CHECK_EQ_U(own[0].flags, SL_OPT_OUT_MKDIR);
	CHECK_STREQ(own[0].description, "where it goes");
	CHECK_STREQ(own[1].name, "spool_max_size");
	CHECK(own[1].type == SL_OPT_SIZE);
	CHECK_EQ_U(own[1].offset, offsetof(struct own_spool_cfg, max));
	CHECK_STREQ(own[1].def, "1GiB");
	CHECK_EQ_I(own[1].min, 65536);
	CHECK_EQ_I(own[1].max, (int64_t)1 << 40);
	CHECK_STREQ(own[1].description, "largest size of the spool; past it messages are dropped");
	CHECK(own[2].name == NULL);

	CHECK_STREQ(eng[0].description,
		    "directory of a disk spool for rows that cannot be inserted (default: none)");
	CHECK_EQ_U(eng[0].offset, offsetof(struct engine_cfg, sink.spool_dir));
	CHECK_EQ_U(eng[1].offset, offsetof(struct engine_cfg, sink.spool_max_size));
	CHECK_STREQ(eng[1].description, "largest size of the spool; past it rows are dropped");
	CHECK_STREQ(eng[1].def, own[1].def);
	CHECK_EQ_I(eng[1].min, own[1].min);
	CHECK_EQ_I(eng[1].max, own[1].max);
	CHECK_EQ_U(eng[0].flags, own[0].flags);
}

/* spool_dir's check alone (an output with its own spool): absent or absolute. */
static void test_check_spool_dir(void)
{
	H.last_log[0] = 0;
	CHECK(sl_sink_check_spool_dir(NULL, &fake_host, NULL) == 0);
	CHECK(sl_sink_check_spool_dir("/var/spool/x", &fake_host, NULL) == 0);
	CHECK_STREQ(H.last_log, "");
	CHECK(sl_sink_check_spool_dir("var/spool/x", &fake_host, NULL) < 0);
	CHECK_STREQ(H.last_log, "config spool_dir: expected an absolute directory path");
	H.last_log[0] = 0;
	CHECK(sl_sink_check_spool_dir("", &fake_host, NULL) < 0);
	CHECK_STREQ(H.last_log, "config spool_dir: expected an absolute directory path");
}

/*
 * An output's state that begins with its sink (SL_SINK_STATE_HEAD): the
 * engine's process and flush serve as the plugin's, on that sink.
 */
struct plug_state {
	SL_SINK_STATE_HEAD(struct sl_sink_cfg);
	int after;			/* the output's own members follow */
};

static void test_plugin_callbacks(void)
{
	struct plug_state *st = sl_sink_state_new(struct plug_state, &fake_host, NULL, &cfg);
	struct sl_batch b = { .count = 6, .rec = recs };

	CHECK(st != NULL);
	if (!st)
		return;
	CHECK(st->host == &fake_host && st->cfg == &cfg && st->after == 0);
	fresh_sink(&st->sink, NULL, &def);
	for (unsigned i = 0; i < 6; i++)
		recs[i] = &rec_dummy;
	CHECK(sl_sink_plugin_process(st, &b) == 0);	/* 6: one batch of 4 sent, 2 wait */
	CHECK_EQ_U(D.sends, 1);
	CHECK_EQ_U(st->sink.units, 2);
	CHECK(sl_sink_plugin_flush(st) == 0);		/* the 2 go now, not at the timer */
	CHECK_EQ_U(D.sends, 2);
	CHECK_EQ_U(st->sink.units, 0);
	CHECK(got_in_order(6));
	sl_sink_stop(&st->sink);
	sl_sink_destroy(&st->sink);
	free(st);
}

int main(void)
{
	char cmd[256];

	snprintf(base, sizeof(base), "/tmp/test_sink.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -m 0700 '%s'", base, base);
	CHECK(system(cmd) == 0);
	test_flush_by_size_and_time();
	test_retry_backoff();
	test_give_up();
	test_admit();
	test_retried();
	test_spool_down_then_back();
	test_delivered_part();
	test_spool_across_runs();
	test_spool_skip();
	test_check();
	test_spool_rows();
	test_spool_rows_own();
	test_check_spool_dir();
	test_plugin_callbacks();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", base);
	return check_summary("test_sink");
}
