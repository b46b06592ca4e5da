/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sql output: records as rows of a PostgreSQL table (COPY ... FROM STDIN,
 * sql_pg.c) or an SQLite table (prepared INSERTs in one transaction per
 * batch, sql_sqlite.c).
 *
 * Each record becomes one row of cells (sql.h) in a batch that is reused:
 * the cells are allocated at start for batch_size rows, the byte arena
 * grows to the largest batch seen, so there is no malloc per record.  A
 * batch is handed to the driver when it holds batch_size rows or when
 * flush_interval passes, and it is acknowledged only once the database
 * committed it.  A failed batch is kept and sent again with exponential
 * backoff (the driver reconnects first): at-least-once, a batch whose
 * commit succeeded but whose answer was lost with the connection is
 * written twice.  After max_retries the rows are dropped and counted; a
 * batch the server refuses for its contents (a value out of range) is
 * dropped after at most REJECT_RETRIES.
 *
 * The plugin is a network output: it runs on its own thread behind the
 * core's queue, so the drivers may block (for at most timeout per call)
 * and while a batch is retried the queue fills, then the core blocks the
 * input (replay) or drops and counts (live).
 *
 * Batching, retries, the flush timer and spool_dir are the sink engine's
 * (sink.h): a batch the database cannot take now (SQL_RETRY) goes to the
 * disk spool as rows, one spool record per row holding its cells
 * (sql_cells.c), and is written from there, oldest first, in batches of
 * up to batch_size rows decoded into a batch of the spool's own.  A row
 * counts as sent (acknowledged to the spool) once the database committed
 * the batch holding it.  Rows rather than whole batches: max_size then
 * drops exact rows, and the spool's batches need not match the ones first
 * tried.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/plugin.h>

#include "flow_fields.h"
#include "fmt.h"
#include "grow.h"
#include "plugin_state.h"
#include "sink.h"
#include "sql.h"
#include "time_clamp.h"
#include "utf8.h"

#define REJECT_RETRIES 2	/* a refused batch is refused again: do not insist */

enum { DRV_POSTGRESQL, DRV_SQLITE };
enum { SCH_PACKETS, SCH_FLOWS };

static const char *const driver_names[] = { "postgresql", "sqlite", NULL };
static const char *const schema_names[] = { "packets", "flows", NULL };
static const char *const journal_names[] = { "wal", "delete", "truncate", "persist", "memory",
					     "off", NULL };
static const char *const sync_names[] = { "off", "normal", "full", "extra", NULL };

struct sql_cfg {
	int driver;
	const char *dsn;
	const char *path;
	const char *table;
	int schema;
	struct sl_strlist columns;
	struct sl_sink_cfg sink;	/* batch_size, flush_interval, max_retries, retry_*, spool_* */
	uint64_t timeout;
	const char *journal_mode;
	const char *synchronous;
	uint64_t busy_timeout;
};

