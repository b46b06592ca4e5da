/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nats output: each record's text (the json filter's JSON, or logline's
 * line) as one NATS message on a subject made from the record's fields
 * (subject_tmpl.h), through the NATS C client (libnats); with `jetstream`
 * (the default) published to a JetStream stream and counted delivered
 * only once the stream acknowledged it.
 *
 * The sink engine's batch mode (sink.h) does the batching, the retries
 * and the disk spool: a batch of up to batch_size records is published at
 * once (js_PublishMsgAsync, pipelined on the connection), then send()
 * waits up to ack_timeout for every acknowledgement
 * (js_PublishAsyncComplete).  All acknowledged: SENT.  Any missing or
 * failed: the whole batch is tried again (in place, or from the spool
 * with spool_dir), and the records that did reach the stream the first
 * time are dropped by the stream as duplicates: each record carries a
 * Nats-Msg-Id header fixed when it entered the batch and kept in the
 * spool, so every resend has the same id and the stream's duplicate
 * window (default 2 minutes) stores it once.  The id is "<boot>-<n>":
 * 16 hex digits drawn at random when the instance starts, and the
 * record's number since then (two starts drawing the same 64 bits is
 * not a practical concern); a record spooled by an earlier run keeps the
 * id it had.
 *
 * Acknowledgements come on libnats' own threads (the ErrHandler): they
 * only count errors under a mutex, read by send() on our thread.  While
 * the connection is not up (libnats reconnects on its own threads, for
 * ever), send() fails at once without publishing, so nothing piles up in
 * libnats' reconnect buffer; every wait is bounded by ack_timeout (1 s at
 * most during a flush or stop), every write by a deadline, so a stop never
 * waits long on a server.
 *
 * Without jetstream, a batch is published and then flushed with a PING
 * (natsConnection_FlushTimeout): SENT once the server has read it.  Core
 * NATS acknowledges nothing to a publisher: a record is delivered to the
 * subscribers there are at that moment, and a resend after a failed flush
 * may deliver it twice (a stream capturing the subject still drops the
 * duplicate by its Nats-Msg-Id).
 *
 * One unit, in the batch and in the spool: 'n', u8 id length, the id,
 * u16 LE subject length, the subject, the text.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <nats/nats.h>

#include <sluice/plugin.h>

#include "grow.h"
#include "plugin_state.h"
#include "sink.h"
#include "subject_tmpl.h"
#include "tls_options.h"

#define UNIT_HDR 4u			/* 'n', id length, subject length */
#define ID_MAX 40u
#define UNIT_MAX (256u << 10)		/* the spool takes up to 256 KiB - 24 */
#define STOP_WAIT_MS 1000		/* longest wait for acknowledgements at flush or stop */
#define SPOOL_PEEK 1000u

struct nats_cfg {
	struct sl_strlist servers;
	const char *subject;
	bool jetstream;
	uint64_t ack_timeout;
	const char *user;
	const char *password;
	const char *token;
	const char *creds_file;
	const char *nkey;
	const char *nkey_seed_file;
	struct sl_tls_cfg tls;
	struct sl_sink_cfg sink;	/* batch_size, flush_interval, max_retries, retry_*, spool_* */
};

