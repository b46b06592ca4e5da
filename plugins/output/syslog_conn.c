/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's transport (contract in syslog_out.h): the socket
 * and its connect with backoff, TLS (tls_stream.h) between connect and
 * up, RELP (relp_conn.h, blocking on this thread), the socket's events,
 * the timers (reconnect, the UDP probe after each connect, the paced
 * backlog after an outage) and the send at stop.  What a failed connection had not delivered is
 * counted here (possibly_lost, the TLS record not written out); sending
 * the queue is syslog_send.c.  Everything runs on the output's thread.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "relp_conn.h"
#include "tls_stream.h"
#include "syslog_out.h"

/* ---- reporting ---- */

void syslog_log_drops(struct syslog_state *st, bool force)
{
	uint64_t now = sl_mono_ms();

	if (!st->drops_unlogged)
		return;
	if (!force && st->drop_logged_at && now - st->drop_logged_at < LOG_EVERY_MS)
		return;
	st->host->log(st->inst, SL_LOG_WARNING, "%s: queue full, dropped %llu messages", st->where,
		      (unsigned long long)st->drops_unlogged);
	st->drop_logged_at = now;
	st->drops_unlogged = 0;
}

void syslog_count_drops(struct syslog_state *st, uint64_t n)
{
	st->host->counter_add(st->inst, st->c_dropped, n);
	st->host->dropped_add(st->inst, n);
	st->drops_unlogged += n;
	st->drops_outage += n;
	syslog_log_drops(st, false);
}

/* A socket error: count it, log the first and then one per 10 s. */
void syslog_sock_error(struct syslog_state *st, const char *what, int err)
{
	uint64_t now = sl_mono_ms();

	st->host->error_add(st->inst, 1);
	if (st->err_logged_at && now - st->err_logged_at < LOG_EVERY_MS) {
		st->errs_unlogged++;
		return;
	}
	st->host->log(st->inst, SL_LOG_WARNING, "%s %s: %s%s; %u messages queued, retrying", what,
		      st->where, strerror(err), st->errs_unlogged ? " (and more errors)" : "",
		      st->qcount);
	st->err_logged_at = now;
	st->errs_unlogged = 0;
}

/* ---- connection ---- */

/*
 * TCP: how many fully written messages end beyond the bytes the peer
 * acknowledged (SIOCOUTQ = written but not acknowledged).  The head
 * message, if cut, is not counted: it is still queued and sent again.
 */
static uint64_t unacked_messages(struct syslog_state *st, bool *estimated)
{
	int outq = 0;
	uint32_t acked;
	uint64_t n = 0, have = st->ends_n < INFLIGHT_MSGS ? st->ends_n : INFLIGHT_MSGS;

	*estimated = false;
	if (!st->ends || !st->ends_n || ioctl(st->fd, SIOCOUTQ, &outq) < 0 || outq <= 0)
		return 0;
	acked = st->written - (uint32_t)outq;
	while (n < have && (int32_t)(st->ends[(st->ends_n - 1 - n) % INFLIGHT_MSGS] - acked) > 0)
		n++;
	if (n == INFLIGHT_MSGS && st->ends_n > INFLIGHT_MSGS) {
		/* the ring is too short: estimate the rest from the mean size */
		uint32_t oldest = st->ends[(st->ends_n - INFLIGHT_MSGS) % INFLIGHT_MSGS];
		uint32_t newest = st->ends[(st->ends_n - 1) % INFLIGHT_MSGS];
		uint64_t mean = (uint64_t)(newest - oldest) / (INFLIGHT_MSGS - 1);
		uint64_t rest = (int32_t)(oldest - acked) > (int64_t)mean ? oldest - acked - mean : 0;

		n += mean ? (rest + mean - 1) / mean : 0;
		if (n > st->ends_n)
			n = st->ends_n;
		*estimated = true;
	}
	return n;
}

