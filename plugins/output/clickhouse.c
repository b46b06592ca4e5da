/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * clickhouse output: records as rows, inserted in batches over ClickHouse's
 * HTTP interface (INSERT ... FORMAT JSONEachRow or RowBinary) with libcurl.
 *
 * Each record becomes one row in a buffer that is reused for every batch
 * (the encoders and the column mapping: clickhouse_rows.h).  Two built-in
 * mappings match conf/clickhouse/packets.sql and flows.sql.
 *
 * The plugin is a network output and runs on its own thread behind the
 * core's queue, so it posts with a blocking libcurl easy handle (one kept
 * alive connection, a timeout per request) instead of libcurl's multi
 * interface in an event loop: while a batch is retried the thread does not
 * read its queue, the queue fills, and the core then blocks the input
 * (replay) or drops and counts (live).  A failed post (no connection, a
 * timeout, an HTTP status other than 200) is logged with the first line of
 * the server's answer, counted and retried with exponential backoff up to
 * max_retries times; then the batch's rows are dropped and counted.
 *
 * With spool_dir, a failed INSERT is not retried in place: its rows go to
 * the disk spool at once, so the thread keeps reading its queue while the
 * server is away, and so does every newer batch while the spool holds rows
 * (order).  The spool is inserted from, oldest first, with the
 * retry_min..retry_max backoff and for a bounded time per turn;
 * max_retries does not apply (rows wait until max_size, then are dropped
 * and counted).  A reload's new instance cannot have the spool until the
 * old one stopped: meanwhile it retries in place as without a spool.
 *
 * Batching, retries, the flush timer and the spool are the sink engine's
 * (sink.h); this file encodes rows, posts them and says what a spool
 * record is: a format byte ('F' + format) and the encoded row, one record
 * per row, so rows spooled before a change of `format` go out in the
 * format they were encoded in, and max_size drops exact rows.  A backlog
 * goes out a segment's rows (up to SPOOL_PEEK) of one format per INSERT,
 * so it drains in few INSERTs that make few parts for the server to merge.
 * A row counts as sent (acknowledged to the spool) once its INSERT got
 * HTTP 200.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include <sluice/plugin.h>

#include "clickhouse_rows.h"
#include "flow_fields.h"
#include "http_post.h"
#include "plugin_state.h"
#include "sink.h"

#define ANSWER_MAX 1024		/* bytes of the server's answer kept for the log */
#define MAX_COLUMNS 64
#define SPOOL_PEEK 65536u	/* rows per INSERT from the spool, at most */
#define REC_MAX (256u << 10)	/* more than the spool takes as one record */
#define FMT_TAG 'F'		/* a spool record's format byte: FMT_TAG + format */

enum { SCH_PACKETS, SCH_FLOWS };
enum { FMT_JSONEACHROW, FMT_ROWBINARY };

static const char *const schema_names[] = { "packets", "flows", NULL };
static const char *const format_names[] = { "JSONEachRow", "RowBinary", NULL };
static const char *const conv_names[] = { "", "fixed16", "ipv4", "text", "sec", "usec", NULL };

struct ch_cfg {
	const char *url;
	const char *database;
	const char *table;
	const char *user;
	const char *password;
	int schema;
	struct sl_strlist columns;
	int format;
	struct sl_sink_cfg sink;	/* batch_size, flush_interval, max_retries, retry_*, spool_* */
	uint64_t timeout;
};

