/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's disk spool (spool_dir; engine spool.h): what the
 * queue cannot take is appended as wire bytes, and everything after it
 * while the spool holds anything (order); once the queue, always older, is
 * sent, the spool is sent oldest first and acknowledged to the spool when
 * the transport counts it delivered:
 *   tcp   written to the socket;
 *   tls   the TLS record holding it written to the socket;
 *   relp  the receiver's acknowledgement proven (relp_conn.h: librelp's
 *         window; the last RELP_WINDOW by closing the session, see
 *         relp_spool_sync).
 * Everything runs on the output's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "spool.h"
#include "relp_conn.h"
#include "tls_stream.h"
#include "syslog_out.h"

void syslog_spool_log(void *ctx, int level, const char *msg)
{
	struct syslog_state *st = ctx;

	st->host->log(st->inst, level, "%s", msg);
}

/* The spool's counts since the last call into the counters. */
void syslog_spool_publish(struct syslog_state *st)
{
	sl_spool_counters_publish(&st->spool_ctr, st->spool, st->host, st->inst);
}

/* Append one framed message (digits, text, LF) to the spool. */
void syslog_spool_put(struct syslog_state *st, const char *digits, size_t dlen, size_t n, bool lf)
{
	memcpy(st->sbuf, digits, dlen);
	memcpy(st->sbuf + dlen, st->msg, n);
	if (lf)
		st->sbuf[dlen + n] = '\n';
	sl_spool_append(st->spool, st->sbuf, dlen + n + lf);	/* a refusal is counted there */
}

/* Every queued message appended to the spool, oldest first; how many. */
static unsigned queue_to_spool(struct syslog_state *st)
{
	unsigned n = 0;

	while (st->qcount) {
		size_t off = syslog_q_fix(st, st->qhead);

		sl_spool_append(st->spool, st->q + off + 4, syslog_q_len(st, off));
		syslog_q_pop(st);
		n++;
	}
	return n;
}

/*
 * A reload's new instance gets the spool only when the old one has
 * stopped: what it queued meanwhile is newer than all of that spool, so it
 * goes behind it.  Not while a message is half written: that one must be
 * finished first (the next call moves the rest).
 */
void syslog_spool_adopt(struct syslog_state *st)
{
	unsigned moved;

	if (st->head_sent || !sl_spool_ready(st->spool))
		return;
	st->spool_adopted = true;
	if (!sl_spool_pending(st->spool))
		return;
	moved = queue_to_spool(st);
	sl_spool_flush(st->spool);
	syslog_spool_publish(st);
	if (moved)
		st->host->log(st->inst, SL_LOG_NOTICE,
			      "took over the spool: %u queued messages appended behind it", moved);
}

/* TCP, the queue empty: send the spool's records, oldest first. */
void syslog_spool_drain_tcp(struct syslog_state *st)
{
	unsigned n;

	while ((n = sl_spool_peekv(st->spool, st->iov, BATCH_MSGS))) {
		struct msghdr mh = { .msg_iov = st->iov, .msg_iovlen = n };
		unsigned done;
		ssize_t sent;
		size_t part;

		st->iov[0].iov_base = (char *)st->iov[0].iov_base + st->spool_head_sent;
		st->iov[0].iov_len -= st->spool_head_sent;
		sent = sendmsg(st->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
				syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
			else
				syslog_lost(st, "cannot send to", err);
			break;
		}
		done = syslog_iov_done(st, n, (size_t)sent, true, &part);
		if (done)
			st->spool_head_sent = 0;
		st->spool_head_sent += part;
		sl_spool_ack(st->spool, done);
	}
	syslog_spool_publish(st);
}

/* At stop: the queue (older than all of the spool) goes in front of it. */
void syslog_spool_save_queue(struct syslog_state *st)
{
	unsigned saved;

	if (!st->qcount || sl_spool_front_begin(st->spool) < 0)
		return;
	st->head_sent = 0;
	saved = queue_to_spool(st);
	sl_spool_front_end(st->spool);
	syslog_spool_publish(st);
	st->host->log(st->inst, SL_LOG_NOTICE, "%u queued messages for %s kept in the spool at shutdown",
		      saved, st->where);
}

/* The spool's first n records are delivered (they may span segments). */
void syslog_spool_ack_n(struct syslog_state *st, uint64_t n)
{
	while (n) {
		unsigned k = sl_spool_peekv(st->spool, st->iov, n < BATCH_MSGS ? (unsigned)n : BATCH_MSGS);

		if (!k)
			break;
		sl_spool_ack(st->spool, k);
		n -= k;
	}
}

