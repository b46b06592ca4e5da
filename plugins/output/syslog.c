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
 * (order); the queue, always older, is sent first.  The spool is the sink
 * engine's (sink_spool.h); when a spooled message counts as delivered per
 * transport is in syslog_send.c.
 * The bytes of each message and its framing come from the formatter in
 * plugins/common/syslog_fmt.h; the queue is syslog_queue.c, the transport
 * (connecting, TLS, RELP, sending, what a failure lost) syslog_conn.c.
 * This file holds the options, their checks, formatting each record into
 * the queue, and the plugin's lifecycle.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "fmt.h"
#include "sink.h"
#include "sink_spool.h"
#include "syslog_fmt.h"
#include "relp_conn.h"
#include "tls_options.h"
#include "tls_stream.h"
#include "syslog_out.h"


static const char *const format_names[] = { "rfc3164", "rfc5424", NULL };
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

static const struct sl_option syslog_opts[] = {
	SL_OPT_ENUM("format", struct syslog_cfg, format, "rfc3164", format_names,
		    "message format: rfc3164 (BSD) or rfc5424"),
	SL_OPT_ENUM("transport", struct syslog_cfg, transport, "unix", transport_names,
		    "unix (datagram socket), udp, tcp, tls (RFC 5425) or relp (acknowledged; "
		    "over TLS when tls_ca_file is set)"),
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
		    "rfc5424: add the packet's addresses, protocol and ports (and with nflog's rules: true its rule_* fields) as structured data"),
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
	SL_TLS_OPTIONS(struct syslog_cfg, tls, "tls, relp: "),
	SL_SINK_OPT_SPOOL_ROWS(struct syslog_cfg, spool_dir, spool_max_size,
			       "tcp, tls, relp: directory of a disk spool for what the queue "
			       "cannot hold (default: none)", "messages"),
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

/* Append one framed message (digits, text, LF) to the spool. */
static void spool_put(struct syslog_state *st, const char *digits, size_t dlen, size_t n, bool lf)
{
	memcpy(st->sbuf, digits, dlen);
	memcpy(st->sbuf + dlen, st->msg, n);
	if (lf)
		st->sbuf[dlen + n] = '\n';
	sl_sink_spool_append(&st->ss, st->sbuf, dlen + n + lf);	/* a refusal is counted there */
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
	syslog_adopt_spool(st);
	/* once something is spooled, everything newer follows it there */
	if (sl_sink_spool_takes(&st->ss)) {
		spool_put(st, digits, dlen, n, lf);
		return;
	}
	dst = syslog_q_reserve(st, (uint32_t)total);
	if (!dst && st->ss.sp) {
		spool_put(st, digits, dlen, n, lf);
		return;
	}
	if (!dst) {
		syslog_count_drops(st, 1);
		return;
	}
	memcpy(dst + 4, digits, dlen);
	memcpy(dst + 4 + dlen, st->msg, n);
	if (lf)
		dst[4 + dlen + n] = '\n';
	syslog_q_commit(st, (uint32_t)total);
}

/*
 * On the output's own thread a record was written by the input's thread and
 * copied through the core's queue: what enqueue() reads first (the presence
 * bits, the text and its mark, the timestamp: cache lines far apart in the
 * record) is not in this CPU's cache, and those misses were most of the
 * formatter's time.  Ask for them a few records ahead.
 */
#define PREFETCH_AHEAD 4

static void prefetch_record(const struct sl_record *r)
{
	__builtin_prefetch(r->present);
	__builtin_prefetch(&r->v[SL_F_TEXT]);
	__builtin_prefetch(&r->v[SL_F_TEXT_SAFE]);
	__builtin_prefetch(&r->v[SL_F_TIMESTAMP]);
}

