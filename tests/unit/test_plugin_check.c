/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugin_check(): the descriptor checks the loader applies and
 * sluice --check-plugin lists, each problem named once with the file and
 * the option; a sound table, the in-tree style, has none.
 */
#include <stdio.h>
#include <string.h>

#include "plugin_check.h"
#include "check.h"

struct cfg {
	int64_t n;
	const char *s;
	struct sl_strlist l;
	int e;
};

static const char *const modes[] = {"a", "b", NULL};

static char got[16][1024];
static unsigned ngot;

static void collect(void *ctx, const char *msg)
{
	(void)ctx;
	if (ngot < 16)
		snprintf(got[ngot++], sizeof(got[0]), "%s", msg);
}

/* The problems of a descriptor with this table and minor. */
static unsigned run(const struct sl_option *opts, unsigned minor, size_t config_size)
{
	struct sl_plugin d = {
		SL_PLUGIN_HEADER_MIN(minor),
		.kind = SL_KIND_FILTER,
		.name = "t",
		.description = "test",
		.config_size = config_size,
		.options = opts,
	};
	unsigned n;

	ngot = 0;
	n = plugin_check("/x/t.so", &d, collect, NULL);
	CHECK_EQ_U(n, ngot);
	return n;
}

static bool has(const char *needle)
{
	for (unsigned i = 0; i < ngot; i++)
		if (strstr(got[i], needle) && strncmp(got[i], "/x/t.so: plugin 't': ", 21) == 0)
			return true;
	return false;
}

int main(void)
{
	const struct sl_option good[] = {
		SL_OPT_INT("n", struct cfg, n, "3", 1, 9, "n"),
		SL_OPT_STR("s", struct cfg, s, SL_SECRET(NULL), "a secret"),
		SL_OPT_LIST("l", struct cfg, l, "[a, b]", "l"),
		SL_OPT_ENUM("e", struct cfg, e, "b", modes, "e"),
		SL_OPT_END,
	};
	CHECK_EQ_U(run(good, 3, sizeof(struct cfg)), 0);
	/* The same under a 1.2 header: SL_OPT_SECRET is 1.3. */
	CHECK_EQ_U(run(good, 2, sizeof(struct cfg)), 1);
	CHECK(has("option 's' uses SL_OPT_SECRET, defined since ABI 1.3"), "%s", got[0]);

	const struct sl_option bad[] = {
		SL_OPT_INT("n", struct cfg, n, "ten", 1, 9, "no integer"),
		SL_OPT_INT("n", struct cfg, n, "3", 9, 1, "twice, empty range"),
		SL_OPT_LIST("l", struct cfg, l, "{a: b}", "a mapping for a list"),
		SL_OPT_ENUM("e", struct cfg, e, "c", modes, "not a choice"),
		SL_OPT_STR("s", struct cfg, s, SL_PATH(NULL, SL_OPT_IN_FILE | (1u << 20)), "bit 20"),
		SL_OPT_INT("p", struct cfg, n, SL_PATH("1", SL_OPT_OUT_FILE), 0, 0, "a path flag on an int"),
		SL_OPT_STR("r", struct cfg, s, "x", "required with a default"),
		{"t", (enum sl_opt_type)42, 0, NULL, "unknown type", 0, 0, NULL, 0},
		SL_OPT_END,
	};
	struct sl_option *r = (struct sl_option *)&bad[6];
	r->flags = SL_OPT_REQUIRED;
	run(bad, 3, sizeof(struct cfg));
	CHECK(has("bad default: option 'n': expected an integer from 1 to 9, got 'ten'"));
	CHECK(has("option 'n' is declared twice (rows 1 and 2 of the table)"));
	CHECK(has("option 'n' has an empty range (min 9 > max 1)"));
	CHECK(has("bad default: option 'l': default '{a: b}': expected a list, not a mapping"));
	CHECK(has("bad default: option 'e': expected one of"));
	CHECK(has("option 's': flag bits 0x100000 are not defined by ABI 1.4"));
	CHECK(has("option 'p': a path flag on an option of type integer"));
	CHECK(has("option 'r' is required and has a default ('x')"));
	CHECK(has("option 't' has an unknown type 42"));
	CHECK_EQ_U(ngot, 9);
	for (unsigned i = 0; i < ngot; i++)
		printf("  %s\n", got[i]);

	/* A member past config_size (a struct grown without config_size). */
	CHECK_EQ_U(run(good, 3, offsetof(struct cfg, e)), 1);
	CHECK(has("option 'e' lies outside the config struct"));
	return check_summary("test_plugin_check");
}
