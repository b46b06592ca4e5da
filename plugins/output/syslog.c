/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * syslog output: each record's text as a syslog message (RFC 3164 or RFC
 * 5424, optionally with the packet's addresses and ports as structured
 * data) over a unix datagram socket, UDP or TCP (RFC 6587 octet counting,
 * or LF framing).  libc syslog() is not used: it blocks, and it cannot
 * speak UDP/TCP or carry the event's own timestamp.
 *
 * Messages go into a bounded queue and are sent without blocking, many per
 * syscall (sendmmsg for datagrams, sendmsg with an iovec for TCP).  When the
 * receiver is away (connection refused, reset, socket missing) the queue
 * keeps what it can hold, the socket is reconnected with exponential
 * backoff, and messages that did not fit are counted in the counter
 * "dropped_messages" and reported (rate-limited).  TCP cannot tell what a
 * receiver that died had read: at a failure the messages still in the
 * socket's send queue (SIOCOUTQ: sent but not acknowledged) are counted as
 * "possibly_lost" and not sent again (the peer may have read them), which
 * needs the byte offset at which each recently written message ends (a
 * ring, see INFLIGHT_MSGS); over TLS the wire offset where the TLS record
 * holding its end ends, since only whole records can be read.  Over UDP,
 * after a (re)connect the first message is sent as a probe and only
 * dequeued when no ICMP "port unreachable" came back for it, so a down
 * receiver does not eat the queue.  The input never waits for the receiver.
 *
 * spool_dir (tcp, tls, relp): what the queue cannot take goes to a disk
 * spool, and so does everything after it while the spool holds anything
 * (order); the queue, always older, is sent first.  The glue, and when a
 * spooled message counts as delivered per transport, is in syslog_spool.c.
 * The bytes of each message and its framing come from the formatter in
 * plugins/common/syslog_fmt.h; this file queues and sends them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "fmt.h"
#include "spool.h"
#include "syslog_fmt.h"
#include "relp_conn.h"
#include "tls_stream.h"
#include "syslog_out.h"


static const char *const format_names[] = { "rfc3164", "rfc5424", NULL };
static const char *const tls_version_names[] = { "1.2", "1.3", NULL };
static const char *const transport_names[] = { "unix", "udp", "tcp", "tls", "relp", NULL };
static const char *const framing_names[] = { "octet-counted", "lf", NULL };
static const char *const facility_names[] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "security", "console", "solaris-cron",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7", NULL
};
static const char *const severity_names[] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug", NULL
};

struct syslog_cfg {
	int format;
	int transport;
	const char *address;
	int framing;
	int facility;
	int severity;
	const char *app_name;
	const char *hostname;
	const char *msgid;
	bool structured_data;
	const char *sd_id;
	uint64_t queue_size;
	uint64_t message_size;
	uint64_t reconnect_min;
	uint64_t reconnect_max;
	const char *tls_ca_file;
	const char *tls_cert_file;
	const char *tls_key_file;
	const char *tls_server_name;
	bool tls_verify;
	int tls_min_version;
	const char *spool_dir;
	uint64_t spool_max_size;
};

