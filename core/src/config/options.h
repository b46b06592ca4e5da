/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Option values: parsing of the scalar types a plugin's option table
 * declares (integers with ranges, booleans, sizes, durations, enums),
 * storing them into the plugin's config struct, filling a whole config
 * from an element's YAML mapping and the table's defaults, and the
 * "did you mean" suggestions for misspelt names.
 */
#ifndef SLUICE_OPTIONS_H
#define SLUICE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sluice/plugin.h>

#include "config.h"

int options_parse_int(const char *s, int64_t *out);
/*
 * An integer written with a leading 0 is octal (YAML 1.1, strtoll): warn
 * at `at` that "010" is 8.  true when `text` is such an integer.
 */
bool options_check_octal(struct diag *d, const struct ymark *at, const char *name, const char *text);
int options_parse_bool(const char *s, bool *out);
/* "8MiB", "64k", "1G", "512" (bytes; k/M/G are powers of 1024 like KiB/MiB/GiB). */
int options_parse_size(const char *s, uint64_t *out);
/* "50ms", "2s", "5m", "1h", "1d", "1500" (a bare number is milliseconds). */
int options_parse_duration(const char *s, uint64_t *ms);
int options_parse_enum(const char *s, const char *const *choices, int *index);

const char *options_type_name(enum sl_opt_type type);
/* The name users see: "map" for a list filled from a mapping (SL_OPT_MAP). */
const char *options_shown_type(const struct sl_option *o);

/*
 * Parse `text` as the value of option `o` and store it in config.
 * On error returns -1 with a message ("expected a size like 8MiB, got 'x'")
 * in err.
 */
int options_store_scalar(const struct sl_option *o, const char *text, void *config, char *err,
		     size_t errlen);

/*
 * Whether o->def parses as a value of o's type and range (a list default
 * as YAML: a scalar or a sequence of scalars; a map's as a mapping of
 * scalars).  0, or -1 with the reason in err (for the loader's check of a
 * plugin's table, so a bad default is the plugin's error, not the user's).
 */
int options_check_default(const struct sl_option *o, char *err, size_t errlen);

/* Store a list value (the strings are kept by reference). */
void options_store_list(const struct sl_option *o, const char *const *items, unsigned n, void *config);

/* Describe the accepted values of an option ("integer 0..65535", "one of: a, b"). */
void options_describe_values(const struct sl_option *o, char *buf, size_t len);

/* An INT, SIZE or DURATION range as "0-65535", "4KiB-128KiB"; "" when there is none. */
void options_format_range(const struct sl_option *o, char *buf, size_t len);

/* Default of an option written as YAML ("[a, b]", a quoted string), for --describe. */
void options_format_default(const struct sl_option *o, char *buf, size_t len);

/* The row of option `name` in d's table, or NULL. */
const struct sl_option *options_find(const struct sl_plugin *d, const char *name);

/* Levenshtein distance (99 for names of 63 bytes or more). */
unsigned options_edit_distance(const char *a, const char *b);
/* The name in the NULL-terminated list within two edits of `name`, or NULL. */
const char *options_suggest(const char *name, const char *const *names);

/*
 * A config struct filled from an element's options and the table's
 * defaults.  List values point into the YAML tree (the user's, or a
 * parsed default kept in `defaults`); options_values_free() frees it all.
 */
struct opt_values {
	void *config;
	struct ynode **defaults;
	size_t ndefaults;
	/*
	 * The mapping the values came from: the user's, or its copy with
	 * option groups (opt_groups.h) written flat.  Everything that looks
	 * options up by name after options_fill() reads `opts`.
	 */
	const struct ynode *opts;
	const struct ynode *user;
};

/*
 * Fill v->config (calloc'ed, d->config_size bytes) from `opts` (the
 * element's mapping; NULL: none) and the defaults.  Option groups
 * (`tls: {ca_file: x}`) count as their flat names; v->opts is the mapping
 * as read.  Errors go to diag at the value's position, or at `at` for a
 * missing required option.  0/-1.
 */
int options_fill(struct opt_values *v, const struct sl_plugin *d, const struct ynode *opts,
	     const struct ymark *at, struct diag *diag);
void options_values_free(struct opt_values *v, const struct sl_plugin *d);

#endif
