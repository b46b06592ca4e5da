/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tail sessions' tap points (core/src/runtime/tap.c) with a fake
 * formatter: two threads feed two watched instances while the main
 * thread takes the lines, as the control socket does; every matching
 * record is either a line or counted lost (never both, never neither),
 * each thread's lines keep their order, the records the formatter does
 * not match and those of an unwatched instance never appear, a full
 * buffer loses and counts instead of waiting, without formatting what it
 * loses; tap_end_all() stops the
 * feed and tap_take() says so; a fifth session is refused (EBUSY) and its
 * formatter closed; tap_close() closes it too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "tail_module.h"
#include "tap.h"

#include "check.h"

#define NF SL_F_WELL_KNOWN_COUNT
#define PER_THREAD 200000
#define BATCH 64

static int closed;
static uint64_t tried;	/* matching records format() was given room for */

/* Even SEQ_LOCAL matches: "T:N"; the thread is in SEQ_GLOBAL. */
static long fake_format(struct sl_tail_fmt *t, const struct sl_record *r, char *buf, size_t cap)
{
	char tmp[64];
	int n;

	if (r->v[SL_F_SEQ_LOCAL].u64 % 2)
		return 0;
	if (cap)
		__atomic_fetch_add(&tried, 1, __ATOMIC_RELAXED);
	n = snprintf(tmp, sizeof(tmp), "%llu:%llu", (unsigned long long)r->v[SL_F_SEQ_GLOBAL].u64,
		     (unsigned long long)r->v[SL_F_SEQ_LOCAL].u64);
	if ((size_t)n > cap)
		return -1;
	memcpy(buf, tmp, (size_t)n);
	return n;
}

static void fake_close(struct sl_tail_fmt *t)
{
	__atomic_fetch_add(&closed, 1, __ATOMIC_RELAXED);
}

static const struct sl_tail_module fake = {SL_TAIL_IFACE_VERSION, sizeof(struct sl_tail_module),
					   NULL, fake_format, fake_close};

struct feeder {
	struct sl_instance *inst;
	unsigned id;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	size_t stride = sizeof(struct sl_record) + NF * sizeof(union sl_value);
	uint8_t *storage = calloc(BATCH, stride);
	struct sl_record *rec[BATCH];
	struct sl_batch b = {.count = BATCH, .capacity = BATCH, .stride = (unsigned)stride,
			     .rec = rec, .storage = storage};

	for (unsigned i = 0; i < BATCH; i++)
		rec[i] = (struct sl_record *)(storage + i * stride);
	for (uint64_t seq = 0; seq < PER_THREAD; seq += BATCH) {
		for (unsigned i = 0; i < BATCH; i++) {
			sl_set_u64(rec[i], SL_F_SEQ_LOCAL, seq + i);
			sl_set_u64(rec[i], SL_F_SEQ_GLOBAL, f->id);
		}
		if (__atomic_load_n(&f->inst->taps, __ATOMIC_RELAXED))
			tap_batch(f->inst, &b);
	}
	free(storage);
	return NULL;
}

/* Check the lines of buf[0..len): order per thread, only matching records.  How many. */
static uint64_t check_lines(const char *buf, size_t len, long long last[2])
{
	uint64_t n = 0;
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		unsigned long long t, seq;

		CHECK(nl && p[0] == 'r' && p[1] == ' ', "a line without its frame");
		if (!nl || sscanf(p + 2, "%llu:%llu", &t, &seq) != 2 || t > 1) {
			CHECK(0, "unreadable line");
			return n;
		}
		CHECK(seq % 2 == 0, "a record the formatter did not match: %llu", seq);
		CHECK((long long)seq > last[t], "thread %llu: %llu after %lld", t, seq, last[t]);
		last[t] = (long long)seq;
		n++;
		p = nl + 1;
	}
	return n;
}

static void run_sessions(void)
{
	struct sl_instance a = {0}, b = {0}, other = {0};
	struct sl_instance *watch[] = {&a, &b};
	struct feeder f[3] = {{&a, 0}, {&b, 1}, {&other, 0}};
	pthread_t th[3];
	char *out = malloc(TAP_BUF);
	long long last[2] = {-1, -1};
	uint64_t lines = 0, lost = 0;
	bool ended = false;
	int id = tap_open(&fake, NULL, watch, 2);

	CHECK(id >= 0 && a.taps && b.taps && !other.taps, "id %d", id);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, feed, &f[i]);
	for (int rounds = 0; rounds < 200; rounds++)
		lines += check_lines(out, tap_take(id, out, TAP_BUF, &lost, &ended), last);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	lines += check_lines(out, tap_take(id, out, TAP_BUF, &lost, &ended), last);
	CHECK_EQ_U(lines + lost, (uint64_t)PER_THREAD);	/* half of each thread's matches */
	CHECK(!ended);
	printf("two threads: %llu lines, %llu lost\n", (unsigned long long)lines,
	       (unsigned long long)lost);

	/* Nobody takes: the buffer fills (100,000 lines of 10+ bytes), the rest is lost. */
	{
		uint64_t before = lost;
		size_t got;

		last[0] = -1;
		tried = 0;
		feed(&f[0]);
		got = tap_take(id, out, TAP_BUF, &lost, &ended);
		lines = check_lines(out, got, last);
		CHECK_EQ_U(lines + lost - before, (uint64_t)PER_THREAD / 2);
		/* full: the next line (at most 10 bytes) did not fit */
		CHECK(lost > before && got <= TAP_BUF && got > TAP_BUF - 10, "%zu bytes, %llu lost",
		      got, (unsigned long long)(lost - before));
		/* once full, the lost ones were matched, not formatted */
		CHECK_EQ_U(tried, lines + 1);
	}

	tap_end_all();
	CHECK(!a.taps && !b.taps);
	feed(&f[0]);
	CHECK_EQ_U(tap_take(id, out, TAP_BUF, &lost, &ended), 0);
	CHECK(ended);
	tap_close(id);
	CHECK_EQ_I(closed, 1);
	free(out);
}

static void run_busy(void)
{
	struct sl_instance a = {0};
	struct sl_instance *watch[] = {&a};
	int ids[TAP_MAX];

	closed = 0;
	for (int i = 0; i < TAP_MAX; i++)
		CHECK((ids[i] = tap_open(&fake, NULL, watch, 1)) >= 0);
	errno = 0;
	CHECK(tap_open(&fake, NULL, watch, 1) < 0 && errno == EBUSY);
	CHECK_EQ_I(closed, 1);
	CHECK_EQ_U(a.taps, (1u << TAP_MAX) - 1);
	for (int i = 0; i < TAP_MAX; i++)
		tap_close(ids[i]);
	CHECK_EQ_U(a.taps, 0);
	CHECK_EQ_I(closed, 1 + TAP_MAX);
}

int main(void)
{
	run_sessions();
	run_busy();
	return check_summary("test_tap");
}