/*
 * TLS: the messages that ended in a record GnuTLS had not yet written out
 * are gone with the session (a cut record cannot be read); the spool's
 * among them are sent again from the spool.
 */
static void count_unwritten(struct syslog_state *st)
{
	unsigned n = st->tls_rec_msgs - st->spool_taken;

	st->tls_rec_msgs = st->spool_taken;
	if (!n)
		return;
	st->host->counter_add(st->inst, st->c_dropped, n);
	st->host->dropped_add(st->inst, n);
	st->host->log(st->inst, SL_LOG_WARNING,
		      "%s: %u messages in a TLS record not yet written out lost with the session",
		      st->where, n);
}

/*
 * Messages the socket had not delivered when it failed or was closed:
 * those ending beyond what the peer acknowledged, or every one written on
 * a TLS session the server refused.  Counted once per connection.
 */
static void count_inflight(struct syslog_state *st, const char *when)
{
	bool estimated = false;
	uint64_t n;

	if ((st->cfg->transport != TR_TCP && st->cfg->transport != TR_TLS) || st->fd < 0 ||
	    st->conn != ST_UP)
		return;
	if (st->tls) {
		count_unwritten(st);
		st->written = sl_tls_conn_wire(st->tls);
	}
	n = st->tls_refused ? st->ends_n : unacked_messages(st, &estimated);
	if (n <= st->lost_counted)
		return;
	n -= st->lost_counted;
	st->lost_counted += n;
	st->host->counter_add(st->inst, st->c_possibly_lost, n);
	st->host->dropped_add(st->inst, n);
	st->host->log(st->inst, SL_LOG_WARNING,
		      st->tls_refused ? "%s %s: %s%llu messages sent on the refused session, possibly lost "
					"(not sent again)"
				      : "%s %s: %s%llu messages sent but not acknowledged, possibly lost "
					"(not sent again)",
		      when, st->where, estimated ? "about " : "", (unsigned long long)n);
}

/* TLS: n more messages end in the record just written out. */
void syslog_tls_written(struct syslog_state *st, unsigned n)
{
	uint32_t end = sl_tls_conn_wire(st->tls);

	while (n--)
		st->ends[st->ends_n++ % INFLIGHT_MSGS] = end;
}

void syslog_close_fd(struct syslog_state *st)
{
	sl_tls_conn_free(st->tls);
	st->tls = NULL;
	if (st->fd >= 0) {
		st->host->unwatch_fd(st->inst, st->fd);
		close(st->fd);
	}
	st->fd = -1;
	st->watched = 0;
	st->probe_inflight = false;
	st->catchup = 0;
	st->head_sent = 0;	/* a cut TCP message is sent again in full */
	st->spool_head_sent = 0;
	st->spool_taken = 0;	/* not written out: sent again from the spool */
	st->written = 0;
	st->ends_n = 0;
	st->lost_counted = 0;
	st->tls_rec_msgs = 0;
	st->tls_refused = false;
	if (st->probe_timer)
		st->host->timer_disarm(st->probe_timer);
}

/*
 * TLS: a session that ends soon after the handshake, when the server had
 * asked for a client certificate or sent a fatal alert, was most likely
 * refused.  With TLS 1.3 the server checks our certificate only after our
 * side of the handshake is over, and rsyslog checks the peer's name after
 * the handshake with any version: what we wrote meanwhile was taken by the
 * kernel (TCP-acknowledged) but never read, whatever the way the server
 * closed (alert, close, reset), so all of it counts as possibly lost.
 */
static bool tls_refused(const struct syslog_state *st)
{
	return st->tls && st->conn == ST_UP &&
	       sl_mono_ms() - st->connected_at < TLS_REFUSED_MS &&
	       (sl_tls_conn_cert_requested(st->tls) || sl_tls_conn_alerted(st->tls));
}

