/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog output's configuration and state, shared by its files (not
 * an API: internal to syslog.so; everything on the output's thread):
 *   syslog.c        options, configure, records formatted into the queue
 *                   (the bytes from plugins/common/syslog_fmt.h), start,
 *                   stop, destroy;
 *   syslog_queue.c  the bounded ring of framed messages;
 *   syslog_conn.c   the transport: connect with backoff, TLS, RELP, the
 *                   socket's events and timers, counting what a failed
 *                   connection did not deliver, the send at stop;
 *   syslog_send.c   the queue sent without blocking, then the disk spool
 *                   (spool_dir; the sink engine's, sink_spool.h), each
 *                   spooled message acknowledged when its transport
 *                   counts it delivered.
 */
#ifndef SLUICE_SYSLOG_OUT_H
#define SLUICE_SYSLOG_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <sluice/plugin.h>

#include "fmt.h"
#include "plugin_state.h"
#include "relp_conn.h"
#include "sink_spool.h"
#include "syslog_fmt.h"
#include "tls_options.h"

/* The options (syslog.c's table). */
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
	struct sl_tls_cfg tls;
	const char *spool_dir;
	uint64_t spool_max_size;
};

#define BATCH_MSGS 64		/* messages per sendmsg; per sendmmsg while pacing */
/*
 * Datagrams per sendmmsg otherwise: a batch from the input is usually sent
 * in one call (the kernel takes up to UIO_MAXIOV, 1024).
 */
#define DGRAM_BATCH_MSGS 256
#define LOG_EVERY_MS 10000
#define PROBE_MS 100		/* wait for an ICMP error after a UDP probe */
#define PACE_MS 1		/* UDP backlog: one batch per tick (no flow control) */
#define CONNECT_TIMEOUT_MS 10000
#define STOP_DRAIN_MS 1000	/* at shutdown, wait this long to send the rest */
#define TLS_ALERT_WAIT_MS 50	/* at shutdown, for the server's verdict */
#define RELP_TIMEOUT_S 5	/* librelp: connect, and wait for window room / acks */
#define WRAP_MARK 0xffffffffu
/* RELP: spool records handed to librelp and not yet proven acknowledged */
#define RELP_SPOOL_IOV (2 * SL_RELP_WINDOW + BATCH_MSGS)
/*
 * TCP and TLS: messages whose end offsets are remembered (256 KiB).  More
 * than that unacknowledged at a failure (a 4 MiB send buffer full of
 * messages under 64 bytes) and the rest is estimated from their mean size.
 */
#define INFLIGHT_MSGS 65536u
/*
 * TLS: a session that breaks, in any way, this soon after a handshake in
 * which the server asked for a client certificate (TLS 1.3 checks it only
 * after our side of the handshake; rsyslog checks the name after it), or
 * with a fatal alert, refused us: nothing written on it was taken.  At
 * exit such a session is waited on until it is this old.
 */
#define TLS_REFUSED_MS 2000

enum { TR_UNIX, TR_UDP, TR_TCP, TR_TLS, TR_RELP };
enum { FR_OCTET, FR_LF };
enum { ST_DOWN, ST_CONNECTING, ST_UP };

struct syslog_state {
	SL_STATE_HEAD(struct syslog_cfg);
	char where[300];		/* the address, for messages */

	struct sockaddr_storage addr;
	socklen_t addrlen;
	int fd;
	int conn;			/* ST_* */
	uint32_t watched;		/* epoll events registered, when fd >= 0 */
	bool probe_needed, probe_inflight;	/* UDP only */
	unsigned catchup;		/* UDP: backlog messages still to pace */
	uint64_t backoff, connected_at;
	struct sl_timer *retry_timer, *probe_timer, *pace_timer;

	/* ring of [u32 len][bytes][pad]; qhead == qtail only when empty */
	uint8_t *q;
	size_t qcap, qhead, qtail;
	unsigned qcount;
	size_t head_sent;		/* TCP: bytes of the head message sent */

	/*
	 * TCP: bytes written on this connection, and where messages end.
	 * TLS: wire bytes (sl_tls_conn_wire), and each message's is where the
	 * TLS record holding its end ends: a record is readable only whole.
	 */
	uint32_t written;		/* mod 2^32: the window is far smaller */
	uint32_t *ends;			/* ring: written at each message's end */
	uint64_t ends_n;		/* messages put in the ring */
	uint64_t lost_counted;		/* of them, counted possibly_lost already */
	unsigned tls_rec_msgs;		/* TLS: messages ending in the unflushed record */
	bool tls_refused;		/* TLS: the server refused this session */

	char *msg;			/* one message being formatted */
	size_t msg_cap;
	struct sl_syslog_fmt fmt;	/* header fields, date caches */
	struct sl_rule_fields rule;	/* nflog's rule_* fields, for structured_data */
	enum sl_syslog_framing framing;	/* none (datagrams, relp), octets or LF */

	/* TLS: credentials loaded at configure time, a session per connection */
	struct sl_tls_creds *tls_creds;
	struct sl_tls_conn *tls;
	char tls_name[256];		/* the name the server must prove */
	struct sl_relp_conn *relp;		/* RELP: librelp's session, kept across reconnects */
	char relp_host[256], relp_port[16];

