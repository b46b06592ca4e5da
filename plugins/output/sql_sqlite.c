/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's SQLite driver: one prepared INSERT, one transaction
 * (BEGIN IMMEDIATE ... COMMIT) per batch, the journal mode (wal by
 * default) and synchronous level set when the database is opened.
 *
 * Another writer holding the lock makes SQLite wait busy_timeout, then
 * answer SQLITE_BUSY: the transaction is rolled back and the whole batch
 * retried by the output with its backoff, like a full disk (SQLITE_FULL)
 * or an I/O error.  Only a row the table refuses (a constraint, a type
 * mismatch) makes the batch rejected.  Text and blobs are bound from the
 * batch's arena without copies; times are formatted into a scratch area
 * of the state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "sql.h"

struct lite {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct sql_driver_cfg *cfg;
	sqlite3 *db;
	sqlite3_stmt *insert, *begin, *commit, *rollback;
	uint64_t reopens;
	bool ever_opened;
	char times[SQL_MAX_COLUMNS][32];
	char *hex;		/* blobs as hex text, for TEXT columns */
	size_t hex_cap;
};

static void close_db(struct lite *l)
{
	sqlite3_finalize(l->insert);
	sqlite3_finalize(l->begin);
	sqlite3_finalize(l->commit);
	sqlite3_finalize(l->rollback);
	l->insert = l->begin = l->commit = l->rollback = NULL;
	if (l->db)
		sqlite3_close(l->db);
	l->db = NULL;
}

/* SQLite's type affinity of a declared column type (its rules, section 3.1). */
enum { AFF_INTEGER, AFF_TEXT, AFF_BLOB, AFF_REAL, AFF_NUMERIC };

static int affinity(const char *t)
{
	char up[64];
	size_t i;

	for (i = 0; t[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)(t[i] >= 'a' && t[i] <= 'z' ? t[i] - 32 : t[i]);
	up[i] = 0;
	if (strstr(up, "INT"))
		return AFF_INTEGER;
	if (strstr(up, "CHAR") || strstr(up, "CLOB") || strstr(up, "TEXT"))
		return AFF_TEXT;
	if (strstr(up, "BLOB") || !up[0])
		return AFF_BLOB;
	if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB"))
		return AFF_REAL;
	return AFF_NUMERIC;
}

/* Whether a column of declared type t takes the field; sets conv. */
static bool type_ok(struct sql_column *c, const char *t)
{
	int a = affinity(t);
	bool num = a == AFF_INTEGER || a == AFF_NUMERIC || a == AFF_REAL;

	c->conv = SQL_CV_NONE;
	if (!t[0])
		return true;	/* no declared type: any value */
	switch (c->type) {
	case SL_T_U64:
		return num;
	case SL_T_STRING:
	case SL_T_ADDR:
	case SL_T_MAC:
		return a == AFF_TEXT;
	case SL_T_TIME:
		if (num)
			c->conv = SQL_CV_TIME_SEC;
		return num || a == AFF_TEXT;
	case SL_T_BYTES:
		if (a == AFF_TEXT)
			c->conv = SQL_CV_HEX;
		return a == AFF_BLOB || a == AFF_TEXT;
	}
	return false;
}

static const char *type_wanted(uint8_t type)
{
	switch (type) {
	case SL_T_U64:
		return "INTEGER";
	case SL_T_TIME:
		return "TEXT or INTEGER (seconds)";
	case SL_T_BYTES:
		return "BLOB or TEXT (hex)";
	}
	return "TEXT";
}

/* -1 after logging: a column missing or of the wrong type. */
static int check_columns(struct lite *l)
{
	char sql[SQL_NAME_MAX + 32];
	sqlite3_stmt *s;
	bool found[SQL_MAX_COLUMNS] = { false };
	int rows = 0, rc = 0;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", l->cfg->table);
	if (sqlite3_prepare_v2(l->db, sql, -1, &s, NULL) != SQLITE_OK) {
		l->host->log(l->inst, SL_LOG_ERR, "%s: %s", l->cfg->path, sqlite3_errmsg(l->db));
		return -1;
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 1);
		const char *type = (const char *)sqlite3_column_text(s, 2);

		rows++;
		for (unsigned i = 0; i < l->cfg->ncol && name; i++) {
			struct sql_column *c = &l->cfg->col[i];

			if (strcasecmp(c->name, name))
				continue;
			found[i] = true;
			if (!type_ok(c, type ? type : "") && !rc) {
				l->host->log(l->inst, SL_LOG_ERR, "column '%s' of table '%s' is %s; its field "
					     "needs %s", c->name, l->cfg->table, type, type_wanted(c->type));
				rc = -1;
			}
		}
	}
	sqlite3_finalize(s);
	if (!rows) {
		l->host->log(l->inst, SL_LOG_ERR, "table '%s' does not exist in %s (create it: conf/sql/)",
			     l->cfg->table, l->cfg->path);
		return -1;
	}
	for (unsigned i = 0; i < l->cfg->ncol && !rc; i++)
		if (!found[i] && l->cfg->col[i].optional) {
			l->cfg->col[i].conv = SQL_CV_ABSENT;	/* a table made before it */
		} else if (!found[i]) {
			l->host->log(l->inst, SL_LOG_ERR, "table '%s' has no column '%s'", l->cfg->table,
				     l->cfg->col[i].name);
			rc = -1;
		}
	return rc;
}

