/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's PostgreSQL driver: libpq, one COPY table (columns) FROM
 * STDIN in text format per batch, on a non-blocking connection.
 *
 * Every step (connect, the COPY command, the data, its end, the answer)
 * waits with poll() on the connection's socket against one deadline, the
 * output's timeout, so a server that stops answering costs a timeout and a
 * reconnect, never a thread stuck in a blocking read.  A batch counts as
 * written only when PQputCopyEnd's COPY answers PGRES_COMMAND_OK: the rows
 * are committed then (COPY runs in its own transaction).
 *
 * The rows are encoded into one buffer reused for every batch.  COPY's
 * text format: columns separated by tabs, rows ended by newlines, NULL as
 * \N, and in values backslash, tab, newline and carriage return escaped
 * with a backslash; a bytea as \\x and hex digits.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <libpq-fe.h>

#include "clock.h"
#include "grow.h"
#include "sql.h"

#define CHUNK (64 * 1024)	/* bytes per PQputCopyData */

struct pg {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct sql_driver_cfg *cfg;
	PGconn *conn;
	bool checked;		/* the table was checked on this connection */
	bool ever_connected;
	bool down_logged;
	uint64_t reconnects;
	uint64_t deadline;	/* ms, CLOCK_MONOTONIC, of the step under way */
	char *copy_sql;
	char *buf;
	size_t len, cap;
};

/* Wait for the socket (POLLIN / POLLOUT) until the deadline; false on timeout. */
static bool wait_sock(struct pg *p, short events)
{
	struct pollfd pfd = { .fd = PQsocket(p->conn), .events = events };
	uint64_t now;
	int rc;

	if (pfd.fd < 0)
		return false;
	do {
		now = sl_mono_ms();
		if (now >= p->deadline)
			return false;
		rc = poll(&pfd, 1, (int)(p->deadline - now));
	} while (rc < 0 && errno == EINTR);
	return rc > 0;
}

static void drop_conn(struct pg *p)
{
	if (p->conn)
		PQfinish(p->conn);
	p->conn = NULL;
	p->checked = false;
}

static void log_conn_error(struct pg *p, const char *what)
{
	const char *m = p->conn ? PQerrorMessage(p->conn) : "out of memory";
	size_t n = strcspn(m, "\n");

	p->host->log(p->inst, SL_LOG_WARNING, "%s: %.*s", what, (int)n, *m ? m : "timeout");
}

/* The server's notices and warnings go to our log, not libpq's stderr. */
static void on_notice(void *ctx, const char *msg)
{
	struct pg *p = ctx;

	p->host->log(p->inst, SL_LOG_NOTICE, "server: %.*s", (int)strcspn(msg, "\n"), msg);
}

/* A connection, made without blocking past the deadline; false after logging. */
static bool connect_pg(struct pg *p)
{
	PostgresPollingStatusType s = PGRES_POLLING_WRITING;

	p->deadline = sl_mono_ms() + p->cfg->timeout_ms;
	p->conn = PQconnectStart(p->cfg->dsn);
	if (!p->conn || PQstatus(p->conn) == CONNECTION_BAD)
		goto fail;
	while (s != PGRES_POLLING_OK) {
		if (s == PGRES_POLLING_FAILED)
			goto fail;
		if (!wait_sock(p, s == PGRES_POLLING_READING ? POLLIN : POLLOUT))
			goto fail;
		s = PQconnectPoll(p->conn);
	}
	if (PQsetnonblocking(p->conn, 1) < 0)
		goto fail;
	PQsetNoticeProcessor(p->conn, on_notice, p);
	if (p->ever_connected)
		p->reconnects++;
	if (p->down_logged)
		p->host->log(p->inst, SL_LOG_NOTICE, "connected again");
	p->ever_connected = true;
	p->down_logged = false;
	return true;
fail:
	if (!p->down_logged)
		log_conn_error(p, "cannot connect");
	p->down_logged = true;
	drop_conn(p);
	return false;
}

