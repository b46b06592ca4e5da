/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfct's table of live connections (plugins/common/ct_table.c): insert,
 * find and remove under load across several rehashes, keys that collide
 * (the hash reads only the id and the ports: entries that differ only in
 * address, protocol or zone share a chain), the free list, the size limit,
 * what a merge keeps, and sweeps.  The oracle is a plain array of the keys
 * that must be in the table.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "ct_table.h"

static struct sl_ct_info key(uint32_t id, uint16_t sport, uint16_t dport, uint8_t src, uint16_t zone)
{
	struct sl_ct_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.have = SL_CI_ID | SL_CI_PORTS | SL_CI_ZONE;
	ci.id = id;
	ci.family = 2;
	ci.proto = 6;
	ci.osport = sport;
	ci.odport = dport;
	ci.zone = zone;
	ci.osrc[10] = ci.osrc[11] = 0xff;
	ci.osrc[12] = 10;
	ci.osrc[15] = src;
	ci.odst[10] = ci.odst[11] = 0xff;
	ci.odst[12] = 192;
	ci.odst[15] = 1;
	return ci;
}

/* Count the entries reachable from the buckets (what sweeps and finds see). */
static bool count_entry(struct sl_ct_entry *e, void *arg)
{
	(void)e;
	++*(uint32_t *)arg;
	return false;
}

static uint32_t reachable(struct sl_ct_table *t)
{
	uint32_t n = 0;

	sl_ct_sweep(t, count_entry, &n);
	return n;
}

/* 200 000 connections in, every third out, all looked up, the rest out. */
static void load(void)
{
	enum { N = 200000 };
	static struct sl_ct_info keys[N];
	struct sl_ct_table t;
	uint32_t nbuckets_seen = 0, rehashes = 0, in = 0;

	sl_ct_table_init(&t, N);
	for (uint32_t i = 0; i < N; i++) {
		keys[i] = key(i * 2654435761u, (uint16_t)(i * 7), 443, (uint8_t)i, 0);
		CHECK(sl_ct_find(&t, &keys[i], NULL) == NULL, "key %u found before insert", i);
		struct sl_ct_entry *e = sl_ct_insert(&t, &keys[i], 1);

		CHECK(e != NULL, "insert %u failed", i);
		if (!e)
			return;
		CHECK_EQ_U(e->state, SL_CT_LIVE);
		if (t.nbuckets != nbuckets_seen) {
			rehashes++;
			nbuckets_seen = t.nbuckets;
		}
		CHECK(t.nbuckets >= t.live, "%u buckets for %u entries", t.nbuckets, t.live);
	}
	CHECK_EQ_U(t.live, N);
	CHECK(rehashes >= 6, "only %u table sizes for %u entries", rehashes, N);
	CHECK_EQ_U(reachable(&t), N);
	for (uint32_t i = 0; i < N; i++) {
		struct sl_ct_entry *e = sl_ct_find(&t, &keys[i], NULL);

		CHECK(e && e->ci.id == keys[i].id, "key %u lost after the rehashes", i);
	}
	for (uint32_t i = 0; i < N; i += 3) {
		uint32_t *link;
		struct sl_ct_entry *e = sl_ct_find(&t, &keys[i], &link);

		CHECK(e != NULL, "key %u not found for removal", i);
		if (e)
			sl_ct_remove(&t, e, link);
	}
	for (uint32_t i = 0; i < N; i++) {
		bool want = i % 3 != 0;

		in += want;
		CHECK((sl_ct_find(&t, &keys[i], NULL) != NULL) == want, "key %u: found %d, want %d", i,
		      sl_ct_find(&t, &keys[i], NULL) != NULL, want);
	}
	CHECK_EQ_U(t.live, in);
	CHECK_EQ_U(reachable(&t), in);
	/* freed entries are reused before the array grows */
	{
		uint32_t used = t.used;

		for (uint32_t i = 0; i < N; i += 3)
			CHECK(sl_ct_insert(&t, &keys[i], 2) != NULL, "reinsert %u", i);
		CHECK_EQ_U(t.used, used);
		CHECK_EQ_U(t.live, N);
	}
	sl_ct_table_free(&t);
	CHECK_EQ_U(t.live, 0);
	CHECK(sl_ct_find(&t, &keys[0], NULL) == NULL);
}

/* Same id and ports, so the same chain: the rest of the key tells them apart. */
static void collisions(void)
{
	struct sl_ct_table t;
	struct sl_ct_info k[5];
	struct sl_ct_entry *e;
	uint32_t *link;

	k[0] = key(7, 1000, 53, 1, 0);
	k[1] = key(7, 1000, 53, 2, 0);	/* other source */
	k[2] = key(7, 1000, 53, 1, 3);	/* other zone */
	k[3] = k[0];
	k[3].proto = 17;		/* other protocol */
	k[4] = k[0];
	k[4].odst[15] = 9;		/* other destination */
	sl_ct_table_init(&t, 1024);
	for (int i = 0; i < 5; i++) {
		e = sl_ct_insert(&t, &k[i], 0);
		CHECK(e != NULL);
		if (e)
			e->ci.mark = 100 + (uint32_t)i;
	}
	for (int i = 0; i < 5; i++) {
		e = sl_ct_find(&t, &k[i], NULL);
		CHECK(e && e->ci.mark == 100u + (uint32_t)i, "key %d found as mark %u", i,
		      e ? e->ci.mark : 0);
	}
	/* remove from the middle of the chain, then its head */
	e = sl_ct_find(&t, &k[2], &link);
	sl_ct_remove(&t, e, link);
	e = sl_ct_find(&t, &k[4], &link);
	sl_ct_remove(&t, e, link);
	CHECK(sl_ct_find(&t, &k[2], NULL) == NULL);
	CHECK(sl_ct_find(&t, &k[4], NULL) == NULL);
	for (int i = 0; i < 4; i++)
		if (i != 2)
			CHECK(sl_ct_find(&t, &k[i], NULL) != NULL, "key %d lost", i);
	CHECK_EQ_U(t.live, 3);
	CHECK_EQ_U(reachable(&t), 3);
	sl_ct_table_free(&t);
}