static const struct sl_option sql_opts[] = {
	SL_OPT_ENUM("driver", struct sql_cfg, driver, SL_REQUIRED, driver_names,
		    "database: postgresql (libpq, COPY) or sqlite (libsqlite3)"),
	SL_OPT_STR("dsn", struct sql_cfg, dsn, NULL,
		   "postgresql: libpq connection string or URI (required)"),
	SL_OPT_STR("path", struct sql_cfg, path, SL_PATH(NULL, SL_OPT_OUT_FILE),
		   "sqlite: the database file (required)"),
	SL_OPT_STR("table", struct sql_cfg, table, NULL,
		   "table the rows go into (default: the schema's name, packets or flows)"),
	SL_OPT_ENUM("schema", struct sql_cfg, schema, "packets", schema_names,
		    "default columns when columns is not set: packets or flows (conf/sql/)"),
	SL_OPT_MAP("columns", struct sql_cfg, columns,
		   "column: field entries (sluice --describe's names; a time's field:sec, field:usec), instead of the schema's"),
	SL_SINK_OPT_BATCH(struct sql_cfg, sink, "1000", 100000, "rows per COPY or transaction"),
	SL_OPT_DURATION("timeout", struct sql_cfg, timeout, "10s", 100, 3600000,
			"longest time one connect or batch may take"),
	SL_SINK_OPT_RETRY(struct sql_cfg, sink, "30", 100000,
			  "retries of a failed batch before its rows are dropped"),
	SL_OPT_STR("journal_mode", struct sql_cfg, journal_mode, NULL,
		   "sqlite: wal (default), delete, truncate, persist, memory or off"),
	SL_OPT_STR("synchronous", struct sql_cfg, synchronous, NULL,
		   "sqlite: off, normal (default), full or extra"),
	SL_OPT_DURATION("busy_timeout", struct sql_cfg, busy_timeout, NULL, 10, 3600000,
			"sqlite: wait this long for another writer's lock, then retry the batch (default 1s)"),
	SL_SINK_OPT_SPOOL(struct sql_cfg, sink, "rows that cannot be written"),
	SL_OPT_END
};

/* The default schemas: conf/sql/packets-*.sql and flows-*.sql. */
static const char *const packet_columns[] = {
	"time", "timestamp", "prefix", "prefix", "ifname_in", "ifname_in",
	"ifname_out", "ifname_out", "mac_src", "mac_src", "ip_version", "ip_version",
	"src_addr", "src_addr", "dst_addr", "dst_addr", "ip_proto", "ip_proto",
	"sport", "sport", "dport", "dport", "ip_len", "ip_len", "ip_ttl", "ip_ttl",
	"tcp_flags", "tcp_flags", "icmp_type", "icmp_type", "icmp_code", "icmp_code",
	"mark", "mark",
	/* optional (optional_column()): nflog's, written where the table has them */
	"rule_family", "rule_family", "rule_table", "rule_table", "rule_chain", "rule_chain",
	"rule_handle", "rule_handle", "rule_comment", "rule_comment", "rule_verdict", "rule_verdict",
	NULL
};
static const char *const flow_columns[] = {
	"time", "timestamp", "ct_event", "ct_event", "ct_id", "ct_id", "family", "family",
	"ip_version", "ip_version", "ip_proto", "ip_proto", "orig_src", "orig_src", "orig_dst", "orig_dst",
	"orig_sport", "orig_sport", "orig_dport", "orig_dport", "reply_src", "reply_src",
	"reply_dst", "reply_dst", "reply_sport", "reply_sport", "reply_dport", "reply_dport",
	"orig_packets", "orig_packets", "orig_bytes", "orig_bytes",
	"reply_packets", "reply_packets", "reply_bytes", "reply_bytes",
	"flow_start", "flow_start", "flow_end", "flow_end",
	"flow_tcp_flags", "flow_tcp_flags", "flow_end_reason", "flow_end_reason", "tcp_state", "tcp_state",
	"mark", "mark", "ct_zone", "ct_zone", NULL
};

/* Every field the default schemas read (a queue in front copies these). */
static const struct sl_field_decl sql_reads[] = {
	SL_FIELD_DECL(SL_F_TIMESTAMP), SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_IFNAME_IN), SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_DECL(SL_F_MAC_SRC), SL_FIELD_DECL(SL_F_IP_VERSION),
	SL_FIELD_DECL(SL_F_SRC_ADDR), SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_DECL(SL_F_IP_PROTO), SL_FIELD_DECL(SL_F_SPORT), SL_FIELD_DECL(SL_F_DPORT),
	SL_FIELD_DECL(SL_F_IP_LEN), SL_FIELD_DECL(SL_F_IP_TTL), SL_FIELD_DECL(SL_F_TCP_FLAGS),
	SL_FIELD_DECL(SL_F_ICMP_TYPE), SL_FIELD_DECL(SL_F_ICMP_CODE), SL_FIELD_DECL(SL_F_MARK),
	SL_FIELD_DECL(SL_F_CT_EVENT), SL_FIELD_DECL(SL_F_CT_ID), SL_FIELD_DECL(SL_F_FAMILY),
	SL_CT_TUPLE_FIELDS,
	SL_FLOW_COUNT_FIELDS,
	SL_FIELD_DECL(SL_F_FLOW_TCP_FLAGS), SL_FIELD_DECL(SL_F_FLOW_END_REASON),
	SL_FIELD_DECL(SL_F_TCP_STATE), SL_FIELD_DECL(SL_F_CT_ZONE),
	SL_FIELD_END
};

