/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's sending (contract in syslog_out.h): the queue
 * (syslog_queue.c) written without blocking, many messages per syscall:
 * sendmmsg for datagrams (one probe message first after a UDP connect,
 * a paced backlog), sendmsg with an iovec for TCP, TLS records through
 * tls_stream.h, librelp's window for RELP.  Once the queue is empty the
 * spool (sink_spool.h) is sent, and acknowledged per transport.  A
 * failure hands the connection to syslog_lost() (syslog_conn.c).
 * Everything runs on the output's thread.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "relp_conn.h"
#include "tls_stream.h"
#include "syslog_out.h"

unsigned syslog_iov_done(struct syslog_state *st, unsigned n, size_t bytes, bool tcp, size_t *part)
{
	unsigned done = 0;

	*part = 0;
	for (unsigned i = 0; i < n && bytes > 0; i++) {
		if (bytes >= st->iov[i].iov_len) {
			bytes -= st->iov[i].iov_len;
			if (tcp) {
				st->written += (uint32_t)st->iov[i].iov_len;
				st->ends[st->ends_n++ % INFLIGHT_MSGS] = st->written;
			}
			done++;
		} else {
			if (tcp)
				st->written += (uint32_t)bytes;
			*part = bytes;
			bytes = 0;
		}
	}
	return done;
}

/* ---- the spool (spool_dir), once the queue is sent ---- */

unsigned syslog_q_to_spool(void *ctx)
{
	struct syslog_state *st = ctx;
	unsigned n = 0;

	st->head_sent = 0;	/* whole messages go to the spool */
	while (st->qcount) {
		size_t off = syslog_q_fix(st, st->qhead);

		sl_sink_spool_append(&st->ss, st->q + off + 4, syslog_q_len(st, off));
		syslog_q_pop(st);
		n++;
	}
	return n;
}

void syslog_adopt_spool(struct syslog_state *st)
{
	if (st->ss.sp && !st->ss.adopted && !st->head_sent)
		sl_sink_spool_adopt(&st->ss, syslog_q_to_spool, st);
}

/*
 * When a spooled message counts as delivered, so acknowledged to the
 * spool (sl_sink_spool_ack):
 *   tcp   written to the socket;
 *   tls   the TLS record holding it written to the socket;
 *   relp  the receiver's acknowledgement proven (relp_conn.h: librelp's
 *         window; the last SL_RELP_WINDOW by closing the session, see
 *         relp_spool_sync).
 */

/*
 * What the failed send (errno) means, one rule for every transport:
 * SEND_AGAIN interrupted, try now; SEND_WAIT the socket cannot take it now
 * (full, or no buffer: EPOLLOUT armed); else the errno of a real failure.
 */
enum { SEND_AGAIN = -1, SEND_WAIT = -2 };

static int send_failure(struct syslog_state *st)
{
	int err = errno;

	if (err == EINTR)
		return SEND_AGAIN;
	if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
		syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
		return SEND_WAIT;
	}
	return err;
}

/* A stream send failed: true to try again now, false to stop (waiting, or lost). */
static bool stream_send_again(struct syslog_state *st)
{
	int err = send_failure(st);

	if (err == SEND_AGAIN)
		return true;
	if (err != SEND_WAIT)
		syslog_lost(st, "cannot send to", err);
	return false;
}

/* TCP, the queue empty: send the spool's records, oldest first. */
static void spool_drain_tcp(struct syslog_state *st)
{
	unsigned n;

	while ((n = sl_spool_peekv(st->ss.sp, st->iov, BATCH_MSGS))) {
		struct msghdr mh = { .msg_iov = st->iov, .msg_iovlen = n };
		unsigned done;
		ssize_t sent;
		size_t part;

		st->iov[0].iov_base = (char *)st->iov[0].iov_base + st->spool_head_sent;
		st->iov[0].iov_len -= st->spool_head_sent;
		sent = sendmsg(st->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0) {
			if (stream_send_again(st))
				continue;
			break;
		}
		done = syslog_iov_done(st, n, (size_t)sent, true, &part);
		if (done)
			st->spool_head_sent = 0;
		st->spool_head_sent += part;
		sl_spool_ack(st->ss.sp, done);
	}
	sl_sink_spool_publish(&st->ss);
}

/*
 * TLS: the n messages in st->iov into TLS records.  1: *done of them
 * whole and *part bytes of the next taken; 0: nothing taken (wait for the
 * socket); -1: the session is lost (syslog_tls_lost() said why).
 */
static int tls_writev_msgs(struct syslog_state *st, unsigned n, unsigned *done, size_t *part)
{
	char err[256];
	ssize_t taken = sl_tls_conn_writev(st->tls, st->iov, n, err, sizeof(err));

	if (taken == SL_TLS_FAILED) {
		syslog_tls_lost(st, err);
		return -1;
	}
	if (taken == 0)
		return 0;
	*done = syslog_iov_done(st, n, (size_t)taken, false, part);
	return 1;
}

