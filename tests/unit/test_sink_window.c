/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stream and asynchronous side of the sink engine (sink_spool.c,
 * sink_window.c) on a real spool in a temporary directory, with a fake
 * destination and a fake host whose timers the test fires itself:
 * reports in any order acknowledge only the delivered prefix, once none
 * is outstanding; a failed record is produced again once, by the timer,
 * and those delivered after it are not; a full queue leaves the rest for
 * the next window; no window while the destination is busy; new units go
 * behind the spool except while the window holds all of it; a record the
 * destination cannot take is counted and acknowledged; the lock of a
 * reload's old instance, taken over with the new one's queue behind the
 * spool; the queue in front of the spool at stop; acknowledgements that
 * span pieces; the counters and log lines.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fake_host.h"
#include "sink_window.h"

/* ---- a destination: units are numbers; it logs what was produced ---- */

#define MAXU 512

static struct {
	uint32_t produced[MAXU];	/* the numbers produced, in order */
	unsigned idx[MAXU];		/* the window index each got */
	unsigned nproduced;
	unsigned full_after;		/* take this many more, then SL_WIN_FULL (0: no limit) */
	uint32_t gone;			/* this number cannot be sent (0: none) */
	bool busy;
} D;

static enum sl_win_produced d_produce(void *ctx, const struct iovec *rec, unsigned i)
{
	uint32_t v;

	(void)ctx;
	if (D.full_after && D.nproduced >= D.full_after)
		return SL_WIN_FULL;
	CHECK_EQ_U(rec->iov_len, sizeof(v));
	memcpy(&v, rec->iov_base, sizeof(v));
	if (D.gone && v == D.gone)
		return SL_WIN_GONE;
	D.produced[D.nproduced] = v;
	D.idx[D.nproduced++] = i;
	return SL_WIN_IN_FLIGHT;
}

static bool d_busy(void *ctx)
{
	(void)ctx;
	return D.busy;
}

static const struct sl_sink_window_ops ops = { .produce = d_produce, .busy = d_busy };

/* ---- the window under test ---- */

static char base[64];
static struct sl_sink_window win;

static void fresh(const char *name, unsigned cap)
{
	char dir[128];

	fake_host_reset();
	memset(&D, 0, sizeof(D));
	memset(&win, 0, sizeof(win));
	snprintf(dir, sizeof(dir), "%s/%s", base, name);
	sl_sink_spool_init(&win.ss, &fake_host, NULL, dir);
	CHECK(sl_sink_window_open(&win, dir, 1 << 20, cap, 100, &ops, NULL) == 0, "%s", H.last_log);
	CHECK(H.timers[0].armed && H.timers[0].delay == 100 && H.timers[0].period == 100);
}

/* Units first..first+n-1 appended and flushed. */
static void put(uint32_t first, unsigned n)
{
	for (uint32_t v = first; v < first + n; v++)
		sl_sink_window_append(&win, &v, sizeof(v));
	sl_spool_flush(win.ss.sp);
}

static uint64_t acked(void)
{
	return sl_spool_stats(win.ss.sp)->sent;
}

/* The oldest spooled unit, or UINT32_MAX when none. */
static uint32_t head(struct sl_spool *sp)
{
	struct iovec iov;
	uint32_t v;

	if (!sl_spool_peekv(sp, &iov, 1))
		return UINT32_MAX;
	memcpy(&v, iov.iov_base, sizeof(v));
	return v;
}

static void report(unsigned i, enum sl_win_report r)
{
	CHECK(sl_sink_window_report(&win, i, r), "report of %u refused", i);
}

