/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core_keys.h"
#include "options.h"
#include "opt_groups.h"
#include "secret.h"

int options_parse_int(const char *s, int64_t *out)
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

bool options_check_octal(struct diag *d, const struct ymark *at, const char *name, const char *text)
{
	const char *p = text + (*text == '-' || *text == '+');
	int64_t v;

	if (p[0] != '0' || !isdigit((unsigned char)p[1]) || options_parse_int(text, &v))
		return false;
	while (p[1] == '0')
		p++;
	diag_warning(d, at,
		     "'%s': %s is octal (a leading 0, as in YAML 1.1) and means %" PRId64
		     "; write %" PRId64 ", or %s if decimal %s was meant",
		     name, text, v, v, p + 1, p + 1);
	return true;
}

int options_parse_bool(const char *s, bool *out)
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

int options_parse_size(const char *s, uint64_t *out)
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

int options_parse_duration(const char *s, uint64_t *ms)
{
	static const struct unit units[] = {
		{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"min", 60 * 1000},
		{"h", 3600 * 1000}, {"d", 86400ull * 1000}, {NULL, 0},
	};
	return parse_with_units(s, units, 1, ms);
}

int options_parse_enum(const char *s, const char *const *choices, int *index)
{
	for (int i = 0; choices && choices[i]; i++) {
		if (strcmp(s, choices[i]) == 0) {
			*index = i;
			return 0;
		}
	}
	return -1;
}

const char *options_type_name(enum sl_opt_type type)
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