/* Worth trying again later: another writer, a full disk, an I/O error. */
static bool transient(int rc)
{
	rc &= 0xff;
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_FULL || rc == SQLITE_IOERR;
}

/*
 * PRAGMA name = value, and (check) the value it reports back equals value.
 * 0, -1 after logging, -2 for a transient error (logged).
 */
static int pragma(struct lite *l, const char *name, const char *value, bool check)
{
	char sql[96];
	sqlite3_stmt *s = NULL;
	int rc;

	snprintf(sql, sizeof(sql), "PRAGMA %s = %s", name, value);
	rc = sqlite3_prepare_v2(l->db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && check && strcasecmp((const char *)sqlite3_column_text(s, 0), value)) {
		l->host->log(l->inst, SL_LOG_ERR, "%s: journal_mode %s refused, it stays %s",
			     l->cfg->path, value, sqlite3_column_text(s, 0));
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return 0;
	l->host->log(l->inst, transient(rc) ? SL_LOG_WARNING : SL_LOG_ERR, "%s: %s: %s", l->cfg->path,
		     sql, sqlite3_errstr(rc));
	return transient(rc) ? -2 : -1;
}

static int prepare(struct lite *l)
{
	size_t size = 64 + l->cfg->ncol * (SQL_NAME_MAX + 8), len;	/* `, "name"` and `, ?` */
	char *sql = malloc(size);
	unsigned k = 0;
	int rc;

	if (!sql)
		return -1;
	len = (size_t)snprintf(sql, size, "INSERT INTO \"%s\" (", l->cfg->table);
	for (unsigned i = 0; i < l->cfg->ncol; i++)
		if (l->cfg->col[i].conv != SQL_CV_ABSENT)
			len += (size_t)snprintf(sql + len, size - len, "%s\"%s\"", k++ ? ", " : "",
						l->cfg->col[i].name);
	len += (size_t)snprintf(sql + len, size - len, ") VALUES (");
	for (unsigned i = 0; i < k; i++)
		len += (size_t)snprintf(sql + len, size - len, "%s?", i ? ", " : "");
	snprintf(sql + len, size - len, ")");
	rc = sqlite3_prepare_v3(l->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &l->insert, NULL) ||
	     sqlite3_prepare_v2(l->db, "BEGIN IMMEDIATE", -1, &l->begin, NULL) ||
	     sqlite3_prepare_v2(l->db, "COMMIT", -1, &l->commit, NULL) ||
	     sqlite3_prepare_v2(l->db, "ROLLBACK", -1, &l->rollback, NULL);
	if (rc)
		l->host->log(l->inst, SL_LOG_ERR, "%s: %s", l->cfg->path, sqlite3_errmsg(l->db));
	free(sql);
	return rc ? -1 : 0;
}

/* Open the file (it must exist: the table is created with conf/sql/), set it up, check it. */
static int lite_check(void *d)
{
	struct lite *l = d;
	int rc;

	close_db(l);
	if (sqlite3_open_v2(l->cfg->path, &l->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)) {
		l->host->log(l->inst, SL_LOG_ERR, "cannot open %s: %s", l->cfg->path,
			     l->db ? sqlite3_errmsg(l->db) : "out of memory");
		close_db(l);
		return -1;
	}
	sqlite3_busy_timeout(l->db, (int)l->cfg->busy_timeout_ms);
	rc = pragma(l, "journal_mode", l->cfg->journal_mode, true);
	if (!rc)
		rc = pragma(l, "synchronous", l->cfg->synchronous, false);
	if (!rc)
		rc = check_columns(l);
	if (!rc)
		rc = prepare(l);
	if (rc) {
		close_db(l);
		return rc;
	}
	if (l->ever_opened)
		l->reopens++;
	l->ever_opened = true;
	return 0;
}

static bool bind_row(struct lite *l, const struct sql_batch *b, const struct sql_cell *row)
{
	size_t hex_need = 0, hex_at = 0;
	int k = 0;	/* the parameter's number: absent columns have none */

	for (unsigned i = 0; i < b->ncol; i++)
		if (row[i].kind == SQL_BLOB && l->cfg->col[i].conv == SQL_CV_HEX)
			hex_need += 2 * (size_t)row[i].len;
	if (hex_need > l->hex_cap) {
		char *n = realloc(l->hex, hex_need);

		if (!n)
			return false;
		l->hex = n;
		l->hex_cap = hex_need;
	}
	for (unsigned i = 0; i < b->ncol; i++) {
		static const char hexd[] = "0123456789abcdef";
		const struct sql_cell *c = &row[i];
		const char *s = b->arena + c->off;

		if (l->cfg->col[i].conv == SQL_CV_ABSENT)
			continue;	/* the table lacks this optional column */
		k++;

		switch (c->kind) {
		case SQL_INT:
			sqlite3_bind_int64(l->insert, k, c->i);
			break;
		case SQL_TIME:
			if (l->cfg->col[i].conv == SQL_CV_TIME_SEC) {
				sqlite3_bind_int64(l->insert, k, c->i);
				break;
			}
			sqlite3_bind_text(l->insert, k, l->times[i],
					  (int)sql_format_time(l->times[i], c->i, c->len), SQLITE_STATIC);
			break;
		case SQL_TEXT:
			sqlite3_bind_text(l->insert, k, s, (int)c->len, SQLITE_STATIC);
			break;
		case SQL_BLOB:
			if (l->cfg->col[i].conv != SQL_CV_HEX) {
				sqlite3_bind_blob(l->insert, k, s, (int)c->len, SQLITE_STATIC);
				break;
			}
			for (uint32_t j = 0; j < c->len; j++) {
				l->hex[hex_at + 2 * j] = hexd[(uint8_t)s[j] >> 4];
				l->hex[hex_at + 2 * j + 1] = hexd[(uint8_t)s[j] & 15];
			}
			sqlite3_bind_text(l->insert, k, l->hex + hex_at, (int)(2 * c->len), SQLITE_STATIC);
			hex_at += 2 * c->len;
			break;
		default:
			sqlite3_bind_null(l->insert, k);
		}
	}
	return true;
}

/* What an SQLite error means for the batch. */
static enum sql_result classify(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_TOOBIG:
	case SQLITE_RANGE:
		return SQL_REJECTED;
	}
	return SQL_RETRY;	/* BUSY, LOCKED, FULL, IOERR, NOMEM, ... */
}