/*
 * TLS, the queue empty: the spool's records go into TLS records, oldest
 * first, and are acknowledged once the TLS record holding them is written
 * to the socket (spool_taken waits for that in drain_tls).  Like tcp's,
 * those its kernel then held when the receiver died are possibly_lost.
 */
static void spool_drain_tls(struct syslog_state *st)
{
	unsigned n;

	while (!sl_tls_conn_pending(st->tls) && (n = sl_spool_peekv(st->ss.sp, st->iov, BATCH_MSGS))) {
		unsigned done;
		size_t part;

		st->iov[0].iov_base = (char *)st->iov[0].iov_base + st->spool_head_sent;
		st->iov[0].iov_len -= st->spool_head_sent;
		if (tls_writev_msgs(st, n, &done, &part) <= 0)
			break;
		if (done)
			st->spool_head_sent = 0;
		st->spool_head_sent += part;
		if (sl_tls_conn_pending(st->tls)) {
			st->spool_taken = st->tls_rec_msgs = done;
			break;
		}
		syslog_tls_written(st, done);
		sl_spool_ack(st->ss.sp, done);
	}
	sl_sink_spool_publish(&st->ss);
}

/* RELP: acknowledge to the spool what librelp's window proved (relp_conn.h). */
static void relp_spool_settle(struct syslog_state *st)
{
	uint64_t acked = sl_relp_conn_acked(st->relp), k;

	if (!st->rs_handed || acked < st->rs_first)
		return;
	k = acked - st->rs_first + 1;
	if (k > st->rs_handed)
		k = st->rs_handed;
	sl_sink_spool_ack(&st->ss, k);
	st->rs_first += k;
	st->rs_handed -= (unsigned)k;
}

/*
 * RELP: everything reachable in the spool is with librelp, but the last
 * SL_RELP_WINDOW are proven acknowledged only by later sends, and while the
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
	uint64_t before = st->rs_first - 1, acked = sl_relp_conn_acked(st->relp);

	if (sl_relp_conn_close(st->relp)) {
		sl_sink_spool_ack(&st->ss, st->rs_handed);
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
	sl_sink_spool_publish(&st->ss);
	return syslog_relp_open(st) == 0;
}

/* RELP, the queue empty: hand the spool's records to librelp, oldest first. */
static void spool_drain_relp(struct syslog_state *st)
{
	char err[512];

	for (;;) {
		unsigned i, n = 0;

		relp_spool_settle(st);
		if (st->rs_handed < RELP_SPOOL_IOV - BATCH_MSGS)
			n = sl_spool_peekv(st->ss.sp, st->rs_iov, st->rs_handed + BATCH_MSGS);
		if (n <= st->rs_handed) {	/* nothing more within reach */
			if (!st->rs_handed || st->drain_until || !relp_spool_sync(st))
				break;
			continue;
		}
		for (i = st->rs_handed; i < n; i++) {
			if (sl_relp_conn_send(st->relp, st->rs_iov[i].iov_base, st->rs_iov[i].iov_len, err,
					   sizeof(err)) < 0) {
				st->host->log(st->inst, SL_LOG_DEBUG, "%s: %s", st->where, err);
				syslog_lost(st, "RELP session broken with", ECONNRESET);
				sl_sink_spool_publish(&st->ss);
				return;
			}
			if (!st->rs_handed++)
				st->rs_first = sl_relp_conn_sent(st->relp);
		}
		if (st->drain_until && sl_mono_ms() >= st->drain_until)
			break;
	}
	sl_sink_spool_publish(&st->ss);
}

/* The receiver is away: reconnect (else the message is skipped, counted). */
static bool gone(int err)
{
	return err == ECONNREFUSED || err == ECONNRESET || err == EPIPE || err == ENOTCONN ||
	       err == ENOENT || err == EDESTADDRREQ || err == EHOSTUNREACH || err == ENETUNREACH ||
	       err == ETIMEDOUT || err == ECONNABORTED || err == EACCES || err == EPERM;
}