struct sql_state {
	SL_SINK_STATE_HEAD(struct sql_cfg);
	const struct sql_driver *drv;
	struct sql_driver_cfg dcfg;
	void *d;
	struct sql_column col[SQL_MAX_COLUMNS];
	unsigned ncol, nfixed;		/* nfixed: the columns before the optional ones */

	struct sql_batch b;
	struct sql_batch sb;		/* with spool_dir: rows read back from the spool, reused */
	char *rec;			/* with spool_dir: one row as a spool record */
	size_t rec_cap;
	uint64_t reconnects_seen;

	int c_rows, c_batches, c_failed, c_retries, c_reconnects, c_dropped;
};

/* ---- shared by the drivers ---- */

size_t sql_format_time(char *buf, int64_t sec, uint32_t usec)
{
	struct sl_time c = sl_time_calendar((struct sl_time){sec, usec % 1000000 * 1000});
	time_t t = (time_t)c.sec;
	struct tm tm;
	char tmp[64];
	int n;

	/* within the calendar gmtime_r cannot fail: the zeros only quiet the compiler */
	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof(tm));
	n = snprintf(tmp, sizeof(tmp), "%04d-%02d-%02d %02d:%02d:%02d.%06u+00:00",
		     (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100, tm.tm_mday % 100,
		     tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100, c.nsec / 1000);
	memcpy(buf, tmp, (size_t)n + 1);
	return (size_t)n;
}

bool sql_ident_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > SQL_NAME_MAX || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')))
			return false;
	return true;
}

/* ---- records into cells ---- */

static bool arena_ensure(struct sql_batch *b, size_t more)
{
	return sl_grow(&b->arena, &b->cap, b->used + more);
}

/*
 * Text into the arena as valid UTF-8 without NUL (PostgreSQL refuses both
 * in a text column): a bad byte becomes U+FFFD.  Room: 3 bytes per byte.
 */
static size_t put_text(char *p, const uint8_t *s, size_t n)
{
	char *start = p;

	for (size_t i = 0; i < n;) {
		size_t k = s[i] < 0x80 ? (s[i] ? 1 : 0) : s[i] >= 0xc2 && s[i] <= 0xf4
			? sl_utf8_len(s + i, n - i) : 0;

		if (!k) {
			memcpy(p, "\xef\xbf\xbd", 3);
			p += 3;
			i++;
			continue;
		}
		memcpy(p, s + i, k);
		p += k;
		i += k;
	}
	return (size_t)(p - start);
}

static size_t cell_room(const struct sl_record *r, const struct sql_column *c)
{
	switch (c->type) {
	case SL_T_STRING:
		return (size_t)r->v[c->field].bytes.len * 3;
	case SL_T_BYTES:
		return r->v[c->field].bytes.len;
	case SL_T_ADDR:
		return 48;
	case SL_T_MAC:
		return 18;
	}
	return 0;
}