static const struct sl_option nats_opts[] = {
	SL_OPT_LIST("servers", struct nats_cfg, servers, "nats://127.0.0.1:4222",
		    "NATS servers, nats://host:port or tls://host:port each"),
	SL_OPT_STR("subject", struct nats_cfg, subject, SL_REQUIRED,
		   "subject, with {field} for a record field's value (e.g. fw.{nflog_group})"),
	SL_OPT_BOOL("jetstream", struct nats_cfg, jetstream, "true",
		    "publish to a JetStream stream and wait for its acknowledgements"),
	SL_OPT_DURATION("ack_timeout", struct nats_cfg, ack_timeout, "5s", 100, 600000,
			"longest wait for a batch's acknowledgements (or flush without jetstream)"),
	SL_SINK_OPT_BATCH(struct nats_cfg, sink, "1000", 100000,
			  "records published before their acknowledgements are awaited"),
	SL_SINK_OPT_RETRY(struct nats_cfg, sink, "8", 1000,
			  "retries of a batch that was not acknowledged before its records are dropped"),
	SL_SINK_OPT_SPOOL_OF(struct nats_cfg, sink, "records that cannot be published", "records"),
	SL_OPT_STR("user", struct nats_cfg, user, NULL, "user name (with password)"),
	SL_OPT_STR("password", struct nats_cfg, password, SL_SECRET(NULL), "password of that user"),
	SL_OPT_STR("token", struct nats_cfg, token, SL_SECRET(NULL), "authentication token"),
	SL_OPT_STR("creds_file", struct nats_cfg, creds_file, SL_PATH(NULL, SL_OPT_IN_FILE),
		   "credentials file: user JWT and NKey seed (decentralised authentication)"),
	SL_OPT_STR("nkey", struct nats_cfg, nkey, NULL,
		   "NKey public key of the user (with nkey_seed_file)"),
	SL_OPT_STR("nkey_seed_file", struct nats_cfg, nkey_seed_file, SL_PATH(NULL, SL_OPT_IN_FILE),
		   "file holding the NKey seed that signs the server's nonce"),
	SL_TLS_OPTIONS(struct nats_cfg, tls, "tls:// servers: "),
	SL_OPT_END
};

static const struct sl_field_decl nats_needs[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_END
};

/* The template's fields come from need_field(): nothing else is read. */
static const struct sl_field_decl nats_reads[] = {
	SL_FIELD_END
};

struct nats_state {
	SL_SINK_STATE_HEAD(struct nats_cfg);
	struct sl_subject_tmpl subj;

	natsConnection *nc;
	jsCtx *js;
	char boot[17];			/* this start's part of the message ids */
	uint64_t seq;			/* records numbered since start */
	char subject[SL_SUBJECT_MAX_LEN];	/* admit()'s, for encode() */
	size_t subject_len;

	/* the batch: units back to back, ends[i] where unit i ends */
	uint8_t *buf;
	size_t len, cap;
	size_t *ends;
	struct iovec *iov;		/* the batch's units, for publish() */
	unsigned units;

	/* the acknowledgement errors, from libnats' threads */
	pthread_mutex_t lock;
	uint64_t ack_errors;
	bool ack_permanent;		/* one of them will not change on a resend */
	char ack_text[160];

	int c_published, c_retries, c_dropped, c_ack_errors, c_timeouts, c_no_text,
	    c_bad_subject;
	bool down_logged;
};

/* ---- configuration ---- */

static const struct sl_sink_def nats_sink_def;

static int resolve_field(void *ctx, const char *name, enum sl_type *type)
{
	struct nats_state *st = ctx;
	int id = st->host->need_field(st->inst, "subject", name);

	if (id >= 0)
		*type = st->host->field_type(st->inst, id);
	return id;
}

static int check_servers(const struct sl_host *host, struct sl_instance *inst,
			 const struct nats_cfg *c, bool *tls)
{
	unsigned ntls = 0;

	if (!c->servers.n) {
		host->config_error(inst, "servers", "needs at least one server");
		return -1;
	}
	for (unsigned i = 0; i < c->servers.n; i++) {
		const char *s = c->servers.v[i];

		if (strncmp(s, "nats://", 7) && strncmp(s, "tls://", 6)) {
			host->config_error(inst, "servers", "'%s': expected nats://host:port or "
					   "tls://host:port", s);
			return -1;
		}
		if (strpbrk(s, " ,\t")) {
			host->config_error(inst, "servers", "'%s': one server per entry", s);
			return -1;
		}
		ntls += s[0] == 't';
	}
	if (ntls && ntls != c->servers.n) {
		host->config_error(inst, "servers", "all tls:// or none");
		return -1;
	}
	*tls = ntls > 0;
	return 0;
}

