/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clickhouse output's row encoders (JSONEachRow, RowBinary) and the
 * column mapping they follow.
 *
 * A column maps to one record field with a conversion: addresses as
 * FixedString(16) (raw bytes, IPv4-mapped for IPv4), as a UInt32 (IPv4
 * only) or as text; times as DateTime seconds plus a microseconds UInt32.
 * JSONEachRow leaves a field a record lacks out of its object (ClickHouse
 * stores the column's default); RowBinary, which has every column in the
 * INSERT's order, writes the type's zero instead.  RowBinary needs each
 * column's exact type (rb), known only for the built-in mappings.
 */
#ifndef SLUICE_CLICKHOUSE_ROWS_H
#define SLUICE_CLICKHOUSE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/plugin.h>

/* conversions of a field into a column value */
enum { CV_AUTO, CV_FIXED16, CV_IPV4, CV_TEXT, CV_SEC, CV_USEC };
/* RowBinary column types of the built-in mappings (packets.sql, flows.sql) */
enum { RB_U8 = 1, RB_U16 = 2, RB_U32 = 4, RB_U64 = 8, RB_STR, RB_FS16 };

struct ch_column {
	sl_field field;
	uint8_t conv;		/* CV_* */
	uint8_t type;		/* enum sl_type of the field */
	uint8_t keylen;
	uint8_t rb;		/* RB_*: RowBinary type */
	char key[64];		/* "\"name\":" */
};

/* A batch of encoded rows. */
struct ch_rows {
	char *buf;
	size_t len, cap;
	unsigned rows;
	size_t *ends;		/* when set: ends[i + 1] = end of row i in buf (for the spool) */
};

/* Room for more bytes; false when out of memory. */
bool ch_rows_ensure(struct ch_rows *b, size_t more);
/* Append record r as one row; false when out of memory (nothing appended). */
bool ch_row_json(struct ch_rows *b, const struct ch_column *col, unsigned ncol,
		 const struct sl_record *r);
bool ch_row_binary(struct ch_rows *b, const struct ch_column *col, unsigned ncol,
		   const struct sl_record *r);

#endif /* SLUICE_CLICKHOUSE_ROWS_H */
