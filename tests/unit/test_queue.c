/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bounded batch queue in front of a threaded output (core/src/runtime/queue.c):
 * a copy keeps every value type, points text and packet fields into its
 * own arena (fields inside the packet inside the packet's copy) and
 * survives the source being overwritten; `drop` refuses a batch when the
 * bound is reached and says how many records, `block` makes the producer
 * wait until the consumer gives a batch back; order holds across ring
 * wraparound with control items coalesced; a batch whose bytes overflow
 * one arena continues in the next, and a record larger than a whole arena
 * is dropped and counted; two producer threads into one queue (MPSC)
 * keep each producer's order and lose nothing under `block`; only the
 * fields of the queue's copy mask are copied; a producer with a waiter
 * (the main thread's way) is called to wait and woken through room_fd by
 * a batch given back, and queue_abandon() (the stop deadline) ends a wait
 * and every later one, the records dropped and counted in stop_dropped,
 * and queue_take_queued() takes the queued batches and keeps control items.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "queue.h"

#include "check.h"

#define NF SL_F_WELL_KNOWN_COUNT
#define STRIDE ((sizeof(struct sl_record) + NF * sizeof(union sl_value) + 63) & ~(size_t)63)

static uint8_t types[NF] = {
#define X(id, name, type, doc) [SL_F_##id] = type,
	SL_WELL_KNOWN_FIELDS(X)
#undef X
};

static bool in_arena(const struct sl_batch *b, const void *p, size_t len)
{
	const uint8_t *q = p;

	return q >= b->arena.base && q + len <= b->arena.base + b->arena.size;
}

static struct sl_batch *seq_batch(unsigned n, uint64_t first)
{
	struct sl_batch *b = queue_batch_new(256, STRIDE, 4096);

	for (unsigned i = 0; i < n; i++)
		sl_set_u64(sl_batch_add(b), SL_F_SEQ_LOCAL, first + i);
	return b;
}

static void fidelity(void)
{
	static const uint8_t addr[16] = {0x20, 0x01, 0x0d, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	static const uint8_t v4[4] = {192, 0, 2, 7}, mac[6] = {2, 0, 0, 0xaa, 0xbb, 0xcc};
	uint8_t packet[64], prefix[] = "drop: ";
	struct sl_batch *src = queue_batch_new(4, STRIDE, 1024), *dst;
	struct bqueue *q = queue_new(4, false, 4, STRIDE, 4096, types, NF);
	struct sl_record *r, *c;
	struct bq_item it;
	char *text;

	for (unsigned i = 0; i < sizeof(packet); i++)
		packet[i] = (uint8_t)(i * 7);
	r = sl_batch_add(src);
	sl_set_bytes(r, SL_F_PACKET, packet, sizeof(packet));
	sl_set_bytes(r, SL_F_PAYLOAD, packet + 28, 36);	/* inside the packet */
	sl_set_bytes(r, SL_F_PREFIX, prefix, 6);		/* input-owned memory */
	text = sl_batch_alloc(src, 11);
	memcpy(text, "hello world", 11);
	sl_set_bytes(r, SL_F_TEXT, text, 11);			/* in the source arena */
	sl_set_bytes(r, SL_F_IP_OPTIONS, packet, 0);		/* empty */
	sl_set_u64(r, SL_F_MARK, 0xfeedfacecafebeefULL);
	sl_set_ip6(r, SL_F_SRC_ADDR, addr);
	sl_set_ip4(r, SL_F_DST_ADDR, v4);
	sl_set_mac(r, SL_F_MAC_SRC, mac);
	sl_set_time(r, SL_F_TIMESTAMP, 1700000000, 123456789);
	sl_set_u64(r, SL_F_NFLOG_GROUP, 11);			/* the last well-known */
	r->v[SL_F_SPORT].u64 = 99;				/* a value, not present */
	sl_set_u64(sl_batch_add(src), SL_F_SEQ_LOCAL, 2);	/* a second, small record */

	CHECK(queue_put(q, src) == 0);
	/* The source's memory is reused at once: the copy must not care. */
	memset(packet, 0xee, sizeof(packet));
	memset(prefix, 'x', 6);
	memset(src->arena.base, 'y', src->arena.size);
	memset(src->storage, 0x55, 2 * STRIDE);
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
	dst = it.b;
	CHECK(dst->count == 2);
	c = dst->rec[0];
	CHECK(sl_has(c, SL_F_PACKET) && c->v[SL_F_PACKET].bytes.len == 64);
	CHECK(in_arena(dst, c->v[SL_F_PACKET].bytes.ptr, 64));
	for (unsigned i = 0; i < 64; i++)
		if (c->v[SL_F_PACKET].bytes.ptr[i] != (uint8_t)(i * 7)) {
			CHECK(!"packet bytes copied");
			break;
		}
	CHECK(c->v[SL_F_PAYLOAD].bytes.ptr == c->v[SL_F_PACKET].bytes.ptr + 28);
	CHECK(c->v[SL_F_PAYLOAD].bytes.len == 36);
	CHECK(in_arena(dst, c->v[SL_F_PREFIX].bytes.ptr, 6));
	CHECK(memcmp(c->v[SL_F_PREFIX].bytes.ptr, "drop: ", 6) == 0);
	CHECK(in_arena(dst, c->v[SL_F_TEXT].bytes.ptr, 11));
	CHECK(memcmp(c->v[SL_F_TEXT].bytes.ptr, "hello world", 11) == 0);
	CHECK(sl_has(c, SL_F_IP_OPTIONS) && c->v[SL_F_IP_OPTIONS].bytes.len == 0);
	CHECK(in_arena(dst, c->v[SL_F_IP_OPTIONS].bytes.ptr, 0));
	CHECK(c->v[SL_F_MARK].u64 == 0xfeedfacecafebeefULL);
	CHECK(memcmp(c->v[SL_F_SRC_ADDR].addr, addr, 16) == 0);
	CHECK(sl_addr_is_v4(c->v[SL_F_DST_ADDR].addr) &&
	      memcmp(c->v[SL_F_DST_ADDR].addr + 12, v4, 4) == 0);
	CHECK(memcmp(c->v[SL_F_MAC_SRC].addr, mac, 6) == 0);
	CHECK(c->v[SL_F_TIMESTAMP].time.sec == 1700000000 &&
	      c->v[SL_F_TIMESTAMP].time.nsec == 123456789);
	CHECK(c->v[SL_F_NFLOG_GROUP].u64 == 11);
	CHECK(!sl_has(c, SL_F_SPORT) && !sl_has(c, SL_F_SEQ_LOCAL));
	/* 64 packet + 6 prefix + 11 text (+ alignment), payload not copied again */
	CHECK(dst->arena.used <= 64 + 8 + 16);
	CHECK(sl_has(dst->rec[1], SL_F_SEQ_LOCAL) && dst->rec[1]->v[SL_F_SEQ_LOCAL].u64 == 2);
	CHECK(!sl_has(dst->rec[1], SL_F_PACKET));
	queue_release(q, dst);
	CHECK(!queue_get(q, &it));
	free(src);
	queue_free(q);
}

static void mask_of(uint64_t *m, const sl_field *f, unsigned n)
{
	memset(m, 0, SL_PRESENCE_WORDS * sizeof(*m));
	for (unsigned i = 0; i < n; i++)
		m[f[i] >> 6] |= 1ull << (f[i] & 63);
}

static bool same_value(const struct sl_record *a, const struct sl_record *b, sl_field f)
{
	return memcmp(&a->v[f], &b->v[f], sizeof(union sl_value)) == 0;
}

/*
 * Only the fields of the consumer's mask are copied: the others are
 * absent in the copy and cost no arena; the copied values are
 * byte-identical; a field inside the packet is copied on its own when the
 * packet is not wanted, and pointed into the packet's copy when it is;
 * the text_safe mark survives (it points at the text's copy).
 */
static void only_needed(void)
{
	static const sl_field text_only[] = {SL_F_TEXT, SL_F_TEXT_SAFE, SL_F_TIMESTAMP, SL_F_SPORT,
					     SL_F_PAYLOAD};
	static const sl_field with_packet[] = {SL_F_PACKET, SL_F_PAYLOAD, SL_F_SPORT};
	static const uint8_t addr[16] = {0x20, 0x01, 0x0d, 0xb8, 9, 9};
	uint8_t packet[64], ifname[] = "eth0", payload[36];
	struct sl_batch *src = queue_batch_new(4, STRIDE, 1024);
	struct sl_batch *dst = queue_batch_new(4, STRIDE, 4096);
	struct bq_fields bf;
	struct sl_record *r, *c;
	unsigned next = 0;
	char *text;

	for (unsigned i = 0; i < sizeof(packet); i++)
		packet[i] = (uint8_t)(i * 5 + 1);
	memcpy(payload, packet + 28, sizeof(payload));
	r = sl_batch_add(src);
	sl_set_bytes(r, SL_F_PACKET, packet, sizeof(packet));
	sl_set_bytes(r, SL_F_PAYLOAD, packet + 28, 36);
	sl_set_bytes(r, SL_F_IFNAME_IN, ifname, 4);
	text = sl_batch_alloc(src, 11);
	memcpy(text, "hello queue", 11);
	sl_set_bytes(r, SL_F_TEXT, text, 11);
	sl_set_text_safe(r);
	sl_set_u64(r, SL_F_MARK, 7);
	sl_set_ip6(r, SL_F_SRC_ADDR, addr);
	sl_set_time(r, SL_F_TIMESTAMP, 1700000001, 42);
	sl_set_u64(r, SL_F_SPORT, 514);

	queue_fields_init(&bf, types, NF);
	mask_of(bf.copy, text_only, sizeof(text_only) / sizeof(text_only[0]));
	CHECK(queue_copy_records(dst, src, &next, &bf) && next == 1 && dst->count == 1);
	c = dst->rec[0];
	memset(packet, 0xee, sizeof(packet));	/* the input's buffer is reused */
	CHECK(!sl_has(c, SL_F_PACKET) && !sl_has(c, SL_F_IFNAME_IN) && !sl_has(c, SL_F_MARK) &&
	      !sl_has(c, SL_F_SRC_ADDR));
	CHECK(sl_has(c, SL_F_TEXT) && c->v[SL_F_TEXT].bytes.len == 11 &&
	      in_arena(dst, c->v[SL_F_TEXT].bytes.ptr, 11) &&
	      memcmp(c->v[SL_F_TEXT].bytes.ptr, "hello queue", 11) == 0);
	CHECK(sl_text_is_safe(c));
	CHECK(sl_has(c, SL_F_TIMESTAMP) && same_value(c, r, SL_F_TIMESTAMP));
	CHECK(sl_has(c, SL_F_SPORT) && same_value(c, r, SL_F_SPORT));
	CHECK(sl_has(c, SL_F_PAYLOAD) && c->v[SL_F_PAYLOAD].bytes.len == 36 &&
	      in_arena(dst, c->v[SL_F_PAYLOAD].bytes.ptr, 36) &&
	      memcmp(c->v[SL_F_PAYLOAD].bytes.ptr, payload, 36) == 0);
	/* 11 text + 36 payload (+ alignment): no packet, no interface name */
	CHECK(dst->arena.used <= 16 + 40);

	/* the packet wanted: the payload points into its copy */
	for (unsigned i = 0; i < sizeof(packet); i++)
		packet[i] = (uint8_t)(i * 5 + 1);
	dst->count = dst->filled = 0;
	dst->arena.used = 0;
	next = 0;
	mask_of(bf.copy, with_packet, sizeof(with_packet) / sizeof(with_packet[0]));
	CHECK(queue_copy_records(dst, src, &next, &bf) && dst->count == 1);
	c = dst->rec[0];
	memset(packet, 0xee, sizeof(packet));
	CHECK(!sl_has(c, SL_F_TEXT) && !sl_has(c, SL_F_TEXT_SAFE) && !sl_has(c, SL_F_TIMESTAMP));
	CHECK(sl_has(c, SL_F_PACKET) && in_arena(dst, c->v[SL_F_PACKET].bytes.ptr, 64));
	CHECK(c->v[SL_F_PAYLOAD].bytes.ptr == c->v[SL_F_PACKET].bytes.ptr + 28 &&
	      memcmp(c->v[SL_F_PAYLOAD].bytes.ptr, payload, 36) == 0);
	CHECK(dst->arena.used <= 64);
	free(src);
	free(dst);
}

static void drop_when_full(void)
{
	struct bqueue *q = queue_new(2, false, 256, STRIDE, 4096, types, NF);
	struct sl_batch *b = seq_batch(10, 0);
	struct bq_item it;
	unsigned depth;
	uint64_t high;

	CHECK(queue_put(q, b) == 0);
	CHECK(queue_put(q, b) == 0);
	CHECK(queue_put(q, b) == 10);	/* every batch queued: the whole batch dropped */
	queue_stats(q, &depth, &high);
	CHECK(depth == 2 && high == 2);
	CHECK(queue_put_ctl(q, BQ_REOPEN) == 0);	/* control items are never refused */
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
	queue_release(q, it.b);
	CHECK(queue_put(q, b) == 0);	/* room again */
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
	queue_release(q, it.b);
	CHECK(queue_get(q, &it) && it.kind == BQ_REOPEN);	/* in its place */
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
	queue_release(q, it.b);
	CHECK(!queue_get(q, &it));
	free(b);
	queue_free(q);
}

struct producer {
	struct bqueue *q;
	unsigned batches, per;
	uint64_t first;
	uint64_t dropped;
	bool done;	/* atomic */
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct sl_batch *b = queue_batch_new(256, STRIDE, 4096);

	for (unsigned k = 0; k < p->batches; k++) {
		b->count = b->filled = 0;
		for (unsigned i = 0; i < p->per; i++)
			sl_set_u64(sl_batch_add(b), SL_F_SEQ_LOCAL, p->first + (uint64_t)k * p->per + i);
		p->dropped += queue_put(p->q, b);
	}
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
	free(b);
	return NULL;
}

/*
 * queue_get, polled until it has an item or `secs` seconds (times
 * $SLUICE_TEST_TIME_FACTOR) passed: a thread on a busy machine may start
 * late, so a test waits for the event and never a fixed time.
 */
static bool get_within(struct bqueue *q, struct bq_item *it, unsigned secs)
{
	const char *f = getenv("SLUICE_TEST_TIME_FACTOR");
	long factor = f ? strtol(f, NULL, 10) : 1;
	long polls = (long)secs * (factor > 0 ? factor : 1) * 1000;

	while (!queue_get(q, it)) {
		if (polls-- <= 0)
			return false;
		usleep(1000);
	}
	return true;
}

static void block_when_full(void)
{
	struct bqueue *q = queue_new(1, true, 256, STRIDE, 4096, types, NF);
	struct producer p = {q, 2, 5, 100, 0, false};
	struct bq_item it;
	pthread_t t;

	pthread_create(&t, NULL, produce, &p);
	/* The first batch is queued (however late the producer runs)... */
	CHECK(get_within(q, &it, 30) && it.kind == BQ_BATCH && it.b->count == 5);
	/* ...the second waits for it to come back. */
	usleep(100 * 1000);
	CHECK(!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE));
	CHECK(it.b->rec[0]->v[SL_F_SEQ_LOCAL].u64 == 100);
	queue_release(q, it.b);
	pthread_join(t, NULL);
	CHECK(p.done && p.dropped == 0);
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH && it.b->rec[0]->v[SL_F_SEQ_LOCAL].u64 == 105);
	queue_release(q, it.b);
	queue_free(q);
}

static unsigned waits;	/* atomic: calls of the waiter */

static int poll_room(void *ctx, struct bqueue *q)
{
	struct pollfd pfd = {.fd = q->room_fd, .events = POLLIN};

	__atomic_fetch_add(&waits, 1, __ATOMIC_RELEASE);
	poll(&pfd, 1, -1);
	return 0;
}

static void *produce_waiter(void *arg)
{
	static const struct bq_waiter w = {poll_room, NULL};

	queue_set_waiter(&w);
	return produce(arg);
}

/* Until the waiter was called n times in all, or `secs` (times the factor). */
static bool waits_reach(unsigned n, unsigned secs)
{
	const char *f = getenv("SLUICE_TEST_TIME_FACTOR");
	long factor = f ? strtol(f, NULL, 10) : 1;
	long polls = (long)secs * (factor > 0 ? factor : 1) * 1000;

	while (__atomic_load_n(&waits, __ATOMIC_ACQUIRE) < n) {
		if (polls-- <= 0)
			return false;
		usleep(1000);
	}
	return true;
}

static void waiter_and_abandon(void)
{
	struct bqueue *q = queue_new(1, true, 256, STRIDE, 4096, types, NF);
	struct producer p = {q, 2, 5, 0, 0, false}, p2 = {q, 2, 5, 10, 0, false};
	struct bq_item it;
	pthread_t t;

	/* The second batch waits through the waiter; a batch given back wakes it. */
	pthread_create(&t, NULL, produce_waiter, &p);
	CHECK(waits_reach(1, 30));
	CHECK(!__atomic_load_n(&p.done, __ATOMIC_ACQUIRE));
	CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
	queue_release(q, it.b);
	pthread_join(t, NULL);
	CHECK(p.dropped == 0 && !queue_abandoned(q));
	/* Full again (the second batch): the stop deadline ends the wait, and the next. */
	pthread_create(&t, NULL, produce_waiter, &p2);
	CHECK(waits_reach(2, 30));
	queue_abandon(q);
	pthread_join(t, NULL);
	CHECK(p2.dropped == 10 && __atomic_load_n(&q->stop_dropped, __ATOMIC_RELAXED) == 10);
	CHECK(__atomic_load_n(&waits, __ATOMIC_RELAXED) == 2);	/* abandoned: no wait at all */
	CHECK(queue_abandoned(q));
	/* A stuck consumer: its batches taken (and counted), control items kept in order. */
	CHECK(queue_put_ctl(q, BQ_STOP) == 0);
	CHECK(queue_take_queued(q) == 5);
	CHECK(queue_get(q, &it) && it.kind == BQ_STOP);
	CHECK(!queue_get(q, &it));
	queue_free(q);
}

static void wraparound(void)
{
	struct bqueue *q = queue_new(3, false, 256, STRIDE, 4096, types, NF);
	uint64_t next_put = 0, next_get = 0;
	unsigned reopens = 0, got_reopens = 0;
	struct bq_item it;

	for (unsigned round = 0; round < 1000; round++) {
		unsigned puts = 1 + round % 3;

		for (unsigned k = 0; k < puts; k++) {
			struct sl_batch *b = seq_batch(1 + round % 7, next_put);

			CHECK(queue_put(q, b) == 0);
			next_put += b->count;
			free(b);
			if (round % 5 == 0) {
				/* twice in a row: the second coalesces into the first */
				queue_put_ctl(q, BQ_REOPEN);
				queue_put_ctl(q, BQ_REOPEN);
				reopens++;
			}
		}
		while (queue_get(q, &it)) {
			if (it.kind == BQ_REOPEN) {
				got_reopens++;
				continue;
			}
			for (unsigned i = 0; i < it.b->count; i++)
				if (it.b->rec[i]->v[SL_F_SEQ_LOCAL].u64 != next_get++) {
					CHECK(!"records in order across the wrap");
					round = 1000;
				}
			queue_release(q, it.b);
		}
	}
	CHECK(next_get == next_put && next_put > 3000);
	CHECK(got_reopens == reopens);
	queue_free(q);
}

static void split_and_oversize(void)
{
	/* Arena of 1000 bytes: 3 records of 400 bytes need two batches. */
	struct bqueue *q = queue_new(8, false, 8, STRIDE, 1000, types, NF);
	struct sl_batch *src = queue_batch_new(8, STRIDE, 8192);
	static uint8_t big[400], huge[2000];
	struct bq_item it;
	uint64_t seq = 0;

	for (int i = 0; i < 3; i++) {
		struct sl_record *r = sl_batch_add(src);

		memset(big, 'a' + i, sizeof(big));
		sl_set_bytes(r, SL_F_TEXT, memcpy(sl_batch_alloc(src, 400), big, 400), 400);
		sl_set_u64(r, SL_F_SEQ_LOCAL, seq++);
		if (i == 1) {
			/* a record bigger than a whole arena, between them */
			r = sl_batch_add(src);
			sl_set_bytes(r, SL_F_PACKET, huge, sizeof(huge));
			sl_set_u64(r, SL_F_SEQ_LOCAL, 999);
		}
	}
	CHECK(queue_put(q, src) == 1);
	seq = 0;
	for (int n = 0; n < 2; n++) {
		CHECK(queue_get(q, &it) && it.kind == BQ_BATCH);
		CHECK(it.b->count == (n == 0 ? 2u : 1u));
		for (unsigned i = 0; i < it.b->count; i++) {
			const struct sl_record *r = it.b->rec[i];

			CHECK(r->v[SL_F_SEQ_LOCAL].u64 == seq);
			CHECK(r->v[SL_F_TEXT].bytes.len == 400 && r->v[SL_F_TEXT].bytes.ptr[399] == 'a' + seq);
			CHECK(in_arena(it.b, r->v[SL_F_TEXT].bytes.ptr, 400));
			seq++;
		}
		queue_release(q, it.b);
	}
	CHECK(!queue_get(q, &it));
	free(src);
	queue_free(q);
}

static void two_producers(void)
{
	struct bqueue *q = queue_new(4, true, 256, STRIDE, 4096, types, NF);
	struct producer p[2] = {{q, 3000, 7, 0, 0, false}, {q, 3000, 7, 1u << 30, 0, false}};
	uint64_t next[2] = {0, 1u << 30}, total = 0;
	pthread_t t[2];
	struct bq_item it;

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, produce, &p[i]);
	while (total < 2 * 3000 * 7) {
		if (!queue_get(q, &it)) {
			sched_yield();
			continue;
		}
		for (unsigned i = 0; i < it.b->count; i++) {
			uint64_t v = it.b->rec[i]->v[SL_F_SEQ_LOCAL].u64;
			int who = v >= (1u << 30);

			if (v != next[who]++) {
				CHECK(!"each producer's records in order");
				total = UINT64_MAX - 1;
				break;
			}
			total++;
		}
		queue_release(q, it.b);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(total == 2 * 3000 * 7 && p[0].dropped == 0 && p[1].dropped == 0);
	queue_free(q);
}

int main(void)
{
	fidelity();
	only_needed();
	drop_when_full();
	block_when_full();
	wraparound();
	split_and_oversize();
	two_producers();
	waiter_and_abandon();
	printf("test_queue: %d checks, %d failures\n", checks, failures);
	return failures ? 1 : 0;
}
