/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's queue (syslog_out.h): framed messages in a ring of
 * [u32 len][bytes][pad to 4], a WRAP_MARK where the tail wrapped to the
 * start; qhead == qtail only when it is empty.  No I/O, no allocation.
 */
#include <string.h>

#include "syslog_out.h"

static size_t entry_size(uint32_t len)
{
	return 4 + (((size_t)len + 3) & ~(size_t)3);
}

/* Room for a message of len bytes at the tail, or NULL. */
uint8_t *syslog_q_reserve(struct syslog_state *st, uint32_t len)
{
	size_t need = entry_size(len);

	if (!st->qcount)
		st->qhead = st->qtail = 0;
	if (st->qtail >= st->qhead) {
		if (st->qcap - st->qtail >= need)
			return st->q + st->qtail;
		if (need < st->qhead) {	/* wrap; keep tail != head */
			if (st->qcap - st->qtail >= 4) {
				uint32_t mark = WRAP_MARK;

				memcpy(st->q + st->qtail, &mark, 4);
			}
			st->qtail = 0;
			return st->q;
		}
		return NULL;
	}
	if (st->qhead - st->qtail > need)
		return st->q + st->qtail;
	return NULL;
}

void syslog_q_commit(struct syslog_state *st, uint32_t len)
{
	memcpy(st->q + st->qtail, &len, 4);
	st->qtail += entry_size(len);
	st->qcount++;
}

/* Offset of the i-th entry after `off`, following a wrap. */
size_t syslog_q_fix(const struct syslog_state *st, size_t off)
{
	uint32_t len;

	if (st->qcap - off < 4)
		return 0;
	memcpy(&len, st->q + off, 4);
	return len == WRAP_MARK ? 0 : off;
}

uint32_t syslog_q_len(const struct syslog_state *st, size_t off)
{
	uint32_t len;

	memcpy(&len, st->q + off, 4);
	return len;
}

void syslog_q_pop(struct syslog_state *st)
{
	st->qhead = syslog_q_fix(st, st->qhead);
	st->qhead += entry_size(syslog_q_len(st, st->qhead));
	st->head_sent = 0;
	if (--st->qcount == 0)
		st->qhead = st->qtail = 0;
	else
		st->qhead = syslog_q_fix(st, st->qhead);
}

/* Up to max queued messages as iovecs (the head one from head_sent on). */
unsigned syslog_q_gather(struct syslog_state *st, unsigned max)
{
	size_t off = st->qhead;
	unsigned i, n = st->qcount < max ? st->qcount : max;

	for (i = 0; i < n; i++) {
		uint32_t len;

		off = syslog_q_fix(st, off);
		len = syslog_q_len(st, off);
		st->iov[i].iov_base = st->q + off + 4;
		st->iov[i].iov_len = len;
		if (i == 0 && st->head_sent) {
			st->iov[i].iov_base = (char *)st->iov[i].iov_base + st->head_sent;
			st->iov[i].iov_len -= st->head_sent;
		}
		off += entry_size(len);
	}
	return n;
}
