/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's sending (contract in syslog_out.h): the queue
 * (syslog_queue.c) written without blocking, many messages per syscall:
 * sendmmsg for datagrams (one probe message first after a UDP connect,
 * a paced backlog), sendmsg with an iovec for TCP, TLS records through
 * tls_stream.h, librelp's window for RELP.  Once the queue is empty the
 * spool is sent (syslog_spool.c).  A failure hands the connection to
 * syslog_lost() (syslog_conn.c).  Everything runs on the output's thread.
 */
#include <errno.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <sluice/plugin.h>

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
			int err = errno;

			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
				syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
				return;
			}
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
	if (st->spool && !st->spool_adopted)
		syslog_spool_adopt(st);
	while (st->qcount) {
		unsigned done, n = syslog_q_gather(st, BATCH_MSGS);
		struct msghdr mh = { .msg_iov = st->iov, .msg_iovlen = n };
		ssize_t sent = sendmsg(st->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		size_t part;

		if (sent < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS) {
				syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
				return;
			}
			syslog_lost(st, "cannot send to", err);
			return;
		}
		done = syslog_iov_done(st, n, (size_t)sent, true, &part);
		while (done--)
			syslog_q_pop(st);
		st->head_sent += part;
	}
	if (st->spool && st->conn == ST_UP && st->fd >= 0)
		syslog_spool_drain_tcp(st);
}

/*
 * TLS: messages are gathered into records; popped once GnuTLS took them,
 * and put in the ring of message ends once their record is written out.
 */
static void drain_tls(struct syslog_state *st)
{
	char err[256];
	int rc;

	if (st->spool && !st->spool_adopted)
		syslog_spool_adopt(st);
	rc = tls_conn_flush(st->tls, err, sizeof(err));
	if (rc == TLS_FAILED) {
		syslog_tls_lost(st, err);
		return;
	}
	if (rc == TLS_DONE && st->tls_rec_msgs) {	/* their TLS record is out */
		syslog_tls_written(st, st->tls_rec_msgs);
		st->tls_rec_msgs = 0;
		if (st->spool_taken)
			sl_spool_ack(st->spool, st->spool_taken);
		st->spool_taken = 0;
	}
	while (rc == TLS_DONE && st->qcount) {
		unsigned done, n = syslog_q_gather(st, BATCH_MSGS);
		ssize_t taken = tls_conn_writev(st->tls, st->iov, n, err, sizeof(err));
		size_t part;

		if (taken == TLS_FAILED) {
			syslog_tls_lost(st, err);
			return;
		}
		if (taken == 0)
			break;
		done = syslog_iov_done(st, n, (size_t)taken, false, &part);
		for (unsigned i = 0; i < done; i++)
			syslog_q_pop(st);
		st->head_sent += part;
		if (tls_conn_pending(st->tls)) {
			st->tls_rec_msgs = done;
			break;
		}
		syslog_tls_written(st, done);
	}
	if (st->spool && !st->qcount && st->tls && !tls_conn_pending(st->tls))
		syslog_spool_drain_tls(st);
	if (st->tls && tls_conn_pending(st->tls))
		syslog_arm_fd(st, syslog_idle_events(st) | EPOLLOUT);
}

/* RELP: a message leaves the queue once librelp has it in its window. */
static void drain_relp(struct syslog_state *st)
{
	char err[512];

	if (st->spool && !st->spool_adopted)
		syslog_spool_adopt(st);
	while (st->qcount && st->conn == ST_UP) {
		size_t off = syslog_q_fix(st, st->qhead);

		if (relp_conn_send(st->relp, st->q + off + 4, syslog_q_len(st, off), err, sizeof(err)) < 0) {
			st->host->log(st->inst, SL_LOG_DEBUG, "%s: %s", st->where, err);
			syslog_lost(st, "RELP session broken with", ECONNRESET);
			return;
		}
		syslog_q_pop(st);
	}
	if (st->spool && st->conn == ST_UP)
		syslog_spool_drain_relp(st);
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