static int check_auth(const struct sl_host *host, struct sl_instance *inst, const struct nats_cfg *c,
		      bool tls)
{
	const char *t = sl_tls_cfg_first_set(&c->tls);
	int ways = !!c->user + !!c->token + !!c->creds_file + !!c->nkey;

	if (ways > 1) {
		host->config_error(inst, NULL, "user, token, creds_file and nkey exclude each other");
		return -1;
	}
	if (!!c->user != !!c->password) {
		host->config_error(inst, c->user ? "user" : "password", "user and password go together");
		return -1;
	}
	if (!!c->nkey != !!c->nkey_seed_file) {
		host->config_error(inst, c->nkey ? "nkey" : "nkey_seed_file",
				   "nkey and nkey_seed_file go together");
		return -1;
	}
	if (!tls && t) {
		host->config_error(inst, t, "only applies to tls:// servers");
		return -1;
	}
	if (!!c->tls.cert_file != !!c->tls.key_file) {
		host->config_error(inst, c->tls.cert_file ? "tls_cert_file" : "tls_key_file",
				   "tls_cert_file and tls_key_file go together");
		return -1;
	}
	if (c->tls.min_version) {	/* libnats offers no minimum version of its own */
		host->config_error(inst, "tls_min_version", "libnats cannot require TLS 1.3: "
				   "leave it at 1.2 (the oldest libnats offers)");
		return -1;
	}
	return 0;
}

static int nats_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct nats_cfg *c = config;
	struct nats_state *st;
	char err[160];
	bool tls;

	if (check_servers(host, inst, c, &tls) < 0 || check_auth(host, inst, c, tls) < 0 ||
	    sl_sink_check(&c->sink, host, inst) < 0)
		return -1;
	st = sl_sink_state_new(struct nats_state, host, inst, config);
	if (!st)
		return -1;
	if (sl_subject_parse(&st->subj, c->subject, resolve_field, st, err, sizeof(err)) < 0) {
		if (err[0])
			host->config_error(inst, "subject", "%s", err);
		free(st);
		return -1;
	}
	pthread_mutex_init(&st->lock, NULL);
	st->c_published = host->counter_new(inst, "published");
	st->c_ack_errors = host->counter_new(inst, "ack_errors");
	st->c_timeouts = host->counter_new(inst, "timeouts");
	st->c_no_text = host->counter_new(inst, "no_text");
	st->c_bad_subject = host->counter_new(inst, "bad_subject");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_dropped = host->counter_new(inst, "dropped_records");
	sl_sink_init(&st->sink, host, inst, &c->sink, &nats_sink_def, st, st->c_retries,
		     st->c_dropped);
	*state = st;
	return 0;
}

/* A server's text, for a log line: printable ASCII only, cut to cap - 1 bytes. */
static void printable(char *dst, size_t cap, const char *src)
{
	size_t n = 0;

	for (; src && *src && n + 1 < cap; src++)
		dst[n++] = *src >= ' ' && *src < 0x7f ? *src : '?';
	dst[n] = 0;
}

/* ---- acknowledgements (libnats' threads) ---- */

/* A failed acknowledgement: the server's error, a timeout, no stream (no responders). */
static void on_ack_error(jsCtx *js, jsPubAckErr *pae, void *closure)
{
	struct nats_state *st = closure;
	bool permanent;

	(void)js;
	switch ((int)pae->ErrCode) {
	case 0:				/* no JetStream answer: timeout, no responders */
	case JSClusterNotAvailErr:
	case JSClusterNotLeaderErr:
	case JSInsufficientResourcesErr:
	case JSMemoryResourcesExceededErr:
	case JSStorageResourcesExceededErr:
		permanent = false;
		break;
	default:
		permanent = true;
	}
	pthread_mutex_lock(&st->lock);
	st->ack_errors++;
	st->ack_permanent |= permanent;
	printable(st->ack_text, sizeof(st->ack_text) - 16,
		  pae->ErrText ? pae->ErrText : natsStatus_GetText(pae->Err));
	snprintf(st->ack_text + strlen(st->ack_text), 16, " (%d)", (int)pae->ErrCode);
	pthread_mutex_unlock(&st->lock);
}