const char *options_shown_type(const struct sl_option *o)
{
	if (o->type == SL_OPT_LIST && (o->flags & SL_OPT_MAP_ENTRIES))
		return "map";
	return options_type_name(o->type);
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

/* "a size from 1KiB to 1GiB (like 64KiB, 8MiB)", or without the range. */
static void describe_unit(char *buf, size_t len, const struct sl_option *o,
			  void (*format)(uint64_t, char *, size_t), const char *what, const char *like)
{
	char lo[32], hi[32];

	if (!has_range(o)) {
		snprintf(buf, len, "%s (like %s)", what, like);
		return;
	}
	format((uint64_t)o->min, lo, sizeof(lo));
	format((uint64_t)o->max, hi, sizeof(hi));
	snprintf(buf, len, "%s from %s to %s (like %s)", what, lo, hi, like);
}

void options_format_range(const struct sl_option *o, char *buf, size_t len)
{
	char lo[32], hi[32];

	buf[0] = '\0';
	if (!has_range(o))
		return;
	switch (o->type) {
	case SL_OPT_INT:
		snprintf(buf, len, "%" PRId64 "-%" PRId64, o->min, o->max);
		return;
	case SL_OPT_SIZE:
		format_size((uint64_t)o->min, lo, sizeof(lo));
		format_size((uint64_t)o->max, hi, sizeof(hi));
		break;
	case SL_OPT_DURATION:
		format_duration((uint64_t)o->min, lo, sizeof(lo));
		format_duration((uint64_t)o->max, hi, sizeof(hi));
		break;
	default:
		return;
	}
	/* "0-1h", not "0ms-1h": zero needs no unit. */
	snprintf(buf, len, "%s-%s", o->min ? lo : "0", hi);
}

void options_describe_values(const struct sl_option *o, char *buf, size_t len)
{
	size_t used;

	switch (o->type) {
	case SL_OPT_STRING:
		snprintf(buf, len, "a string");
		return;
	case SL_OPT_BOOL:
		snprintf(buf, len, "true or false");
		return;
	case SL_OPT_LIST:
		snprintf(buf, len, (o->flags & SL_OPT_MAP_ENTRIES) ? "a mapping of names to values"
								     : "a list of strings");
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
		describe_unit(buf, len, o, format_size, "a size", "64KiB, 8MiB");
		return;
	case SL_OPT_DURATION:
		describe_unit(buf, len, o, format_duration, "a duration", "50ms, 2s, 5m");
		return;
	}
	snprintf(buf, len, "?");
}

static int bad_value(const struct sl_option *o, const char *text, char *err, size_t errlen)
{
	char what[256], shown[512];

	const char *p = text + (*text == '-' || *text == '+');
	bool octal = o->type == SL_OPT_INT && p[0] == '0' && isdigit((unsigned char)p[1]) &&
		     strspn(p, "0123456789") == strlen(p) && strpbrk(p, "89");

	options_describe_values(o, what, sizeof(what));
	if (o->flags & SL_OPT_SECRET)	/* the position names it; the value stays unsaid */
		snprintf(err, errlen, "option '%s': expected %s, got something else (a secret: "
			 "not shown)", o->name, what);
	else
		snprintf(err, errlen, "option '%s': expected %s, got '%s'%s", o->name, what,
			 secret_show(text, false, shown, sizeof(shown)),
			 octal ? " (a leading 0 makes it octal, as in YAML 1.1, where 8 and 9 "
				 "are no digits)" : "");
	return -1;
}

int options_store_scalar(const struct sl_option *o, const char *text, void *config, char *err,
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
		if (options_parse_bool(text, &b))
			return bad_value(o, text, err, errlen);
		*(bool *)dst = b;
		return 0;
	case SL_OPT_INT:
		if (options_parse_int(text, &i) || (has_range(o) && (i < o->min || i > o->max)))
			return bad_value(o, text, err, errlen);
		*(int64_t *)dst = i;
		return 0;
	case SL_OPT_SIZE:
		if (options_parse_size(text, &u) ||
		    (has_range(o) && (u < (uint64_t)o->min || u > (uint64_t)o->max)))
			return bad_value(o, text, err, errlen);
		*(uint64_t *)dst = u;
		return 0;
	case SL_OPT_DURATION:
		if (options_parse_duration(text, &u) ||
		    (has_range(o) && (u < (uint64_t)o->min || u > (uint64_t)o->max)))
			return bad_value(o, text, err, errlen);
		*(uint64_t *)dst = u;
		return 0;
	case SL_OPT_ENUM:
		if (options_parse_enum(text, o->choices, &e))
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

/* The shape of a parsed list default: 0, or -1 and why. */
static int check_list_shape(const struct sl_option *o, const struct ynode *t, char *err,
			    size_t errlen)
{
	bool map = o->flags & SL_OPT_MAP_ENTRIES;

	if (t->kind == YN_SCALAR)
		return 0;
	if (t->kind != (map ? YN_MAP : YN_SEQ)) {
		snprintf(err, errlen, "expected %s, not %s", map ? "a mapping" : "a list",
			 yaml_tree_kind_name(t->kind));
		return -1;
	}
	for (size_t j = 0; j < t->n; j++)
		if (t->items[j]->kind != YN_SCALAR) {
			snprintf(err, errlen, "%s must be values", map ? "entries" : "list items");
			return -1;
		}
	return 0;
}

int options_check_default(const struct sl_option *o, char *err, size_t errlen)
{
	union { int64_t i; uint64_t u; bool b; int e; const char *s; } scratch;
	struct sl_option at0 = *o;
	char why[512];
	struct ynode *t;
	int rc;

	if (!o->def)
		return 0;
	if (o->type != SL_OPT_LIST) {
		at0.offset = 0;	/* into the scratch value, not a config struct */
		if (o->type == SL_OPT_ENUM && !o->choices)
			return 0;	/* reported on its own */
		return options_store_scalar(&at0, o->def, &scratch, err, errlen);
	}
	t = yaml_tree_load_string("default", o->def, why, sizeof(why));
	if (!t) {
		snprintf(err, errlen, "option '%s': its default is not YAML: %s", o->name, why);
		return -1;
	}
	rc = check_list_shape(o, t, why, sizeof(why));
	yaml_tree_free(t);
	if (rc)
		snprintf(err, errlen, "option '%s': default '%s': %s", o->name,
			 (o->flags & SL_OPT_SECRET) ? "********" : o->def, why);
	return rc;
}

void options_store_list(const struct sl_option *o, const char *const *items, unsigned n, void *config)
{
	struct sl_strlist *l = (struct sl_strlist *)((char *)config + o->offset);

	l->n = n;
	l->v = items;
}

void options_format_default(const struct sl_option *o, char *buf, size_t len)
{
	char err[256];
	struct ynode *t;
	size_t used;

	if (!o->def) {
		snprintf(buf, len, "~");
		return;
	}
	if (o->type != SL_OPT_LIST) {
		/* Plain when YAML reads it back as the same string. */
		bool plain = o->def[0] && !strpbrk(o->def, ":#[]{},&*!|>'\"%@`") &&
			     o->def[0] != '-' && o->def[0] != ' ' &&
			     o->def[strlen(o->def) - 1] != ' ';

		snprintf(buf, len, plain ? "%s" : "\"%s\"", o->def);
		return;
	}
	t = yaml_tree_load_string("default", o->def, err, sizeof(err));
	if (!t || t->kind == YN_MAP) {
		snprintf(buf, len, "(bad default: %s)", o->def);
		yaml_tree_free(t);
		return;
	}
	if (t->kind == YN_SCALAR) {
		snprintf(buf, len, "[%s]", t->scalar);
		yaml_tree_free(t);
		return;
	}
	used = (size_t)snprintf(buf, len, "[");
	for (size_t i = 0; i < t->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 t->items[i]->kind == YN_SCALAR ? t->items[i]->scalar : "?");
	if (used < len)
		snprintf(buf + used, len - used, "]");
	yaml_tree_free(t);
}

unsigned options_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

const char *options_suggest(const char *name, const char *const *names)
{
	const char *best = NULL;
	unsigned best_dist = 3;

	for (size_t i = 0; names[i]; i++) {
		unsigned dist = options_edit_distance(name, names[i]);

		if (dist < best_dist && strcmp(name, names[i]) != 0) {
			best_dist = dist;
			best = names[i];
		}
	}
	return best;
}

const struct sl_option *options_find(const struct sl_plugin *d, const char *name)
{
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

static void unknown_option(struct diag *diag, const struct ynode *key, const struct sl_plugin *d)
{
	const char *names[256];
	const char *best;
	char list[1024] = "";
	size_t used = 0, n = 0;

	for (const struct sl_option *o = d->options; o && o->name; o++) {
		if (n < 255)
			names[n++] = o->name;
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", o->name);
	}
	names[n] = NULL;
	best = options_suggest(key->scalar, names);
	if (best)
		diag_error(diag, &key->mark, "unknown option '%s' for plugin '%s'; did you mean '%s'?",
			   key->scalar, d->name, best);
	else if (used)
		diag_error(diag, &key->mark, "unknown option '%s' for plugin '%s' (options: %s)",
			   key->scalar, d->name, list);
	else
		diag_error(diag, &key->mark, "unknown option '%s': plugin '%s' takes no options",
			   key->scalar, d->name);
}

/* SL_OPT_MAP_ENTRIES: a mapping of scalars, as name, value, name, value... */
static int store_map_node(const struct sl_option *o, const struct ynode *v, void *config,
			  const struct ymark *at, struct diag *diag)
{
	const char **items;

	if (v->kind == YN_SCALAR && yaml_tree_is_null(v)) {
		options_store_list(o, NULL, 0, config);
		return 0;
	}
	if (v->kind != YN_MAP) {
		diag_error(diag, at ? at : &v->mark,
			   "option '%s': expected a mapping of names to values, not %s", o->name,
			   yaml_tree_kind_name(v->kind));
		return -1;
	}
	items = calloc(v->n + 1, sizeof(char *));
	if (!items) {
		diag_error(diag, at ? at : &v->mark, "out of memory");
		return -1;
	}
	for (size_t j = 0; j < v->n; j++) {
		if (v->items[j]->kind != YN_SCALAR || yaml_tree_is_null(v->items[j])) {
			if (j % 2 && v->items[j - 1]->kind == YN_SCALAR && yaml_tree_is_null(v->items[j]))
				diag_error(diag, &v->items[j]->mark, "option '%s': '%s' has no value",
					   o->name, v->items[j - 1]->scalar);
			else if (j % 2 && v->items[j - 1]->kind == YN_SCALAR)
				diag_error(diag, &v->items[j]->mark,
					   "option '%s': '%s' needs one value, not %s", o->name,
					   v->items[j - 1]->scalar, yaml_tree_kind_name(v->items[j]->kind));
			else
				diag_error(diag, &v->items[j]->mark,
					   "option '%s': each name must be a value", o->name);
			free(items);
			return -1;
		}
		items[j] = v->items[j]->scalar;
	}
	options_store_list(o, items, (unsigned)v->n, config);
	return 0;
}

/* A list value from YAML: a sequence of scalars, or one scalar.  0 or -1. */
static int store_list_node(const struct sl_option *o, const struct ynode *v, void *config,
			   const struct ymark *at, struct diag *diag)
{
	char what[512];
	const char **items;
	size_t n = v->kind == YN_SEQ ? v->n : 1;

	if (o->flags & SL_OPT_MAP_ENTRIES)
		return store_map_node(o, v, config, at, diag);
	if (v->kind == YN_MAP) {
		options_describe_values(o, what, sizeof(what));
		diag_error(diag, at ? at : &v->mark, "option '%s': expected %s, not a mapping",
			   o->name, what);
		return -1;
	}
	items = calloc(n + 1, sizeof(char *));
	if (!items) {
		diag_error(diag, at ? at : &v->mark, "out of memory");
		return -1;
	}
	if (v->kind == YN_SCALAR) {
		items[0] = v->scalar;
	} else {
		for (size_t j = 0; j < n; j++) {
			if (v->items[j]->kind != YN_SCALAR) {
				diag_error(diag, at ? at : &v->items[j]->mark,
					   "option '%s': list items must be values", o->name);
				free(items);
				return -1;
			}
			items[j] = v->items[j]->scalar;
		}
	}
	options_store_list(o, items, (unsigned)n, config);
	return 0;
}

/* One option the user wrote. */
static void fill_one(const struct sl_option *o, const struct ynode *v, void *config,
		     struct diag *diag)
{
	char err[1024], what[512];

	if (o->type == SL_OPT_LIST) {
		store_list_node(o, v, config, NULL, diag);
		return;
	}
	options_describe_values(o, what, sizeof(what));
	if (v->kind != YN_SCALAR) {
		diag_error(diag, &v->mark, "option '%s': expected %s, not %s", o->name, what,
			   yaml_tree_kind_name(v->kind));
		return;
	}
	if (yaml_tree_is_null(v) && o->type != SL_OPT_STRING) {
		diag_error(diag, &v->mark, "option '%s': expected %s, got nothing", o->name, what);
		return;
	}
	if (o->type == SL_OPT_INT && !(o->flags & SL_OPT_SECRET))
		options_check_octal(diag, &v->mark, o->name, v->scalar);
	if (options_store_scalar(o, v->scalar, config, err, sizeof(err)))
		diag_error(diag, &v->mark, "%s", err);
}

/* A list default goes through the YAML parser, like the user's value. */
static void fill_list_default(struct opt_values *vals, const struct sl_plugin *d,
			      const struct sl_option *o, const struct ymark *at, struct diag *diag)
{
	struct ynode **grown;
	struct ynode *t;
	char err[512];

	t = yaml_tree_load_string("default", o->def, err, sizeof(err));
	if (!t) {
		diag_error(diag, at, "plugin '%s' has a bad default for option '%s': %s", d->name,
			   o->name, err);
		return;
	}
	grown = realloc(vals->defaults, (vals->ndefaults + 1) * sizeof(*grown));
	if (!grown) {
		yaml_tree_free(t);
		diag_error(diag, at, "out of memory");
		return;
	}
	vals->defaults = grown;
	vals->defaults[vals->ndefaults++] = t;
	store_list_node(o, t, vals->config, at, diag);
}

int options_fill(struct opt_values *vals, const struct sl_plugin *d, const struct ynode *opts,
	     const struct ymark *at, struct diag *diag)
{
	unsigned before = diag->errors;
	char err[1024], what[512];

	memset(vals, 0, sizeof(*vals));
	vals->config = calloc(1, d->config_size ? d->config_size : 1);
	if (!vals->config) {
		diag_error(diag, at, "out of memory");
		return -1;
	}
	vals->user = opts;
	opts = opt_groups_flatten(d, opts, diag);
	if (vals->user && !opts)
		return -1;
	vals->opts = opts;
	/* Options the user wrote. */
	for (size_t i = 0; opts && i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i];
		const struct sl_option *o;

		/* the element's plugin, and the keys the core reads (thread, queue...) */
		if (strcmp(k->scalar, "plugin") == 0 || core_keys_is_core(k->scalar))
			continue;
		o = options_find(d, k->scalar);
		if (o)
			fill_one(o, opts->items[i + 1], vals->config, diag);
		else if (opt_groups_is(d, k->scalar))	/* a group that is not a mapping */
			opt_groups_not_map(diag, d, k, opts->items[i + 1]);
		else
			unknown_option(diag, k, d);
	}
	/* Defaults, and required options left out. */
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		if (yaml_tree_map_get(opts, o->name))
			continue;
		if (o->flags & SL_OPT_REQUIRED) {
			options_describe_values(o, what, sizeof(what));
			diag_error(diag, at, "plugin '%s' needs option '%s' (%s)", d->name, o->name,
				   what);
		} else if (o->def && o->type == SL_OPT_LIST) {
			fill_list_default(vals, d, o, at, diag);
		} else if (o->def && options_store_scalar(o, o->def, vals->config, err, sizeof(err))) {
			diag_error(diag, at, "plugin '%s' has a bad default: %s", d->name, err);
		}
	}
	return diag->errors == before ? 0 : -1;
}

void options_values_free(struct opt_values *vals, const struct sl_plugin *d)
{
	for (const struct sl_option *o = d->options; vals->config && o && o->name; o++)
		if (o->type == SL_OPT_LIST)
			free((void *)((struct sl_strlist *)((char *)vals->config + o->offset))->v);
	for (size_t i = 0; i < vals->ndefaults; i++)
		yaml_tree_free(vals->defaults[i]);
	free(vals->defaults);
	free(vals->config);
	opt_groups_free(vals->opts, vals->user);
	memset(vals, 0, sizeof(*vals));
}