static const struct sl_option syslog_opts[] = {
	SL_OPT_ENUM("format", struct syslog_cfg, format, "rfc3164", format_names,
		    "message format: rfc3164 (BSD) or rfc5424"),
	SL_OPT_ENUM("transport", struct syslog_cfg, transport, "unix", transport_names,
		    "unix (datagram socket), udp, tcp, tls (RFC 5425) or relp (acknowledged)"),
	SL_OPT_STR("address", struct syslog_cfg, address, NULL,
		   "socket path (unix, default /dev/log) or host:port / [v6]:port "
		   "(default port 514, tls 6514, relp 2514)"),
	SL_OPT_ENUM("framing", struct syslog_cfg, framing, "octet-counted", framing_names,
		    "tcp only: RFC 6587 octet counting, or one message per line (tls: octet-counted)"),
	SL_OPT_ENUM("facility", struct syslog_cfg, facility, "local4", facility_names,
		    "syslog facility"),
	SL_OPT_ENUM("severity", struct syslog_cfg, severity, "info", severity_names,
		    "syslog severity"),
	SL_OPT_STR("app_name", struct syslog_cfg, app_name, "sluice", "APP-NAME / tag"),
	SL_OPT_STR("hostname", struct syslog_cfg, hostname, NULL,
		   "HOSTNAME field (default: gethostname() at start)"),
	SL_OPT_STR("msgid", struct syslog_cfg, msgid, "-", "rfc5424 MSGID"),
	SL_OPT_BOOL("structured_data", struct syslog_cfg, structured_data, "false",
		    "rfc5424: add the packet's addresses, protocol and ports as structured data"),
	SL_OPT_STR("sd_id", struct syslog_cfg, sd_id, "sluice@32473",
		   "SD-ID of that structured data element"),
	SL_OPT_SIZE("queue_size", struct syslog_cfg, queue_size, "4MiB", 65536, (int64_t)1 << 30,
		    "messages kept while the receiver is slow or away"),
	SL_OPT_SIZE("message_size", struct syslog_cfg, message_size, "8KiB", 256, 65000,
		    "longest message; longer text is cut"),
	SL_OPT_DURATION("reconnect_min", struct syslog_cfg, reconnect_min, "200ms", 10, 3600000,
			"first reconnect delay; doubled up to reconnect_max"),
	SL_OPT_DURATION("reconnect_max", struct syslog_cfg, reconnect_max, "30s", 10, 3600000,
			"longest reconnect delay"),
	/* flat tls_* names: the option table has no nested mappings */
	SL_OPT_STR("tls_ca_file", struct syslog_cfg, tls_ca_file, SL_PATH(NULL, SL_OPT_IN_FILE),
		   "tls: PEM CA certificates the server's is verified against (default: system "
		   "store); relp: switches TLS on"),
	SL_OPT_STR("tls_cert_file", struct syslog_cfg, tls_cert_file, SL_PATH(NULL, SL_OPT_IN_FILE),
		   "tls: PEM client certificate, for mutual TLS (with tls_key_file)"),
	SL_OPT_STR("tls_key_file", struct syslog_cfg, tls_key_file, SL_PATH(NULL, SL_OPT_IN_FILE),
		   "tls: PEM private key of tls_cert_file"),
	SL_OPT_STR("tls_server_name", struct syslog_cfg, tls_server_name, NULL,
		   "tls: name the server certificate must carry (default: the host of address)"),
	SL_OPT_BOOL("tls_verify", struct syslog_cfg, tls_verify, "true",
		    "tls: verify the server certificate and name (false: encrypt only)"),
	SL_OPT_ENUM("tls_min_version", struct syslog_cfg, tls_min_version, "1.2", tls_version_names,
		    "tls, relp over TLS: oldest TLS version offered, 1.2 or 1.3 (never 1.0 or 1.1)"),
	SL_OPT_STR("spool_dir", struct syslog_cfg, spool_dir, SL_PATH(NULL, SL_OPT_OUT_MKDIR),
		   "tcp, tls, relp: directory of a disk spool for what the queue cannot hold (default: none)"),
	SL_OPT_SIZE("spool_max_size", struct syslog_cfg, spool_max_size, "1GiB", 65536,
		    (int64_t)1 << 40, "largest size of the spool; past it messages are dropped"),
	SL_OPT_END
};

static const struct sl_field_decl syslog_needs[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_END
};

/* Read when present (a queue in front of it copies needs + these). */
static const struct sl_field_decl syslog_reads[] = {
	SL_FIELD_DECL(SL_F_TEXT_SAFE),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_SPORT),
	SL_FIELD_DECL(SL_F_DPORT),
	SL_FIELD_DECL(SL_F_IFNAME_IN),
	SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_END
};

uint64_t syslog_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void drain(struct syslog_state *st);
static void do_connect(struct syslog_state *st);

/* A byte stream: TCP, or TLS over TCP. */
static bool stream(const struct syslog_cfg *c)
{
	return c->transport == TR_TCP || c->transport == TR_TLS;
}

/* ---- the queue ---- */

static size_t entry_size(uint32_t len)
{
	return 4 + (((size_t)len + 3) & ~(size_t)3);
}

/* Room for a message of len bytes at the tail, or NULL. */
static uint8_t *q_reserve(struct syslog_state *st, uint32_t len)
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

static void q_commit(struct syslog_state *st, uint32_t len)
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
static unsigned q_gather(struct syslog_state *st, unsigned max)
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

/* ---- reporting ---- */

static void log_drops(struct syslog_state *st, bool force)
{
	uint64_t now = syslog_mono_ms();

	if (!st->drops_unlogged)
		return;
	if (!force && st->drop_logged_at && now - st->drop_logged_at < LOG_EVERY_MS)
		return;
	st->host->log(st->inst, SL_LOG_WARNING, "%s: queue full, dropped %llu messages", st->where,
		      (unsigned long long)st->drops_unlogged);
	st->drop_logged_at = now;
	st->drops_unlogged = 0;
}

static void count_drops(struct syslog_state *st, uint64_t n)
{
	st->host->counter_add(st->inst, st->c_dropped, n);
	st->host->dropped_add(st->inst, n);
	st->drops_unlogged += n;
	st->drops_outage += n;
	log_drops(st, false);
}