/* Connected after a failed first connect: nothing to do, but libnats needs one to go async. */
static void on_connected(natsConnection *nc, void *closure)
{
	(void)nc;
	(void)closure;
}

/* ---- units ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* A unit's parts; false when it is not one of ours. */
struct unit {
	char id[ID_MAX + 1];
	char subject[SL_SUBJECT_MAX_LEN];
	const uint8_t *text;
	size_t len;
};

static bool unit_read(const uint8_t *p, size_t len, struct unit *u)
{
	size_t idlen, slen;

	if (len < UNIT_HDR || p[0] != 'n' || (idlen = p[1]) > ID_MAX || len < UNIT_HDR + idlen)
		return false;
	slen = get16(p + 2 + idlen);
	if (!slen || slen >= SL_SUBJECT_MAX_LEN || len < UNIT_HDR + idlen + slen)
		return false;
	memcpy(u->id, p + 2, idlen);
	u->id[idlen] = 0;
	memcpy(u->subject, p + UNIT_HDR + idlen, slen);
	u->subject[slen] = 0;
	if (memchr(u->subject, 0, slen))
		return false;
	u->text = p + UNIT_HDR + idlen + slen;
	u->len = len - UNIT_HDR - idlen - slen;
	return true;
}

/* ---- publishing ---- */

/* Publish the units; false when libnats refused one (the rest not published). */
static bool publish_units(struct nats_state *st, const struct iovec *v, unsigned n, unsigned *bad)
{
	struct unit u;
	natsStatus s;
	natsMsg *m;

	*bad = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!unit_read(v[i].iov_base, v[i].iov_len, &u)) {
			(*bad)++;
			continue;
		}
		m = NULL;
		s = natsMsg_Create(&m, u.subject, NULL, (const char *)u.text, (int)u.len);
		if (s == NATS_OK)
			s = natsMsgHeader_Set(m, "Nats-Msg-Id", u.id);
		if (s == NATS_OK)
			s = st->js ? js_PublishMsgAsync(st->js, &m, NULL)
				   : natsConnection_PublishMsg(st->nc, m);
		natsMsg_Destroy(m);	/* NULL when the library took it */
		if (s != NATS_OK) {
			st->host->log(st->inst, SL_LOG_WARNING, "publish to %s failed: %s", u.subject,
				      natsStatus_GetText(s));
			return false;
		}
	}
	return true;
}

/* Abandon what is still awaited: late acknowledgements are ignored, resends deduplicated. */
static void forget_pending(struct nats_state *st)
{
	natsMsgList pending;

	if (st->js && js_PublishAsyncGetPendingList(&pending, st->js) == NATS_OK)
		natsMsgList_Destroy(&pending);
}

/*
 * Publish units v[0..n) and wait for them: SENT when every one was
 * acknowledged (or, without jetstream, flushed).
 */
static enum sl_sink_result publish(struct nats_state *st, const struct iovec *v, unsigned n)
{
	int64_t wait = (int64_t)st->cfg->ack_timeout;
	unsigned bad;
	uint64_t errs;
	bool permanent;
	char text[sizeof(st->ack_text)];
	natsStatus s;

