/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Two graphs at once, as a reload will hold them: each has its own field
 * registry (a field one configuration's plugins register is unknown to
 * the other) and its own record stride, and freeing one leaves the other
 * whole.  Uses the built plugins and test plugins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "event_loop.h"
#include "fields.h"
#include "graph.h"
#include "host.h"

#include "check.h"

struct loaded {
	struct config cfg;
	struct diag diag;
	struct graph g;
};

static int load(struct loaded *l, const char *name, const char *yaml)
{
	memset(l, 0, sizeof(*l));
	l->diag.file = name;
	if (config_load_string(&l->cfg, name, yaml, &l->diag))
		return -1;
	return graph_build(&l->g, &l->cfg, &l->diag);
}

static void unload(struct loaded *l)
{
	graph_free(&l->g);
	config_free(&l->cfg);
}

static size_t stride_of(struct graph *g)
{
	struct event_loop *loop = event_loop_new();
	struct runtime rt = {0};
	size_t stride = 0;

	if (loop && host_init(&rt, g, loop, 4, 0) == 0)
		stride = rt.stride;
	host_free(&rt);
	event_loop_free(loop);
	return stride;
}

int main(void)
{
	static struct loaded a, b;
	struct field_registry *fa, *fb;
	size_t sa, sb;
	int id;

	setenv("SLUICE_PLUGIN_PATH", TEST_BUILD_DIR "/plugins:" TEST_BUILD_DIR "/tests/plugins", 1);
	CHECK(load(&a, "a.yaml",
		   "stacks:\n  a: [gen, upcase, json, {plugin: file, file: /dev/null}]\n") == 0);
	CHECK(load(&b, "b.yaml", "stacks:\n  b: [gen, {plugin: file, file: /dev/null}]\n") == 0);
	fa = &a.g.loader.fields;
	fb = &b.g.loader.fields;
	id = fields_lookup(fa, "upcase_len");
	CHECK(id >= SL_F_WELL_KNOWN_COUNT);
	CHECK(fields_lookup(fb, "upcase_len") == -1);
	CHECK(fields_count(fa) > fields_count(fb));
	CHECK(fields_count(fb) == SL_F_WELL_KNOWN_COUNT);
	CHECK(fields_lookup(fa, "text") == SL_F_TEXT && fields_lookup(fb, "text") == SL_F_TEXT);
	/* the host answers from the instance's own graph */
	CHECK(host_table.field_id(a.g.all[1], "upcase_len") == id);
	CHECK(host_table.field_id(b.g.all[0], "upcase_len") == -1);
	CHECK(host_table.field_type(a.g.all[1], id) == SL_T_U64);
	CHECK(strcmp(host_table.field_name(a.g.all[1], id), "upcase_len") == 0);
	CHECK(host_table.field_name(b.g.all[0], id) == NULL);
	CHECK(host_table.field_type(b.g.all[0], -1) == 0);
	sa = stride_of(&a.g);
	sb = stride_of(&b.g);
	CHECK(sa && sb && sa % 64 == 0 && sb % 64 == 0);
	CHECK(sb >= sizeof(struct sl_record) + SL_F_WELL_KNOWN_COUNT * sizeof(union sl_value));
	CHECK(sa >= sizeof(struct sl_record) + fields_count(fa) * sizeof(union sl_value));
	/* freeing one leaves the other whole */
	unload(&a);
	CHECK(fields_lookup(fb, "seq_local") == SL_F_SEQ_LOCAL);
	CHECK(stride_of(&b.g) == sb);
	CHECK(load(&a, "a2.yaml", "stacks:\n  a: [gen, upcase, {plugin: file, file: /dev/null}]\n") == 0);
	CHECK(fields_lookup(&a.g.loader.fields, "upcase_len") == id);
	CHECK(fields_lookup(fb, "upcase_len") == -1);
	unload(&a);
	unload(&b);
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