static void put_cell(struct sql_batch *b, struct sql_cell *cell, const struct sl_record *r,
		     const struct sql_column *c)
{
	static const char hex[] = "0123456789abcdef";
	const union sl_value *v = &r->v[c->field];
	char *p = b->arena + b->used;

	cell->off = b->used;
	if (c->part) {
		struct sl_time t = sl_time_calendar(v->time);	/* as the text form */

		cell->kind = SQL_INT;
		cell->i = c->part == SQL_PART_SEC ? t.sec : (int64_t)(t.nsec / 1000);
		return;
	}
	switch (c->type) {
	case SL_T_U64:
		cell->kind = SQL_INT;
		cell->i = (int64_t)v->u64;
		return;
	case SL_T_TIME: {
		struct sl_time t = sl_time_calendar(v->time);	/* time_clamp.h */

		cell->kind = SQL_TIME;
		cell->i = t.sec;
		cell->len = t.nsec / 1000;
		return;
	}
	case SL_T_STRING:
		cell->kind = SQL_TEXT;
		cell->len = (uint32_t)put_text(p, v->bytes.ptr, v->bytes.len);
		break;
	case SL_T_BYTES:
		cell->kind = SQL_BLOB;
		cell->len = v->bytes.len;
		if (v->bytes.len)
			memcpy(p, v->bytes.ptr, v->bytes.len);
		break;
	case SL_T_ADDR:
		cell->kind = SQL_TEXT;
		/* an IPv6 packet's ::ffff:a.b.c.d stays IPv6 (sl_fmt_rec_v6) */
		if (sl_addr_is_v4(v->addr) && !sl_fmt_rec_v6(r))
			cell->len = (uint32_t)snprintf(p, 48, "%u.%u.%u.%u", v->addr[12], v->addr[13],
						       v->addr[14], v->addr[15]);
		else
			cell->len = inet_ntop(AF_INET6, v->addr, p, 48) ? (uint32_t)strlen(p) : 0;
		break;
	case SL_T_MAC:
		cell->kind = SQL_TEXT;
		for (int i = 0; i < 6; i++) {
			p[i * 3] = hex[v->addr[i] >> 4];
			p[i * 3 + 1] = hex[v->addr[i] & 15];
			p[i * 3 + 2] = ':';
		}
		cell->len = 17;
		break;
	default:
		cell->kind = SQL_NULL;
		return;
	}
	b->used += cell->len;
}

/* Record r as the batch's next row; false when out of memory. */
static bool add_row(struct sql_state *st, const struct sl_record *r)
{
	struct sql_batch *b = &st->b;
	struct sql_cell *cells = b->cells + (size_t)b->rows * b->ncol;
	size_t need = 0;

	for (unsigned i = 0; i < st->ncol; i++)
		if (sl_has(r, st->col[i].field))
			need += cell_room(r, &st->col[i]);
	if (!arena_ensure(b, need))
		return false;
	for (unsigned i = 0; i < st->ncol; i++) {
		if (!sl_has(r, st->col[i].field))
			cells[i].kind = SQL_NULL;
		else
			put_cell(b, &cells[i], r, &st->col[i]);
	}
	b->rows++;
	return true;
}

/* ---- delivering a batch ---- */

static void count_reconnects(struct sql_state *st)
{
	uint64_t n = st->drv->reconnects(st->d);

	if (n > st->reconnects_seen)
		st->host->counter_add(st->inst, st->c_reconnects, n - st->reconnects_seen);
	st->reconnects_seen = n;
}

/* One batch to the driver: what the database said, as the sink knows it. */
static enum sl_sink_result write_batch(struct sql_state *st, const struct sql_batch *b)
{
	enum sql_result r = st->drv->write(st->d, b);

	count_reconnects(st);
	if (r == SQL_OK) {
		st->host->counter_add(st->inst, st->c_rows, b->rows);
		st->host->counter_add(st->inst, st->c_batches, b->rows > 0);
	}
	return r == SQL_OK ? SL_SINK_SENT : r == SQL_RETRY ? SL_SINK_RETRY : SL_SINK_REJECTED;
}

/* ---- the sink's callbacks (sink.h) ---- */

static bool sql_encode(void *ctx, const struct sl_record *r)
{
	return add_row(ctx, r);
}

static enum sl_sink_result sql_send(void *ctx, unsigned n)
{
	struct sql_state *st = ctx;
	enum sl_sink_result r;