	if (natsConnection_Status(st->nc) != NATS_CONN_STATUS_CONNECTED) {
		if (!st->down_logged) {
			const char *last = NULL;
			char why[160];

			natsConnection_GetLastError(st->nc, &last);
			printable(why, sizeof(why), last && *last ? last : "connecting");
			st->host->log(st->inst, SL_LOG_WARNING, "not connected to a NATS server "
				      "(%s): %u records wait", why, n);
		}
		st->down_logged = true;
		return SL_SINK_RETRY;
	}
	if (st->down_logged)
		st->host->log(st->inst, SL_LOG_NOTICE, "connected to a NATS server again");
	st->down_logged = false;
	if (st->sink.stopping && wait > STOP_WAIT_MS)
		wait = STOP_WAIT_MS;
	pthread_mutex_lock(&st->lock);
	st->ack_errors = 0;
	st->ack_permanent = false;
	pthread_mutex_unlock(&st->lock);
	if (!publish_units(st, v, n, &bad)) {
		forget_pending(st);
		return SL_SINK_RETRY;
	}
	if (bad) {	/* only from a spool: another output's records? */
		st->host->log(st->inst, SL_LOG_ERR, "spool: %u records that are not the nats "
			      "output's skipped (counted in spool_dropped)", bad);
		sl_sink_spool_dropped(&st->sink, bad);
	}
	if (st->js) {
		jsPubOptions po;

		jsPubOptions_Init(&po);
		po.MaxWait = wait;
		s = js_PublishAsyncComplete(st->js, &po);
	} else {
		s = natsConnection_FlushTimeout(st->nc, wait);
	}
	if (s != NATS_OK) {
		forget_pending(st);
		st->host->counter_add(st->inst, st->c_timeouts, 1);
		st->host->log(st->inst, SL_LOG_WARNING, "%u records not %s within %" PRIu64 " ms: %s",
			      n - bad, st->js ? "acknowledged" : "flushed", (uint64_t)wait,
			      natsStatus_GetText(s));
		return SL_SINK_RETRY;
	}
	pthread_mutex_lock(&st->lock);
	errs = st->ack_errors;
	permanent = st->ack_permanent;
	memcpy(text, st->ack_text, sizeof(text));
	pthread_mutex_unlock(&st->lock);
	if (errs) {
		st->host->counter_add(st->inst, st->c_ack_errors, errs);
		st->host->log(st->inst, SL_LOG_WARNING, "%" PRIu64 " of %u records refused by "
			      "JetStream (last: %s)", errs, n - bad, text);
		return permanent ? SL_SINK_REJECTED : SL_SINK_RETRY;
	}
	st->host->counter_add(st->inst, st->c_published, n - bad);
	return SL_SINK_SENT;
}

/* ---- the sink's callbacks (sink.h) ---- */

static enum sl_sink_admit nats_admit(void *ctx, const struct sl_record *r)
{
	struct nats_state *st = ctx;

	if (!sl_has(r, SL_F_TEXT)) {
		st->host->counter_add(st->inst, st->c_no_text, 1);
		st->host->dropped_add(st->inst, 1);
		return SL_SINK_SKIP;
	}
	if (st->subj.fixed) {
		st->subject_len = st->subj.p[0].len;
		memcpy(st->subject, st->subj.text, st->subject_len);
	} else {
		st->subject_len = sl_subject_render(&st->subj, r, st->subject, sizeof(st->subject));
	}
	if (!st->subject_len) {		/* longer than a subject may be */
		st->host->counter_add(st->inst, st->c_bad_subject, 1);
		st->host->dropped_add(st->inst, 1);
		return SL_SINK_SKIP;
	}
	return SL_SINK_TAKE;
}

static bool nats_encode(void *ctx, const struct sl_record *r)
{
	struct nats_state *st = ctx;
	const struct sl_bytes *t = &r->v[SL_F_TEXT].bytes;
	char id[ID_MAX + 1];
	size_t idlen = (size_t)snprintf(id, sizeof(id), "%s-%" PRIu64, st->boot, ++st->seq);
	size_t need = UNIT_HDR + idlen + st->subject_len + t->len;
	uint8_t *p;

	if (!sl_grow_from(&st->buf, &st->cap, st->len + need, 1 << 16))
		return false;
	p = st->buf + st->len;
	p[0] = 'n';
	p[1] = (uint8_t)idlen;
	memcpy(p + 2, id, idlen);
	put16(p + 2 + idlen, (uint16_t)st->subject_len);
	memcpy(p + UNIT_HDR + idlen, st->subject, st->subject_len);
	memcpy(p + UNIT_HDR + idlen + st->subject_len, t->ptr, t->len);
	st->len += need;
	st->ends[++st->units] = st->len;
	return true;
}

