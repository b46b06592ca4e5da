/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * otlp output: records as OpenTelemetry log records, posted in batches to
 * an OTLP/HTTP receiver (an OpenTelemetry Collector, a vendor's endpoint)
 * with libcurl: ExportLogsServiceRequest in protobuf or OTLP/JSON
 * (plugins/common/otlp_pb.h), optionally gzipped.
 *
 * Each record is one LogRecord: time_unix_nano from its timestamp,
 * observed_time_unix_nano when this output took it from its queue, the
 * configured severity, the body its text (logline or json before this
 * output) or else its prefix, and its fields as typed attributes: the
 * OpenTelemetry semantic conventions' names where one exists
 * (source.address, network.transport, ...) and netfilter.<json key> for
 * the rest (otlp_attrs.h; docs/PLUGINS.md lists them).
 *
 * Batching, retries, the flush timer and the spool are the sink engine's
 * (sink.h), as for clickhouse, which this file imitates: a blocking post on
 * the output's own thread.  A unit is one encoded LogRecord; a spool record
 * is an encoding byte ('E' + encoding) and the unit, so records spooled
 * before a change of `encoding` go out as they were encoded.
 *
 * What the receiver answers (the OTLP/HTTP rules): 2xx delivered, its
 * partial_success.rejected_log_records counted as rejected and dropped;
 * 408, 429 and 5xx retried (or spooled), never sooner than a Retry-After
 * in seconds says (at most retry_max later); any other status rejected:
 * the batch is dropped and counted at once, sending it again would not
 * change the answer.  No connection or a timeout: retried.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "http_post.h"
#include "otlp_attrs.h"
#include "otlp_pb.h"
#include "plugin_state.h"
#include "sink.h"
#include "tls_options.h"

#ifndef SLUICE_OTLP_VERSION
#define SLUICE_OTLP_VERSION "0"
#endif

#define ANSWER_MAX 4096		/* bytes of the receiver's answer kept */
#define REC_MAX (256u << 10)	/* more than the spool takes as one record */
#define ENC_TAG 'E'		/* a spool record's encoding byte: ENC_TAG + encoding */

static const char *const encoding_names[] = { "protobuf", "json", NULL };
static const char *const compression_names[] = { "none", "gzip", NULL };
static const char *const severity_names[] = { "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", NULL };

struct otlp_cfg {
	const char *url;
	int encoding;
	int compression;
	struct sl_strlist headers;
	struct sl_strlist resource;
	int severity;
	struct sl_sink_cfg sink;
	uint64_t timeout;
	struct sl_tls_cfg tls;
};

static const struct sl_option otlp_opts[] = {
	SL_OPT_STR("url", struct otlp_cfg, url, "http://127.0.0.1:4318/v1/logs",
		   "OTLP/HTTP logs endpoint (http:// or https://)"),
	SL_OPT_ENUM("encoding", struct otlp_cfg, encoding, "protobuf", encoding_names,
		    "request bodies: protobuf (application/x-protobuf) or json (OTLP/JSON)"),
	SL_OPT_ENUM("compression", struct otlp_cfg, compression, "none", compression_names,
		    "none, or gzip (Content-Encoding: gzip)"),
	SL_OPT_SECRET_MAP("headers", struct otlp_cfg, headers,
			  "HTTP headers of every request (name: value); values of names like "
			  "Authorization or *token* are secret"),
	SL_OPT_MAP("resource", struct otlp_cfg, resource,
		   "resource attributes (name: value); service.name defaults to sluice, "
		   "host.name to this host's name"),
	SL_OPT_ENUM("severity", struct otlp_cfg, severity, "INFO", severity_names,
		    "severity of every record: TRACE, DEBUG, INFO, WARN, ERROR or FATAL"),
	SL_SINK_OPT_BATCH(struct otlp_cfg, sink, "1000", 100000, "records per request"),
	SL_OPT_DURATION("timeout", struct otlp_cfg, timeout, "10s", 100, 3600000,
			"longest time one request may take"),
	SL_SINK_OPT_RETRY(struct otlp_cfg, sink, "8", 1000,
			  "retries of a failed request before its records are dropped"),
	SL_SINK_OPT_SPOOL_OF(struct otlp_cfg, sink, "records that cannot be sent", "records"),
	SL_TLS_OPTIONS(struct otlp_cfg, tls, "https: "),
	SL_OPT_END
};

struct otlp_state {
	SL_SINK_STATE_HEAD(struct otlp_cfg);
	int f_netns;		/* the inputs' registered `netns`; -1: none */
	struct sl_otlp_kv res_attrs[66];
	struct sl_otlp_resource res;
	char hostname[256];
	struct sl_rule_fields rule;	/* nflog's rule_* fields (rules: true) */

	CURL *curl;
	struct curl_slist *headers[2];	/* per encoding */
	struct curl_slist *connect_to;	/* tls_server_name: its name to url's host */
	char curl_err[CURL_ERROR_SIZE];
	char answer_buf[ANSWER_MAX + 1];
	struct sl_http_answer answer;	/* in answer_buf */
	uint64_t retry_after_ms;	/* from the last answer's Retry-After; 0: none */
	uint64_t not_before;		/* monotonic ms: no request before it */

	struct sl_otlp_buf b;		/* the batch: units back to back */
	size_t *ends;			/* unit i is b.p[ends[i] .. ends[i + 1]) */
	unsigned units;
	struct sl_otlp_buf req, gz;	/* one request body, and gzipped */
	struct iovec *iov;		/* the units of one request */
	unsigned iov_cap;
	char *rec;			/* one spool record */

	int c_requests, c_records, c_http_errors, c_conn_errors, c_retries, c_dropped, c_rejected;
};

/* ---- encoding ---- */

static bool otlp_encode(void *ctx, const struct sl_record *r)
{
	static const uint8_t sev_number[] = { 1, 5, 9, 13, 17, 21 };
	struct otlp_state *st = ctx;
	struct sl_otlp_kv kv[SL_OTLP_ATTRS_MAX + 1];	/* + netns */
	char scratch[SL_OTLP_ATTRS_SCRATCH];
	struct sl_otlp_log l = {
		.observed_ns = (uint64_t)sl_clock_ns(CLOCK_REALTIME),
		.severity_number = sev_number[st->cfg->severity],
		.severity_text = severity_names[st->cfg->severity],
		.attrs = kv,
	};

	if (sl_has(r, SL_F_TIMESTAMP) && r->v[SL_F_TIMESTAMP].time.sec >= 0 &&
	    r->v[SL_F_TIMESTAMP].time.sec < (int64_t)(UINT64_MAX / 1000000000u) - 1)
		l.time_ns = (uint64_t)r->v[SL_F_TIMESTAMP].time.sec * 1000000000u +
			    r->v[SL_F_TIMESTAMP].time.nsec;
	if (sl_has(r, SL_F_TEXT) || sl_has(r, SL_F_PREFIX)) {
		sl_field f = sl_has(r, SL_F_TEXT) ? SL_F_TEXT : SL_F_PREFIX;

		l.body = r->v[f].bytes.ptr ? (const void *)r->v[f].bytes.ptr : "";
		l.body_len = r->v[f].bytes.len;
	}
	l.nattrs = sl_otlp_record_attrs(r, kv, scratch);
	l.nattrs += sl_otlp_rule_attrs(&st->rule, r, kv + l.nattrs);
	if (st->f_netns >= 0 && sl_has(r, (sl_field)st->f_netns)) {
		/* the inputs' netns: (a registered field) */
		struct sl_otlp_kv *k = &kv[l.nattrs++];

		k->key = "netfilter.netns";
		k->keylen = sizeof("netfilter.netns") - 1;
		k->kind = OTLP_STR;
		k->s = r->v[st->f_netns].bytes.ptr;
		k->n = r->v[st->f_netns].bytes.len;
	}
	if (!sl_otlp_log_append(&st->b, st->cfg->encoding, &l))
		return false;
	st->ends[++st->units] = st->b.len;
	return true;
}

/* ---- posting ---- */

/* Retry-After in seconds (an HTTP date is not followed: the engine's backoff is). */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct otlp_state *st = ctx;
	size_t len = size * n;
	char num[24];

	if (len > 12 && len < 12 + sizeof(num) && !strncasecmp(data, "Retry-After:", 12)) {
		char *end;
		unsigned long long s;

		memcpy(num, data + 12, len - 12);
		num[len - 12] = 0;
		s = strtoull(num, &end, 10);
		if (end != num && (*end == '\r' || *end == '\n' || !*end) && s < 86400)
			st->retry_after_ms = s * 1000;
	}
	return len;
}