static int step(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	return rc;
}

static enum sql_result lite_write(void *d, const struct sql_batch *b)
{
	struct lite *l = d;
	int rc;

	if (!l->db) {
		rc = lite_check(l);
		if (rc)
			return rc == -1 ? SQL_REJECTED : SQL_RETRY;
	}
	rc = step(l->begin);
	if (rc != SQLITE_DONE)
		goto fail;
	for (unsigned r = 0; r < b->rows; r++) {
		if (!bind_row(l, b, b->cells + (size_t)r * b->ncol)) {
			rc = SQLITE_NOMEM;
			goto rollback;
		}
		rc = step(l->insert);
		sqlite3_clear_bindings(l->insert);
		if (rc != SQLITE_DONE)
			goto rollback;
	}
	rc = step(l->commit);
	if (rc == SQLITE_DONE)
		return SQL_OK;
rollback:
	l->host->log(l->inst, SL_LOG_WARNING, "batch of %u rows not written: %s", b->rows,
		     sqlite3_errstr(rc));
	if (sqlite3_get_autocommit(l->db) == 0)
		step(l->rollback);
	if ((rc & 0xff) == SQLITE_IOERR)
		close_db(l);	/* opened afresh for the retry */
	return classify(rc);
fail:
	l->host->log(l->inst, SL_LOG_WARNING, "cannot begin a transaction: %s", sqlite3_errstr(rc));
	return classify(rc);
}

static void *lite_create(const struct sl_host *host, struct sl_instance *inst,
			 const struct sql_driver_cfg *cfg)
{
	struct lite *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->host = host;
	l->inst = inst;
	l->cfg = cfg;
	return l;
}

static uint64_t lite_reopens(void *d)
{
	return ((struct lite *)d)->reopens;
}

static void lite_destroy(void *d)
{
	struct lite *l = d;

	close_db(l);
	free(l->hex);
	free(l);
}

const struct sql_driver sql_sqlite_driver = {
	.name = "sqlite",
	.create = lite_create,
	.check = lite_check,
	.write = lite_write,
	.reconnects = lite_reopens,
	.destroy = lite_destroy,
};