/* The receiver went away: close and try again after the backoff. */
void syslog_lost(struct syslog_state *st, const char *what, int err)
{
	uint64_t now = sl_mono_ms();

	syslog_sock_error(st, what, err);
	if (!st->tls_refused)
		st->tls_refused = tls_refused(st);
	count_inflight(st, "connection to");
	/* A connection that broke at once does not reset the backoff. */
	if (st->conn == ST_UP && now - st->connected_at >= 2000)
		st->backoff = st->cfg->reconnect_min;
	syslog_close_fd(st);
	st->conn = ST_DOWN;
	st->was_down = true;
	st->host->timer_arm(st->retry_timer, st->backoff, 0);
	st->backoff = st->backoff * 2 > st->cfg->reconnect_max ? st->cfg->reconnect_max
							       : st->backoff * 2;
}

static void up(struct syslog_state *st)
{
	st->conn = ST_UP;
	st->connected_at = sl_mono_ms();
	st->host->timer_disarm(st->retry_timer);
	if (st->was_down) {
		syslog_log_drops(st, true);
		st->host->log(st->inst, SL_LOG_NOTICE,
			      "connected to %s again; %llu messages were dropped while it was unavailable",
			      st->where, (unsigned long long)st->drops_outage);
		st->host->counter_add(st->inst, st->c_reconnects, 1);
	}
	/*
	 * UDP has no flow control: a backlog sent at once overflows the
	 * receiver's socket buffer (measured: rsyslog on loopback with the
	 * default 208 KiB buffer lost ~900 messages of one short backlog).
	 * Send what was queued during an outage one batch per millisecond;
	 * what comes in meanwhile queues behind it and then goes at full
	 * speed.  Not after the first probe at start: that backlog is only
	 * the probe's 100 ms, and pacing it below a high input rate kept
	 * the queue full and dropping (83% of 217k msg/s in bench/run.sh).
	 */
	st->catchup = st->cfg->transport == TR_UDP && st->was_down && st->qcount > BATCH_MSGS
			      ? st->qcount : 0;
	st->was_down = false;
	st->drops_outage = 0;
}

void syslog_arm_fd(struct syslog_state *st, uint32_t events)
{
	if (st->fd < 0 || events == st->watched)
		return;
	st->host->modify_fd(st->inst, st->fd, events);
	st->watched = events;
}

uint32_t syslog_idle_events(const struct syslog_state *st)
{
	/* TCP: notice the receiver closing while we have nothing to send. */
	return syslog_stream(st->cfg) ? EPOLLIN | EPOLLRDHUP : 0;
}

/* ---- TLS (RFC 5425): a handshake between connect and up() ---- */

/* Refused or broken handshake: said with the check that failed, counted. */
static void tls_failed(struct syslog_state *st, const char *why)
{
	st->host->counter_add(st->inst, st->c_tls_failures, 1);
	st->host->log(st->inst, SL_LOG_ERR, "TLS with %s (server name %s): %s; nothing sent",
		      st->where, st->tls_name, why);
	syslog_lost(st, "TLS handshake with", EPROTO);
}

/*
 * The session failed after the handshake.  With TLS 1.3 a server that
 * refuses our client certificate says so only now, in an alert read after
 * we sent: counted as a TLS failure too.
 */
void syslog_tls_lost(struct syslog_state *st, const char *why)
{
	bool asked = sl_tls_conn_cert_requested(st->tls) &&
		     (!st->cfg->tls.cert_file || tls_refused(st));

	st->host->counter_add(st->inst, st->c_tls_failures, 1);
	st->host->log(st->inst, SL_LOG_ERR, "TLS session with %s failed: %s%s", st->where, why,
		      !asked ? ""
		      : !st->cfg->tls.cert_file ? " (the server asked for a client certificate and "
						  "tls_cert_file is not set: it probably refused us)"
						: " (right after the server asked for a client "
						  "certificate: it probably refused tls_cert_file)");
	syslog_lost(st, "lost", ECONNRESET);
}