/* The answer's first line, printable (it came from the network). */
static const char *answer_line(struct otlp_state *st)
{
	char *a = st->answer.buf;
	size_t i;

	for (i = 0; i < st->answer.len && a[i] != '\n' && i < 200; i++)
		if ((unsigned char)a[i] < 0x20 || (unsigned char)a[i] >= 0x7f)
			a[i] = '?';
	a[i] = 0;
	return a;
}

/* Wait out a Retry-After the receiver gave, at most retry_max. */
static void wait_retry_after(struct otlp_state *st)
{
	uint64_t now = sl_mono_ms(), ms;
	struct timespec ts;

	if (st->not_before <= now || st->sink.stopping)
		return;	/* at a stop, the engine's few short retries instead */
	ms = st->not_before - now;
	if (ms > st->cfg->sink.retry_max)
		ms = st->cfg->sink.retry_max;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* One request of the n units in iov (encoding enc): what the engine does next. */
static enum sl_sink_result post(struct otlp_state *st, int enc, const struct iovec *iov, unsigned n)
{
	const void *body;
	size_t len;
	long code = 0;
	CURLcode rc;
	int64_t rejected;

	if (!sl_otlp_request(&st->req, enc, &st->res, iov, n))
		goto oom;
	body = st->req.p;
	len = st->req.len;
	if (st->cfg->compression) {
		z_stream z = { 0 };

		st->gz.len = 0;
		if (!sl_otlp_buf_reserve(&st->gz, deflateBound(&z, len) + 32) ||
		    deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			goto oom;
		z.next_in = (Bytef *)st->req.p;
		z.avail_in = (uInt)len;
		z.next_out = st->gz.p;
		z.avail_out = (uInt)st->gz.cap;
		rc = deflate(&z, Z_FINISH) == Z_STREAM_END ? CURLE_OK : CURLE_OUT_OF_MEMORY;
		st->gz.len = z.total_out;
		deflateEnd(&z);
		if (rc != CURLE_OK)
			goto oom;
		body = st->gz.p;
		len = st->gz.len;
	}
	st->answer.len = 0;
	st->retry_after_ms = 0;
	curl_easy_setopt(st->curl, CURLOPT_HTTPHEADER, st->headers[enc]);
	curl_easy_setopt(st->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(st->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(st->curl);
	if (rc != CURLE_OK) {
		st->host->counter_add(st->inst, st->c_conn_errors, 1);
		st->host->log(st->inst, SL_LOG_WARNING, "request of %u records failed: %s", n,
			      st->curl_err[0] ? st->curl_err : curl_easy_strerror(rc));
		st->curl_err[0] = 0;
		return SL_SINK_RETRY;
	}
	curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		st->host->counter_add(st->inst, st->c_requests, 1);
		st->host->counter_add(st->inst, st->c_records, n);
		rejected = sl_otlp_response_rejected(enc, st->answer.buf, st->answer.len);
		if (rejected > 0) {
			if (rejected > n)
				rejected = n;
			st->host->counter_add(st->inst, st->c_rejected, (uint64_t)rejected);
			st->host->dropped_add(st->inst, (uint64_t)rejected);
			st->host->log(st->inst, SL_LOG_WARNING, "the receiver rejected %lld of %u records: %s",
				      (long long)rejected, n, answer_line(st));
		}
		return SL_SINK_SENT;
	}
	st->host->counter_add(st->inst, st->c_http_errors, 1);
	st->host->log(st->inst, SL_LOG_WARNING, "request of %u records: HTTP %ld: %s", n, code,
		      answer_line(st));
	if (code == 408 || code == 429 || code >= 500) {
		if (st->retry_after_ms)
			st->not_before = sl_mono_ms() + st->retry_after_ms;
		return SL_SINK_RETRY;
	}
	return SL_SINK_REJECTED;
oom:
	st->host->log(st->inst, SL_LOG_ERR, "out of memory for a request of %u records", n);
	return SL_SINK_RETRY;
}

/* ---- the sink's callbacks (sink.h) ---- */

static bool iov_room(struct otlp_state *st, unsigned n)
{
	struct iovec *v;

	if (n <= st->iov_cap)
		return true;
	v = realloc(st->iov, n * sizeof(*v));
	if (!v)
		return false;
	st->iov = v;
	st->iov_cap = n;
	return true;
}

static enum sl_sink_result otlp_send(void *ctx, unsigned n)
{
	struct otlp_state *st = ctx;

	(void)n;	/* st->units */
	if (!iov_room(st, st->units))
		return SL_SINK_RETRY;
	for (unsigned i = 0; i < st->units; i++) {
		st->iov[i].iov_base = st->b.p + st->ends[i];
		st->iov[i].iov_len = st->ends[i + 1] - st->ends[i];
	}
	wait_retry_after(st);
	return post(st, st->cfg->encoding, st->iov, st->units);
}

static const void *otlp_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct otlp_state *st = ctx;
	size_t n = st->ends[i + 1] - st->ends[i];

	if (n >= REC_MAX)
		return NULL;
	st->rec[0] = (char)(ENC_TAG + st->cfg->encoding);
	memcpy(st->rec + 1, st->b.p + st->ends[i], n);
	*len = n + 1;
	return st->rec;
}

static void otlp_reset(void *ctx)
{
	struct otlp_state *st = ctx;

	st->b.len = 0;
	st->units = 0;
}

static int rec_enc(const struct iovec *v)
{
	int e = v->iov_len > 1 ? *(const char *)v->iov_base - ENC_TAG : -1;

	return e == OTLP_PROTOBUF || e == OTLP_JSON ? e : -1;
}

/* The leading spooled records of one encoding, in one request. */
static enum sl_sink_result otlp_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					     unsigned *used)
{
	struct otlp_state *st = ctx;
	int enc = rec_enc(&rec[0]);
	enum sl_sink_result r;

	if (enc < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "spool: a record of unknown encoding skipped "
			      "(counted in spool_dropped)");
		sl_sink_spool_dropped(&st->sink, 1);
		*used = 1;
		return SL_SINK_SENT;
	}
	for (unsigned i = 1; i < n; i++)
		if (rec_enc(&rec[i]) != enc)
			n = i;
	if (sl_mono_ms() < st->not_before || !iov_room(st, n))
		return SL_SINK_RETRY;	/* the engine's timer tries again */
	for (unsigned i = 0; i < n; i++) {
		st->iov[i].iov_base = (char *)rec[i].iov_base + 1;
		st->iov[i].iov_len = rec[i].iov_len - 1;
	}
	*used = n;
	r = post(st, enc, st->iov, n);
	if (r == SL_SINK_RETRY)
		st->host->counter_add(st->inst, st->c_retries, 1);
	if (r == SL_SINK_REJECTED) {	/* acknowledged: gone, counted */
		st->host->counter_add(st->inst, st->c_dropped, n);
		st->host->dropped_add(st->inst, n);
	}
	return r;
}