static enum sl_sink_result nats_send(void *ctx, unsigned n)
{
	struct nats_state *st = ctx;

	for (unsigned i = 0; i < n; i++) {
		st->iov[i].iov_base = st->buf + st->ends[i];
		st->iov[i].iov_len = st->ends[i + 1] - st->ends[i];
	}
	return publish(st, st->iov, n);
}

static const void *nats_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct nats_state *st = ctx;

	*len = st->ends[i + 1] - st->ends[i];
	return *len < UNIT_MAX ? st->buf + st->ends[i] : NULL;
}

static void nats_reset(void *ctx)
{
	struct nats_state *st = ctx;

	st->len = 0;
	st->units = 0;
}

static enum sl_sink_result nats_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					     unsigned *used)
{
	struct nats_state *st = ctx;
	enum sl_sink_result r = publish(st, rec, n);

	*used = n;
	if (r == SL_SINK_RETRY)
		st->host->counter_add(st->inst, st->c_retries, 1);
	return r;
}

static const struct sl_sink_ops nats_sink_ops = {
	.encode = nats_encode,
	.send = nats_send,
	.spool_rec = nats_spool_rec,
	.reset = nats_reset,
	.send_spooled = nats_send_spooled,
	.admit = nats_admit,
};

static const struct sl_sink_def nats_sink_def = {
	.ops = &nats_sink_ops,
	.batch = "publish",
	.done = "acknowledged",
	.from_spool = "published from there when a server answers",
	.spool_peek = SPOOL_PEEK,
	.reject_retries = 2,
};

/* ---- start and stop ---- */

/* libnats' options from ours; -1 logged. */
static int options_build(struct nats_state *st, natsOptions **out)
{
	const struct nats_cfg *c = st->cfg;
	natsOptions *o = NULL;
	natsStatus s;
	const char *what = "options";

	s = natsOptions_Create(&o);
	if (s == NATS_OK)
		s = natsOptions_SetServers(o, (const char **)c->servers.v, (int)c->servers.n);
	if (s == NATS_OK)	/* start without a server: libnats connects on its own later */
		s = natsOptions_SetRetryOnFailedConnect(o, true, on_connected, st);
	if (s == NATS_OK)
		s = natsOptions_SetMaxReconnect(o, -1);
	if (s == NATS_OK)
		s = natsOptions_SetReconnectWait(o, 500);
	if (s == NATS_OK)	/* a stopped server is noticed in seconds, not minutes */
		s = natsOptions_SetPingInterval(o, 2000);
	if (s == NATS_OK)
		s = natsOptions_SetMaxPingsOut(o, 2);
	if (s == NATS_OK)	/* no write blocks for ever on a server that stopped reading */
		s = natsOptions_SetWriteDeadline(o, c->ack_timeout > 1000 ? (int64_t)c->ack_timeout
									 : 1000);
	if (s == NATS_OK)
		s = natsOptions_SetName(o, "sluice");
	if (s == NATS_OK && c->user)
		s = natsOptions_SetUserInfo(o, c->user, c->password);
	if (s == NATS_OK && c->token)
		s = natsOptions_SetToken(o, c->token);
	if (s == NATS_OK && c->creds_file && (what = "creds_file"))
		s = natsOptions_SetUserCredentialsFromFiles(o, c->creds_file, NULL);
	if (s == NATS_OK && c->nkey && (what = "nkey_seed_file"))
		s = natsOptions_SetNKeyFromSeed(o, c->nkey, c->nkey_seed_file);
	if (s == NATS_OK && c->servers.v[0][0] == 't') {
		what = "TLS";
		s = natsOptions_SetSecure(o, true);
		if (s == NATS_OK && c->tls.ca_file && (what = "tls_ca_file"))
			s = natsOptions_LoadCATrustedCertificates(o, c->tls.ca_file);
		if (s == NATS_OK && c->tls.cert_file && (what = "tls_cert_file"))
			s = natsOptions_LoadCertificatesChain(o, c->tls.cert_file, c->tls.key_file);
		if (s == NATS_OK && c->tls.server_name && (what = "tls_server_name"))
			s = natsOptions_SetExpectedHostname(o, c->tls.server_name);
		if (s == NATS_OK && !c->tls.verify) {
			st->host->log(st->inst, SL_LOG_WARNING, "tls_verify is false: the server "
				      "is not authenticated");
			s = natsOptions_SkipServerVerification(o, true);
		}
	}
	if (s != NATS_OK) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", what, natsStatus_GetText(s));
		natsOptions_Destroy(o);
		return -1;
	}
	*out = o;
	return 0;
}