/* Advance the handshake (the connect timer still runs); up() when done. */
static void tls_step(struct syslog_state *st)
{
	char err[512];
	int rc;

	if (!st->tls) {
		st->tls = sl_tls_conn_new(st->tls_creds, st->fd, st->tls_name, st->cfg->tls.verify, err,
				       sizeof(err));
		if (!st->tls) {
			tls_failed(st, err);
			return;
		}
	}
	rc = sl_tls_conn_handshake(st->tls, err, sizeof(err));
	if (rc == SL_TLS_WANT_READ || rc == SL_TLS_WANT_WRITE) {
		syslog_arm_fd(st, rc == SL_TLS_WANT_READ ? EPOLLIN | EPOLLRDHUP : EPOLLOUT);
		return;
	}
	if (rc != SL_TLS_DONE) {
		tls_failed(st, err);
		return;
	}
	up(st);
	syslog_arm_fd(st, syslog_idle_events(st));
	syslog_drain(st);
}

static void on_fd(void *state, int fd, uint32_t events)
{
	struct syslog_state *st = state;
	int err = 0;
	socklen_t len = sizeof(err);

	if (fd != st->fd)
		return;
	if (st->conn == ST_CONNECTING) {
		if (st->tls) {
			tls_step(st);
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			syslog_lost(st, "cannot connect to", err);
			return;
		}
		if (st->cfg->transport == TR_TLS) {
			tls_step(st);
			return;
		}
		up(st);
		syslog_arm_fd(st, syslog_idle_events(st));
		syslog_drain(st);
		return;
	}
	/* TLS: an alert before the error says why (a refused client certificate) */
	if (st->tls && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		char why[256];
		int rc = sl_tls_conn_discard_input(st->tls, why, sizeof(why));

		if (rc == SL_TLS_FAILED) {
			syslog_tls_lost(st, why);
			return;
		}
		if (rc == SL_TLS_CLOSED) {
			if (tls_refused(st))	/* rsyslog refuses a peer name so */
				syslog_tls_lost(st, "closed by the server");
			else
				syslog_lost(st, "connection closed by", ECONNRESET);
			return;
		}
	}
	if (events & EPOLLERR) {
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			syslog_lost(st, "lost", err);
			return;
		}
	}
	if (!st->tls && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP))) {
		char sink[512];
		ssize_t n;

		/* Receivers send nothing; EOF means they closed. */
		while ((n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			syslog_lost(st, "connection closed by", n == 0 ? ECONNRESET : errno);
			return;
		}
	}
	if (events & EPOLLOUT) {
		syslog_arm_fd(st, syslog_idle_events(st));
		syslog_drain(st);
	}
}

/*
 * RELP: librelp owns the socket and blocks (up to RELP_TIMEOUT_S) on this
 * output's own thread; a reconnect first resends what was not acknowledged.
 */
int syslog_relp_open(struct syslog_state *st)
{
	char err[512];
	int rc = -1;

	if (!st->relp) {
		const struct syslog_cfg *c = st->cfg;
		struct sl_tls_conf tc = sl_tls_conf_of(&c->tls);

		tc.verify = true;	/* librelp always verifies (configure refused tls_verify: false) */

		st->relp = sl_relp_conn_new(st->relp_host, st->relp_port, RELP_TIMEOUT_S,
					 c->tls.ca_file ? &tc : NULL, st->tls_name, err, sizeof(err));
	}
	if (!st->relp || (rc = sl_relp_conn_open(st->relp, err, sizeof(err))) < 0) {
		if (rc == -2)
			st->host->counter_add(st->inst, st->c_tls_failures, 1);
		/* librelp does not tell a refused certificate apart: say it all */
		st->host->log(st->inst, st->cfg->tls.ca_file ? SL_LOG_WARNING : SL_LOG_DEBUG, "%s: %s",
			      st->where, err);
		st->conn = ST_DOWN;
		syslog_lost(st, "cannot connect to", ECONNREFUSED);
		return -1;
	}
	return 0;
}

