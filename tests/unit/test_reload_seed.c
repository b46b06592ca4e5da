/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a reload builds on (core/src/daemon/reload.c): a graph whose registry is
 * seeded from the running one keeps every id, even of a field its own
 * plugins never register, and appends nothing else; the diag sink gets
 * every error whole, with its file:line:column, and nothing on stderr.
 * Uses the built plugins and test plugins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fields.h"
#include "graph.h"

#include "check.h"

struct sink {
	char lines[4][512];
	int n;
};

static void on_line(void *ctx, const char *line)
{
	struct sink *s = ctx;

	if (s->n < 4)
		snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s", line);
	s->n++;
}

int main(void)
{
	static struct config ca, cb, cc;
	static struct graph a, b, c;
	struct diag da = {.file = "a.yaml"}, db = {.file = "b.yaml"};
	struct sink s = {0};
	struct diag dc = {.file = "c.yaml", .sink = on_line, .sink_ctx = &s};
	int id;

	setenv("SLUICE_PLUGIN_PATH", TEST_BUILD_DIR "/plugins:" TEST_BUILD_DIR "/tests/plugins", 1);
	CHECK(config_load_string(&ca, "a.yaml",
				 "stacks:\n  a: [gen, upcase, {plugin: file, file: /dev/null}]\n", &da) == 0);
	CHECK(graph_build(&a, &ca, &da) == 0);
	id = fields_lookup(&a.loader.fields, "upcase_len");
	CHECK(id >= SL_F_WELL_KNOWN_COUNT);

	/* b does not use upcase: seeded, it still knows upcase_len, at the same id */
	CHECK(config_load_string(&cb, "b.yaml", "stacks:\n  b: [gen, {plugin: file, file: /dev/null}]\n",
				 &db) == 0);
	CHECK(graph_build_seeded(&b, &cb, &db, &a.loader.fields) == 0);
	CHECK_EQ_I(fields_lookup(&b.loader.fields, "upcase_len"), id);
	CHECK_EQ_U(fields_count(&b.loader.fields), fields_count(&a.loader.fields));
	CHECK(fields_get(&b.loader.fields, (unsigned)id)->type == SL_T_U64);
	/* freeing the seed leaves the copy whole */
	graph_free(&a);
	CHECK_STREQ(fields_get(&b.loader.fields, (unsigned)id)->name, "upcase_len");

	/* errors go to the sink, with their position, one whole line each */
	CHECK(config_load_string(&cc, "c.yaml",
				 "stacks:\n  c: [gen, {plugin: file, file: /dev/null, nope: 1}]\n",
				 &dc) == 0);
	CHECK(graph_build_seeded(&c, &cc, &dc, &b.loader.fields) != 0);
	CHECK(s.n >= 1 && dc.errors == (unsigned)s.n, "%d lines, %u errors", s.n, dc.errors);
	CHECK(strncmp(s.lines[0], "c.yaml:2:", 9) == 0 && strstr(s.lines[0], ": error: ") &&
	      strstr(s.lines[0], "nope") && !strchr(s.lines[0], '\n'), "%s", s.lines[0]);
	graph_free(&c);
	graph_free(&b);
	config_free(&ca);
	config_free(&cb);
	config_free(&cc);
	return check_summary("test_reload_seed");
}