static const struct sl_option ch_opts[] = {
	SL_OPT_STR("url", struct ch_cfg, url, "http://127.0.0.1:8123",
		   "ClickHouse HTTP interface (http:// or https://)"),
	SL_OPT_STR("database", struct ch_cfg, database, "default", "database of the table"),
	SL_OPT_STR("table", struct ch_cfg, table, SL_REQUIRED, "table the rows are inserted into"),
	SL_OPT_STR("user", struct ch_cfg, user, NULL, "user (HTTP basic authentication)"),
	SL_OPT_STR("password", struct ch_cfg, password, SL_SECRET(NULL), "password of that user"),
	SL_OPT_ENUM("schema", struct ch_cfg, schema, "packets", schema_names,
		    "built-in column mapping when columns is empty: packets or flows"),
	SL_OPT_LIST("columns", struct ch_cfg, columns, NULL,
		    "column=field[:fixed16|ipv4|text|sec|usec] entries, instead of the schema's"),
	SL_OPT_ENUM("format", struct ch_cfg, format, "JSONEachRow", format_names,
		    "insert format; RowBinary only with the built-in schema"),
	SL_SINK_OPT_BATCH(struct ch_cfg, sink, "10000", 1000000, "rows per INSERT"),
	SL_OPT_DURATION("timeout", struct ch_cfg, timeout, "10s", 100, 3600000,
			"longest time one INSERT may take"),
	SL_SINK_OPT_RETRY(struct ch_cfg, sink, "8", 1000,
			  "retries of a failed INSERT before its rows are dropped"),
	SL_SINK_OPT_SPOOL(struct ch_cfg, sink, "rows that cannot be inserted"),
	SL_OPT_END
};

/* The built-in mappings: see conf/clickhouse/packets.sql and flows.sql. */
static const char *const packet_columns[] = {
	"time=timestamp:sec", "time_us=timestamp:usec", "prefix=prefix",
	"ifname_in=ifname_in", "ifname_out=ifname_out", "ip_version=ip_version",
	"src_addr=src_addr", "dst_addr=dst_addr", "ip_proto=ip_proto",
	"sport=sport", "dport=dport", "ip_len=ip_len", "ip_ttl=ip_ttl",
	"tcp_flags=tcp_flags", "icmp_type=icmp_type", "icmp_code=icmp_code",
	"mark=mark", NULL
};
static const char *const flow_columns[] = {
	"time=timestamp:sec", "time_us=timestamp:usec", "ct_event=ct_event", "ct_id=ct_id",
	"family=family", "ip_proto=ip_proto", "orig_src=orig_src", "orig_dst=orig_dst",
	"orig_sport=orig_sport", "orig_dport=orig_dport", "reply_src=reply_src",
	"reply_dst=reply_dst", "reply_sport=reply_sport", "reply_dport=reply_dport",
	"orig_packets=orig_packets", "orig_bytes=orig_bytes", "reply_packets=reply_packets",
	"reply_bytes=reply_bytes", "flow_start=flow_start:sec", "flow_end=flow_end:sec",
	"tcp_state=tcp_state", "mark=mark", "ct_zone=ct_zone", NULL
};

static const uint8_t packet_rb[] = {
	RB_U32, RB_U32, RB_STR, RB_STR, RB_STR, RB_U8, RB_FS16, RB_FS16, RB_U8,
	RB_U16, RB_U16, RB_U16, RB_U8, RB_U16, RB_U8, RB_U8, RB_U32
};
static const uint8_t flow_rb[] = {
	RB_U32, RB_U32, RB_U8, RB_U32, RB_U8, RB_U8, RB_FS16, RB_FS16, RB_U16, RB_U16,
	RB_FS16, RB_FS16, RB_U16, RB_U16, RB_U64, RB_U64, RB_U64, RB_U64, RB_U32, RB_U32,
	RB_U8, RB_U32, RB_U16
};

_Static_assert(sizeof(packet_rb) == sizeof(packet_columns) / sizeof(char *) - 1, "packet_rb");
_Static_assert(sizeof(flow_rb) == sizeof(flow_columns) / sizeof(char *) - 1, "flow_rb");

/* Every field the built-in mappings read (a queue in front copies these). */
static const struct sl_field_decl ch_reads[] = {
	SL_FIELD_DECL(SL_F_TIMESTAMP), SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_IFNAME_IN), SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_DECL(SL_F_IP_VERSION), SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR), SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_SPORT), SL_FIELD_DECL(SL_F_DPORT), SL_FIELD_DECL(SL_F_IP_LEN),
	SL_FIELD_DECL(SL_F_IP_TTL), SL_FIELD_DECL(SL_F_TCP_FLAGS),
	SL_FIELD_DECL(SL_F_ICMP_TYPE), SL_FIELD_DECL(SL_F_ICMP_CODE), SL_FIELD_DECL(SL_F_MARK),
	SL_FIELD_DECL(SL_F_CT_EVENT), SL_FIELD_DECL(SL_F_CT_ID), SL_FIELD_DECL(SL_F_FAMILY),
	SL_CT_TUPLE_FIELDS,
	SL_FLOW_COUNT_FIELDS,
	SL_FIELD_DECL(SL_F_TCP_STATE), SL_FIELD_DECL(SL_F_CT_ZONE),
	SL_FIELD_END
};

