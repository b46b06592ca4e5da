/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ipfix: flow records exported as IPFIX (RFC 7011) over UDP.
 *
 * Templates are made on demand, one per address family and per set of
 * optional fields a record carries (counters per direction, TCP flags,
 * interfaces, NAT translation, end reason, TOS), so a record never exports a
 * field it does not have as a fake zero.  A template goes out in the same
 * message as its first data record, and again with the next record that
 * uses it once `template_interval` has passed (UDP collectors that restart
 * learn it then), or right after a send failed with ECONNREFUSED.  The
templates and the records' bytes: ipfix_records.c.
 *
 * Records are copied into one message buffer of at most `mtu` bytes; the
 * message is sent when the next record does not fit, every
 * `flush_interval`, and at flush/stop.  The socket is a connected,
 * non-blocking UDP socket: a failed send is counted in send_errors and
 * retried up to max_retries times (default 0), then costs that message
 * (records_lost), never the daemon.
 *
 * Batching, the flush timer and the retries are the sink engine's
 * (sink.h): the batch is the message being built, a unit one data record;
 * admit() says whether the next record (its template set and data set
 * header included) still fits in `mtu`, else the engine sends the message
 * first; send() is one datagram.  A retry sends the same message again
 * (same sequence number, a new export time); after ECONNREFUSED the
 * templates its data sets use go first, in messages of template sets
 * only, since the collector that refused lost them or the refused message
 * carried them.  A message given up on is lost: records_lost is the
 * engine's dropped counter, and retried() has its templates go again (the
 * failed sends were warned, rate-limited, so it logs nothing more).
 * batch_size is not an option: `mtu` bounds a message, and no message
 * holds MAX_RECORDS records.
 *
 * No spool_dir: UDP acknowledges nothing.  A send succeeds once the local
 * stack took the datagram, whether or not a collector listens; a refusal
 * (ICMP port unreachable) comes back on a later send, if at all (a host
 * that is down, or a firewall, sends none), and by then the refused
 * message is gone.  A spool would acknowledge, and delete, messages as
 * lost as without it, and send a backlog in a burst a restarted
 * collector's socket buffer would drop.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "flow_fields.h"
#include "ipfix_records.h"
#include "plugin_state.h"
#include "sink.h"

#define IPFIX_VERSION 10
#define IPFIX_HDR_LEN 16
#define SET_TEMPLATE 2
#define SEND_WARN_NS (10 * 1000000000LL)
#define MAX_RECORDS 65535	/* the engine's batch_size: more than any message holds */

struct ipfix_cfg {
	const char *address;
	int64_t observation_domain;
	uint64_t mtu;
	uint64_t template_interval;
	struct sl_sink_cfg sink;	/* flush_interval, max_retries, retry_* */
};

static const struct sl_option ipfix_options[] = {
	SL_OPT_STR("address", struct ipfix_cfg, address, SL_REQUIRED,
		   "collector: host:port, [IPv6]:port, or host (port 4739)"),
	SL_OPT_INT("observation_domain", struct ipfix_cfg, observation_domain, "0", 0, 4294967295LL,
		   "observation domain id in the message header"),
	SL_OPT_SIZE("mtu", struct ipfix_cfg, mtu, "1400", 256, 65000,
		    "largest IPFIX message (UDP payload) sent"),
	SL_OPT_DURATION("template_interval", struct ipfix_cfg, template_interval, "60s", 1000,
			86400 * 1000LL, "resend a template with its next record after this long"),
	/* the engine's row, with ipfix's own limit (10m) and text */
	SL_OPT_DURATION("flush_interval", struct ipfix_cfg, sink.flush_interval, "1s", 10,
			600 * 1000LL, "longest a record waits in a partly filled message"),
	SL_SINK_OPT_RETRY(struct ipfix_cfg, sink, "0", 100,
			  "retries of a failed send before its message is lost"),
	SL_OPT_END
};

static const struct sl_field_decl ipfix_needs[] = {
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_DECL(SL_F_FLOW_START),
	SL_FIELD_DECL(SL_F_FLOW_END),
	SL_FIELD_END
};

/* Read when present (a queue in front of it copies needs + these). */
static const struct sl_field_decl ipfix_reads[] = {
	SL_FLOW_OPTIONAL_FIELDS,
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_DECL(SL_F_IP_TOS),
	SL_FIELD_END
};

struct ipfix {
	SL_SINK_STATE_HEAD(struct ipfix_cfg);
	char *host_part, *port_part;

	int fd;
	struct sl_sink_cfg sink_cfg;	/* cfg->sink with batch_size MAX_RECORDS */