static const struct sl_sink_ops otlp_sink_ops = {
	.encode = otlp_encode,
	.send = otlp_send,
	.spool_rec = otlp_spool_rec,
	.reset = otlp_reset,
	.send_spooled = otlp_send_spooled,
};

static const struct sl_sink_def otlp_sink_def = {
	.ops = &otlp_sink_ops,
	.batch = "request",
	.done = "sent",
	.from_spool = "sent from there when the receiver answers",
	.reject_retries = 0,	/* the same request gets the same answer */
};

/* ---- configuration ---- */

/* The resource's attributes: the user's, then the defaults they did not set. */
static int resource_attrs(struct otlp_state *st)
{
	const struct sl_strlist *m = &st->cfg->resource;
	bool service = false, host = false;
	unsigned n = 0;

	if (m->n / 2 > 64) {
		st->host->config_error(st->inst, "resource", "at most 64 attributes");
		return -1;
	}
	for (unsigned i = 0; i + 1 < m->n; i += 2, n++) {
		st->res_attrs[n] = (struct sl_otlp_kv){ m->v[i], strlen(m->v[i]), OTLP_STR, 0,
						     m->v[i + 1], strlen(m->v[i + 1]) };
		service |= !strcmp(m->v[i], "service.name");
		host |= !strcmp(m->v[i], "host.name");
	}
	if (!service)
		st->res_attrs[n++] = (struct sl_otlp_kv){ "service.name", 12, OTLP_STR, 0, "sluice", 6 };
	if (!host && !gethostname(st->hostname, sizeof(st->hostname) - 1) && st->hostname[0])
		st->res_attrs[n++] = (struct sl_otlp_kv){ "host.name", 9, OTLP_STR, 0, st->hostname,
						       strlen(st->hostname) };
	st->res = (struct sl_otlp_resource){ st->res_attrs, n, "sluice", SLUICE_OTLP_VERSION };
	return 0;
}