/* Reports in any order: only when none is outstanding is anything acknowledged, all of it. */
static void test_out_of_order(void)
{
	fresh("order", 8);
	put(1, 5);
	sl_sink_window_fill(&win);
	CHECK_EQ_U(D.nproduced, 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK(D.produced[i] == i + 1 && D.idx[i] == i, "%u: %u at %u", i, D.produced[i], D.idx[i]);
	CHECK_EQ_U(sl_sink_window_outstanding(&win), 5);
	report(4, SL_WIN_DELIVERED);
	report(2, SL_WIN_DELIVERED);
	report(0, SL_WIN_DELIVERED);
	report(1, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 0);		/* record 3's report is still to come */
	CHECK(!sl_sink_window_report(&win, 1, SL_WIN_DELIVERED), "a second report counted");
	CHECK(!sl_sink_window_report(&win, 7, SL_WIN_DELIVERED), "a record not in the window");
	CHECK_EQ_U(sl_sink_window_outstanding(&win), 1);
	report(3, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 5);
	CHECK(!sl_spool_pending(win.ss.sp));
	CHECK_EQ_U(fake_counter("spooled"), 5);
	CHECK_EQ_U(fake_counter("spool_sent"), 5);
	sl_sink_window_close(&win, "t", false);
	CHECK(!H.timers[0].armed);
}

/* A failed record: the prefix before it acknowledged; produced again once, alone, by the timer. */
static void test_hole(void)
{
	fresh("hole", 8);
	put(1, 5);
	sl_sink_window_fill(&win);
	report(0, SL_WIN_DELIVERED);
	report(2, SL_WIN_AGAIN);
	report(4, SL_WIN_FAILED);	/* counted by the output, never produced again */
	report(1, SL_WIN_DELIVERED);
	report(3, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 2);
	CHECK(sl_sink_window_failing(&win));
	sl_sink_window_fill(&win);	/* failing: only the timer brings the next window */
	CHECK_EQ_U(D.nproduced, 5);
	H.timers[0].cb(H.timers[0].ctx);
	CHECK_EQ_U(D.nproduced, 6);
	CHECK(D.produced[5] == 3 && D.idx[5] == 0, "%u at %u", D.produced[5], D.idx[5]);
	H.timers[0].cb(H.timers[0].ctx);	/* in flight: not produced twice */
	sl_sink_window_fill(&win);
	CHECK_EQ_U(D.nproduced, 6);
	report(0, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 5);
	CHECK(!sl_spool_pending(win.ss.sp));
	CHECK(!sl_sink_window_failing(&win));
	sl_sink_window_close(&win, "t", false);
}

/* The queue full after two: the rest waits for the next window, produced once. */
static void test_full_and_gone(void)
{
	fresh("full", 8);
	put(1, 5);
	D.full_after = 2;
	sl_sink_window_fill(&win);
	CHECK_EQ_U(D.nproduced, 2);
	CHECK(sl_sink_window_takes(&win));	/* not all of the spool in flight */
	report(1, SL_WIN_DELIVERED);
	report(0, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 2);
	D.full_after = 0;
	D.gone = 4;			/* cannot be sent: counted by the output, acknowledged */
	sl_sink_window_fill(&win);
	CHECK_EQ_U(D.nproduced, 4);
	CHECK(D.produced[2] == 3 && D.produced[3] == 5, "%u %u", D.produced[2], D.produced[3]);
	report(2, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 2);
	report(0, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 5);
	/* every record gone: the window is acknowledged at once */
	put(4, 2);
	D.gone = 0;
	D.full_after = 4;		/* produced 4 already: none taken */
	sl_sink_window_fill(&win);
	CHECK_EQ_U(acked(), 5);
	D.full_after = 0;
	D.gone = 4;
	sl_sink_window_fill(&win);
	CHECK_EQ_U(D.nproduced, 5);	/* 5 in flight; 4 gone */
	report(1, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 7);
	sl_sink_window_close(&win, "t", false);
}

/* Busy (older records in the destination, or stopping): no window. */
static void test_busy(void)
{
	fresh("busy", 8);
	put(1, 3);
	D.busy = true;
	sl_sink_window_fill(&win);
	H.timers[0].cb(H.timers[0].ctx);
	CHECK_EQ_U(D.nproduced, 0);
	D.busy = false;
	H.timers[0].cb(H.timers[0].ctx);
	CHECK_EQ_U(D.nproduced, 3);
	sl_sink_window_close(&win, "t", false);
}

/* New units behind the spool, except while the window in flight is all of it. */
static void test_takes_tail(void)
{
	fresh("tail", 8);
	CHECK(!sl_sink_window_takes(&win));
	put(1, 3);
	CHECK(sl_sink_window_takes(&win));
	sl_sink_window_fill(&win);
	CHECK(!sl_sink_window_takes(&win));	/* all 3 in flight: new ones go direct */
	put(4, 1);
	CHECK(sl_sink_window_takes(&win));	/* behind the spool again */
	report(0, SL_WIN_DELIVERED);
	report(1, SL_WIN_DELIVERED);
	report(2, SL_WIN_DELIVERED);
	sl_sink_window_fill(&win);
	CHECK(!sl_sink_window_takes(&win));	/* 4 alone, in flight */
	report(0, SL_WIN_AGAIN);		/* fails: the spool holds it again */
	CHECK(sl_sink_window_takes(&win));
	H.timers[0].cb(H.timers[0].ctx);
	report(0, SL_WIN_DELIVERED);
	CHECK(!sl_sink_window_takes(&win));
	CHECK_EQ_U(acked(), 4);
	/* a window as large as the spool cannot know it holds it all */
	sl_sink_window_close(&win, "t", false);
	fresh("tail2", 2);
	put(1, 2);
	sl_sink_window_fill(&win);
	CHECK(sl_sink_window_takes(&win));
	sl_sink_window_close(&win, "t", false);
}

static unsigned requeue_n;
static uint32_t requeue_first;
static struct sl_sink_spool *requeue_ss;

static unsigned requeue(void *ctx)
{
	(void)ctx;
	for (uint32_t v = requeue_first; v < requeue_first + requeue_n; v++)
		sl_sink_spool_append(requeue_ss, &v, sizeof(v));
	return requeue_n;
}

/* The lock is taken over when the old instance closes; the queue goes behind its spool. */
static void test_adopt(void)
{
	struct sl_sink_spool old, new;
	char dir[128], want[128];
	struct timespec t0, t;
	bool ok = false;

	fake_host_reset();
	snprintf(dir, sizeof(dir), "%s/adopt", base);
	sl_sink_spool_init(&old, &fake_host, NULL, dir);
	sl_sink_spool_init(&new, &fake_host, NULL, dir);
	CHECK(sl_sink_spool_open(&old, dir, 1 << 20) == 0, "%s", H.last_log);
	CHECK(sl_sink_spool_adopt(&old, requeue, NULL));	/* empty: nothing moved */
	CHECK(sl_sink_spool_open(&new, dir, 1 << 20) == 0, "%s", H.last_log);
	requeue_ss = &new;
	requeue_first = 10;
	requeue_n = 3;
	H.last_log[0] = 0;
	CHECK(!sl_sink_spool_adopt(&new, requeue, NULL));	/* the old one holds it */
	CHECK(!sl_spool_pending(new.sp));
	for (uint32_t v = 1; v <= 2; v++)
		CHECK(sl_sink_spool_append(&old, &v, sizeof(v)) == 0);
	sl_sink_spool_close(&old, "there");
	snprintf(want, sizeof(want), "%u bytes for there stay in the spool for the next start",
		 SL_SPOOL_HDR + 2 * (SL_SPOOL_REC_HDR + 4));
	CHECK_STREQ(H.last_log, want);
	/* the lock is tried again at most every 20 ms */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ok = sl_sink_spool_adopt(&new, requeue, NULL);
		if (!ok)
			usleep(5000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!ok && t.tv_sec - t0.tv_sec < 30);
	CHECK(ok, "the lock was not taken over");
	CHECK_STREQ(H.last_log, "took over the spool: 3 queued messages appended behind it");
	CHECK_EQ_U(sl_spool_stats(new.sp)->spooled, 3);
	requeue_n = 99;
	CHECK(sl_sink_spool_adopt(&new, requeue, NULL));	/* once */
	CHECK_EQ_U(sl_spool_stats(new.sp)->spooled, 3);
	CHECK(sl_sink_spool_takes(&new));
	/* the old instance's first, then what the new one queued */
	for (uint32_t u = 1; u <= 12; u = u == 2 ? 10 : u + 1) {
		CHECK_EQ_U(head(new.sp), u);
		sl_sink_spool_ack(&new, 1);
	}
	CHECK(!sl_sink_spool_takes(&new));
	sl_sink_spool_close(&new, NULL);
	CHECK(new.sp == NULL);
}

/* At stop the queue goes in front of the spool; acknowledgements across pieces. */
static void test_save_queue_and_ack(void)
{
	struct sl_sink_spool ss;
	char dir[128];

	fake_host_reset();
	snprintf(dir, sizeof(dir), "%s/front", base);
	sl_sink_spool_init(&ss, &fake_host, NULL, dir);
	CHECK(sl_sink_spool_open(&ss, dir, 1 << 20) == 0, "%s", H.last_log);
	for (uint32_t v = 100; v < 400; v++)
		sl_sink_spool_append(&ss, &v, sizeof(v));
	sl_spool_flush(ss.sp);
	requeue_ss = &ss;
	requeue_first = 1;
	requeue_n = 2;
	CHECK_EQ_U(sl_sink_spool_save_queue(&ss, 0, requeue, NULL, "there"), 0);
	CHECK_EQ_U(sl_sink_spool_save_queue(&ss, 2, requeue, NULL, "there"), 2);
	CHECK_STREQ(H.last_log, "2 queued messages for there kept in the spool at shutdown");
	CHECK_EQ_U(fake_counter("spooled"), 302);
	CHECK_EQ_U(head(ss.sp), 1);
	sl_sink_spool_ack(&ss, 2 + 150);	/* more than one peek's step */
	CHECK_EQ_U(head(ss.sp), 250);
	sl_sink_spool_ack(&ss, 1000);		/* all there is */
	CHECK(!sl_sink_spool_takes(&ss));
	sl_sink_spool_publish(&ss);
	CHECK_EQ_U(fake_counter("spool_sent"), 302);
	H.last_log[0] = 0;
	sl_sink_spool_close(&ss, "there");
	CHECK_STREQ(H.last_log, "");		/* nothing stays */
}

/* At stop, with no window in flight, what comes back goes in front of the spool. */
static void test_front_begin(void)
{
	uint32_t v = 7;

	fresh("wfront", 8);
	put(1, 2);
	sl_sink_window_fill(&win);
	CHECK(sl_sink_window_front_begin(&win) < 0);	/* in flight: would go behind them */
	report(0, SL_WIN_DELIVERED);
	report(1, SL_WIN_AGAIN);
	CHECK(sl_sink_window_front_begin(&win) < 0);	/* record 2 still in the window */
	H.timers[0].cb(H.timers[0].ctx);
	report(0, SL_WIN_DELIVERED);
	CHECK_EQ_U(acked(), 2);
	put(30, 1);
	CHECK(sl_sink_window_front_begin(&win) == 0);
	put(20, 1);
	sl_sink_window_append(&win, &v, sizeof(v));
	sl_sink_window_close(&win, "t", true);	/* destroying: the timer left alone */
	CHECK(H.timers[0].armed);
	fresh("wfront", 8);		/* in front, in their order */
	CHECK_EQ_U(head(win.ss.sp), 20);
	sl_spool_ack(win.ss.sp, 1);
	CHECK_EQ_U(head(win.ss.sp), 7);
	sl_spool_ack(win.ss.sp, 1);
	CHECK_EQ_U(head(win.ss.sp), 30);
	sl_sink_window_close(&win, NULL, false);
}

int main(void)
{
	char cmd[256];

	snprintf(base, sizeof(base), "/tmp/test_sink_window.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -m 0700 '%s'", base, base);
	CHECK(system(cmd) == 0);
	test_out_of_order();
	test_hole();
	test_full_and_gone();
	test_busy();
	test_takes_tail();
	test_adopt();
	test_save_queue_and_ack();
	test_front_begin();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", base);
	return check_summary("test_sink_window");
}