static int syslog_process(void *state, struct sl_batch *batch)
{
	struct syslog_state *st = state;
	struct sl_time now = { 0, 0 };
	unsigned i, no_text = 0;

	for (i = 0; i < batch->count && i < PREFETCH_AHEAD; i++)
		prefetch_record(batch->rec[i]);
	for (i = 0; i < batch->count; i++) {
		const struct sl_record *r = batch->rec[i];

		if (i + PREFETCH_AHEAD < batch->count)
			prefetch_record(batch->rec[i + PREFETCH_AHEAD]);
		if (!sl_has(r, SL_F_TEXT)) {
			no_text++;
			continue;
		}
		if (sl_has(r, SL_F_TIMESTAMP)) {
			enqueue(st, r, r->v[SL_F_TIMESTAMP].time);
			continue;
		}
		if (!now.sec)	/* once per batch: the input gave no time */
			now = sl_clock_time(CLOCK_REALTIME);
		enqueue(st, r, now);
	}
	if (no_text) {
		st->host->counter_add(st->inst, st->c_no_text, no_text);
		st->host->dropped_add(st->inst, no_text);
	}
	if (st->ss.sp)
		sl_spool_flush(st->ss.sp);	/* one write per batch */
	if (!st->catchup)	/* else the pace timer sends */
		syslog_drain(st);
	sl_sink_spool_publish(&st->ss);
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
	struct sl_tls_conf tc = sl_tls_conf_of(&c->tls);

	if (c->transport == TR_RELP && !sl_relp_available()) {
		host->config_error(inst, "transport", "sluice was built without RELP (SLUICE_WITH_RELP=OFF)");
		return -1;
	}
	/* RELP over TLS: librelp's own TLS, switched on by tls_ca_file */
	if (c->transport == TR_RELP && !c->tls.ca_file && (c->tls.cert_file || c->tls.key_file ||
							    c->tls.server_name)) {
		host->config_error(inst, c->tls.cert_file ? "tls_cert_file" : c->tls.key_file ?
				   "tls_key_file" : "tls_server_name",
				   "relp: TLS is switched on by tls_ca_file, which is not set");
		return -1;
	}
	if (c->transport == TR_RELP && !c->tls.verify) {
		host->config_error(inst, "tls_verify", "relp: TLS without verification is not supported");
		return -1;
	}
	if (c->transport != TR_TLS && !(c->transport == TR_RELP && c->tls.ca_file)) {
		bad = sl_tls_cfg_first_set(&c->tls);
		if (bad) {
			host->config_error(inst, bad, "only applies to transport: tls");
			return -1;
		}
		return 0;
	}
	if (!sl_tls_available()) {
		host->config_error(inst, "transport", "sluice was built without TLS (SLUICE_WITH_TLS=OFF)");
		return -1;
	}
	if (c->framing != FR_OCTET) {
		host->config_error(inst, "framing", "tls is always octet-counted (RFC 5425 4.3)");
		return -1;
	}
	st->tls_creds = sl_tls_creds_new(&tc, &bad, err, sizeof(err));
	if (!st->tls_creds) {
		host->config_error(inst, bad, "%s", err);
		return -1;
	}
	snprintf(st->tls_name, sizeof(st->tls_name), "%s",
		 c->tls.server_name ? c->tls.server_name : addr_host);
	if (!c->tls.verify)
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
	if (sl_sink_check_spool_dir(c->spool_dir, host, inst) < 0)
		return -1;
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

	st = sl_state_new(struct syslog_state, host, inst, c);
	if (!st)
		return -1;
	st->fd = -1;
	st->backoff = c->reconnect_min;
	st->c_dropped = host->counter_new(inst, "dropped_messages");
	st->c_reconnects = host->counter_new(inst, "reconnects");
	st->c_no_text = host->counter_new(inst, "no_text");
	st->c_escaped = host->counter_new(inst, "escaped");
	st->c_possibly_lost = host->counter_new(inst, "possibly_lost");
	st->rule = (struct sl_rule_fields)SL_RULE_FIELDS_NONE;
	if (c->structured_data)
		sl_rule_fields_find(&st->rule, host, inst);
	if (configure_tls(host, inst, c, st, c->address ? h : "127.0.0.1") < 0) {
		free(st);
		return -1;
	}
	if (c->transport == TR_TLS || (c->transport == TR_RELP && c->tls.ca_file))
		st->c_tls_failures = host->counter_new(inst, "tls_failures");
	sl_sink_spool_init(&st->ss, host, inst, c->spool_dir);
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
		hints.ai_socktype = syslog_stream(c) ? SOCK_STREAM : SOCK_DGRAM;
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
	if (c->structured_data)
		st->fmt.rule = st->rule;	/* nflog's rule_* fields, found at configure */
	st->framing = !syslog_stream(c) ? SL_SYSLOG_FRAME_NONE
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
	syslog_conn_timers_new(st);
	if (!st->msg || !st->q || !st->retry_timer || !st->probe_timer || !st->pace_timer) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (c->spool_dir) {
		st->sbuf = malloc(st->msg_cap + 32);
		if (!st->sbuf) {
			st->host->log(st->inst, SL_LOG_ERR, "spool_dir: out of memory");
			return -1;
		}
		if (sl_sink_spool_open(&st->ss, c->spool_dir, c->spool_max_size) < 0)
			return -1;
		if (c->transport == TR_RELP &&
		    !(st->rs_iov = calloc(RELP_SPOOL_IOV, sizeof(*st->rs_iov)))) {
			st->host->log(st->inst, SL_LOG_ERR, "out of memory");
			return -1;
		}
	}
	/* A receiver that is not there yet is not fatal: we queue and retry. */
	syslog_connect(st);
	if (st->conn == ST_DOWN)
		st->host->log(st->inst, SL_LOG_NOTICE, "%s not reachable yet; will keep trying",
			      st->where);
	return 0;
}

static int syslog_flush(void *state)
{
	struct syslog_state *st = state;

	if (st->ss.sp)
		sl_spool_flush(st->ss.sp);
	syslog_drain(st);
	return 0;
}

static void syslog_stop(void *state)
{
	struct syslog_state *st = state;

	syslog_conn_stop(st);
	if (st->ss.sp) {
		/* the queue is older than all of the spool: in front of it */
		sl_sink_spool_save_queue(&st->ss, st->qcount, syslog_q_to_spool, st, st->where);
		sl_sink_spool_close(&st->ss, NULL);
	}
	if (st->qcount) {
		st->host->log(st->inst, SL_LOG_WARNING, "%u queued messages for %s lost at shutdown",
			      st->qcount, st->where);
		st->host->counter_add(st->inst, st->c_dropped, st->qcount);
		st->host->dropped_add(st->inst, st->qcount);
	}
	syslog_log_drops(st, true);
	syslog_close_fd(st);
	st->conn = ST_DOWN;
	st->qcount = 0;
	st->qhead = st->qtail = 0;
}

static void syslog_destroy(void *state)
{
	struct syslog_state *st = state;

	if (!st)
		return;
	sl_tls_conn_free(st->tls);
	sl_tls_creds_free(st->tls_creds);
	sl_relp_conn_free(st->relp);
	if (st->fd >= 0)
		close(st->fd);
	sl_sink_spool_close(&st->ss, NULL);
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