/* Send what libpq holds; false on error or timeout. */
static bool flush_out(struct pg *p)
{
	int rc;

	while ((rc = PQflush(p->conn)) == 1) {
		if (!wait_sock(p, POLLIN | POLLOUT))
			return false;
		/* the server may answer (an error) before it reads everything */
		if (PQconsumeInput(p->conn) == 0)
			return false;
	}
	return rc == 0;
}

/* The next result, read without blocking past the deadline; NULL at the end or on error. */
static PGresult *next_result(struct pg *p, bool *failed)
{
	*failed = false;
	if (!flush_out(p)) {
		*failed = true;
		return NULL;
	}
	while (PQisBusy(p->conn)) {
		if (!wait_sock(p, POLLIN) || !PQconsumeInput(p->conn)) {
			*failed = true;
			return NULL;
		}
	}
	return PQgetResult(p->conn);
}

/* Read the remaining results of a command. */
static bool drain_results(struct pg *p)
{
	PGresult *r;
	bool failed;

	while ((r = next_result(p, &failed)))
		PQclear(r);
	return !failed;
}

/* What a server error means for the batch: its class decides. */
static enum sql_result classify(const PGresult *r)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;

	/* data exception, integrity constraint, syntax or access: the rows themselves */
	if (state && (!strncmp(state, "22", 2) || !strncmp(state, "23", 2) || !strncmp(state, "42", 2)))
		return SQL_REJECTED;
	return SQL_RETRY;
}

/* ---- the table's columns ---- */

/* Whether a column of this type (category, name) takes the field; sets conv. */
static bool type_ok(struct sql_column *c, char cat, const char *typ)
{
	c->conv = SQL_CV_NONE;
	switch (c->type) {
	case SL_T_U64:
		return cat == 'N';
	case SL_T_STRING:
		return cat == 'S';
	case SL_T_ADDR:
		return cat == 'I' || cat == 'S';
	case SL_T_MAC:
		return !strcmp(typ, "macaddr") || !strcmp(typ, "macaddr8") || cat == 'S';
	case SL_T_TIME:
		if (cat == 'N')
			c->conv = SQL_CV_TIME_SEC;
		return cat == 'D' || cat == 'N';
	case SL_T_BYTES:
		if (cat == 'S')
			c->conv = SQL_CV_HEX;
		return !strcmp(typ, "bytea") || cat == 'S';
	}
	return false;
}

static const char *type_wanted(uint8_t type)
{
	switch (type) {
	case SL_T_U64:
		return "a numeric type (smallint, integer, bigint, numeric)";
	case SL_T_STRING:
		return "a string type (text, varchar)";
	case SL_T_ADDR:
		return "inet, cidr or text";
	case SL_T_MAC:
		return "macaddr or text";
	case SL_T_TIME:
		return "timestamptz, timestamp or a number (seconds)";
	case SL_T_BYTES:
		return "bytea or text (hex)";
	}
	return "?";
}

/* -1: the table lacks a column or a type does not fit (logged). */
static int check_columns(struct pg *p, PGresult *r)
{
	const char *table = p->cfg->table;
	int n = PQntuples(r);

	if (!n) {
		p->host->log(p->inst, SL_LOG_ERR, "table '%s' does not exist (create it: conf/sql/)", table);
		return -1;
	}
	for (unsigned i = 0; i < p->cfg->ncol; i++) {
		struct sql_column *c = &p->cfg->col[i];
		int k;

		for (k = 0; k < n && strcasecmp(PQgetvalue(r, k, 0), c->name); k++)
			;
		if (k == n && c->optional) {
			c->conv = SQL_CV_ABSENT;	/* a table made before it */
			continue;
		}
		if (k == n) {
			p->host->log(p->inst, SL_LOG_ERR, "table '%s' has no column '%s'", table, c->name);
			return -1;
		}
		if (!type_ok(c, PQgetvalue(r, k, 2)[0], PQgetvalue(r, k, 1))) {
			p->host->log(p->inst, SL_LOG_ERR, "column '%s' of table '%s' is %s; its field needs %s",
				     c->name, table, PQgetvalue(r, k, 1), type_wanted(c->type));
			return -1;
		}
	}
	return 0;
}