/* A socket error: count it, log the first and then one per 10 s. */
static void sock_error(struct syslog_state *st, const char *what, int err)
{
	uint64_t now = syslog_mono_ms();

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
		st->written = tls_conn_wire(st->tls);
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
	uint32_t end = tls_conn_wire(st->tls);

	while (n--)
		st->ends[st->ends_n++ % INFLIGHT_MSGS] = end;
}

static void close_fd(struct syslog_state *st)
{
	tls_conn_free(st->tls);
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
	       syslog_mono_ms() - st->connected_at < TLS_REFUSED_MS &&
	       (tls_conn_cert_requested(st->tls) || tls_conn_alerted(st->tls));
}

/* The receiver went away: close and try again after the backoff. */
void syslog_lost(struct syslog_state *st, const char *what, int err)
{
	uint64_t now = syslog_mono_ms();

	sock_error(st, what, err);
	if (!st->tls_refused)
		st->tls_refused = tls_refused(st);
	count_inflight(st, "connection to");
	/* A connection that broke at once does not reset the backoff. */
	if (st->conn == ST_UP && now - st->connected_at >= 2000)
		st->backoff = st->cfg->reconnect_min;
	close_fd(st);
	st->conn = ST_DOWN;
	st->was_down = true;
	st->host->timer_arm(st->retry_timer, st->backoff, 0);
	st->backoff = st->backoff * 2 > st->cfg->reconnect_max ? st->cfg->reconnect_max
							       : st->backoff * 2;
}

