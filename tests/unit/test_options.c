/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option value parsing: sizes, durations, integers with ranges, enums,
 * bools; filling a config from YAML and the table (required options, YAML
 * list defaults), "did you mean", and the ABI 1.2 header helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "options.h"
#include "opt_groups.h"
#include "check.h"

static void sizes(void)
{
	uint64_t v;

	CHECK(options_parse_size("512", &v) == 0 && v == 512);
	CHECK(options_parse_size("64k", &v) == 0 && v == 65536);
	CHECK(options_parse_size("64KiB", &v) == 0 && v == 65536);
	CHECK(options_parse_size("8MiB", &v) == 0 && v == 8u << 20);
	CHECK(options_parse_size("8M", &v) == 0 && v == 8u << 20);
	CHECK(options_parse_size("1G", &v) == 0 && v == 1u << 30);
	CHECK(options_parse_size("2 MiB", &v) == 0 && v == 2u << 20);
	CHECK(options_parse_size("0", &v) == 0 && v == 0);
	CHECK(options_parse_size("", &v) == -1);
	CHECK(options_parse_size("MiB", &v) == -1);
	CHECK(options_parse_size("-1", &v) == -1);
	CHECK(options_parse_size("8XB", &v) == -1);
	CHECK(options_parse_size("1.5M", &v) == -1);
	CHECK(options_parse_size("99999999999999999999", &v) == -1);
	CHECK(options_parse_size("17179869184G", &v) == -1); /* overflows 64 bits */
}

static void durations(void)
{
	uint64_t v;

	CHECK(options_parse_duration("50ms", &v) == 0 && v == 50);
	CHECK(options_parse_duration("2s", &v) == 0 && v == 2000);
	CHECK(options_parse_duration("5m", &v) == 0 && v == 300000);
	CHECK(options_parse_duration("5min", &v) == 0 && v == 300000);
	CHECK(options_parse_duration("1h", &v) == 0 && v == 3600000);
	CHECK(options_parse_duration("1d", &v) == 0 && v == 86400000);
	CHECK(options_parse_duration("1500", &v) == 0 && v == 1500);
	CHECK(options_parse_duration("5 s", &v) == 0 && v == 5000);
	CHECK(options_parse_duration("5x", &v) == -1);
	CHECK(options_parse_duration("s", &v) == -1);
	CHECK(options_parse_duration("-5s", &v) == -1);
}

static void ints_bools_enums(void)
{
	static const char *const colours[] = {"red", "green", NULL};
	int64_t i;
	bool b;
	int e;

	CHECK(options_parse_int("42", &i) == 0 && i == 42);
	CHECK(options_parse_int("-7", &i) == 0 && i == -7);
	CHECK(options_parse_int("0x10", &i) == 0 && i == 16);
	CHECK(options_parse_int("4x", &i) == -1);
	CHECK(options_parse_int("", &i) == -1);
	CHECK(options_parse_int(" 4", &i) == -1);
	CHECK(options_parse_bool("true", &b) == 0 && b);
	CHECK(options_parse_bool("Yes", &b) == 0 && b);
	CHECK(options_parse_bool("off", &b) == 0 && !b);
	CHECK(options_parse_bool("1", &b) == -1);
	CHECK(options_parse_enum("green", colours, &e) == 0 && e == 1);
	CHECK(options_parse_enum("blue", colours, &e) == -1);
	CHECK(options_parse_enum("Red", colours, &e) == -1);
}

struct cfg {
	int64_t group;
	uint64_t buf;
	uint64_t timeout;
	int mode;
	bool on;
	const char *name;
};