	(void)n;	/* st->b.rows */
	r = write_batch(st, &st->b);
	if (r != SL_SINK_SENT)
		st->host->counter_add(st->inst, st->c_failed, 1);
	return r;
}

static const void *sql_spool_rec(void *ctx, unsigned i, size_t *len)
{
	struct sql_state *st = ctx;

	*len = sql_row_encode(&st->b, i, &st->rec, &st->rec_cap);
	return *len ? st->rec : NULL;
}

static void sql_reset(void *ctx)
{
	struct sql_state *st = ctx;

	st->b.rows = 0;
	st->b.used = 0;
}

/* The n spooled rows as one batch; a row that does not parse is skipped and counted. */
static enum sl_sink_result sql_send_spooled(void *ctx, const struct iovec *rec, unsigned n,
					    unsigned *used)
{
	struct sql_state *st = ctx;
	enum sl_sink_result r;

	st->sb.rows = 0;
	st->sb.used = 0;
	for (unsigned i = 0; i < n; i++)
		if (!sql_row_decode(&st->sb, rec[i].iov_base, rec[i].iov_len)) {
			st->host->log(st->inst, SL_LOG_ERR, "spool: a row that does not fit the columns "
				      "skipped (counted in spool_dropped)");
			sl_sink_spool_dropped(&st->sink, 1);
		}
	*used = n;
	if (!st->sb.rows)
		return SL_SINK_SENT;
	r = write_batch(st, &st->sb);
	if (r == SL_SINK_REJECTED) {
		/* refused for good: dropped, so the rows behind them can go */
		st->host->log(st->inst, SL_LOG_ERR, "spool: %u rows refused by the database dropped",
			      st->sb.rows);
		sl_sink_spool_dropped(&st->sink, st->sb.rows);
	}
	return r;
}

static const struct sl_sink_ops sql_sink_ops = {
	.encode = sql_encode,
	.send = sql_send,
	.spool_rec = sql_spool_rec,
	.reset = sql_reset,
	.send_spooled = sql_send_spooled,
};

static const struct sl_sink_def sql_sink_def = {
	.ops = &sql_sink_ops,
	.batch = "batch",
	.done = "written",
	.from_spool = "written from there when the database is back",
	.reject_retries = REJECT_RETRIES,
};

/* ---- configuration ---- */

