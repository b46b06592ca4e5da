/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lost_count: the events an overrun lost, from sequence gaps and the
 * kernel's drop count.  Hand-made cases, then a simulation of the kernel
 * (numbered events in batches, a receive queue of a few datagrams that
 * drops whole datagrams when full, a reader that sometimes finds it
 * empty) checking at every step that the count never exceeds what was
 * really lost, and that it is exact with one event per datagram and once
 * a last event reveals every gap.
 */
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "lost_count.h"

static void test_cases(void)
{
	struct sl_lost_count c = {0};

	/* an overrun at the end: 5 datagrams dropped, no gap seen */
	CHECK_EQ_U(sl_lost_drops(&c, 5, true), 5);
	/* a later event reveals 250 events: only the difference is added */
	CHECK_EQ_U(sl_lost_gap(&c, 250), 245);
	CHECK_EQ_U(c.lost, 250);
	/* the same drops read again add nothing */
	CHECK_EQ_U(sl_lost_drops(&c, 5, true), 0);
	/* a second overrun at the end, 3 datagrams: counted on top of the gap */
	CHECK_EQ_U(sl_lost_drops(&c, 8, true), 3);
	CHECK_EQ_U(c.lost, 253);
	/* its gap revealed later, 150 events: 253 -> 400 */
	CHECK_EQ_U(sl_lost_gap(&c, 150), 147);
	CHECK_EQ_U(c.lost, 400);

	/* without a cut after the gap, new drops cannot be told from old ones */
	c = (struct sl_lost_count){0};
	CHECK_EQ_U(sl_lost_drops(&c, 2, true), 2);
	CHECK_EQ_U(sl_lost_gap(&c, 100), 98);
	CHECK_EQ_U(sl_lost_drops(&c, 4, false), 0);
}

/* xorshift64: reproducible */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng % n;
}

#define QCAP 4	/* datagrams the receive queue holds */

struct sim {
	struct sl_lost_count c;
	uint64_t next_seq;	/* the kernel's next sequence number */
	uint64_t lost;		/* the truth: events in dropped datagrams */
	uint64_t drops;		/* the kernel's drop count */
	uint64_t q_first[QCAP], q_n[QCAP];	/* queued datagrams: first seq, events */
	unsigned q_len;
	bool congested;		/* dropping until a read empties the queue (NETLINK_S_CONGESTED) */
	uint64_t seq_expect;	/* the reader's next expected number */
};

static void kernel_send(struct sim *s, uint64_t n)
{
	if (s->q_len == QCAP || s->congested) {
		s->congested = true;
		s->drops++;
		s->lost += n;
	} else {
		s->q_first[s->q_len] = s->next_seq;
		s->q_n[s->q_len++] = n;
	}
	s->next_seq += n;
}

/* One read: a datagram, or an empty queue (then the drop count, a cut). */
static void reader_read(struct sim *s)
{
	if (!s->q_len) {
		sl_lost_drops(&s->c, s->drops, true);
		return;
	}
	if (s->q_first[0] != s->seq_expect)
		sl_lost_gap(&s->c, s->q_first[0] - s->seq_expect);
	s->seq_expect = s->q_first[0] + s->q_n[0];
	for (unsigned i = 1; i < s->q_len; i++) {
		s->q_first[i - 1] = s->q_first[i];
		s->q_n[i - 1] = s->q_n[i];
	}
	if (!--s->q_len)
		s->congested = false;	/* netlink_rcv_wake() */
}

static void simulate(unsigned max_batch, unsigned steps)
{
	struct sim s = {0};

	for (unsigned i = 0; i < steps && failures < CHECK_MAX_FAILURES; i++) {
		/* bursts of sends, stretches of reads */
		if (rnd(3) == 0)
			for (unsigned k = rnd(12); k; k--)
				kernel_send(&s, 1 + rnd(max_batch));
		else
			for (unsigned k = rnd(6); k; k--)
				reader_read(&s);
		CHECK(s.c.lost <= s.lost, "batch %u, step %u: counted %llu of %llu lost", max_batch,
		      i, (unsigned long long)s.c.lost, (unsigned long long)s.lost);
		if (max_batch == 1 && !s.q_len && s.c.drops == s.drops)
			CHECK(s.c.lost == s.lost, "one per datagram, step %u: counted %llu of %llu", i,
			      (unsigned long long)s.c.lost, (unsigned long long)s.lost);
	}
	/* the end: read empty, then one last event read reveals every gap */
	while (s.q_len)
		reader_read(&s);
	reader_read(&s);
	if (max_batch == 1)
		CHECK_EQ_U(s.c.lost, s.lost);
	kernel_send(&s, 1);
	reader_read(&s);
	CHECK_EQ_U(s.c.lost, s.lost);
	CHECK(s.drops > 10, "the simulation dropped only %llu datagrams", (unsigned long long)s.drops);
}

int main(void)
{
	test_cases();
	for (unsigned b = 1; b <= 8; b++)
		for (unsigned run = 0; run < 50; run++)
			simulate(b, 2000);
	return check_summary("test_lost_count");
}