static void store(void)
{
	static const char *const modes[] = {"none", "original", NULL};
	static const struct sl_option opts[] = {
		SL_OPT_INT("group", struct cfg, group, NULL, 0, 65535, "group"),
		SL_OPT_SIZE("buf", struct cfg, buf, NULL, 4096, 1 << 30, "buffer"),
		SL_OPT_DURATION("timeout", struct cfg, timeout, NULL, 0, 0, "timeout"),
		SL_OPT_ENUM("mode", struct cfg, mode, NULL, modes, "mode"),
		SL_OPT_BOOL("on", struct cfg, on, NULL, "on"),
		SL_OPT_STR("name", struct cfg, name, NULL, "name"),
	};
	struct cfg c = {0};
	char err[512];

	CHECK(options_store_scalar(&opts[0], "65535", &c, err, sizeof(err)) == 0 && c.group == 65535);
	CHECK(options_store_scalar(&opts[0], "65536", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'group': expected an integer from 0 to 65535, got '65536'") == 0);
	CHECK(options_store_scalar(&opts[0], "-1", &c, err, sizeof(err)) == -1);
	CHECK(options_store_scalar(&opts[1], "8MiB", &c, err, sizeof(err)) == 0 && c.buf == 8u << 20);
	CHECK(options_store_scalar(&opts[1], "1k", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'buf': expected a size from 4KiB to 1GiB (like 64KiB, 8MiB), "
			  "got '1k'") == 0);
	CHECK(options_store_scalar(&opts[2], "50ms", &c, err, sizeof(err)) == 0 && c.timeout == 50);
	CHECK(options_store_scalar(&opts[2], "soon", &c, err, sizeof(err)) == -1);
	CHECK(options_store_scalar(&opts[3], "original", &c, err, sizeof(err)) == 0 && c.mode == 1);
	CHECK(options_store_scalar(&opts[3], "fast", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'mode': expected one of: none, original, got 'fast'") == 0);
	CHECK(options_store_scalar(&opts[4], "yes", &c, err, sizeof(err)) == 0 && c.on);
	CHECK(options_store_scalar(&opts[5], "x y", &c, err, sizeof(err)) == 0 &&
	      strcmp(c.name, "x y") == 0);
}

struct fcfg {
	const char *file;
	struct sl_strlist events;
	struct sl_strlist one;
	struct sl_strlist none;
	int64_t n;
	struct sl_strlist props;
	const char *spool_dir;
	int64_t spool_max;
};

static const struct sl_option fill_opts[] = {
	SL_OPT_STR("file", struct fcfg, file, SL_REQUIRED, "file"),
	SL_OPT_LIST("events", struct fcfg, events, "[new, \"de stroy\"]", "events"),
	SL_OPT_LIST("one", struct fcfg, one, "destroy", "a list of one"),
	SL_OPT_LIST("none", struct fcfg, none, "[]", "an empty list"),
	SL_OPT_INT("n", struct fcfg, n, "3", 0, 9, "n"),
	SL_OPT_MAP("props", struct fcfg, props, "a free map"),
	SL_OPT_STR("spool_dir", struct fcfg, spool_dir, NULL, "a group member"),
	SL_OPT_INT("spool_max", struct fcfg, spool_max, "7", 0, 9, "another"),
	SL_OPT_END,
};

static const struct sl_plugin fill_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "t",
	.description = "t",
	.config_size = sizeof(struct fcfg),
	.options = fill_opts,
};

static struct ynode *trees[16];
static unsigned ntrees;

/* Fill from a YAML mapping; returns the errors reported. */
static unsigned fill(const char *yaml, struct opt_values *v)
{
	struct diag d = {.file = "test.yaml"};
	struct ymark at = {1, 1};
	char err[256];
	struct ynode *t = yaml_tree_load_string("test.yaml", yaml, err, sizeof(err));

	CHECK(t != NULL && ntrees < 16);
	options_fill(v, &fill_plugin, t, &at, &d);
	/* The tree is the user's: the config points into it. */
	trees[ntrees++] = t;
	return d.errors;
}

static void filling(void)
{
	struct opt_values v;
	const struct fcfg *c;

	CHECK(fill("{file: x, n: 5}", &v) == 0);
	c = v.config;
	CHECK(strcmp(c->file, "x") == 0 && c->n == 5);
	/* list defaults are YAML: a flow list, one scalar, an empty list */
	CHECK(c->events.n == 2 && strcmp(c->events.v[0], "new") == 0 &&
	      strcmp(c->events.v[1], "de stroy") == 0);
	CHECK(c->one.n == 1 && strcmp(c->one.v[0], "destroy") == 0);
	CHECK(c->none.n == 0);
	options_values_free(&v, &fill_plugin);

	CHECK(fill("{file: y, events: [a, b, c], one: z}", &v) == 0);
	c = v.config;
	CHECK(c->events.n == 3 && strcmp(c->events.v[2], "c") == 0);
	CHECK(c->one.n == 1 && strcmp(c->one.v[0], "z") == 0);
	options_values_free(&v, &fill_plugin);

	/* a required option left out, a bad value, a typo: three errors */
	CHECK(fill("{n: 10, evnets: [a]}", &v) == 3);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, events: {a: b}}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, events: [[a]]}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	/* a map option: name, value pairs in order; unset is empty */
	CHECK(fill("{file: x, props: {a.b: 1, c: \"x y\"}}", &v) == 0);
	c = v.config;
	CHECK(c->props.n == 4 && strcmp(c->props.v[0], "a.b") == 0 &&
	      strcmp(c->props.v[1], "1") == 0 && strcmp(c->props.v[2], "c") == 0 &&
	      strcmp(c->props.v[3], "x y") == 0);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x}", &v) == 0);
	c = v.config;
	CHECK(c->props.n == 0);
	options_values_free(&v, &fill_plugin);
	/* not a mapping, a nested value, a value left empty: errors */
	CHECK(fill("{file: x, props: [a, b]}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, props: {a: [1]}}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, props: {a: }}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill_opts[5].flags == SL_OPT_MAP_ENTRIES && fill_opts[5].type == SL_OPT_LIST);
	CHECK(fill_opts[0].flags == SL_OPT_REQUIRED && fill_opts[0].def == NULL);
	CHECK(fill_opts[4].flags == 0);
	while (ntrees)
		yaml_tree_free(trees[--ntrees]);
}

/* spool: {dir: d, max: 5} is spool_dir: d, spool_max: 5 (opt_groups.h). */
static void groups(void)
{
	struct opt_values v;
	const struct fcfg *c;
	const struct ynode *k;

	CHECK(fill("{file: x, spool: {dir: /d, max: 5}, n: 2}", &v) == 0);
	c = v.config;
	CHECK(strcmp(c->spool_dir, "/d") == 0 && c->spool_max == 5 && c->n == 2);
	/* the flat copy keeps file order and each member's own position */
	CHECK(v.opts != v.user && v.opts->n == 8);
	CHECK(strcmp(v.opts->items[2]->scalar, "spool_dir") == 0 &&
	      strcmp(v.opts->items[4]->scalar, "spool_max") == 0 &&
	      strcmp(v.opts->items[6]->scalar, "n") == 0);
	k = yaml_tree_map_key(v.opts, "spool_max");
	CHECK(k && k->mark.line == 1 && k->mark.col == 28);
	CHECK(yaml_tree_map_get(v.user, "spool_dir") == NULL);
	options_values_free(&v, &fill_plugin);
	/* flat spelling, and no group: the user's mapping itself */
	CHECK(fill("{file: x, spool_dir: /e}", &v) == 0);
	CHECK(v.opts == v.user && strcmp(((const struct fcfg *)v.config)->spool_dir, "/e") == 0);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, spool: {}}", &v) == 0);
	CHECK(((const struct fcfg *)v.config)->spool_max == 7);
	options_values_free(&v, &fill_plugin);
	/* an unknown member, one option written both ways, a group that is a value */
	CHECK(fill("{file: x, spool: {dri: /d}}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, spool_dir: a, spool: {dir: b}}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(fill("{file: x, spool: 5}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	/* a member's bad value is reported as the flat option's */
	CHECK(fill("{file: x, spool: {max: 10}}", &v) == 1);
	options_values_free(&v, &fill_plugin);
	CHECK(opt_groups_is(&fill_plugin, "spool") && !opt_groups_is(&fill_plugin, "file") &&
	      !opt_groups_is(&fill_plugin, "props") && !opt_groups_is(&fill_plugin, "spool_max"));
	while (ntrees)
		yaml_tree_free(trees[--ntrees]);
}

static void formatting(void)
{
	static const char *const modes[] = {"a", NULL};
	struct fcfg2 {
		const char *s;
		int e;
	};
	const struct sl_option o[] = {
		SL_OPT_STR("msgid", struct fcfg2, s, "-", ""),
		SL_OPT_STR("app", struct fcfg2, s, "sluice", ""),
		SL_OPT_STR("sd", struct fcfg2, s, "a@1", ""),
		SL_OPT_STR("empty", struct fcfg2, s, "", ""),
		SL_OPT_ENUM("mode", struct fcfg2, e, "a", modes, ""),
	};
	char buf[128];

	options_format_default(&fill_opts[1], buf, sizeof(buf));
	CHECK(strcmp(buf, "[new, de stroy]") == 0);
	options_format_default(&fill_opts[2], buf, sizeof(buf));
	CHECK(strcmp(buf, "[destroy]") == 0);
	options_format_default(&fill_opts[3], buf, sizeof(buf));
	CHECK(strcmp(buf, "[]") == 0);
	options_format_default(&o[0], buf, sizeof(buf));
	CHECK(strcmp(buf, "\"-\"") == 0);
	options_format_default(&o[1], buf, sizeof(buf));
	CHECK(strcmp(buf, "sluice") == 0);
	options_format_default(&o[2], buf, sizeof(buf));
	CHECK(strcmp(buf, "\"a@1\"") == 0);
	options_format_default(&o[3], buf, sizeof(buf));
	CHECK(strcmp(buf, "\"\"") == 0);
	options_format_default(&o[4], buf, sizeof(buf));
	CHECK(strcmp(buf, "a") == 0);
}

static void suggestions(void)
{
	static const char *const names[] = {"netlink_buffer", "nlbufsiz", "group", NULL};

	CHECK(options_edit_distance("group", "group") == 0);
	CHECK(options_edit_distance("gruop", "group") == 2);
	CHECK(options_edit_distance("", "abc") == 3);
	CHECK(strcmp(options_suggest("gropu", names), "group") == 0);
	CHECK(strcmp(options_suggest("nlbufsize", names), "nlbufsiz") == 0);
	CHECK(options_suggest("copy_range", names) == NULL);
}

/* Two registries at once: ids of one say nothing about the other. */
static void registries(void)
{
	struct field_registry *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char err[256];
	int ia, ib;

	CHECK(a && b);
	CHECK(fields_lookup(a, "prefix") == SL_F_PREFIX && fields_lookup(b, "prefix") == SL_F_PREFIX);
	ia = fields_declare(a, "service", SL_T_STRING, "svc", err, sizeof(err));
	CHECK(ia == SL_F_WELL_KNOWN_COUNT);
	CHECK(fields_lookup(b, "service") == -1);
	ib = fields_declare(b, "other", SL_T_U64, "o", err, sizeof(err));
	CHECK(ib == SL_F_WELL_KNOWN_COUNT);
	CHECK(fields_declare(b, "service", SL_T_U64, "x", err, sizeof(err)) == ib + 1);
	CHECK(fields_get(a, (unsigned)ia)->type == SL_T_STRING);
	CHECK(fields_get(b, (unsigned)ib + 1)->type == SL_T_U64);
	CHECK(fields_count(a) == SL_F_WELL_KNOWN_COUNT + 1 && fields_count(b) == SL_F_WELL_KNOWN_COUNT + 2);
	CHECK(fields_declare(a, "service", SL_T_U64, "y", err, sizeof(err)) == -1);
	CHECK(strcmp(err, "field 'service' is declared as u64, but plugin 'svc' has it as string") == 0);
	CHECK(fields_declare(a, "prefix", SL_T_U64, "y", err, sizeof(err)) == -1);
	CHECK(strcmp(fields_suggest(a, "prefx"), "prefix") == 0);
	CHECK(strcmp(fields_suggest(a, "servise"), "service") == 0);
	CHECK(fields_suggest(b, "servise") != NULL);	/* b has "service" too */
	CHECK(fields_suggest(a, "upcase_len") == NULL);
	fields_free(a);
	fields_free(b);
	free(a);
	free(b);
}

static void header_helpers(void)
{
	static const struct sl_field_decl decl[] = {SL_FIELD_DECL(SL_F_PREFIX),
						    SL_FIELD_DECL(SL_F_SRC_ADDR),
						    SL_FIELD_DECL(SL_F_NFLOG_GROUP), SL_FIELD_END};
	struct sl_host h = {0};
	uint8_t mem[256];
	struct sl_batch b = {0};
	size_t mark;
	char *p, *q;

	CHECK(strcmp(decl[0].name, "prefix") == 0 && decl[0].type == SL_T_STRING);
	CHECK(strcmp(decl[1].name, "src_addr") == 0 && decl[1].type == SL_T_ADDR);
	CHECK(strcmp(decl[2].name, "nflog_group") == 0 && decl[2].type == SL_T_U64);
	/* a daemon whose table ends at dropped_add has none of the later members */
	h.size = (uint32_t)(offsetof(struct sl_host, dropped_add) + sizeof(h.dropped_add));
	CHECK(SL_HOST_HAS(&h, dropped_add));
	CHECK(!SL_HOST_HAS(&h, field_type));
	CHECK(!SL_HOST_HAS(&h, timer_free));
	h.size = sizeof(struct sl_host);
	CHECK(SL_HOST_HAS(&h, timer_free));

	b.arena.base = mem;
	b.arena.size = sizeof(mem);
	p = sl_batch_alloc(&b, 100);
	CHECK(p && b.arena.used == 100);
	sl_batch_trim(&b, p, 10);
	CHECK(b.arena.used == 10);
	sl_batch_trim(&b, p, 50);	/* cannot grow */
	CHECK(b.arena.used == 10);
	mark = sl_batch_mark(&b);
	q = sl_batch_alloc(&b, 200);
	CHECK(q == (char *)mem + 16 && b.arena.used == 216);
	CHECK(sl_batch_alloc(&b, 100) == NULL);
	sl_batch_rewind(&b, mark);
	CHECK(b.arena.used == 10 && sl_batch_room(&b) == 246);
	sl_batch_trim(&b, NULL, 0);
	CHECK(b.arena.used == 10);
}

int main(void)
{
	sizes();
	durations();
	ints_bools_enums();
	store();
	filling();
	groups();
	formatting();
	suggestions();
	registries();
	header_helpers();
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