static int find_name(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* Options of one driver given to the other, or missing. */
static int check_driver_options(const struct sl_host *host, struct sl_instance *inst,
				const struct sql_cfg *c)
{
	bool pg = c->driver == DRV_POSTGRESQL;

	if (pg && !c->dsn) {
		host->config_error(inst, "dsn", "driver postgresql needs dsn (a libpq connection string)");
		return -1;
	}
	if (!pg && !c->path) {
		host->config_error(inst, "path", "driver sqlite needs path (the database file)");
		return -1;
	}
	if (pg && (c->path || c->journal_mode || c->synchronous || c->busy_timeout)) {
		host->config_error(inst, c->path ? "path" : c->journal_mode ? "journal_mode" :
				   c->synchronous ? "synchronous" : "busy_timeout",
				   "applies to driver sqlite, not postgresql");
		return -1;
	}
	if (!pg && c->dsn) {
		host->config_error(inst, "dsn", "applies to driver postgresql, not sqlite");
		return -1;
	}
	if (c->journal_mode && find_name(journal_names, c->journal_mode) < 0) {
		host->config_error(inst, "journal_mode", "expected wal, delete, truncate, persist, memory or off");
		return -1;
	}
	if (c->synchronous && find_name(sync_names, c->synchronous) < 0) {
		host->config_error(inst, "synchronous", "expected off, normal, full or extra");
		return -1;
	}
#ifndef SLUICE_SQL_PG
	if (pg) {
		host->config_error(inst, "driver", "postgresql is not built in (SLUICE_WITH_PGSQL=OFF)");
		return -1;
	}
#endif
#ifndef SLUICE_SQL_SQLITE
	if (!pg) {
		host->config_error(inst, "driver", "sqlite is not built in (SLUICE_WITH_SQLITE=OFF)");
		return -1;
	}
#endif
	return sl_sink_check(&c->sink, host, inst);
}

/* The ":sec" or ":usec" after a time field: that part, as an integer. */
static int parse_part(struct sql_state *st, const char *where, const char *spec, const char *part,
		      struct sql_column *col)
{
	if (strcmp(part, "sec") && strcmp(part, "usec")) {
		st->host->config_error(st->inst, where, "'%s': expected field, field:sec or field:usec", spec);
		return -1;
	}
	if (col->type != SL_T_TIME) {
		st->host->config_error(st->inst, where, "'%s': :%s applies to a time field", spec, part);
		return -1;
	}
	col->part = strcmp(part, "sec") ? SQL_PART_USEC : SQL_PART_SEC;
	col->type = SL_T_U64;
	return 0;
}

/*
 * A default column a table made before it may lack: the rule's (nflog's
 * rules: true, issue 22), last in packet_columns.  Left out where no plugin
 * registers its field, and where the table has no such column.
 */
static bool optional_column(bool user, const char *name)
{
	return !user && !strncmp(name, "rule_", 5);
}

/* The columns: the user's map (fields needed upstream) or the schema's. */
static int parse_columns(struct sql_state *st)
{
	const struct sql_cfg *c = st->cfg;
	const struct sl_host *host = st->host;
	bool user = c->columns.n > 0;
	const char *const *defs = c->schema == SCH_FLOWS ? flow_columns : packet_columns;
	const char *const *v = user ? c->columns.v : defs;
	unsigned n = 0, out = 0;
	char where[SQL_NAME_MAX + 16];

	if (user)
		n = c->columns.n / 2;
	else
		while (defs[2 * n])
			n++;
	if (n > SQL_MAX_COLUMNS) {
		host->config_error(st->inst, "columns", "at most %d columns", SQL_MAX_COLUMNS);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		struct sql_column *col = &st->col[out];
		const char *name = v[2 * i], *spec = v[2 * i + 1], *colon = strchr(spec, ':');
		char field[64];
		int id;

		snprintf(where, sizeof(where), "columns/%s", name);
		if (!sql_ident_ok(name)) {
			host->config_error(st->inst, where, "'%s': a column name is 1 to %d letters, digits "
					   "or '_', not starting with a digit", name, SQL_NAME_MAX);
			return -1;
		}
		for (unsigned k = 0; k < out; k++)
			if (!strcmp(st->col[k].name, name)) {
				host->config_error(st->inst, where, "column '%s' is mapped twice", name);
				return -1;
			}
		snprintf(field, sizeof(field), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec), spec);
		id = user ? host->need_field(st->inst, where, field) : host->field_id(st->inst, field);
		if (id < 0 && optional_column(user, name))
			continue;
		if (id < 0) {
			if (!user)
				host->config_error(st->inst, "columns", "no field '%s'", field);
			return -1;
		}
		if (optional_column(user, name) && SL_HOST_HAS(host, read_field))
			host->read_field(st->inst, field);	/* not among sql_reads: registered */
		snprintf(col->name, sizeof(col->name), "%s", name);
		col->optional = optional_column(user, name);
		if (!col->optional)
			st->nfixed = out + 1;
		col->field = (sl_field)id;
		col->type = (uint8_t)host->field_type(st->inst, id);
		if (colon && parse_part(st, where, spec, colon + 1, col) < 0)
			return -1;
		out++;
	}
	st->ncol = out;
	return 0;
}