/* A header name: an HTTP token, and not one this output sets itself. */
static int check_headers(const struct sl_host *host, struct sl_instance *inst,
			 const struct sl_strlist *h)
{
	char where[160];

	for (unsigned i = 0; i + 1 < h->n; i += 2) {
		const char *k = h->v[i];

		snprintf(where, sizeof(where), "headers/%.140s", k);
		if (!k[0] || k[strspn(k, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "abcdefghijklmnopqrstuvwxyz")]) {
			host->config_error(inst, where, "expected an HTTP header name (letters, digits, "
					   "and !#$%%&'*+-.^_`|~)");
			return -1;
		}
		if (!strcasecmp(k, "Content-Type") || !strcasecmp(k, "Content-Encoding") ||
		    !strcasecmp(k, "Content-Length")) {
			host->config_error(inst, where, "set by the output (encoding, compression)");
			return -1;
		}
		if (strpbrk(h->v[i + 1], "\r\n")) {
			host->config_error(inst, where, "a header value cannot hold a line break");
			return -1;
		}
	}
	return 0;
}

static int check_tls(const struct sl_host *host, struct sl_instance *inst, const struct otlp_cfg *c)
{
	const char *set = sl_tls_cfg_first_set(&c->tls);

	if (strncmp(c->url, "https://", 8) && set) {
		host->config_error(inst, set, "only applies to an https:// url");
		return -1;
	}
	if (c->tls.server_name && (!c->tls.server_name[0] ||
				   strpbrk(c->tls.server_name, ":/[]@?# \t\r\n"))) {
		host->config_error(inst, "tls_server_name", "expected a host name");
		return -1;
	}
	if (!c->tls.cert_file != !c->tls.key_file) {
		host->config_error(inst, c->tls.cert_file ? "tls_cert_file" : "tls_key_file",
				   "tls_cert_file and tls_key_file go together");
		return -1;
	}
	return 0;
}