static int nats_start(void *state)
{
	struct nats_state *st = state;
	natsOptions *o;
	jsOptions jo;
	uint64_t boot;
	natsStatus s;

	if (getrandom(&boot, sizeof(boot), 0) != sizeof(boot)) {
		struct timespec ts;	/* no entropy yet: the time is unique enough here */

		clock_gettime(CLOCK_REALTIME, &ts);
		boot = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	snprintf(st->boot, sizeof(st->boot), "%016" PRIx64, boot);
	st->ends = calloc((size_t)st->cfg->sink.batch_size + 1, sizeof(*st->ends));
	st->iov = calloc((size_t)st->cfg->sink.batch_size, sizeof(*st->iov));
	if (!st->ends || !st->iov) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (options_build(st, &o) < 0)
		return -1;
	s = natsConnection_Connect(&st->nc, o);
	natsOptions_Destroy(o);
	if (s == NATS_NOT_YET_CONNECTED) {
		st->host->log(st->inst, SL_LOG_WARNING, "no NATS server answers yet: connecting "
			      "in the background");
	} else if (s != NATS_OK) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot connect: %s", natsStatus_GetText(s));
		return -1;
	}
	if (st->cfg->jetstream) {
		jsOptions_Init(&jo);
		jo.PublishAsync.MaxPending = st->cfg->sink.batch_size > SPOOL_PEEK
					     ? st->cfg->sink.batch_size : SPOOL_PEEK;
		jo.PublishAsync.ErrHandler = on_ack_error;
		jo.PublishAsync.ErrHandlerClosure = st;
		s = natsConnection_JetStream(&st->js, st->nc, &jo);
		if (s != NATS_OK) {
			st->host->log(st->inst, SL_LOG_ERR, "JetStream context: %s",
				      natsStatus_GetText(s));
			return -1;
		}
	}
	return sl_sink_start(&st->sink);
}

static void close_conn(struct nats_state *st)
{
	if (st->js)
		jsCtx_Destroy(st->js);
	st->js = NULL;
	if (st->nc)
		natsConnection_Destroy(st->nc);	/* closes, joins its threads */
	st->nc = NULL;
}

static void nats_stop(void *state)
{
	struct nats_state *st = state;

	if (st->nc)
		sl_sink_stop(&st->sink);	/* the batch, then the spool, bounded */
	close_conn(st);
}

static void nats_destroy(void *state)
{
	struct nats_state *st = state;

	if (!st)
		return;
	sl_sink_destroy(&st->sink);
	close_conn(st);
	pthread_mutex_destroy(&st->lock);
	free(st->buf);
	free(st->ends);
	free(st->iov);
	free(st);
}

static const struct sl_plugin nats_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "nats",
	.description = "publish each record's text to NATS, with JetStream acknowledgements "
		       "and deduplication (libnats)",
	.config_size = sizeof(struct nats_cfg),
	.options = nats_opts,
	.needs = nats_needs,
	.reads = nats_reads,
	.configure = nats_configure,
	.start = nats_start,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = nats_stop,
	.destroy = nats_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(nats_plugin)
