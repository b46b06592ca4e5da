/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"

int opt_parse_int(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int opt_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", NULL};
	static const char *const no[] = {"false", "no", "off", NULL};

	for (int i = 0; yes[i]; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/* Parse "<number><unit>" where unit is looked up in a table; no unit: mult_none. */
struct unit {
	const char *name;
	uint64_t mult;
};

static int parse_with_units(const char *s, const struct unit *units, uint64_t mult_none,
			    uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	while (*end == ' ')
		end++;
	if (!*end) {
		mult = mult_none;
	} else {
		for (int i = 0; units[i].name; i++) {
			if (strcmp(end, units[i].name) == 0) {
				mult = units[i].mult;
				break;
			}
		}
	}
	if (!mult || (v && v > UINT64_MAX / mult))
		return -1;
	*out = v * mult;
	return 0;
}

int opt_parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{"B", 1},
		{"k", 1024}, {"K", 1024}, {"KB", 1024}, {"KiB", 1024}, {"kB", 1024}, {"kiB", 1024},
		{"M", 1024 * 1024}, {"MB", 1024 * 1024}, {"MiB", 1024 * 1024},
		{"G", 1024ull * 1024 * 1024}, {"GB", 1024ull * 1024 * 1024}, {"GiB", 1024ull * 1024 * 1024},
		{NULL, 0},
	};
	return parse_with_units(s, units, 1, out);
}

int opt_parse_duration(const char *s, uint64_t *ms)
{
	static const struct unit units[] = {
		{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"min", 60 * 1000},
		{"h", 3600 * 1000}, {"d", 86400ull * 1000}, {NULL, 0},
	};
	return parse_with_units(s, units, 1, ms);
}

int opt_parse_enum(const char *s, const char *const *choices, int *index)
{
	for (int i = 0; choices && choices[i]; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*index = i;
			return 0;
		}
	}
	return -1;
}

const char *opt_type_name(enum sl_opt_type type)
{
	switch (type) {
	case SL_OPT_STRING: return "string";
	case SL_OPT_INT: return "integer";
	case SL_OPT_BOOL: return "bool";
	case SL_OPT_SIZE: return "size";
	case SL_OPT_DURATION: return "duration";
	case SL_OPT_ENUM: return "enum";
	case SL_OPT_LIST: return "list";
	}
	return "?";
}

static void format_size(uint64_t v, char *buf, size_t len)
{
	if (v && v % (1024ull * 1024 * 1024) == 0)
		snprintf(buf, len, "%" PRIu64 "GiB", v >> 30);
	else if (v && v % (1024 * 1024) == 0)
		snprintf(buf, len, "%" PRIu64 "MiB", v >> 20);
	else if (v && v % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "KiB", v >> 10);
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static void format_duration(uint64_t v, char *buf, size_t len)
{
	if (v && v % 86400000 == 0)
		snprintf(buf, len, "%" PRIu64 "d", v / 86400000);
	else if (v && v % 3600000 == 0)
		snprintf(buf, len, "%" PRIu64 "h", v / 3600000);
	else if (v && v % 60000 == 0)
		snprintf(buf, len, "%" PRIu64 "m", v / 60000);
	else if (v && v % 1000 == 0)
		snprintf(buf, len, "%" PRIu64 "s", v / 1000);
	else
		snprintf(buf, len, "%" PRIu64 "ms", v);
}

static bool has_range(const struct sl_option *o)
{
	return o->min != 0 || o->max != 0;
}

void opt_describe_values(const struct sl_option *o, char *buf, size_t len)
{
	char lo[32], hi[32];
	size_t used;

	switch (o->type) {
	case SL_OPT_STRING:
		snprintf(buf, len, "a string");
		return;
	case SL_OPT_BOOL:
		snprintf(buf, len, "true or false");
		return;
	case SL_OPT_LIST:
		snprintf(buf, len, "a list of strings");
		return;
	case SL_OPT_ENUM:
		used = (size_t)snprintf(buf, len, "one of:");
		for (int i = 0; o->choices && o->choices[i] && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s %s", i ? "," : "",
						 o->choices[i]);
		return;
	case SL_OPT_INT:
		if (has_range(o))
			snprintf(buf, len, "an integer from %" PRId64 " to %" PRId64, o->min, o->max);
		else
			snprintf(buf, len, "an integer");
		return;
	case SL_OPT_SIZE:
		if (has_range(o)) {
			format_size((uint64_t)o->min, lo, sizeof(lo));
			format_size((uint64_t)o->max, hi, sizeof(hi));
			snprintf(buf, len, "a size from %s to %s (like 64KiB, 8MiB)", lo, hi);
		} else {
			snprintf(buf, len, "a size (like 64KiB, 8MiB)");
		}
		return;
	case SL_OPT_DURATION:
		if (has_range(o)) {
			format_duration((uint64_t)o->min, lo, sizeof(lo));
			format_duration((uint64_t)o->max, hi, sizeof(hi));
			snprintf(buf, len, "a duration from %s to %s (like 50ms, 2s, 5m)", lo, hi);
		} else {
			snprintf(buf, len, "a duration (like 50ms, 2s, 5m)");
		}
		return;
	}
	snprintf(buf, len, "?");
}

static int bad_value(const struct sl_option *o, const char *text, char *err, size_t errlen)
{
	char what[256];

	opt_describe_values(o, what, sizeof(what));
	snprintf(err, errlen, "option '%s': expected %s, got '%s'", o->name, what, text);
	return -1;
}

int opt_store_scalar(const struct sl_option *o, const char *text, void *config, char *err,
		     size_t errlen)
{
	char *dst = (char *)config + o->offset;
	int64_t i;
	uint64_t u;
	bool b;
	int e;

	switch (o->type) {
	case SL_OPT_STRING:
		*(const char **)dst = text;
		return 0;
	case SL_OPT_BOOL:
		if (opt_parse_bool(text, &b))
			return bad_value(o, text, err, errlen);
		*(bool *)dst = b;
		return 0;
	case SL_OPT_INT:
		if (opt_parse_int(text, &i) || (has_range(o) && (i < o->min || i > o->max)))
			return bad_value(o, text, err, errlen);
		*(int64_t *)dst = i;
		return 0;
	case SL_OPT_SIZE:
		if (opt_parse_size(text, &u) ||
		    (has_range(o) && (u < (uint64_t)o->min || u > (uint64_t)o->max)))
			return bad_value(o, text, err, errlen);
		*(uint64_t *)dst = u;
		return 0;
	case SL_OPT_DURATION:
		if (opt_parse_duration(text, &u) ||
		    (has_range(o) && (u < (uint64_t)o->min || u > (uint64_t)o->max)))
			return bad_value(o, text, err, errlen);
		*(uint64_t *)dst = u;
		return 0;
	case SL_OPT_ENUM:
		if (opt_parse_enum(text, o->choices, &e))
			return bad_value(o, text, err, errlen);
		*(int *)dst = e;
		return 0;
	case SL_OPT_LIST:
		/* One scalar given where a list is expected: a list of one. */
		break;
	}
	snprintf(err, errlen, "option '%s': internal error: bad option type", o->name);
	return -1;
}

void opt_store_list(const struct sl_option *o, const char *const *items, unsigned n, void *config)
{
	struct sl_strlist *l = (struct sl_strlist *)((char *)config + o->offset);

	l->n = n;
	l->v = items;
}