struct ch_state {
	SL_SINK_STATE_HEAD(struct ch_cfg);
	struct ch_column col[MAX_COLUMNS];
	unsigned ncol;

	CURL *curl;
	struct curl_slist *headers[2];	/* per format (FMT_*) */
	char *insert_url[2];
	char curl_err[CURL_ERROR_SIZE];
	char answer_buf[ANSWER_MAX + 1];
	struct sl_http_answer answer;	/* in answer_buf */

	struct ch_rows b;	/* the batch being built, reused */
	char *rec;		/* with spool_dir: one spool record, a format byte and a row */
	char *sbuf;		/* one INSERT from the spool, reused */
	size_t scap;

	int c_inserts, c_rows, c_http_errors, c_conn_errors, c_retries, c_dropped;
};

/* ---- posting a batch ---- */

/* One INSERT of len bytes (rows rows in format fmt): true on HTTP 200. */
static bool post_rows(struct ch_state *st, int fmt, const char *buf, size_t len, unsigned rows)
{
	CURLcode rc;
	long code = 0;
	char *nl;

	st->answer.len = 0;
	if (!st->insert_url[fmt]) {
		st->host->counter_add(st->inst, st->c_http_errors, 1);
		st->host->log(st->inst, SL_LOG_WARNING, "%u spooled RowBinary rows cannot be sent with "
			      "columns (RowBinary needs the built-in schema)", rows);
		return false;
	}
	curl_easy_setopt(st->curl, CURLOPT_URL, st->insert_url[fmt]);
	curl_easy_setopt(st->curl, CURLOPT_HTTPHEADER, st->headers[fmt]);
	curl_easy_setopt(st->curl, CURLOPT_POSTFIELDS, buf);
	curl_easy_setopt(st->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	rc = curl_easy_perform(st->curl);
	if (rc != CURLE_OK) {
		st->host->counter_add(st->inst, st->c_conn_errors, 1);
		st->host->log(st->inst, SL_LOG_WARNING, "INSERT of %u rows failed: %s", rows,
			      st->curl_err[0] ? st->curl_err : curl_easy_strerror(rc));
		return false;
	}
	curl_easy_getinfo(st->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code == 200)
		return true;
	st->answer.buf[st->answer.len] = 0;
	nl = strchr(st->answer.buf, '\n');
	if (nl)
		*nl = 0;
	st->host->counter_add(st->inst, st->c_http_errors, 1);
	st->host->log(st->inst, SL_LOG_WARNING, "INSERT of %u rows: HTTP %ld: %s", rows, code,
		      st->answer.buf);
	return false;
}

/* ---- the sink's callbacks (sink.h) ---- */

static bool ch_encode(void *ctx, const struct sl_record *r)
{
	struct ch_state *st = ctx;

	return st->cfg->format == FMT_ROWBINARY ? ch_row_binary(&st->b, st->col, st->ncol, r)
						 : ch_row_json(&st->b, st->col, st->ncol, r);
}

/* An INSERT and its rows, counted once the server said 200. */
static enum sl_sink_result inserted(struct ch_state *st, bool ok, unsigned rows)
{
	if (!ok)
		return SL_SINK_RETRY;
	st->host->counter_add(st->inst, st->c_inserts, 1);
	st->host->counter_add(st->inst, st->c_rows, rows);
	return SL_SINK_SENT;
}

static enum sl_sink_result ch_send(void *ctx, unsigned n)
{
	struct ch_state *st = ctx;

	(void)n;	/* st->b.rows */
	return inserted(st, post_rows(st, st->cfg->format, st->b.buf, st->b.len, st->b.rows),
			st->b.rows);
}

static const void *ch_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct ch_state *st = ctx;
	size_t n = st->b.ends[i + 1] - st->b.ends[i];

	if (n >= REC_MAX)
		return NULL;
	st->rec[0] = (char)(FMT_TAG + st->cfg->format);
	memcpy(st->rec + 1, st->b.buf + st->b.ends[i], n);
	*len = n + 1;
	return st->rec;
}