/*
 * TLS, the queue empty: the spool's records go into TLS records, oldest
 * first, and are acknowledged once the TLS record holding them is written
 * to the socket (spool_taken waits for that in drain_tls).  Like tcp's,
 * those its kernel then held when the receiver died are possibly_lost.
 */
void syslog_spool_drain_tls(struct syslog_state *st)
{
	char err[256];
	unsigned n;

	while (!tls_conn_pending(st->tls) && (n = sl_spool_peekv(st->spool, st->iov, BATCH_MSGS))) {
		unsigned done;
		ssize_t taken;
		size_t part;

		st->iov[0].iov_base = (char *)st->iov[0].iov_base + st->spool_head_sent;
		st->iov[0].iov_len -= st->spool_head_sent;
		taken = tls_conn_writev(st->tls, st->iov, n, err, sizeof(err));
		if (taken == TLS_FAILED) {
			syslog_tls_lost(st, err);
			break;
		}
		if (taken == 0)
			break;
		done = syslog_iov_done(st, n, (size_t)taken, false, &part);
		if (done)
			st->spool_head_sent = 0;
		st->spool_head_sent += part;
		if (tls_conn_pending(st->tls)) {
			st->spool_taken = st->tls_rec_msgs = done;
			break;
		}
		syslog_tls_written(st, done);
		sl_spool_ack(st->spool, done);
	}
	syslog_spool_publish(st);
}

/* RELP: acknowledge to the spool what librelp's window proved (relp_conn.h). */
static void relp_spool_settle(struct syslog_state *st)
{
	uint64_t acked = relp_conn_acked(st->relp), k;

	if (!st->rs_handed || acked < st->rs_first)
		return;
	k = acked - st->rs_first + 1;
	if (k > st->rs_handed)
		k = st->rs_handed;
	syslog_spool_ack_n(st, k);
	st->rs_first += k;
	st->rs_handed -= (unsigned)k;
}

/*
 * RELP: everything reachable in the spool is with librelp, but the last
 * RELP_WINDOW are proven acknowledged only by later sends, and while the
 * spool holds them newer messages go behind them into the spool: nothing
 * would be sent.  Closing the session proves them (the close is answered
 * after every message before it); then a new session.  A close that
 * failed proves nothing: the spool's records are sent again from the
 * spool (duplicates, which RELP allows), and queued messages sent before
 * them and not proven are counted as possibly lost.  Once per spool
 * segment and once when the spool has caught up with the input.
 */
static bool relp_spool_sync(struct syslog_state *st)
{
	uint64_t before = st->rs_first - 1, acked = relp_conn_acked(st->relp);

	if (relp_conn_close(st->relp)) {
		syslog_spool_ack_n(st, st->rs_handed);
	} else {
		uint64_t n = acked < before ? before - acked : 0;

		st->host->log(st->inst, SL_LOG_WARNING,
			      "%s: the RELP session's close was not answered: %u spooled messages will "
			      "be sent again, %llu queued ones possibly lost", st->where, st->rs_handed,
			      (unsigned long long)n);
		if (n) {
			st->host->counter_add(st->inst, st->c_possibly_lost, n);
			st->host->dropped_add(st->inst, n);
		}
	}
	st->relp = NULL;
	st->rs_handed = 0;
	syslog_spool_publish(st);
	return syslog_relp_open(st) == 0;
}

/* RELP, the queue empty: hand the spool's records to librelp, oldest first. */
void syslog_spool_drain_relp(struct syslog_state *st)
{
	char err[512];

	for (;;) {
		unsigned i, n = 0;

		relp_spool_settle(st);
		if (st->rs_handed < RELP_SPOOL_IOV - BATCH_MSGS)
			n = sl_spool_peekv(st->spool, st->rs_iov, st->rs_handed + BATCH_MSGS);
		if (n <= st->rs_handed) {	/* nothing more within reach */
			if (!st->rs_handed || st->drain_until || !relp_spool_sync(st))
				break;
			continue;
		}
		for (i = st->rs_handed; i < n; i++) {
			if (relp_conn_send(st->relp, st->rs_iov[i].iov_base, st->rs_iov[i].iov_len, err,
					   sizeof(err)) < 0) {
				st->host->log(st->inst, SL_LOG_DEBUG, "%s: %s", st->where, err);
				syslog_lost(st, "RELP session broken with", ECONNRESET);
				syslog_spool_publish(st);
				return;
			}
			if (!st->rs_handed++)
				st->rs_first = relp_conn_sent(st->relp);
		}
		if (st->drain_until && sl_mono_ms() >= st->drain_until)
			break;
	}
	syslog_spool_publish(st);
}
