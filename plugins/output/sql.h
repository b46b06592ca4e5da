/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sql output's rows and its driver interface (PostgreSQL: sql_pg.c,
 * SQLite: sql_sqlite.c).
 *
 * sql.c turns each record into one row of cells in a batch it reuses: a
 * cell is NULL (the record lacks the field), an integer, text, a blob or
 * a time (seconds in i, microseconds in len); text and blobs live in the
 * batch's byte arena.  Addresses and MACs are text already; how a time or
 * a blob is written depends on the column's type (conv), which a driver
 * learns when it connects.  A driver only sees
 * batches of cells, never records, so a batch can be sent again after a
 * failure (the records are long gone by then).
 *
 * A driver's functions run on the output's own thread; they may block, up
 * to the output's timeout per call.
 */
#ifndef SLUICE_SQL_H
#define SLUICE_SQL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/plugin.h>

#define SQL_NAME_MAX 63		/* identifiers: PostgreSQL's NAMEDATALEN - 1 */
#define SQL_MAX_COLUMNS 64

enum sql_cell_kind { SQL_NULL, SQL_INT, SQL_TEXT, SQL_BLOB, SQL_TIME };

struct sql_cell {
	uint8_t kind;		/* enum sql_cell_kind */
	uint32_t len;		/* TEXT, BLOB: bytes at arena + off; TIME: microseconds */
	union {
		int64_t i;
		size_t off;
	};
};

/* How a time or blob cell is written, once the column's type is known. */
enum sql_conv {
	SQL_CV_NONE,		/* time as 2026-12-01 05:53:27.175145+00:00, blob as a blob */
	SQL_CV_TIME_SEC,	/* time as seconds since the epoch (integer column) */
	SQL_CV_HEX,		/* blob as hex text (text column) */
	SQL_CV_ABSENT,		/* an optional column the table lacks: not written */
};

struct sql_column {
	char name[SQL_NAME_MAX + 1];
	sl_field field;
	uint8_t type;		/* enum sl_type of the value (SL_T_U64 for a time's part) */
	uint8_t conv;		/* enum sql_conv, set by the driver's check */
	uint8_t part;		/* enum sql_part: a time field's seconds or microseconds */
	/*
	 * A default column a table made before it may lack (the rule's, of
	 * nflog's rules: true): the check sets conv SQL_CV_ABSENT then, and the
	 * driver leaves it out of its INSERT or COPY.  Optional columns come
	 * last, after every other.
	 */
	bool optional;
};

/* `field:sec`, `field:usec` in a columns map: one part of a time, as an integer. */
enum sql_part { SQL_PART_NONE, SQL_PART_SEC, SQL_PART_USEC };

struct sql_batch {
	struct sql_cell *cells;	/* rows × ncol, room for batch_size rows */
	unsigned rows, ncol;
	unsigned nfixed;	/* the columns before the optional ones */
	char *arena;
	size_t used, cap;
};

/* Why a driver's write failed: what the output does about it. */
enum sql_result {
	SQL_OK,
	SQL_RETRY,	/* connection lost, server away, database busy or full: retry */
	SQL_REJECTED,	/* the server refused the rows themselves: retry a little, then drop */
};

struct sql_driver_cfg {
	const char *dsn;	/* PostgreSQL */
	const char *path;	/* SQLite */
	const char *table;
	const char *journal_mode;	/* SQLite */
	const char *synchronous;	/* SQLite */
	uint64_t timeout_ms;
	uint64_t busy_timeout_ms;	/* SQLite */
	struct sql_column *col;	/* the output's columns; check() sets their conv */
	unsigned ncol;
};

struct sql_driver {
	const char *name;
	/* Driver state for one instance; NULL when out of memory. */
	void *(*create)(const struct sl_host *host, struct sl_instance *inst,
			const struct sql_driver_cfg *cfg);
	/*
	 * Connect (or open) and check that the table has every column with a
	 * type the column's field can go into; set each column's conv (an
	 * optional column the table lacks: SQL_CV_ABSENT, not an error).  An
	 * error is logged naming the table or column.  0 ok, -1 a wrong table
	 * (fatal at start), -2 the server cannot be reached (write() connects
	 * and checks again).
	 */
	int (*check)(void *d);
	/* Deliver a batch: acknowledged (SQL_OK) only once it is committed. */
	enum sql_result (*write)(void *d, const struct sql_batch *b);
	/* Counted by the output: connections made again after a loss. */
	uint64_t (*reconnects)(void *d);
	void (*destroy)(void *d);
};

extern const struct sql_driver sql_pg_driver;
extern const struct sql_driver sql_sqlite_driver;

/*
 * Shared by the drivers: a time cell as text (32 bytes of room), its length;
 * a time outside the calendar is clamped to it (time_clamp.h).
 */
size_t sql_format_time(char *buf, int64_t sec, uint32_t usec);
/* Whether name is a plain identifier (letters, digits, '_'; not a digit first). */
bool sql_ident_ok(const char *name);

/*
 * Row r of b as one spool record in *buf (grown, *cap its size): its
 * length, 0 when it cannot be one (longer than the spool takes, or no
 * memory).  sql_cells.c.
 */
size_t sql_row_encode(const struct sql_batch *b, unsigned r, char **buf, size_t *cap);
/*
 * A spool record as the next row of b (cells for one more row, the arena
 * grown for its bytes); false when it does not parse or has another
 * number of cells than b->ncol, or fewer but at least b->nfixed (a row
 * spooled before the optional columns: they are NULL).
 */
bool sql_row_decode(struct sql_batch *b, const unsigned char *p, size_t n);

#endif /* SLUICE_SQL_H */