static void up(struct syslog_state *st)
{
	st->conn = ST_UP;
	st->connected_at = syslog_mono_ms();
	st->host->timer_disarm(st->retry_timer);
	if (st->was_down) {
		log_drops(st, true);
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
	return stream(st->cfg) ? EPOLLIN | EPOLLRDHUP : 0;
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
	bool asked = tls_conn_cert_requested(st->tls) &&
		     (!st->cfg->tls_cert_file || tls_refused(st));

	st->host->counter_add(st->inst, st->c_tls_failures, 1);
	st->host->log(st->inst, SL_LOG_ERR, "TLS session with %s failed: %s%s", st->where, why,
		      !asked ? ""
		      : !st->cfg->tls_cert_file ? " (the server asked for a client certificate and "
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
		st->tls = tls_conn_new(st->tls_creds, st->fd, st->tls_name, st->cfg->tls_verify, err,
				       sizeof(err));
		if (!st->tls) {
			tls_failed(st, err);
			return;
		}
	}
	rc = tls_conn_handshake(st->tls, err, sizeof(err));
	if (rc == TLS_WANT_READ || rc == TLS_WANT_WRITE) {
		syslog_arm_fd(st, rc == TLS_WANT_READ ? EPOLLIN | EPOLLRDHUP : EPOLLOUT);
		return;
	}
	if (rc != TLS_DONE) {
		tls_failed(st, err);
		return;
	}
	up(st);
	syslog_arm_fd(st, syslog_idle_events(st));
	drain(st);
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
		drain(st);
		return;
	}
	/* TLS: an alert before the error says why (a refused client certificate) */
	if (st->tls && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		char why[256];
		int rc = tls_conn_discard_input(st->tls, why, sizeof(why));

		if (rc == TLS_FAILED) {
			syslog_tls_lost(st, why);
			return;
		}
		if (rc == TLS_CLOSED) {
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
		drain(st);
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
		struct tls_conf tc = { c->tls_ca_file, c->tls_cert_file, c->tls_key_file, true,
				       c->tls_min_version == 1 };

		st->relp = relp_conn_new(st->relp_host, st->relp_port, RELP_TIMEOUT_S,
					 c->tls_ca_file ? &tc : NULL, st->tls_name, err, sizeof(err));
	}
	if (!st->relp || (rc = relp_conn_open(st->relp, err, sizeof(err))) < 0) {
		if (rc == -2)
			st->host->counter_add(st->inst, st->c_tls_failures, 1);
		/* librelp does not tell a refused certificate apart: say it all */
		st->host->log(st->inst, st->cfg->tls_ca_file ? SL_LOG_WARNING : SL_LOG_DEBUG, "%s: %s",
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
	drain(st);
}

static void do_connect(struct syslog_state *st)
{
	int type = stream(st->cfg) ? SOCK_STREAM : SOCK_DGRAM;
	int fd;

	if (st->cfg->transport == TR_RELP) {
		relp_connect(st);
		return;
	}
	close_fd(st);
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
	drain(st);
}

static void on_retry_timer(void *state)
{
	struct syslog_state *st = state;

	if (st->conn == ST_CONNECTING) {
		syslog_lost(st, "timed out connecting to", ETIMEDOUT);
		return;
	}
	if (st->conn == ST_DOWN)
		do_connect(st);
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
	drain(st);
}

static void on_pace_timer(void *state)
{
	drain(state);
}

/* ---- sending ---- */

static bool gone(int err)
{
	return err == ECONNREFUSED || err == ECONNRESET || err == EPIPE || err == ENOTCONN ||
	       err == ENOENT || err == EDESTADDRREQ || err == EHOSTUNREACH || err == ENETUNREACH ||
	       err == ETIMEDOUT || err == ECONNABORTED || err == EACCES || err == EPERM;
}

static void drain_dgram(struct syslog_state *st)
{
	while (st->qcount) {
		unsigned i, n = q_gather(st, st->probe_needed ? 1 : BATCH_MSGS);
		int sent;

		for (i = 0; i < n; i++) {
			memset(&st->mm[i], 0, sizeof(st->mm[i]));
			st->mm[i].msg_hdr.msg_iov = &st->iov[i];
			st->mm[i].msg_hdr.msg_iovlen = 1;
		}
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
				sock_error(st, "message too long for", err);
				syslog_q_pop(st);
				count_drops(st, 1);
				continue;
			}
			if (gone(err)) {
				syslog_lost(st, "cannot send to", err);
				return;
			}
			sock_error(st, "cannot send to", err);
			syslog_q_pop(st);	/* unknown error: do not spin on it */
			count_drops(st, 1);
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
		unsigned n = q_gather(st, BATCH_MSGS);
		struct msghdr mh = { .msg_iov = st->iov, .msg_iovlen = n };
		ssize_t sent = sendmsg(st->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

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
		for (unsigned i = 0; i < n && sent > 0; i++) {
			if ((size_t)sent >= st->iov[i].iov_len) {
				sent -= (ssize_t)st->iov[i].iov_len;
				st->written += (uint32_t)st->iov[i].iov_len;
				st->ends[st->ends_n++ % INFLIGHT_MSGS] = st->written;
				syslog_q_pop(st);
			} else {
				st->written += (uint32_t)sent;
				st->head_sent += (size_t)sent;
				sent = 0;
			}
		}
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
		unsigned done = 0, n = q_gather(st, BATCH_MSGS);
		ssize_t taken = tls_conn_writev(st->tls, st->iov, n, err, sizeof(err));

		if (taken == TLS_FAILED) {
			syslog_tls_lost(st, err);
			return;
		}
		if (taken == 0)
			break;
		for (unsigned i = 0; i < n && taken > 0; i++) {
			if ((size_t)taken >= st->iov[i].iov_len) {
				taken -= (ssize_t)st->iov[i].iov_len;
				syslog_q_pop(st);
				done++;
			} else {
				st->head_sent += (size_t)taken;
				taken = 0;
			}
		}
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

static void drain(struct syslog_state *st)
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

static void enqueue(struct syslog_state *st, const struct sl_record *r, struct sl_time ts)
{
	bool escaped, lf;
	size_t n = sl_syslog_fmt_message(&st->fmt, st->msg, st->msg_cap, r, ts, &escaped), total;
	char digits[SL_SYSLOG_FRAME_MAX];
	size_t dlen;
	uint8_t *dst;

	if (escaped)
		st->host->counter_add(st->inst, st->c_escaped, 1);
	if (!n) {	/* the header alone is longer than message_size */
		if (!st->warned_header)
			st->host->log(st->inst, SL_LOG_WARNING,
				      "message header longer than message_size (%zu): message dropped",
				      st->msg_cap);
		st->warned_header = true;
		st->host->counter_add(st->inst, st->c_dropped, 1);
		st->host->dropped_add(st->inst, 1);
		return;
	}
	dlen = sl_syslog_fmt_frame(st->framing, n, digits, &lf);
	total = dlen + n + lf;
	if (st->spool && !st->spool_adopted)
		syslog_spool_adopt(st);
	/* once something is spooled, everything newer follows it there */
	if (st->spool && sl_spool_pending(st->spool)) {
		syslog_spool_put(st, digits, dlen, n, lf);
		return;
	}
	dst = q_reserve(st, (uint32_t)total);
	if (!dst && st->spool) {
		syslog_spool_put(st, digits, dlen, n, lf);
		return;
	}
	if (!dst) {
		count_drops(st, 1);
		return;
	}
	memcpy(dst + 4, digits, dlen);
	memcpy(dst + 4 + dlen, st->msg, n);
	if (lf)
		dst[4 + dlen + n] = '\n';
	q_commit(st, (uint32_t)total);
}

static int syslog_process(void *state, struct sl_batch *batch)
{
	struct syslog_state *st = state;
	struct sl_time now = { 0, 0 };
	unsigned i, no_text = 0;

	for (i = 0; i < batch->count; i++) {
		const struct sl_record *r = batch->rec[i];

		if (!sl_has(r, SL_F_TEXT)) {
			no_text++;
			continue;
		}
		if (sl_has(r, SL_F_TIMESTAMP)) {
			enqueue(st, r, r->v[SL_F_TIMESTAMP].time);
			continue;
		}
		if (!now.sec) {	/* once per batch: the input gave no time */
			struct timespec tp;

			clock_gettime(CLOCK_REALTIME, &tp);
			now.sec = tp.tv_sec;
			now.nsec = (uint32_t)tp.tv_nsec;
		}
		enqueue(st, r, now);
	}
	if (no_text) {
		st->host->counter_add(st->inst, st->c_no_text, no_text);
		st->host->dropped_add(st->inst, no_text);
	}
	if (st->spool)
		sl_spool_flush(st->spool);	/* one write per batch */
	if (!st->catchup)	/* else the pace timer sends */
		drain(st);
	if (st->spool)
		syslog_spool_publish(st);
	return 0;
}

/* ---- configuration and lifecycle ---- */

/* "host:port", "[v6]:port", "host" (port defport); no lookup here. */
static int split_address(const char *a, const char *defport, char *host, size_t hostlen, char *port,
			 size_t portlen)
{
	const char *colon;
	size_t n;

	if (*a == '[') {
		const char *end = strchr(a, ']');

		if (!end)
			return -1;
		n = (size_t)(end - a - 1);
		if (n == 0 || n >= hostlen)
			return -1;
		memcpy(host, a + 1, n);
		host[n] = 0;
		if (end[1] == 0) {
			snprintf(port, portlen, "%s", defport);
			return 0;
		}
		if (end[1] != ':')
			return -1;
		colon = end + 1;
	} else {
		colon = strrchr(a, ':');
		if (colon && strchr(a, ':') != colon)
			return -1;	/* a bare IPv6 address needs [] */
		n = colon ? (size_t)(colon - a) : strlen(a);
		if (n == 0 || n >= hostlen)
			return -1;
		memcpy(host, a, n);
		host[n] = 0;
		if (!colon) {
			snprintf(port, portlen, "%s", defport);
			return 0;
		}
	}
	{
		char *end;
		long p = strtol(colon + 1, &end, 10);

		if (!colon[1] || *end || p < 1 || p > 65535)
			return -1;
		snprintf(port, portlen, "%ld", p);
	}
	return 0;
}

static const char *default_port(const struct syslog_cfg *c)
{
	/* RFC 5425 8; RELP has no IANA port, 2514 is rsyslog's example */
	return c->transport == TR_TLS ? "6514" : c->transport == TR_RELP ? "2514" : "514";
}

/* tls_* options: only with transport tls; the files are loaded now. */
static int configure_tls(const struct sl_host *host, struct sl_instance *inst,
			 const struct syslog_cfg *c, struct syslog_state *st, const char *addr_host)
{
	const char *bad = NULL;
	char err[512];
	struct tls_conf tc = { c->tls_ca_file, c->tls_cert_file, c->tls_key_file, c->tls_verify,
			       c->tls_min_version == 1 };

	if (c->transport == TR_RELP && !relp_available()) {
		host->config_error(inst, "transport", "sluice was built without RELP (SLUICE_WITH_RELP=OFF)");
		return -1;
	}
	/* RELP over TLS: librelp's own TLS, switched on by tls_ca_file */
	if (c->transport == TR_RELP && !c->tls_ca_file && (c->tls_cert_file || c->tls_key_file ||
							    c->tls_server_name)) {
		host->config_error(inst, c->tls_cert_file ? "tls_cert_file" : c->tls_key_file ?
				   "tls_key_file" : "tls_server_name",
				   "relp: TLS is switched on by tls_ca_file, which is not set");
		return -1;
	}
	if (c->transport == TR_RELP && !c->tls_verify) {
		host->config_error(inst, "tls_verify", "relp: TLS without verification is not supported");
		return -1;
	}
	if (c->transport != TR_TLS && !(c->transport == TR_RELP && c->tls_ca_file)) {
		bad = c->tls_ca_file ? "tls_ca_file" : c->tls_cert_file ? "tls_cert_file"
		    : c->tls_key_file ? "tls_key_file" : c->tls_server_name ? "tls_server_name"
		    : !c->tls_verify ? "tls_verify" : c->tls_min_version ? "tls_min_version" : NULL;
		if (bad) {
			host->config_error(inst, bad, "only applies to transport: tls");
			return -1;
		}
		return 0;
	}
	if (!tls_available()) {
		host->config_error(inst, "transport", "sluice was built without TLS (SLUICE_WITH_TLS=OFF)");
		return -1;
	}
	if (c->framing != FR_OCTET) {
		host->config_error(inst, "framing", "tls is always octet-counted (RFC 5425 4.3)");
		return -1;
	}
	st->tls_creds = tls_creds_new(&tc, &bad, err, sizeof(err));
	if (!st->tls_creds) {
		host->config_error(inst, bad, "%s", err);
		return -1;
	}
	snprintf(st->tls_name, sizeof(st->tls_name), "%s",
		 c->tls_server_name ? c->tls_server_name : addr_host);
	if (!c->tls_verify)
		host->log(inst, SL_LOG_WARNING, "tls_verify: false: the server is not authenticated");
	return 0;
}

static int syslog_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			    void **state)
{
	const struct syslog_cfg *c = config;
	struct syslog_state *st;
	char h[256], p[16];

	if (!sl_syslog_fmt_name_ok(c->app_name, SL_SYSLOG_APP_NAME_MAX, "")) {
		host->config_error(inst, "app_name", "must be 1 to 48 printable ASCII characters, no spaces");
		return -1;
	}
	if (c->hostname && !sl_syslog_fmt_name_ok(c->hostname, SL_SYSLOG_HOSTNAME_MAX, "")) {
		host->config_error(inst, "hostname",
				   "must be 1 to 255 printable ASCII characters, no spaces");
		return -1;
	}
	if (!sl_syslog_fmt_name_ok(c->msgid, SL_SYSLOG_MSGID_MAX, "")) {
		host->config_error(inst, "msgid", "must be 1 to 32 printable ASCII characters, no spaces");
		return -1;
	}
	if (!sl_syslog_fmt_name_ok(c->sd_id, SL_SYSLOG_SD_NAME_MAX,
				   SL_SYSLOG_SD_NAME_FORBIDDEN)) {
		host->config_error(inst, "sd_id", "must be 1 to 32 printable ASCII characters, "
				   "without space, '=', ']' or '\"'");
		return -1;
	}
	if (c->structured_data && c->format != SL_SYSLOG_RFC5424) {
		host->config_error(inst, "structured_data", "needs format: rfc5424");
		return -1;
	}
	if (c->framing != FR_OCTET && c->transport != TR_TCP && c->transport != TR_TLS) {
		host->config_error(inst, "framing", "only applies to transport: tcp");
		return -1;
	}
	if (c->message_size * 4 > c->queue_size) {
		host->config_error(inst, "queue_size", "must hold at least four messages of message_size");
		return -1;
	}
	if (c->spool_dir && c->transport != TR_TCP && c->transport != TR_TLS &&
	    c->transport != TR_RELP) {
		host->config_error(inst, "spool_dir", "only applies to transport: tcp, tls or relp");
		return -1;
	}
	if (c->spool_dir && c->spool_dir[0] != '/') {
		host->config_error(inst, "spool_dir", "expected an absolute directory path");
		return -1;
	}
	if (c->reconnect_min > c->reconnect_max) {
		host->config_error(inst, "reconnect_min", "is larger than reconnect_max");
		return -1;
	}
	if (c->transport == TR_UNIX) {
		if (c->address && strlen(c->address) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
			host->config_error(inst, "address", "socket path too long");
			return -1;
		}
	} else if (c->address && split_address(c->address, default_port(c), h, sizeof(h), p,
					       sizeof(p)) < 0) {
		host->config_error(inst, "address", "expected host:port, [ipv6]:port or host");
		return -1;
	}

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->host = host;
	st->inst = inst;
	st->cfg = c;
	st->fd = -1;
	st->backoff = c->reconnect_min;
	st->c_dropped = host->counter_new(inst, "dropped_messages");
	st->c_reconnects = host->counter_new(inst, "reconnects");
	st->c_no_text = host->counter_new(inst, "no_text");
	st->c_escaped = host->counter_new(inst, "escaped");
	st->c_possibly_lost = host->counter_new(inst, "possibly_lost");
	if (configure_tls(host, inst, c, st, c->address ? h : "127.0.0.1") < 0) {
		free(st);
		return -1;
	}
	if (c->transport == TR_TLS || (c->transport == TR_RELP && c->tls_ca_file))
		st->c_tls_failures = host->counter_new(inst, "tls_failures");
	if (c->spool_dir) {
		sl_spool_counters_new(&st->spool_ctr, host, inst);
	}
	*state = st;
	return 0;
}

static int resolve(struct syslog_state *st)
{
	const struct syslog_cfg *c = st->cfg;

	if (c->transport == TR_UNIX) {
		struct sockaddr_un *sa = (struct sockaddr_un *)&st->addr;
		const char *path = c->address ? c->address : "/dev/log";

		sa->sun_family = AF_UNIX;
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path);
		st->addrlen = sizeof(*sa);
		snprintf(st->where, sizeof(st->where), "unix:%s", path);
		return 0;
	} else {
		struct addrinfo hints = { 0 }, *res = NULL;
		char h[256], p[16];
		int rc;

		if (split_address(c->address ? c->address : "127.0.0.1", default_port(c), h, sizeof(h),
				  p, sizeof(p)) < 0)
			return -1;
		hints.ai_socktype = stream(c) ? SOCK_STREAM : SOCK_DGRAM;
		hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
		rc = getaddrinfo(h, p, &hints, &res);
		if (rc == EAI_NONAME) {	/* not numeric: look it up, once, now */
			hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
			rc = getaddrinfo(h, p, &hints, &res);
		}
		if (rc || !res) {
			st->host->log(st->inst, SL_LOG_ERR, "cannot resolve %s: %s", h,
				      rc ? gai_strerror(rc) : "no address");
			return -1;
		}
		snprintf(st->relp_host, sizeof(st->relp_host), "%s", h);
		snprintf(st->relp_port, sizeof(st->relp_port), "%s", p);
		memcpy(&st->addr, res->ai_addr, res->ai_addrlen);
		st->addrlen = res->ai_addrlen;
		freeaddrinfo(res);
		snprintf(st->where, sizeof(st->where), "%s:%s%s%s:%s", transport_names[c->transport],
			 strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "", p);
		return 0;
	}
}

static int syslog_start(void *state)
{
	struct syslog_state *st = state;
	const struct syslog_cfg *c = st->cfg;
	char host[SL_SYSLOG_HOSTNAME_MAX + 1], pid[24];
	struct sl_syslog_fmt_conf fc = {
		.format = (enum sl_syslog_format)c->format,
		.local = c->transport == TR_UNIX,
		.facility = c->facility,
		.severity = c->severity,
		.hostname = c->hostname,
		.app_name = c->app_name,
		.procid = pid,
		.msgid = c->msgid,
		.sd_id = c->structured_data ? c->sd_id : NULL,
	};

	if (resolve(st) < 0)
		return -1;
	if (!c->hostname) {	/* this machine's; an unknown one is "-" */
		host[0] = 0;
		if (gethostname(host, sizeof(host) - 1) < 0)
			host[0] = 0;
		host[sizeof(host) - 1] = 0;
		fc.hostname = host;
	}
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	sl_syslog_fmt_init(&st->fmt, &fc);	/* facility and severity are the enums' */
	st->framing = !stream(c) ? SL_SYSLOG_FRAME_NONE
		      : c->framing == FR_LF ? SL_SYSLOG_FRAME_LF : SL_SYSLOG_FRAME_OCTET;

	st->msg_cap = (size_t)c->message_size;
	st->msg = malloc(st->msg_cap);
	st->qcap = (size_t)c->queue_size & ~(size_t)3;
	st->q = malloc(st->qcap);
	if ((c->transport == TR_TCP || c->transport == TR_TLS) &&
	    !(st->ends = calloc(INFLIGHT_MSGS, sizeof(*st->ends)))) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->retry_timer = st->host->timer_new(st->inst, on_retry_timer, st);
	st->probe_timer = st->host->timer_new(st->inst, on_probe_timer, st);
	st->pace_timer = st->host->timer_new(st->inst, on_pace_timer, st);
	if (!st->msg || !st->q || !st->retry_timer || !st->probe_timer || !st->pace_timer) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (c->spool_dir) {
		char err[600];

		st->sbuf = malloc(st->msg_cap + 32);
		st->spool = st->sbuf ? sl_spool_open(c->spool_dir, c->spool_max_size, syslog_spool_log, st,
						     err, sizeof(err))
				     : NULL;
		if (!st->spool) {
			st->host->log(st->inst, SL_LOG_ERR, "spool_dir: %s",
				      st->sbuf ? err : "out of memory");
			return -1;
		}
		syslog_spool_publish(st);
		if (c->transport == TR_RELP &&
		    !(st->rs_iov = calloc(RELP_SPOOL_IOV, sizeof(*st->rs_iov)))) {
			st->host->log(st->inst, SL_LOG_ERR, "out of memory");
			return -1;
		}
	}
	/* A receiver that is not there yet is not fatal: we queue and retry. */
	do_connect(st);
	if (st->conn == ST_DOWN)
		st->host->log(st->inst, SL_LOG_NOTICE, "%s not reachable yet; will keep trying",
			      st->where);
	return 0;
}

static int syslog_flush(void *state)
{
	struct syslog_state *st = state;

	if (st->spool)
		sl_spool_flush(st->spool);
	drain(st);
	return 0;
}

static void syslog_stop(void *state)
{
	struct syslog_state *st = state;
	uint64_t end = syslog_mono_ms() + STOP_DRAIN_MS;

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
		uint64_t now = syslog_mono_ms();

		if (now >= end || poll(&pfd, 1, (int)(end - now)) <= 0)
			break;
		on_fd(st, st->fd, (uint32_t)pfd.revents);
	}
	if (st->cfg->transport == TR_RELP) {
		st->drain_until = end;
		drain(st);
		/* closes after the last acknowledgements, which proves the spool's */
		if (relp_conn_close(st->relp) && st->spool)
			syslog_spool_ack_n(st, st->rs_handed);
		st->relp = NULL;
		st->rs_handed = 0;
	}
	/* Give a connected receiver a moment to take the rest. */
	while (st->qcount && st->fd >= 0 && st->conn == ST_UP && !st->probe_inflight) {
		struct pollfd pfd = { .fd = st->fd, .events = POLLOUT };
		uint64_t now = syslog_mono_ms();
		unsigned before = st->qcount;

		drain(st);
		if (!st->qcount || st->fd < 0 || now >= end)
			break;
		if (st->qcount == before && poll(&pfd, 1, (int)(end - now)) <= 0)
			break;
	}
	/* TLS: the last record may still wait in GnuTLS */
	while (st->tls && tls_conn_pending(st->tls) && st->conn == ST_UP && syslog_mono_ms() < end) {
		struct pollfd pfd = { .fd = st->fd, .events = POLLOUT };

		drain(st);
		if (st->tls && tls_conn_pending(st->tls))
			poll(&pfd, 1, 5);
	}
	/* TCP: written is not delivered; wait for the acknowledgements too */
	if (stream(st->cfg) && st->fd >= 0 && st->conn == ST_UP) {
		int outq = 0;

		while (ioctl(st->fd, SIOCOUTQ, &outq) == 0 && outq > 0 && syslog_mono_ms() < end)
			poll(NULL, 0, 5);
		count_inflight(st, "at shutdown,");
		/*
		 * TLS: a refusal (an alert, or rsyslog's close) follows what it
		 * refused.  A session the server asked a client certificate of
		 * is waited on while it is young enough to be refused
		 * (tls_refused()), so counting it does not depend on speed.
		 */
		if (st->tls) {
			uint64_t until = tls_conn_cert_requested(st->tls)
						 ? st->connected_at + TLS_REFUSED_MS
						 : syslog_mono_ms() + TLS_ALERT_WAIT_MS;
			uint64_t now;

			while (st->tls && st->conn == ST_UP && (now = syslog_mono_ms()) < until) {
				struct pollfd pfd = { .fd = st->fd, .events = POLLIN };

				if (poll(&pfd, 1, (int)(until - now)) <= 0)
					break;
				on_fd(st, st->fd, (uint32_t)pfd.revents);
			}
		}
	}
	if (st->spool) {
		syslog_spool_save_queue(st);
		sl_spool_close(st->spool);
		st->spool = NULL;
	}
	if (st->qcount) {
		st->host->log(st->inst, SL_LOG_WARNING, "%u queued messages for %s lost at shutdown",
			      st->qcount, st->where);
		st->host->counter_add(st->inst, st->c_dropped, st->qcount);
		st->host->dropped_add(st->inst, st->qcount);
	}
	log_drops(st, true);
	close_fd(st);
	st->conn = ST_DOWN;
	st->qcount = 0;
	st->qhead = st->qtail = 0;
}

static void syslog_destroy(void *state)
{
	struct syslog_state *st = state;

	if (!st)
		return;
	tls_conn_free(st->tls);
	tls_creds_free(st->tls_creds);
	relp_conn_free(st->relp);
	if (st->fd >= 0)
		close(st->fd);
	sl_spool_close(st->spool);
	free(st->sbuf);
	free(st->rs_iov);
	free(st->q);
	free(st->ends);
	free(st->msg);
	free(st);
}

static const struct sl_plugin syslog_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "syslog",
	.description = "send each record's text to syslog (RFC 3164/5424) over unix, UDP, TCP, TLS or RELP",
	.config_size = sizeof(struct syslog_cfg),
	.options = syslog_opts,
	.needs = syslog_needs,
	.reads = syslog_reads,
	.configure = syslog_configure,
	.start = syslog_start,
	.process = syslog_process,
	.flush = syslog_flush,
	.stop = syslog_stop,
	.destroy = syslog_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(syslog_plugin)