static void ch_reset(void *ctx)
{
	struct ch_state *st = ctx;

	st->b.len = 0;
	st->b.rows = 0;
}

static int rec_fmt(const struct iovec *v)
{
	return v->iov_len ? *(const char *)v->iov_base - FMT_TAG : -1;
}

/*
 * The leading records of rec[0..n) that share one format, as one INSERT
 * body in st->sbuf: how many (*fmt their format), 0 when out of memory.
 */
static unsigned gather(struct ch_state *st, const struct iovec *rec, unsigned n, int *fmt,
		       size_t *len)
{
	size_t need = 0;

	*fmt = rec_fmt(&rec[0]);
	for (unsigned i = 1; i < n; i++)
		if (rec_fmt(&rec[i]) != *fmt)
			n = i;
	for (unsigned i = 0; i < n; i++)
		need += rec[i].iov_len - 1;
	if (need > st->scap) {
		char *nb = realloc(st->sbuf, need);

		if (!nb)
			return 0;
		st->sbuf = nb;
		st->scap = need;
	}
	*len = 0;
	for (unsigned i = 0; i < n; i++) {
		memcpy(st->sbuf + *len, (const char *)rec[i].iov_base + 1, rec[i].iov_len - 1);
		*len += rec[i].iov_len - 1;
	}
	return n;
}

/* Rows inserted from the spool count as inserted rows too. */
static enum sl_sink_result ch_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					   unsigned *used)
{
	struct ch_state *st = ctx;
	size_t len;
	int fmt;

	n = gather(st, rec, n, &fmt, &len);
	if (fmt < 0 || fmt > 1) {	/* not ours: an empty or foreign record */
		st->host->log(st->inst, SL_LOG_ERR, "spool: a record of unknown format "
			      "skipped (counted in spool_dropped)");
		sl_sink_spool_dropped(&st->sink, 1);
		*used = 1;
		return SL_SINK_SENT;
	}
	*used = n;
	if (!n || !post_rows(st, fmt, st->sbuf, len, n)) {
		/* tried again from the sink's timer, with backoff */
		st->host->counter_add(st->inst, st->c_retries, 1);
		return SL_SINK_RETRY;
	}
	return inserted(st, true, n);
}

static const struct sl_sink_ops ch_sink_ops = {
	.encode = ch_encode,
	.send = ch_send,
	.spool_rec = ch_spool_rec,
	.reset = ch_reset,
	.send_spooled = ch_send_spooled,
};

static const struct sl_sink_def ch_sink_def = {
	.ops = &ch_sink_ops,
	.batch = "INSERT",
	.done = "done",
	.from_spool = "inserted from there when the server answers",
	.spool_peek = SPOOL_PEEK,
};

/* ---- configuration ---- */