/* COPY table (the columns the table has) FROM STDIN, into copy_sql (sized at create). */
static void copy_command(struct pg *p)
{
	const struct sql_driver_cfg *cfg = p->cfg;
	size_t len;
	unsigned k = 0;

	/* identifiers are plain (sql_ident_ok): folded to lower case like the check */
	len = (size_t)sprintf(p->copy_sql, "COPY %s (", cfg->table);
	for (unsigned i = 0; i < cfg->ncol; i++)
		if (cfg->col[i].conv != SQL_CV_ABSENT)
			len += (size_t)sprintf(p->copy_sql + len, "%s%s", k++ ? ", " : "", cfg->col[i].name);
	strcpy(p->copy_sql + len, ") FROM STDIN");
}

static int pg_check(void *d)
{
	static const char q[] =
		"SELECT a.attname, t.typname, t.typcategory FROM pg_attribute a "
		"JOIN pg_type t ON t.oid = a.atttypid "
		"WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped";
	struct pg *p = d;
	const char *param = p->cfg->table;
	PGresult *r;
	bool failed;
	int rc;

	if (!p->conn && !connect_pg(p))
		return -2;
	p->deadline = sl_mono_ms() + p->cfg->timeout_ms;
	if (!PQsendQueryParams(p->conn, q, 1, NULL, &param, NULL, NULL, 0)) {
		log_conn_error(p, "cannot read the table's columns");
		drop_conn(p);
		return -2;
	}
	r = next_result(p, &failed);
	if (failed || !r || PQresultStatus(r) != PGRES_TUPLES_OK) {
		log_conn_error(p, "cannot read the table's columns");
		PQclear(r);
		drop_conn(p);
		return -2;
	}
	rc = check_columns(p, r);
	PQclear(r);
	if (!rc)
		copy_command(p);
	if (!drain_results(p)) {
		drop_conn(p);
		return -2;
	}
	p->checked = rc == 0;
	return rc;
}

/* ---- a batch as COPY text ---- */

static bool buf_ensure(struct pg *p, size_t more)
{
	return sl_grow(&p->buf, &p->cap, p->len + more);
}

static char *put_escaped(char *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		switch (c) {
		case '\\':
			*o++ = '\\';
			*o++ = '\\';
			break;
		case '\t':
			*o++ = '\\';
			*o++ = 't';
			break;
		case '\n':
			*o++ = '\\';
			*o++ = 'n';
			break;
		case '\r':
			*o++ = '\\';
			*o++ = 'r';
			break;
		default:
			*o++ = c;
		}
	}
	return o;
}

static char *put_cell(char *o, const struct sql_batch *b, const struct sql_cell *c, uint8_t conv)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = (const uint8_t *)b->arena + c->off;

	switch (c->kind) {
	case SQL_INT:
		return o + sprintf(o, "%" PRIu64, (uint64_t)c->i);
	case SQL_TIME:
		if (conv == SQL_CV_TIME_SEC)
			return o + sprintf(o, "%" PRId64, c->i);
		return o + sql_format_time(o, c->i, c->len);
	case SQL_TEXT:
		return put_escaped(o, (const char *)s, c->len);
	case SQL_BLOB:
		if (conv != SQL_CV_HEX) {
			memcpy(o, "\\\\x", 3);	/* bytea hex input, its backslash escaped */
			o += 3;
		}
		for (uint32_t i = 0; i < c->len; i++) {
			*o++ = hex[s[i] >> 4];
			*o++ = hex[s[i] & 15];
		}
		return o;
	}
	memcpy(o, "\\N", 2);
	return o + 2;
}

static bool encode(struct pg *p, const struct sql_batch *b)
{
	p->len = 0;
	for (unsigned r = 0; r < b->rows; r++) {
		const struct sql_cell *row = b->cells + (size_t)r * b->ncol;
		size_t need = 1;
		char *o;

		for (unsigned i = 0; i < b->ncol; i++)
			need += 1 + (row[i].kind == SQL_TEXT || row[i].kind == SQL_BLOB
				     ? 3 + 2 * (size_t)row[i].len : 32);
		if (!buf_ensure(p, need))
			return false;
		o = p->buf + p->len;
		for (unsigned i = 0, k = 0; i < b->ncol; i++) {
			if (p->cfg->col[i].conv == SQL_CV_ABSENT)
				continue;	/* the table lacks this optional column */
			if (k++)
				*o++ = '\t';
			o = put_cell(o, b, &row[i], p->cfg->col[i].conv);
		}
		*o++ = '\n';
		p->len = (size_t)(o - p->buf);
	}
	return true;
}