static void relp_connect(struct syslog_state *st)
{
	if (syslog_relp_open(st) < 0)
		return;
	up(st);
	syslog_drain(st);
}

void syslog_connect(struct syslog_state *st)
{
	int type = syslog_stream(st->cfg) ? SOCK_STREAM : SOCK_DGRAM;
	int fd;

	if (st->cfg->transport == TR_RELP) {
		relp_connect(st);
		return;
	}
	syslog_close_fd(st);
	fd = socket(st->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		st->conn = ST_DOWN;
		syslog_lost(st, "cannot create a socket for", errno);
		return;
	}
	st->fd = fd;
	if (st->host->watch_fd(st->inst, fd, 0, on_fd, st) < 0) {
		close(fd);
		st->fd = -1;
		st->conn = ST_DOWN;
		syslog_lost(st, "cannot watch the socket for", EINVAL);
		return;
	}
	if (connect(fd, (struct sockaddr *)&st->addr, st->addrlen) < 0) {
		if (errno == EINPROGRESS) {
			st->conn = ST_CONNECTING;
			syslog_arm_fd(st, EPOLLOUT);
			/* A connect that never answers is given up on. */
			st->host->timer_arm(st->retry_timer, CONNECT_TIMEOUT_MS, 0);
			return;
		}
		st->conn = ST_DOWN;
		syslog_lost(st, "cannot connect to", errno);
		return;
	}
	if (st->cfg->transport == TR_TLS) {
		st->conn = ST_CONNECTING;
		st->host->timer_arm(st->retry_timer, CONNECT_TIMEOUT_MS, 0);
		tls_step(st);
		return;
	}
	st->probe_needed = st->cfg->transport == TR_UDP;
	if (!st->probe_needed)
		up(st);
	else
		st->conn = ST_UP;	/* but unconfirmed until a probe passes */
	syslog_arm_fd(st, syslog_idle_events(st));
	syslog_drain(st);
}

static void on_retry_timer(void *state)
{
	struct syslog_state *st = state;

	if (st->conn == ST_CONNECTING) {
		syslog_lost(st, "timed out connecting to", ETIMEDOUT);
		return;
	}
	if (st->conn == ST_DOWN)
		syslog_connect(st);
}