/* "column=field[:conv]" into c; -1 after a config error. */
static int parse_column(struct ch_state *st, const char *spec, bool user, struct ch_column *c)
{
	const struct sl_host *host = st->host;
	const char *eq = strchr(spec, '='), *colon;
	char field[64];
	size_t nlen, flen;
	int id;

	if (!eq || eq == spec) {
		host->config_error(st->inst, "columns", "'%s': expected column=field[:conversion]", spec);
		return -1;
	}
	nlen = (size_t)(eq - spec);
	for (size_t i = 0; i < nlen; i++)
		if (!(spec[i] == '_' || (spec[i] >= '0' && spec[i] <= '9') ||
		      ((spec[i] | 32) >= 'a' && (spec[i] | 32) <= 'z')) || nlen > 48) {
			host->config_error(st->inst, "columns",
					   "'%s': a column name is 1 to 48 letters, digits or '_'", spec);
			return -1;
		}
	colon = strchr(eq + 1, ':');
	flen = colon ? (size_t)(colon - eq - 1) : strlen(eq + 1);
	if (!flen || flen >= sizeof(field)) {
		host->config_error(st->inst, "columns", "'%s': expected a field name after '='", spec);
		return -1;
	}
	memcpy(field, eq + 1, flen);
	field[flen] = 0;
	id = user ? host->need_field(st->inst, "columns", field) : host->field_id(st->inst, field);
	if (id < 0) {
		if (!user)
			host->config_error(st->inst, "columns", "no field '%s'", field);
		return -1;
	}
	c->field = (sl_field)id;
	c->type = (uint8_t)host->field_type(st->inst, id);
	c->conv = CV_AUTO;
	if (colon) {
		int k;

		for (k = 1; conv_names[k] && strcmp(conv_names[k], colon + 1); k++)
			;
		if (!conv_names[k]) {
			host->config_error(st->inst, "columns", "'%s': conversion is one of fixed16, ipv4, "
					   "text, sec, usec", spec);
			return -1;
		}
		c->conv = (uint8_t)k;
	}
	if ((c->conv == CV_FIXED16 || c->conv == CV_IPV4) && c->type != SL_T_ADDR) {
		host->config_error(st->inst, "columns", "'%s': %s needs an address field", spec,
				   conv_names[c->conv]);
		return -1;
	}
	if ((c->conv == CV_SEC || c->conv == CV_USEC) && c->type != SL_T_TIME) {
		host->config_error(st->inst, "columns", "'%s': %s needs a time field", spec,
				   conv_names[c->conv]);
		return -1;
	}
	if (c->conv == CV_TEXT && c->type != SL_T_ADDR && c->type != SL_T_STRING) {
		host->config_error(st->inst, "columns", "'%s': text applies to addresses", spec);
		return -1;
	}
	c->keylen = (uint8_t)snprintf(c->key, sizeof(c->key), "\"%.*s\":", (int)nlen, spec);
	return 0;
}

static int ch_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			void **state)
{
	const struct ch_cfg *c = config;
	const char *const *defs = c->schema == SCH_FLOWS ? flow_columns : packet_columns;
	struct ch_state *st;
	bool user = c->columns.n > 0;
	unsigned n = user ? c->columns.n : 0;

	if (strncmp(c->url, "http://", 7) && strncmp(c->url, "https://", 8)) {
		host->config_error(inst, "url", "expected http://host:port or https://host:port");
		return -1;
	}
	if (!c->table[0] || strpbrk(c->table, "` \t\n") || strpbrk(c->database, "` \t\n")) {
		host->config_error(inst, "table", "expected a table name without spaces or backquotes");
		return -1;
	}
	if (c->format == FMT_ROWBINARY && user) {
		host->config_error(inst, "format", "RowBinary needs the built-in schema's columns "
				   "(their types are known), not columns");
		return -1;
	}
	if (sl_sink_check(&c->sink, host, inst) < 0)
		return -1;
	if (!user)
		while (defs[n])
			n++;
	if (n > MAX_COLUMNS) {
		host->config_error(inst, "columns", "at most %d columns", MAX_COLUMNS);
		return -1;
	}
	st = sl_sink_state_new(struct ch_state, host, inst, config);
	if (!st)
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (parse_column(st, user ? c->columns.v[i] : defs[i], user, &st->col[st->ncol++]) < 0) {
			free(st);
			return -1;
		}
	st->ncol = n;
	for (unsigned i = 0; !user && i < n; i++)
		st->col[i].rb = (c->schema == SCH_FLOWS ? flow_rb : packet_rb)[i];
	st->c_inserts = host->counter_new(inst, "inserts");
	st->c_rows = host->counter_new(inst, "rows");
	st->c_http_errors = host->counter_new(inst, "http_errors");
	st->c_conn_errors = host->counter_new(inst, "connect_errors");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_dropped = host->counter_new(inst, "dropped_rows");
	sl_sink_init(&st->sink, host, inst, &c->sink, &ch_sink_def, st, st->c_retries, st->c_dropped);
	*state = st;
	return 0;
}

/* ---- start and stop ---- */