static int otlp_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct otlp_cfg *c = config;
	struct otlp_state *st;

	if (strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8)) {
		host->config_error(inst, "url", "expected http://host:port/path or https://...");
		return -1;
	}
	if (check_tls(host, inst, c) < 0 || check_headers(host, inst, &c->headers) < 0 ||
	    sl_sink_check(&c->sink, host, inst) < 0)
		return -1;
	st = sl_sink_state_new(struct otlp_state, host, inst, config);
	if (!st)
		return -1;
	if (resource_attrs(st) < 0) {
		free(st);
		return -1;
	}
	sl_rule_fields_find(&st->rule, host, inst);
	/* nflog's, nfct's, nftrace's and nfacct's netns (when one of them is loaded) */
	st->f_netns = SL_HOST_HAS(host, read_field) ? host->read_field(inst, "netns") : -1;
	st->c_requests = host->counter_new(inst, "requests");
	st->c_records = host->counter_new(inst, "records");
	st->c_http_errors = host->counter_new(inst, "http_errors");
	st->c_conn_errors = host->counter_new(inst, "connect_errors");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_dropped = host->counter_new(inst, "dropped_records");
	st->c_rejected = host->counter_new(inst, "rejected_records");
	sl_sink_init(&st->sink, host, inst, &c->sink, &otlp_sink_def, st, st->c_retries, st->c_dropped);
	*state = st;
	return 0;
}

/* ---- start and stop ---- */

/* The headers of requests in encoding enc: the user's, then ours. */
static struct curl_slist *headers_of(const struct otlp_cfg *c, int enc)
{
	struct curl_slist *l = NULL, *t;
	char line[8192];

	for (unsigned i = 0; i + 1 < c->headers.n; i += 2) {
		snprintf(line, sizeof(line), "%s: %s", c->headers.v[i], c->headers.v[i + 1]);
		if (!(t = curl_slist_append(l, line)))
			goto fail;
		l = t;
	}
	if (!(t = curl_slist_append(l, enc == OTLP_JSON ? "Content-Type: application/json"
							: "Content-Type: application/x-protobuf")))
		goto fail;
	l = t;
	if (c->compression && !(t = curl_slist_append(l, "Content-Encoding: gzip")))
		goto fail;
	return c->compression ? t : l;
fail:
	curl_slist_free_all(l);
	return NULL;
}

/*
 * tls_server_name: libcurl checks the certificate against the url's host,
 * so the url names the server and CURLOPT_CONNECT_TO sends the connection
 * to the host the user wrote ("name:port:host:port").  Host: is the name.
 */
