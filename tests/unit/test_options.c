/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Option value parsing: sizes, durations, integers with ranges, enums, bools. */
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "check.h"

static void sizes(void)
{
	uint64_t v;

	CHECK(opt_parse_size("512", &v) == 0 && v == 512);
	CHECK(opt_parse_size("64k", &v) == 0 && v == 65536);
	CHECK(opt_parse_size("64KiB", &v) == 0 && v == 65536);
	CHECK(opt_parse_size("8MiB", &v) == 0 && v == 8u << 20);
	CHECK(opt_parse_size("8M", &v) == 0 && v == 8u << 20);
	CHECK(opt_parse_size("1G", &v) == 0 && v == 1u << 30);
	CHECK(opt_parse_size("2 MiB", &v) == 0 && v == 2u << 20);
	CHECK(opt_parse_size("0", &v) == 0 && v == 0);
	CHECK(opt_parse_size("", &v) == -1);
	CHECK(opt_parse_size("MiB", &v) == -1);
	CHECK(opt_parse_size("-1", &v) == -1);
	CHECK(opt_parse_size("8XB", &v) == -1);
	CHECK(opt_parse_size("1.5M", &v) == -1);
	CHECK(opt_parse_size("99999999999999999999", &v) == -1);
	CHECK(opt_parse_size("17179869184G", &v) == -1); /* overflows 64 bits */
}

static void durations(void)
{
	uint64_t v;

	CHECK(opt_parse_duration("50ms", &v) == 0 && v == 50);
	CHECK(opt_parse_duration("2s", &v) == 0 && v == 2000);
	CHECK(opt_parse_duration("5m", &v) == 0 && v == 300000);
	CHECK(opt_parse_duration("5min", &v) == 0 && v == 300000);
	CHECK(opt_parse_duration("1h", &v) == 0 && v == 3600000);
	CHECK(opt_parse_duration("1d", &v) == 0 && v == 86400000);
	CHECK(opt_parse_duration("1500", &v) == 0 && v == 1500);
	CHECK(opt_parse_duration("5 s", &v) == 0 && v == 5000);
	CHECK(opt_parse_duration("5x", &v) == -1);
	CHECK(opt_parse_duration("s", &v) == -1);
	CHECK(opt_parse_duration("-5s", &v) == -1);
}

static void ints_bools_enums(void)
{
	static const char *const colours[] = {"red", "green", NULL};
	int64_t i;
	bool b;
	int e;

	CHECK(opt_parse_int("42", &i) == 0 && i == 42);
	CHECK(opt_parse_int("-7", &i) == 0 && i == -7);
	CHECK(opt_parse_int("0x10", &i) == 0 && i == 16);
	CHECK(opt_parse_int("4x", &i) == -1);
	CHECK(opt_parse_int("", &i) == -1);
	CHECK(opt_parse_int(" 4", &i) == -1);
	CHECK(opt_parse_bool("true", &b) == 0 && b);
	CHECK(opt_parse_bool("Yes", &b) == 0 && b);
	CHECK(opt_parse_bool("off", &b) == 0 && !b);
	CHECK(opt_parse_bool("1", &b) == -1);
	CHECK(opt_parse_enum("green", colours, &e) == 0 && e == 1);
	CHECK(opt_parse_enum("blue", colours, &e) == -1);
	CHECK(opt_parse_enum("Red", colours, &e) == -1);
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

	CHECK(opt_store_scalar(&opts[0], "65535", &c, err, sizeof(err)) == 0 && c.group == 65535);
	CHECK(opt_store_scalar(&opts[0], "65536", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'group': expected an integer from 0 to 65535, got '65536'") == 0);
	CHECK(opt_store_scalar(&opts[0], "-1", &c, err, sizeof(err)) == -1);
	CHECK(opt_store_scalar(&opts[1], "8MiB", &c, err, sizeof(err)) == 0 && c.buf == 8u << 20);
	CHECK(opt_store_scalar(&opts[1], "1k", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'buf': expected a size from 4KiB to 1GiB (like 64KiB, 8MiB), "
			  "got '1k'") == 0);
	CHECK(opt_store_scalar(&opts[2], "50ms", &c, err, sizeof(err)) == 0 && c.timeout == 50);
	CHECK(opt_store_scalar(&opts[2], "soon", &c, err, sizeof(err)) == -1);
	CHECK(opt_store_scalar(&opts[3], "original", &c, err, sizeof(err)) == 0 && c.mode == 1);
	CHECK(opt_store_scalar(&opts[3], "fast", &c, err, sizeof(err)) == -1);
	CHECK(strcmp(err, "option 'mode': expected one of: none, original, got 'fast'") == 0);
	CHECK(opt_store_scalar(&opts[4], "yes", &c, err, sizeof(err)) == 0 && c.on);
	CHECK(opt_store_scalar(&opts[5], "x y", &c, err, sizeof(err)) == 0 &&
	      strcmp(c.name, "x y") == 0);
}

int main(void)
{
	sizes();
	durations();
	ints_bools_enums();
	store();
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