	uint8_t *msg;
	uint8_t *tmsg;		/* after msg: a message of templates only */
	size_t len;		/* bytes in msg, header included */
	size_t set_off;		/* offset of the open data set; 0: none */
	uint16_t set_id;
	uint32_t msg_records;
	uint8_t msg_tmpl[NTEMPLATES / 8];	/* templates carried by the message */
	uint32_t seq;		/* data records sent before this message */
	bool refused;		/* this message's last send: ECONNREFUSED */

	struct ipfix_tmpl t[NTEMPLATES];

	/* what admit() found for the record encode() writes next */
	unsigned next_idx;
	bool next_tmpl;
	struct sl_time now;
	int64_t now_ms;

	int c_messages, c_send_errors, c_records_lost, c_skipped, c_retries;
	int64_t warned_ns;
	uint64_t errors_total;
};

/* ---- messages ---- */

static void close_set(struct ipfix *st)
{
	if (st->set_off) {
		ipfix_put16(st->msg + st->set_off + 2, (uint16_t)(st->len - st->set_off));
		st->set_off = 0;
		st->set_id = 0;
	}
}

static void reset_msg(struct ipfix *st)
{
	st->len = IPFIX_HDR_LEN;
	st->set_off = 0;
	st->set_id = 0;
	st->msg_records = 0;
	st->refused = false;
	memset(st->msg_tmpl, 0, sizeof(st->msg_tmpl));
}

static void skipped(struct ipfix *st)
{
	st->host->counter_add(st->inst, st->c_skipped, 1);
	st->host->dropped_add(st->inst, 1);
}

/* One failed send: counted, and warned at most every SEND_WARN_NS. */
static void send_failed(struct ipfix *st, int err)
{
	int64_t now;

	st->errors_total++;
	st->host->counter_add(st->inst, st->c_send_errors, 1);
	st->host->error_add(st->inst, 1);
	/* a refused message means the collector was down: it needs every template */
	if (err == ECONNREFUSED)
		for (unsigned i = 0; i < NTEMPLATES; i++)
			st->t[i].sent_ms = 0;
	now = sl_clock_ns(CLOCK_MONOTONIC);
	if (st->warned_ns && now - st->warned_ns < SEND_WARN_NS)
		return;
	st->warned_ns = now;
	st->host->log(st->inst, SL_LOG_WARNING,
		      "cannot send to the collector %s:%s: %s (%llu failed message%s so far)",
		      st->host_part, st->port_part, strerror(err),
		      (unsigned long long)st->errors_total, st->errors_total == 1 ? "" : "s");
}

/* ---- the sink's callbacks (sink.h) ---- */

/*
 * Whether record r fits in the message, with the template set it needs
 * (none sent yet, or template_interval passed) and a data set header
 * unless the open set is its template's.
 */
static enum sl_sink_admit ipfix_admit(void *ctx, const struct sl_record *r)
{
	struct ipfix *st = ctx;
	const uint8_t *src, *dst;
	struct ipfix_tmpl *t;
	size_t need;
	bool v6;

	if (!sl_has(r, SL_F_ORIG_SRC) || !sl_has(r, SL_F_ORIG_DST)) {
		skipped(st);
		return SL_SINK_SKIP;
	}
	src = r->v[SL_F_ORIG_SRC].addr;
	dst = r->v[SL_F_ORIG_DST].addr;
	v6 = !(sl_addr_is_v4(src) && sl_addr_is_v4(dst));
	st->next_idx = ipfix_template_index(r, v6);
	t = &st->t[st->next_idx];
	if (!t->built)
		ipfix_template_build(t, st->next_idx);
	st->now = sl_clock_time(CLOCK_REALTIME);
	st->now_ms = sl_clock_ms(CLOCK_MONOTONIC);
	st->next_tmpl = !t->sent_ms ||
			st->now_ms - t->sent_ms >= (int64_t)st->cfg->template_interval;
	need = t->reclen;
	if (st->next_tmpl)
		need += 4 + t->speclen;
	if (st->next_tmpl || st->set_id != t->id)
		need += 4;
	if (st->len + need <= st->cfg->mtu)
		return SL_SINK_TAKE;
	if (!st->msg_records) {
		/* cannot happen: mtu >= 256 holds the largest template and record */
		skipped(st);
		return SL_SINK_SKIP;
	}
	return SL_SINK_FULL;
}

/* The record admit() took, with its template set when due. */
static bool ipfix_encode(void *ctx, const struct sl_record *r)
{
	struct ipfix *st = ctx;
	unsigned idx = st->next_idx;
	struct ipfix_tmpl *t = &st->t[idx];

	if (st->next_tmpl) {
		close_set(st);
		ipfix_put16(st->msg + st->len, SET_TEMPLATE);
		ipfix_put16(st->msg + st->len + 2, (uint16_t)(4 + t->speclen));
		memcpy(st->msg + st->len + 4, t->spec, t->speclen);
		st->len += 4 + t->speclen;
		t->sent_ms = st->now_ms;
		st->msg_tmpl[idx / 8] |= (uint8_t)(1u << (idx % 8));
	}
	if (st->set_id != t->id) {
		close_set(st);
		st->set_off = st->len;
		st->set_id = t->id;
		ipfix_put16(st->msg + st->len, t->id);
		st->len += 4;
	}
	ipfix_record_put(st->msg + st->len, r, idx, &st->now);
	st->len += t->reclen;
	st->msg_records++;
	return true;
}