/* One datagram per message; a backlog after an outage goes BATCH_MSGS a tick. */
static void drain_dgram(struct syslog_state *st)
{
	if (!st->mm_ready) {	/* the state is zeroed: no name, no control */
		for (unsigned i = 0; i < DGRAM_BATCH_MSGS; i++) {
			st->mm[i].msg_hdr.msg_iov = &st->iov[i];
			st->mm[i].msg_hdr.msg_iovlen = 1;
		}
		st->mm_ready = true;
	}
	while (st->qcount) {
		unsigned i, n = syslog_q_gather(st, st->probe_needed ? 1 :
						    st->catchup ? BATCH_MSGS : DGRAM_BATCH_MSGS);
		int sent;

		sent = sendmmsg(st->fd, st->mm, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent < 0) {
			int err = send_failure(st);

			if (err == SEND_AGAIN)
				continue;
			if (err == SEND_WAIT)
				return;
			if (err == EMSGSIZE) {	/* the receiver's limit: skip it */
				syslog_sock_error(st, "message too long for", err);
				syslog_q_pop(st);
				syslog_count_drops(st, 1);
				continue;
			}
			if (gone(err)) {
				syslog_lost(st, "cannot send to", err);
				return;
			}
			syslog_sock_error(st, "cannot send to", err);
			syslog_q_pop(st);	/* unknown error: do not spin on it */
			syslog_count_drops(st, 1);
			continue;
		}
		if (st->probe_needed) {
			st->probe_inflight = true;
			st->host->timer_arm(st->probe_timer, PROBE_MS, 0);
			return;
		}
		for (i = 0; i < (unsigned)sent; i++)
			syslog_q_pop(st);
		if (st->catchup) {
			st->catchup = st->catchup > (unsigned)sent ? st->catchup - (unsigned)sent : 0;
			if (st->catchup && st->qcount) {
				st->host->timer_arm(st->pace_timer, PACE_MS, 0);
				return;
			}
		}
	}
	st->catchup = 0;
}

static void drain_stream(struct syslog_state *st)
{
	syslog_adopt_spool(st);
	while (st->qcount) {
		unsigned done, n = syslog_q_gather(st, BATCH_MSGS);
		struct msghdr mh = { .msg_iov = st->iov, .msg_iovlen = n };
		ssize_t sent = sendmsg(st->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		size_t part;

		if (sent < 0) {
			if (stream_send_again(st))
				continue;
			return;
		}
		done = syslog_iov_done(st, n, (size_t)sent, true, &part);
		while (done--)
			syslog_q_pop(st);
		st->head_sent += part;
	}
	if (st->ss.sp && st->conn == ST_UP && st->fd >= 0)
		spool_drain_tcp(st);
}

/*
 * TLS: messages are gathered into records; popped once GnuTLS took them,
 * and put in the ring of message ends once their record is written out.
 */
static void drain_tls(struct syslog_state *st)
{
	char err[256];
	int rc;

	syslog_adopt_spool(st);
	rc = sl_tls_conn_flush(st->tls, err, sizeof(err));
	if (rc == SL_TLS_FAILED) {
		syslog_tls_lost(st, err);
		return;
	}
	if (rc == SL_TLS_DONE && st->tls_rec_msgs) {	/* their TLS record is out */
		syslog_tls_written(st, st->tls_rec_msgs);
		st->tls_rec_msgs = 0;
		if (st->spool_taken)
			sl_spool_ack(st->ss.sp, st->spool_taken);
		st->spool_taken = 0;
	}
	while (rc == SL_TLS_DONE && st->qcount) {
		unsigned done, n = syslog_q_gather(st, BATCH_MSGS);
		size_t part;
		int w = tls_writev_msgs(st, n, &done, &part);

		if (w < 0)
			return;
		if (w == 0)
			break;
		for (unsigned i = 0; i < done; i++)
			syslog_q_pop(st);
		st->head_sent += part;
		if (sl_tls_conn_pending(st->tls)) {
			st->tls_rec_msgs = done;
			break;
		}
		syslog_tls_written(st, done);
	}
	if (st->ss.sp && !st->qcount && st->tls && !sl_tls_conn_pending(st->tls))
		spool_drain_tls(st);
	if (st->tls && sl_tls_conn_pending(st->tls))
		syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
}

/* RELP: a message leaves the queue once librelp has it in its window. */
static void drain_relp(struct syslog_state *st)
{
	char err[512];

	syslog_adopt_spool(st);
	while (st->qcount && st->conn == ST_UP) {
		size_t off = syslog_q_fix(st, st->qhead);

		if (sl_relp_conn_send(st->relp, st->q + off + 4, syslog_q_len(st, off), err, sizeof(err)) < 0) {
			st->host->log(st->inst, SL_LOG_DEBUG, "%s: %s", st->where, err);
			syslog_lost(st, "RELP session broken with", ECONNRESET);
			return;
		}
		syslog_q_pop(st);
	}
	if (st->ss.sp && st->conn == ST_UP)
		spool_drain_relp(st);
}

void syslog_drain(struct syslog_state *st)
{
	if (st->cfg->transport == TR_RELP) {
		if (st->conn == ST_UP)
			drain_relp(st);
		return;
	}
	if (st->conn != ST_UP || st->fd < 0 || st->probe_inflight)
		return;
	if (st->tls)
		drain_tls(st);
	else if (st->cfg->transport == TR_TCP)
		drain_stream(st);
	else
		drain_dgram(st);
}
