/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c and stats_parse.c: the JSON a snapshot is written as reads back
 * into the same snapshot (names needing escapes, 64-bit counters, a
 * queue, shared stacks); every truncation of it and a few broken
 * documents are refused, never read past; the table aligns its columns
 * and, given an earlier snapshot, shows per-second rates.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stats.h"

static char *s_dup(const char *s)
{
	return strdup(s);
}

static void make(struct stats_snap *s, uint64_t base)
{
	struct stats_inst *a, *b;

	memset(s, 0, sizeof(*s));
	s->version = s_dup("9.8.7");
	s->start_time = 1796122029;
	s->now = 1796122029 + 3723;
	s->reloads_ok = 2;
	s->reloads_failed = 1;
	s->n = 2;
	s->inst = calloc(2, sizeof(*s->inst));
	a = &s->inst[0];
	a->name = s_dup("fw \"q\" \\ \t");
	a->plugin = s_dup("nflog");
	a->kind = s_dup("input");
	a->nstacks = 2;
	a->stacks = calloc(2, sizeof(char *));
	a->stacks[0] = s_dup("cap");
	a->stacks[1] = s_dup("txt");
	a->in = a->out = base;
	a->ncounters = 2;
	a->counters = calloc(2, sizeof(*a->counters));
	a->counters[0].name = s_dup("enobufs");
	a->counters[0].value = UINT64_MAX;
	a->counters[1].name = s_dup("seq_lost");
	a->counters[1].value = 0;
	b = &s->inst[1];
	b->name = s_dup("txt.file");
	b->plugin = s_dup("file");
	b->kind = s_dup("output");
	b->nstacks = 1;
	b->stacks = calloc(1, sizeof(char *));
	b->stacks[0] = s_dup("txt");
	b->in = base;
	b->out = base - 10;
	b->dropped = 7;
	b->errors = 3;
	b->counters = calloc(1, sizeof(*b->counters));
	b->queued = true;
	b->queue_depth = 3;
	b->queue_capacity = 64;
	b->queue_high = 9;
	b->queue_bytes = 123456789;
	b->queue_dropped = 7;
}

static char *to_json(const struct stats_snap *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	stats_write_json(s, f);
	fclose(f);
	return buf;
}

static char *to_table(const struct stats_snap *s, const struct stats_snap *prev, double secs)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	stats_write_table(s, prev, secs, f);
	fclose(f);
	return buf;
}

static void same(const struct stats_snap *a, const struct stats_snap *b)
{
	CHECK_STREQ(b->version, a->version);
	CHECK_EQ_I(b->start_time, a->start_time);
	CHECK_EQ_I(b->now, a->now);
	CHECK_EQ_U(b->reloads_ok, a->reloads_ok);
	CHECK_EQ_U(b->reloads_failed, a->reloads_failed);
	CHECK_EQ_U(b->n, a->n);
	for (size_t i = 0; i < a->n && i < b->n; i++) {
		const struct stats_inst *x = &a->inst[i], *y = &b->inst[i];

		CHECK_STREQ(y->name, x->name);
		CHECK_STREQ(y->plugin, x->plugin);
		CHECK_STREQ(y->kind, x->kind);
		CHECK_EQ_U(y->nstacks, x->nstacks);
		for (size_t k = 0; k < x->nstacks && k < y->nstacks; k++)
			CHECK_STREQ(y->stacks[k], x->stacks[k]);
		CHECK_EQ_U(y->in, x->in);
		CHECK_EQ_U(y->out, x->out);
		CHECK_EQ_U(y->dropped, x->dropped);
		CHECK_EQ_U(y->errors, x->errors);
		CHECK_EQ_U(y->ncounters, x->ncounters);
		for (size_t k = 0; k < x->ncounters && k < y->ncounters; k++) {
			CHECK_STREQ(y->counters[k].name, x->counters[k].name);
			CHECK_EQ_U(y->counters[k].value, x->counters[k].value);
		}
		CHECK(y->queued == x->queued);
		CHECK_EQ_U(y->queue_depth, x->queue_depth);
		CHECK_EQ_U(y->queue_capacity, x->queue_capacity);
		CHECK_EQ_U(y->queue_high, x->queue_high);
		CHECK_EQ_U(y->queue_bytes, x->queue_bytes);
		CHECK_EQ_U(y->queue_dropped, x->queue_dropped);
	}
}