/* UDP: no ICMP error came back for the probe: the receiver is there. */
static void on_probe_timer(void *state)
{
	struct syslog_state *st = state;
	int err = 0;
	socklen_t len = sizeof(err);

	if (!st->probe_inflight || st->fd < 0)
		return;
	if (getsockopt(st->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	st->probe_inflight = false;
	if (err) {
		syslog_lost(st, "no receiver at", err);
		return;
	}
	st->probe_needed = false;
	if (st->qcount)
		syslog_q_pop(st);	/* the probe message arrived */
	up(st);
	syslog_drain(st);
}

static void on_pace_timer(void *state)
{
	syslog_drain(state);
}


void syslog_conn_timers_new(struct syslog_state *st)
{
	st->retry_timer = st->host->timer_new(st->inst, on_retry_timer, st);
	st->probe_timer = st->host->timer_new(st->inst, on_probe_timer, st);
	st->pace_timer = st->host->timer_new(st->inst, on_pace_timer, st);
}

/* ---- stop ---- */

/* Timers off, the probe's verdict, a handshake finished, then the queue sent until end. */
static void stop_send(struct syslog_state *st, uint64_t end)
{
	if (st->retry_timer)
		st->host->timer_disarm(st->retry_timer);
	if (st->probe_timer)
		st->host->timer_disarm(st->probe_timer);
	if (st->pace_timer)
		st->host->timer_disarm(st->pace_timer);
	st->catchup = 0;
	if (st->probe_inflight) {
		/* Wait for the probe's verdict (an ICMP error shows as POLLERR). */
		struct pollfd pfd = { .fd = st->fd, .events = 0 };

		st->probe_inflight = false;
		if (poll(&pfd, 1, PROBE_MS) > 0 && (pfd.revents & POLLERR))
			st->conn = ST_DOWN;
		else if (st->qcount)
			syslog_q_pop(st);
	}
	st->probe_needed = false;	/* no time left to probe: send all */
	/* TLS: finish a handshake still under way, then send */
	while (st->cfg->transport == TR_TLS && st->conn == ST_CONNECTING && st->fd >= 0) {
		struct pollfd pfd = { .fd = st->fd, .events = (short)(st->watched & (EPOLLIN | EPOLLOUT)) };
		uint64_t now = sl_mono_ms();

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			break;
		on_fd(st, st->fd, (uint32_t)pfd.revents);
	}
	if (st->cfg->transport == TR_RELP) {
		st->drain_until = end;
		syslog_drain(st);
		/* closes after the last acknowledgements, which proves the spool's */
		if (sl_relp_conn_close(st->relp) && st->ss.sp)
			sl_sink_spool_ack(&st->ss, st->rs_handed);
		st->relp = NULL;
		st->rs_handed = 0;
	}
	/* Give a connected receiver a moment to take the rest. */
	while (st->qcount && st->fd >= 0 && st->conn == ST_UP && !st->probe_inflight) {
		struct pollfd pfd = { .fd = st->fd, .events = POLLOUT };
		uint64_t now = sl_mono_ms();
		unsigned before = st->qcount;

		syslog_drain(st);
		if (!st->qcount || st->fd < 0 || now >= end)
			break;
		if (st->qcount == before && poll(&pfd, 1, (int)(end - now)) <= 0)
			break;
	}
	/* TLS: the last record may still wait in GnuTLS */
	while (st->tls && sl_tls_conn_pending(st->tls) && st->conn == ST_UP && sl_mono_ms() < end) {
		struct pollfd pfd = { .fd = st->fd, .events = POLLOUT };

		syslog_drain(st);
		if (st->tls && sl_tls_conn_pending(st->tls))
			poll(&pfd, 1, 5);
	}
}

/* TCP and TLS: what was sent and not acknowledged by end counted, a TLS refusal waited for. */
static void stop_wait_acked(struct syslog_state *st, uint64_t end)
{
	/* TCP: written is not delivered; wait for the acknowledgements too */
	if (syslog_stream(st->cfg) && st->fd >= 0 && st->conn == ST_UP) {
		int outq = 0;

		while (ioctl(st->fd, SIOCOUTQ, &outq) == 0 && outq > 0 && sl_mono_ms() < end)
			poll(NULL, 0, 5);
		count_inflight(st, "at shutdown,");
		/*
		 * TLS: a refusal (an alert, or rsyslog's close) follows what it
		 * refused.  A session the server asked a client certificate of
		 * is waited on while it is young enough to be refused
		 * (tls_refused()), so counting it does not depend on speed.
		 */
		if (st->tls) {
			uint64_t until = sl_tls_conn_cert_requested(st->tls)
						 ? st->connected_at + TLS_REFUSED_MS
						 : sl_mono_ms() + TLS_ALERT_WAIT_MS;
			uint64_t now;

			while (st->tls && st->conn == ST_UP && (now = sl_mono_ms()) < until) {
				struct pollfd pfd = { .fd = st->fd, .events = POLLIN };

				if (poll(&pfd, 1, (int)(until - now)) <= 0)
					break;
				on_fd(st, st->fd, (uint32_t)pfd.revents);
			}
		}
	}
}

void syslog_conn_stop(struct syslog_state *st)
{
	uint64_t end = sl_mono_ms() + STOP_DRAIN_MS;

	stop_send(st, end);
	stop_wait_acked(st, end);
}