static int sql_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			 void **state)
{
	const struct sql_cfg *c = config;
	struct sql_state *st;

	if (check_driver_options(host, inst, c) < 0)
		return -1;
	if (c->table && !sql_ident_ok(c->table)) {
		host->config_error(inst, "table", "expected a table name of letters, digits and '_'");
		return -1;
	}
	st = sl_sink_state_new(struct sql_state, host, inst, c);
	if (!st)
		return -1;
	if (parse_columns(st) < 0) {
		free(st);
		return -1;
	}
#ifdef SLUICE_SQL_PG
	if (c->driver == DRV_POSTGRESQL)
		st->drv = &sql_pg_driver;
#endif
#ifdef SLUICE_SQL_SQLITE
	if (c->driver == DRV_SQLITE)
		st->drv = &sql_sqlite_driver;
#endif
	st->dcfg = (struct sql_driver_cfg){
		.dsn = c->dsn, .path = c->path,
		.table = c->table ? c->table : schema_names[c->schema],
		.journal_mode = c->journal_mode ? c->journal_mode : "wal",
		.synchronous = c->synchronous ? c->synchronous : "normal",
		.timeout_ms = c->timeout, .busy_timeout_ms = c->busy_timeout ? c->busy_timeout : 1000,
		.col = st->col, .ncol = st->ncol,
	};
	st->c_rows = host->counter_new(inst, "rows");
	st->c_batches = host->counter_new(inst, "batches");
	st->c_failed = host->counter_new(inst, "failed");
	st->c_retries = host->counter_new(inst, "retries");
	st->c_reconnects = host->counter_new(inst, "reconnects");
	st->c_dropped = host->counter_new(inst, "dropped_rows");
	sl_sink_init(&st->sink, host, inst, &c->sink, &sql_sink_def, st, st->c_retries, st->c_dropped);
	*state = st;
	return 0;
}

/* ---- start and stop ---- */

static int sql_start(void *state)
{
	struct sql_state *st = state;
	size_t cells = (size_t)st->cfg->sink.batch_size * st->ncol;
	int rc;

	st->b.ncol = st->ncol;
	st->b.nfixed = st->nfixed;
	st->b.cells = calloc(cells, sizeof(*st->b.cells));
	if (!st->b.cells || !arena_ensure(&st->b, 1 << 16)) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->d = st->drv->create(st->host, st->inst, &st->dcfg);
	if (!st->d) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	/* a wrong table stops the start; a server away is retried with the rows */
	rc = st->drv->check(st->d);
	if (rc == -1)
		return -1;
	if (st->cfg->sink.spool_dir) {
		st->sb.ncol = st->ncol;
		st->sb.nfixed = st->nfixed;
		st->sb.cells = calloc(cells, sizeof(*st->sb.cells));
		if (!st->sb.cells) {
			st->host->log(st->inst, SL_LOG_ERR, "spool_dir: out of memory");
			return -1;
		}
	}
	return sl_sink_start(&st->sink);
}

static void sql_stop(void *state)
{
	struct sql_state *st = state;

	sl_sink_stop(&st->sink);
	if (st->d)
		st->drv->destroy(st->d);
	st->d = NULL;
}

static void sql_destroy(void *state)
{
	struct sql_state *st = state;

	if (!st)
		return;
	if (st->d)
		st->drv->destroy(st->d);
	sl_sink_destroy(&st->sink);	/* nothing to do unless it was opened */
	free(st->b.cells);
	free(st->b.arena);
	free(st->sb.cells);
	free(st->sb.arena);
	free(st->rec);
	free(st);
}

static const struct sl_plugin sql_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "sql",
	.description = "insert records as rows into a PostgreSQL (COPY) or SQLite table",
	.config_size = sizeof(struct sql_cfg),
	.options = sql_opts,
	.reads = sql_reads,
	.configure = sql_configure,
	.start = sql_start,
	.process = sl_sink_plugin_process,
	.flush = sl_sink_plugin_flush,
	.stop = sql_stop,
	.destroy = sql_destroy,
	.flags = SL_PLUGIN_NETWORK,
};

SLUICE_PLUGIN(sql_plugin)