static void test_round_trip(void)
{
	struct stats_snap s, r;
	char err[256];
	char *json;

	make(&s, 1000000);
	json = to_json(&s);
	CHECK(stats_parse_json(&r, json, err, sizeof(err)) == 0, "%s", err);
	same(&s, &r);
	stats_free(&r);
	/* every truncation is refused (and read no further than its end) */
	for (size_t cut = 0; cut < strlen(json) - 2; cut++) {
		char *part = strndup(json, cut);

		CHECK(stats_parse_json(&r, part, err, sizeof(err)) == -1, "cut at %zu parsed", cut);
		free(part);
	}
	free(json);
	stats_free(&s);
}

static void test_broken(void)
{
	static const char *const bad[] = {
		"", "[]", "{}", "{\"instances\":{}}", "{\"instances\":[1,]}",
		"{\"instances\":[]", "{\"a\":\"\\x\",\"instances\":[]}",
		"{\"a\":-1,\"instances\":[]}", "{\"a\":99999999999999999999,\"instances\":[]}",
		"{\"a\":[[[[[[[[[[1]]]]]]]]]],\"instances\":[]}", "{\"instances\":[]} x",
	};
	struct stats_snap r;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = stats_parse_json(&r, bad[i], err, sizeof(err));

		/* trailing garbage is tolerated: the reply ends where the daemon closed */
		if (i == sizeof(bad) / sizeof(bad[0]) - 1) {
			CHECK(rc == 0);
			stats_free(&r);
			continue;
		}
		CHECK(rc == -1, "parsed '%s'", bad[i]);
	}
	/* unknown keys are skipped; an instance without a queue has none */
	CHECK(stats_parse_json(&r, "{\"new\":{\"x\":[1,\"y\",null]},\"instances\":[{\"name\":\"a\","
			       "\"queue\":null,\"later\":5}]}",
			       err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U(r.n, 1);
	CHECK(r.n == 1 && !r.inst[0].queued && strcmp(r.inst[0].name, "a") == 0);
	stats_free(&r);
}

/* Column c of every line starts at the same offset as in the header. */
static void check_aligned(const char *table, const char *title, const char *want_row_cell)
{
	const char *hdr = strchr(table, '\n') + 1;
	const char *col = strstr(hdr, title);
	size_t off = (size_t)(col - hdr) + strlen(title);	/* numbers align right */
	const char *line = strchr(hdr, '\n') + 1;
	int rows = 0;

	CHECK(col != NULL, "no column %s", title);
	for (; *line; line = strchr(line, '\n') + 1, rows++) {
		CHECK(line[off] == ' ' && line[off - 1] != ' ', "%s not right-aligned in: %.*s",
		      title, (int)(strchr(line, '\n') - line), line);
		if (rows == 1 && want_row_cell)
			CHECK(strncmp(line + off - strlen(want_row_cell), want_row_cell,
				      strlen(want_row_cell)) == 0, "%s of row 2: %.*s", title,
			      (int)(strchr(line, '\n') - line), line);
	}
	CHECK_EQ_I(rows, 2);
}

#define HEADER "sluice 9.8.7: up 0d 01:02:03 since 2026-12-01 10:47:09 UTC; reloads 2 ok, 1 failed\n"

static void test_table(void)
{
	struct stats_snap s, prev;
	char *t;

	make(&s, 1000000);
	make(&prev, 990000);
	t = to_table(&s, NULL, 0);
	printf("%s", t);
	CHECK(strncmp(t, HEADER, strlen(HEADER)) == 0, "header: %.90s", t);
	CHECK(strstr(t, "  7\n") != NULL, "no counters: the line ends after QDROP");
	CHECK(strstr(t, "\ncap,txt  fw \"q\" \\ \t  nflog ") != NULL, "shared row: %s", t);
	CHECK(strstr(t, "enobufs=18446744073709551615 seq_lost=0\n") != NULL);
	CHECK(strstr(t, "IN/s") == NULL);
	check_aligned(t, "OUT", "999990");
	check_aligned(t, "QUEUE", "3/64");
	check_aligned(t, "QBYTES", "123456789");
	free(t);
	/* 10000 records in 2 s */
	t = to_table(&s, &prev, 2.0);
	printf("%s", t);
	check_aligned(t, "IN/s", "5000");
	check_aligned(t, "DROP/s", "0");
	free(t);
	stats_free(&s);
	stats_free(&prev);
}

int main(void)
{
	test_round_trip();
	test_broken();
	test_table();
	return check_summary("test_stats");
}