/* Hand the buffer to COPY and end it; false on a connection failure or timeout. */
static bool send_copy(struct pg *p)
{
	size_t off = 0;
	int rc;

	while (off < p->len) {
		size_t n = p->len - off < CHUNK ? p->len - off : CHUNK;

		rc = PQputCopyData(p->conn, p->buf + off, (int)n);
		if (rc < 0)
			return false;
		if (rc == 0 || PQflush(p->conn) == 1) {
			if (!flush_out(p))
				return false;
			if (rc == 0)
				continue;
		}
		off += n;
	}
	while ((rc = PQputCopyEnd(p->conn, NULL)) == 0)
		if (!flush_out(p))
			return false;
	return rc > 0 && flush_out(p);
}

static enum sql_result pg_write(void *d, const struct sql_batch *b)
{
	struct pg *p = d;
	enum sql_result res = SQL_RETRY;
	PGresult *r;
	bool failed;

	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		drop_conn(p);
		if (!connect_pg(p))
			return SQL_RETRY;
	}
	if (!p->checked) {
		int rc = pg_check(p);

		if (rc < 0)
			return rc == -1 ? SQL_REJECTED : SQL_RETRY;
	}
	if (!encode(p, b)) {
		p->host->log(p->inst, SL_LOG_ERR, "out of memory for the COPY data");
		return SQL_RETRY;
	}
	p->deadline = sl_mono_ms() + p->cfg->timeout_ms;
	if (!PQsendQuery(p->conn, p->copy_sql))
		goto lost;
	r = next_result(p, &failed);
	if (failed || !r)
		goto lost;
	if (PQresultStatus(r) != PGRES_COPY_IN) {
		p->host->log(p->inst, SL_LOG_WARNING, "COPY refused: %s", PQresultErrorMessage(r));
		res = classify(r);
		PQclear(r);
		if (!drain_results(p))
			drop_conn(p);
		return res;
	}
	PQclear(r);
	if (!send_copy(p))
		goto lost;
	r = next_result(p, &failed);
	if (failed || !r)
		goto lost;
	if (PQresultStatus(r) == PGRES_COMMAND_OK) {
		res = SQL_OK;
	} else {
		const char *m = PQresultErrorMessage(r);

		p->host->log(p->inst, SL_LOG_WARNING, "COPY of %u rows failed: %.*s", b->rows,
			     (int)strcspn(m, "\n"), m);
		res = classify(r);
	}
	PQclear(r);
	if (!drain_results(p) || res == SQL_RETRY)
		drop_conn(p);	/* a server shutting down: start afresh */
	return res;
lost:
	log_conn_error(p, "connection lost");
	p->down_logged = true;
	drop_conn(p);
	return SQL_RETRY;
}

/* ---- the driver ---- */

static void *pg_create(const struct sl_host *host, struct sl_instance *inst,
		       const struct sql_driver_cfg *cfg)
{
	struct pg *p = calloc(1, sizeof(*p));
	size_t len;

	if (!p)
		return NULL;
	p->host = host;
	p->inst = inst;
	p->cfg = cfg;
	len = strlen(cfg->table) + 32 + cfg->ncol * (SQL_NAME_MAX + 3);	/* ", name" */
	p->copy_sql = malloc(len);
	if (!p->copy_sql) {
		free(p);
		return NULL;
	}
	copy_command(p);	/* every column until a check says which the table has */
	return p;
}

static uint64_t pg_reconnects(void *d)
{
	return ((struct pg *)d)->reconnects;
}

static void pg_destroy(void *d)
{
	struct pg *p = d;

	drop_conn(p);
	free(p->copy_sql);
	free(p->buf);
	free(p);
}

const struct sql_driver sql_pg_driver = {
	.name = "postgresql",
	.create = pg_create,
	.check = pg_check,
	.write = pg_write,
	.reconnects = pg_reconnects,
	.destroy = pg_destroy,
};