/* One message in buf as a datagram: 0, or the errno of the failed send. */
static int send_dgram(struct ipfix *st, uint8_t *buf, size_t len)
{
	ssize_t n;

	ipfix_put16(buf, IPFIX_VERSION);
	ipfix_put16(buf + 2, (uint16_t)len);
	ipfix_put32(buf + 4, (uint32_t)sl_clock_time(CLOCK_REALTIME).sec);
	ipfix_put32(buf + 8, st->seq);
	ipfix_put32(buf + 12, (uint32_t)st->cfg->observation_domain);
	if (st->fd < 0)
		return ENOTCONN;
	do
		n = send(st->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	st->host->counter_add(st->inst, st->c_messages, 1);
	return 0;
}

/* The template set of tmsg (len bytes) as a message. */
static int send_tset(struct ipfix *st, size_t len)
{
	ipfix_put16(st->tmsg + IPFIX_HDR_LEN, SET_TEMPLATE);
	ipfix_put16(st->tmsg + IPFIX_HDR_LEN + 2, (uint16_t)(len - IPFIX_HDR_LEN));
	return send_dgram(st, st->tmsg, len);
}

/*
 * Before a message is sent again after a refusal, the templates its data
 * sets use and it does not carry, in messages of template sets only (RFC
 * 7011 allows them): the refused message may have carried them, or the
 * collector restarted without them.  0, or the errno.
 */
static int send_templates(struct ipfix *st)
{
	uint8_t need[NTEMPLATES / 8] = { 0 };
	size_t off, slen, len = IPFIX_HDR_LEN + 4;
	int err;

	for (off = IPFIX_HDR_LEN; off + 4 <= st->len; off += slen) {
		unsigned idx = (unsigned)(st->msg[off] << 8 | st->msg[off + 1]) - TEMPLATE_ID_BASE;

		slen = (size_t)(st->msg[off + 2] << 8 | st->msg[off + 3]);
		if (slen < 4)
			break;	/* cannot happen: every set is closed */
		if (idx < NTEMPLATES && !(st->msg_tmpl[idx / 8] & (1u << (idx % 8))))
			need[idx / 8] |= (uint8_t)(1u << (idx % 8));
	}
	for (unsigned i = 0; i < NTEMPLATES; i++) {
		if (!(need[i / 8] & (1u << (i % 8))))
			continue;
		if (len + st->t[i].speclen > st->cfg->mtu) {
			err = send_tset(st, len);
			if (err)
				return err;
			len = IPFIX_HDR_LEN + 4;
		}
		memcpy(st->tmsg + len, st->t[i].spec, st->t[i].speclen);
		len += st->t[i].speclen;
	}
	return len > IPFIX_HDR_LEN + 4 ? send_tset(st, len) : 0;
}

/* The message as one datagram; on a retry the same but its export time. */
static enum sl_sink_result ipfix_send(void *ctx, unsigned n)
{
	struct ipfix *st = ctx;
	int err;

	(void)n;	/* msg_records */
	close_set(st);
	err = st->refused ? send_templates(st) : 0;
	if (!err)
		err = send_dgram(st, st->msg, st->len);
	if (!err) {
		st->seq += st->msg_records;
		return SL_SINK_SENT;
	}
	st->refused = err == ECONNREFUSED;
	send_failed(st, err);
	/* too large for the path: the same bytes will not go later */
	return err == EMSGSIZE ? SL_SINK_REJECTED : SL_SINK_RETRY;
}

/* Each failed send was warned (rate-limited): only a lost message's templates go again. */
static void ipfix_retried(void *ctx, unsigned n, int64_t retries, bool sent)
{
	struct ipfix *st = ctx;

	(void)n;
	(void)retries;
	if (sent)
		return;
	for (unsigned i = 0; i < NTEMPLATES; i++)
		if (st->msg_tmpl[i / 8] & (1u << (i % 8)))
			st->t[i].sent_ms = 0;
}

static void ipfix_reset(void *ctx)
{
	reset_msg(ctx);
}

/* No spool_rec, send_spooled: no spool_dir (above). */
static const struct sl_sink_ops ipfix_sink_ops = {
	.encode = ipfix_encode,
	.send = ipfix_send,
	.reset = ipfix_reset,
	.admit = ipfix_admit,
	.retried = ipfix_retried,
};

static const struct sl_sink_def ipfix_sink_def = {
	.ops = &ipfix_sink_ops,
	.batch = "message",
	.done = "sent",
};

/* ---- lifecycle ---- */

/* Split "host:port", "[v6]:port", "host" or "v6" into parts; -1 if malformed. */
static int split_address(const char *a, char **host, char **port)
{
	const char *colon, *h = a, *p = "4739";
	size_t hlen;

	if (a[0] == '[') {
		const char *close = strchr(a, ']');

		if (!close || close == a + 1)
			return -1;
		h = a + 1;
		hlen = (size_t)(close - h);
		if (close[1] == ':')
			p = close + 2;
		else if (close[1])
			return -1;
	} else if ((colon = strchr(a, ':')) && !strchr(colon + 1, ':')) {
		hlen = (size_t)(colon - a);
		p = colon + 1;
	} else {
		hlen = strlen(a);	/* a bare host, or an IPv6 address without a port */
	}
	if (!hlen || !*p)
		return -1;
	for (const char *c = p; *c; c++)
		if (*c < '0' || *c > '9')
			return -1;
	if (atol(p) < 1 || atol(p) > 65535 || strlen(p) > 5)
		return -1;
	*host = strndup(h, hlen);
	*port = strdup(p);
	if (!*host || !*port) {
		free(*host);
		free(*port);
		return -1;
	}
	return 0;
}

static int ipfix_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			   void **state)
{
	const struct ipfix_cfg *cfg = config;
	struct ipfix *st;

	if (sl_sink_check(&cfg->sink, host, inst) < 0)
		return -1;
	st = sl_sink_state_new(struct ipfix, host, inst, cfg);
	if (!st)
		return -1;
	if (split_address(cfg->address, &st->host_part, &st->port_part) < 0) {
		host->config_error(inst, "address", "expected host:port, [IPv6]:port or host, not '%s'",
				   cfg->address);
		free(st);
		return -1;
	}
	st->fd = -1;
	st->c_messages = host->counter_new(inst, "messages");
	st->c_send_errors = host->counter_new(inst, "send_errors");
	st->c_records_lost = host->counter_new(inst, "records_lost");
	st->c_skipped = host->counter_new(inst, "skipped");
	st->c_retries = host->counter_new(inst, "retries");
	st->sink_cfg = cfg->sink;
	st->sink_cfg.batch_size = MAX_RECORDS;
	/* a message given up on is lost: records_lost is the engine's dropped counter */
	sl_sink_init(&st->sink, host, inst, &st->sink_cfg, &ipfix_sink_def, st, st->c_retries,
		     st->c_records_lost);
	*state = st;
	return 0;
}