static int set_server_name(struct otlp_state *st)
{
	const char *name = st->cfg->tls.server_name;
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *url = NULL, line[600];
	int rc = -1;

	if (u && !curl_url_set(u, CURLUPART_URL, st->cfg->url, 0) &&
	    !curl_url_get(u, CURLUPART_HOST, &host, 0) &&
	    !curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) &&
	    !curl_url_set(u, CURLUPART_HOST, name, 0) && !curl_url_get(u, CURLUPART_URL, &url, 0) &&
	    (size_t)snprintf(line, sizeof(line), "%s:%s:%s:%s", name, port, host, port) < sizeof(line) &&
	    (st->connect_to = curl_slist_append(NULL, line))) {
		curl_easy_setopt(st->curl, CURLOPT_URL, url);	/* copied by libcurl */
		curl_easy_setopt(st->curl, CURLOPT_CONNECT_TO, st->connect_to);
		rc = 0;
	} else {
		st->host->log(st->inst, SL_LOG_ERR, "cannot set tls_server_name %s on url %s", name,
			      st->cfg->url);
	}
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
	return rc;
}

static void set_tls(struct otlp_state *st)
{
	const struct sl_tls_cfg *t = &st->cfg->tls;

	if (t->ca_file)
		curl_easy_setopt(st->curl, CURLOPT_CAINFO, t->ca_file);
	if (t->cert_file) {
		curl_easy_setopt(st->curl, CURLOPT_SSLCERT, t->cert_file);
		curl_easy_setopt(st->curl, CURLOPT_SSLKEY, t->key_file);
	}
	curl_easy_setopt(st->curl, CURLOPT_SSLVERSION,
			 t->min_version ? CURL_SSLVERSION_TLSv1_3 : CURL_SSLVERSION_TLSv1_2);
	if (!t->verify) {
		curl_easy_setopt(st->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(st->curl, CURLOPT_SSL_VERIFYHOST, 0L);
		if (!strncmp(st->cfg->url, "https://", 8))
			st->host->log(st->inst, SL_LOG_WARNING, "tls_verify is false: the receiver's "
				      "certificate is not checked (encryption only)");
	}
}

static int otlp_start(void *state)
{
	struct otlp_state *st = state;
	const struct otlp_cfg *c = st->cfg;

	st->curl = curl_easy_init();
	st->headers[OTLP_PROTOBUF] = headers_of(c, OTLP_PROTOBUF);
	st->headers[OTLP_JSON] = headers_of(c, OTLP_JSON);
	st->ends = calloc((size_t)c->sink.batch_size + 1, sizeof(*st->ends));
	st->rec = c->sink.spool_dir ? malloc(REC_MAX) : NULL;
	if (!st->curl || !st->headers[0] || !st->headers[1] || !st->ends ||
	    (c->sink.spool_dir && !st->rec) || !sl_otlp_buf_reserve(&st->b, 1 << 20)) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	curl_easy_setopt(st->curl, CURLOPT_URL, c->url);
	st->answer = (struct sl_http_answer){ .buf = st->answer_buf, .max = ANSWER_MAX };
	sl_http_post_setup(st->curl, c->timeout, st->curl_err, &st->answer);
	curl_easy_setopt(st->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(st->curl, CURLOPT_HEADERDATA, st);
	set_tls(st);
	if (c->tls.server_name && set_server_name(st) < 0)
		return -1;
	return sl_sink_start(&st->sink);
}

static void release(struct otlp_state *st)
{
	if (st->curl)
		curl_easy_cleanup(st->curl);
	st->curl = NULL;
	for (int e = 0; e < 2; e++) {
		curl_slist_free_all(st->headers[e]);
		st->headers[e] = NULL;
	}
	curl_slist_free_all(st->connect_to);
	st->connect_to = NULL;
}

static void otlp_stop(void *state)
{
	struct otlp_state *st = state;

	sl_sink_stop(&st->sink);
	release(st);
}

static void otlp_destroy(void *state)
{
	struct otlp_state *st = state;

	if (!st)
		return;
	sl_sink_destroy(&st->sink);
	release(st);
	sl_otlp_buf_free(&st->b);
	sl_otlp_buf_free(&st->req);
	sl_otlp_buf_free(&st->gz);
	free(st->ends);
	free(st->iov);
	free(st->rec);
	free(st);
}

static const struct sl_plugin otlp_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "otlp",
	.description = "send records as OpenTelemetry log records over OTLP/HTTP (protobuf or JSON)",
	.config_size = sizeof(struct otlp_cfg),
	.options = otlp_opts,
	.reads = sl_otlp_fields_read,
	.configure = otlp_configure,
	.start = otlp_start,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = otlp_stop,
	.destroy = otlp_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(otlp_plugin)