	int c_dropped, c_reconnects, c_no_text, c_escaped, c_possibly_lost, c_tls_failures;

	struct sl_sink_spool ss;	/* spool_dir: ss.sp, else NULL */
	size_t spool_head_sent;		/* bytes of the spool's head message sent */
	unsigned spool_taken;		/* TLS: of tls_rec_msgs, spool records */
	struct iovec *rs_iov;		/* RELP: peeks beyond the handed records */
	unsigned rs_handed;		/* RELP: spool records librelp has, unproven */
	uint64_t rs_first;		/* RELP: sl_relp_conn_sent() of the first of them */
	uint64_t drain_until;		/* at stop: the spool is sent until then */
	char *sbuf;			/* one framed message for the spool */
	uint64_t drops_unlogged, drops_outage, drop_logged_at;
	uint64_t err_logged_at, errs_unlogged;
	bool was_down;
	bool warned_header;

	bool mm_ready;			/* mm[i] points at iov[i] (sendmmsg writes only msg_len) */
	struct mmsghdr mm[DGRAM_BATCH_MSGS];
	struct iovec iov[DGRAM_BATCH_MSGS];	/* BATCH_MSGS for streams and the spool */
};

/* A byte stream: TCP, or TLS over TCP. */
static inline bool syslog_stream(const struct syslog_cfg *c)
{
	return c->transport == TR_TCP || c->transport == TR_TLS;
}

/* syslog_queue.c: the ring (entries of 4 + len rounded up to 4 bytes). */
/* Room for a message of len bytes at the tail, or NULL (full); syslog_q_commit() keeps it. */
uint8_t *syslog_q_reserve(struct syslog_state *st, uint32_t len);
void syslog_q_commit(struct syslog_state *st, uint32_t len);
/* The offset of the entry at off, 0 past a wrap. */
size_t syslog_q_fix(const struct syslog_state *st, size_t off);
/* The length of the message of the entry at off (after syslog_q_fix). */
uint32_t syslog_q_len(const struct syslog_state *st, size_t off);
/* Drop the head message (sent, or dropped and counted by the caller); head_sent reset. */
void syslog_q_pop(struct syslog_state *st);
/* Up to max head messages as st->iov (the first from head_sent on); how many. */
unsigned syslog_q_gather(struct syslog_state *st, unsigned max);

/* syslog_send.c: what the queue (then the spool) holds, as far as the socket takes it now. */
void syslog_drain(struct syslog_state *st);
/*
 * bytes of the n messages in st->iov went out (tcp: written to the socket,
 * counted in written and their ends put in the ring; else taken into TLS
 * records): how many went whole; *part gets the bytes of the next one that
 * did (its sent-so-far grows by them).
 */
unsigned syslog_iov_done(struct syslog_state *st, unsigned n, size_t bytes, bool tcp, size_t *part);
/* Every queued message appended to the spool, oldest first: how many (sl_sink_requeue_fn). */
unsigned syslog_q_to_spool(void *st);
/*
 * With spool_dir, until the spool's lock is ours (a reload's new
 * instance): take it, the queue behind what it holds.  Not while a
 * message is half written: that one is finished first.
 */
void syslog_adopt_spool(struct syslog_state *st);

/* syslog_conn.c */
/* A socket error counted (errors), logged at most once per LOG_EVERY_MS. */
void syslog_sock_error(struct syslog_state *st, const char *what, int err);
/* Warn about dropped messages not yet reported: at most once per LOG_EVERY_MS unless force. */
void syslog_log_drops(struct syslog_state *st, bool force);
/* n messages the queue could not take: dropped_messages, the core's dropped, the warning. */
void syslog_count_drops(struct syslog_state *st, uint64_t n);
/* The retry, probe and pace timers (NULL when out of memory: start checks). */
void syslog_conn_timers_new(struct syslog_state *st);
/* Connect (RELP: open librelp's session); a failure arms the retry with backoff. */
void syslog_connect(struct syslog_state *st);
/*
 * At stop, for at most STOP_DRAIN_MS: timers off, the UDP probe's verdict,
 * a TLS handshake finished, the queue sent, RELP's session closed (which
 * proves the spool's records), TCP's acknowledgements waited for and what
 * was not acknowledged counted possibly_lost, a TLS refusal waited for.
 * The queue may still hold messages; the socket is still open.
 */
void syslog_conn_stop(struct syslog_state *st);
/* Close the socket and TLS session; the per-connection counts reset. */
void syslog_close_fd(struct syslog_state *st);
/* The receiver went away: what it may not have read counted, reconnect after the backoff. */
void syslog_lost(struct syslog_state *st, const char *what, int err);
void syslog_tls_lost(struct syslog_state *st, const char *why);
/* TLS: n more messages end in the record just written out. */
void syslog_tls_written(struct syslog_state *st, unsigned n);
void syslog_arm_fd(struct syslog_state *st, uint32_t events);
uint32_t syslog_idle_events(const struct syslog_state *st);
/* RELP: a session (librelp's, kept across reconnects) opened; -1 after syslog_lost(). */
int syslog_relp_open(struct syslog_state *st);

#endif /* SLUICE_SYSLOG_OUT_H */