/* The limit, and the per-message timeout that is never kept. */
static void limit_and_timeout(void)
{
	struct sl_ct_table t;
	struct sl_ct_info ci;
	struct sl_ct_entry *e;

	sl_ct_table_init(&t, 3);
	for (uint32_t i = 0; i < 3; i++) {
		ci = key(i, 1, 2, 3, 0);
		ci.have |= SL_CI_TIMEOUT;
		ci.timeout = 120;
		e = sl_ct_insert(&t, &ci, 5);
		CHECK(e != NULL);
		CHECK(e && !(e->ci.have & SL_CI_TIMEOUT), "a timeout was tracked");
		CHECK(e && e->gen == 5);
	}
	CHECK(sl_ct_table_full(&t));
	ci = key(99, 1, 2, 3, 0);
	CHECK(sl_ct_insert(&t, &ci, 5) == NULL, "a fourth entry in a table of three");
	CHECK_EQ_U(t.live, 3);
	sl_ct_table_free(&t);
}

/* Newer over older, only what the newer message carried. */
static void merge(void)
{
	struct sl_ct_info old = key(1, 2, 3, 4, 0), upd;

	old.have |= SL_CI_OCOUNT | SL_CI_MARK | SL_CI_TCPSTATE | SL_CI_START;
	old.opkts = 10;
	old.obytes = 1000;
	old.mark = 5;
	old.tcp_state = 3;
	old.start_ns = 111;
	memset(&upd, 0, sizeof(upd));
	upd.have = SL_CI_RCOUNT | SL_CI_TCPSTATE | SL_CI_STOP | SL_CI_TIMEOUT | SL_CI_REPLY;
	upd.rpkts = 7;
	upd.rbytes = 700;
	upd.tcp_state = 7;
	upd.stop_ns = 999;
	upd.timeout = 30;
	upd.rsrc[15] = 8;
	upd.opkts = 12345;	/* not carried (no SL_CI_OCOUNT): must not be taken */
	sl_ct_merge(&old, &upd);
	CHECK_EQ_U(old.opkts, 10);
	CHECK_EQ_U(old.obytes, 1000);
	CHECK_EQ_U(old.rpkts, 7);
	CHECK_EQ_U(old.rbytes, 700);
	CHECK_EQ_U(old.tcp_state, 7);
	CHECK_EQ_U(old.mark, 5);
	CHECK_EQ_U(old.start_ns, 111);
	CHECK_EQ_U(old.rsrc[15], 8);
	CHECK_EQ_U(old.id, 1);
	CHECK_EQ_U(old.osport, 2);
	CHECK(old.have & SL_CI_RCOUNT);
	CHECK(old.have & SL_CI_OCOUNT);
	CHECK(!(old.have & SL_CI_STOP), "stop time is per event, never tracked");
	CHECK(!(old.have & SL_CI_TIMEOUT), "timeout is per message, never tracked");
}

static bool drop_odd_mark(struct sl_ct_entry *e, void *arg)
{
	++*(int *)arg;
	return e->ci.mark & 1;
}

/* A sweep sees every entry once and removes what it is told to, chains intact. */
static void sweep(void)
{
	enum { N = 10000 };
	struct sl_ct_table t;
	int seen = 0;

	sl_ct_table_init(&t, N);
	for (uint32_t i = 0; i < N; i++) {
		/* ids repeat every 16: many entries per chain */
		struct sl_ct_info ci = key(i % 16, 5, 6, (uint8_t)(i / 16), (uint16_t)(i / 4096));
		struct sl_ct_entry *e = sl_ct_insert(&t, &ci, 0);

		CHECK(e != NULL);
		if (e)
			e->ci.mark = i;
	}
	sl_ct_sweep(&t, drop_odd_mark, &seen);
	CHECK_EQ_I(seen, N);
	CHECK_EQ_U(t.live, N / 2);
	for (uint32_t i = 0; i < N; i++) {
		struct sl_ct_info ci = key(i % 16, 5, 6, (uint8_t)(i / 16), (uint16_t)(i / 4096));
		struct sl_ct_entry *e = sl_ct_find(&t, &ci, NULL);

		CHECK((e != NULL) == !(i & 1), "entry %u after the sweep: %s", i, e ? "kept" : "gone");
	}
	sl_ct_table_free(&t);
}

int main(void)
{
	load();
	collisions();
	limit_and_timeout();
	merge();
	sweep();
	return check_summary("ct_table");
}
