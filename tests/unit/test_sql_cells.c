/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugins/output/sql_cells.c: a row of every cell kind through a spool
 * record and back; a record with another number of cells refused, but one
 * with only the columns before the optional ones (spooled by a sluice
 * without the rule's columns, issue 22), whose optional cells come back
 * NULL; cut and damaged records refused.  The source is compiled in (the
 * unit-test rule links only the core library).
 */
#include "../../plugins/output/sql_cells.c"

#include <stdio.h>

#include "check.h"

#define NCOL 6
#define NFIXED 4

static struct sql_cell cells[4 * NCOL], back[4 * NCOL];
static char arena[256];

/* A batch of one row: INT, TEXT, TIME, BLOB, then the optional TEXT and NULL. */
static void row_of(struct sql_batch *b, unsigned ncol)
{
	static const struct sql_cell row[NCOL] = {
		{ SQL_INT, 0, { .i = -7 } }, { SQL_TEXT, 5, { .off = 0 } },
		{ SQL_TIME, 123456, { .i = 1700000000 } }, { SQL_BLOB, 3, { .off = 5 } },
		{ SQL_TEXT, 6, { .off = 8 } }, { SQL_NULL, 0, { .i = 0 } },
	};

	memcpy(arena, "hello\x01\x00\xff" "filter", 14);
	memcpy(cells, row, sizeof(row));
	*b = (struct sql_batch){ cells, 1, ncol, NFIXED, arena, 14, sizeof(arena) };
}

static struct sql_batch reader(unsigned ncol)
{
	return (struct sql_batch){ back, 0, ncol, NFIXED, NULL, 0, 0 };
}

int main(void)
{
	struct sql_batch b, r;
	char *rec = NULL;
	size_t cap = 0, n;

	/* every kind there and back */
	row_of(&b, NCOL);
	n = sql_row_encode(&b, 0, &rec, &cap);
	CHECK(n > 0);
	r = reader(NCOL);
	CHECK(sql_row_decode(&r, (const unsigned char *)rec, n));
	CHECK_EQ_U(r.rows, 1);
	CHECK(back[0].kind == SQL_INT && back[0].i == -7);
	CHECK(back[1].kind == SQL_TEXT && back[1].len == 5 && !memcmp(r.arena + back[1].off, "hello", 5));
	CHECK(back[2].kind == SQL_TIME && back[2].i == 1700000000 && back[2].len == 123456);
	CHECK(back[3].kind == SQL_BLOB && back[3].len == 3 && !memcmp(r.arena + back[3].off, "\x01\x00\xff", 3));
	CHECK(back[4].kind == SQL_TEXT && !memcmp(r.arena + back[4].off, "filter", 6));
	CHECK(back[5].kind == SQL_NULL);
	free(r.arena);
	/* cut anywhere, or one byte more: refused */
	for (size_t cut = 0; cut < n; cut++) {
		r = reader(NCOL);
		CHECK(!sql_row_decode(&r, (const unsigned char *)rec, cut), "cut at %zu", cut);
		free(r.arena);
	}
	{
		char *longer = calloc(1, n + 1);

		CHECK(longer != NULL);
		memcpy(longer, rec, n);
		r = reader(NCOL);
		CHECK(!sql_row_decode(&r, (const unsigned char *)longer, n + 1));
		free(r.arena);
		free(longer);
	}

	/* a row spooled without the optional columns: read with them NULL */
	row_of(&b, NFIXED);
	n = sql_row_encode(&b, 0, &rec, &cap);
	memset(back, 0xff, sizeof(back));
	r = reader(NCOL);
	CHECK(sql_row_decode(&r, (const unsigned char *)rec, n));
	CHECK(back[0].kind == SQL_INT && back[3].kind == SQL_BLOB);
	CHECK(back[4].kind == SQL_NULL && back[5].kind == SQL_NULL);
	free(r.arena);
	/* fewer cells than the fixed columns, or more than all: refused */
	row_of(&b, NFIXED - 1);
	n = sql_row_encode(&b, 0, &rec, &cap);
	r = reader(NCOL);
	CHECK(!sql_row_decode(&r, (const unsigned char *)rec, n));
	free(r.arena);
	row_of(&b, NCOL);
	n = sql_row_encode(&b, 0, &rec, &cap);
	r = reader(NCOL - 1);
	r.nfixed = NCOL - 1;
	CHECK(!sql_row_decode(&r, (const unsigned char *)rec, n));
	free(r.arena);
	free(rec);
	return check_summary("test_sql_cells");
}