static int ipfix_start(void *state)
{
	struct ipfix *st = state;
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	int err, sndbuf = 1 << 20;

	st->msg = malloc(2 * st->cfg->mtu);
	if (!st->msg) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->tmsg = st->msg + st->cfg->mtu;
	reset_msg(st);
	err = getaddrinfo(st->host_part, st->port_part, &hints, &res);
	if (err) {
		st->host->log(st->inst, SL_LOG_ERR, "collector %s: %s", st->host_part, gai_strerror(err));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		st->fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (st->fd < 0)
			continue;
		if (connect(st->fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(st->fd);
		st->fd = -1;
	}
	freeaddrinfo(res);
	if (st->fd < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot reach collector %s:%s: %s", st->host_part,
			      st->port_part, strerror(errno));
		return -1;
	}
	/* room for bursts: a full socket buffer would cost messages */
	setsockopt(st->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	if (sl_sink_start(&st->sink) < 0)
		return -1;
	st->host->log(st->inst, SL_LOG_INFO, "exporting IPFIX to %s port %s (domain %lld, mtu %llu)",
		      st->host_part, st->port_part, (long long)st->cfg->observation_domain,
		      (unsigned long long)st->cfg->mtu);
	return 0;
}

static void ipfix_stop(void *state)
{
	struct ipfix *st = state;

	sl_sink_stop(&st->sink);	/* the last message, then the timer off */
	if (st->fd >= 0)
		close(st->fd);
	st->fd = -1;
	free(st->msg);
	st->msg = NULL;
}

static void ipfix_destroy(void *state)
{
	struct ipfix *st = state;

	sl_sink_destroy(&st->sink);
	free(st->host_part);
	free(st->port_part);
	free(st);
}

static const struct sl_plugin ipfix_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "ipfix",
	.description = "flows exported as IPFIX (RFC 7011) over UDP, IPv4 and IPv6",
	.config_size = sizeof(struct ipfix_cfg),
	.options = ipfix_options,
	.needs = ipfix_needs,
	.reads = ipfix_reads,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = ipfix_stop,
	.destroy = ipfix_destroy,
	.configure = ipfix_configure,
	.start = ipfix_start,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(ipfix_plugin)