/* INSERT ... FORMAT fmt; RowBinary names the columns in our order. */
static int insert_query(const struct ch_state *st, int fmt, char *q, size_t size)
{
	const struct ch_cfg *c = st->cfg;
	size_t len;

	if (fmt == FMT_JSONEACHROW) {
		len = (size_t)snprintf(q, size, "INSERT INTO `%s`.`%s` FORMAT JSONEachRow", c->database,
				       c->table);
		return len < size ? 0 : -1;
	}
	/* MATERIALIZED columns (src_ip4) are the server's: not in the list */
	len = (size_t)snprintf(q, size, "INSERT INTO `%s`.`%s` (", c->database, c->table);
	for (unsigned i = 0; i < st->ncol && len < size; i++)
		len += (size_t)snprintf(q + len, size - len, "%s%.*s", i ? "," : "",
					st->col[i].keylen - 3, st->col[i].key + 1);
	if (len < size)
		len += (size_t)snprintf(q + len, size - len, ") FORMAT RowBinary");
	return len < size ? 0 : -1;
}

static int ch_start(void *state)
{
	struct ch_state *st = state;
	const struct ch_cfg *c = st->cfg;
	char query[1400];
	char *q;
	size_t ulen = strlen(c->url);

	st->curl = curl_easy_init();
	if (!st->curl) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a libcurl handle");
		return -1;
	}
	/* both formats: the spool may hold rows of the other from an earlier run */
	for (int f = FMT_JSONEACHROW; f <= FMT_ROWBINARY; f++) {
		if (f == FMT_ROWBINARY && c->columns.n)
			continue;	/* column types unknown */
		if (insert_query(st, f, query, sizeof(query)) < 0) {
			st->host->log(st->inst, SL_LOG_ERR, "the INSERT query is too long");
			return -1;
		}
		q = curl_easy_escape(st->curl, query, 0);
		st->insert_url[f] = q ? malloc(ulen + strlen(q) + 16) : NULL;
		st->headers[f] = curl_slist_append(NULL, f == FMT_ROWBINARY ?
						   "Content-Type: application/octet-stream" :
						   "Content-Type: application/x-ndjson");
		if (!st->insert_url[f] || !st->headers[f]) {
			curl_free(q);
			st->host->log(st->inst, SL_LOG_ERR, "out of memory");
			return -1;
		}
		sprintf(st->insert_url[f], "%s%s?query=%s", c->url,
			ulen && c->url[ulen - 1] == '/' ? "" : "/", q);
		curl_free(q);
	}
	st->answer = (struct sl_http_answer){ .buf = st->answer_buf, .max = ANSWER_MAX };
	sl_http_post_setup(st->curl, c->timeout, st->curl_err, &st->answer);
	if (c->user)
		curl_easy_setopt(st->curl, CURLOPT_USERNAME, c->user);
	if (c->password)
		curl_easy_setopt(st->curl, CURLOPT_PASSWORD, c->password);
	if (!ch_rows_ensure(&st->b, 1 << 20)) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (c->sink.spool_dir) {
		st->b.ends = calloc((size_t)c->sink.batch_size + 1, sizeof(*st->b.ends));
		st->rec = malloc(REC_MAX);
		if (!st->b.ends || !st->rec) {
			st->host->log(st->inst, SL_LOG_ERR, "out of memory");
			return -1;
		}
	}
	return sl_sink_start(&st->sink);
}

static void ch_stop(void *state)
{
	struct ch_state *st = state;

	sl_sink_stop(&st->sink);
	if (st->curl)
		curl_easy_cleanup(st->curl);
	st->curl = NULL;
	for (int f = 0; f < 2; f++) {
		curl_slist_free_all(st->headers[f]);
		st->headers[f] = NULL;
		free(st->insert_url[f]);
		st->insert_url[f] = NULL;
	}
}

static void ch_destroy(void *state)
{
	struct ch_state *st = state;

	if (!st)
		return;
	sl_sink_destroy(&st->sink);
	if (st->curl)
		curl_easy_cleanup(st->curl);
	for (int f = 0; f < 2; f++) {
		curl_slist_free_all(st->headers[f]);
		free(st->insert_url[f]);
	}
	free(st->b.ends);
	free(st->b.buf);
	free(st->rec);
	free(st->sbuf);
	free(st);
}

static const struct sl_plugin ch_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "clickhouse",
	.description = "insert records as rows into a ClickHouse table over HTTP (JSONEachRow or RowBinary)",
	.config_size = sizeof(struct ch_cfg),
	.options = ch_opts,
	.reads = ch_reads,
	.configure = ch_configure,
	.start = ch_start,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = ch_stop,
	.destroy = ch_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(ch_plugin)
