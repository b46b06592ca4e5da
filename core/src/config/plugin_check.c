/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "plugin_check.h"

struct checker {
	const char *path;
	const struct sl_plugin *d;
	void (*report)(void *ctx, const char *msg);
	void *ctx;
	unsigned problems;
};

__attribute__((format(printf, 2, 3)))
static void problem(struct checker *c, const char *fmt, ...)
{
	char msg[1024];
	size_t used = (size_t)snprintf(msg, sizeof(msg), "%s: plugin '%s': ", c->path,
				       c->d->name ? c->d->name : "?");
	va_list ap;

	if (used < sizeof(msg)) {
		va_start(ap, fmt);
		vsnprintf(msg + used, sizeof(msg) - used, fmt, ap);
		va_end(ap);
	}
	c->report(c->ctx, msg);
	c->problems++;
}

unsigned plugin_check_opt_flags_of(unsigned minor)
{
	return minor >= 3 ? SL_OPT_FLAGS_1_3 : SL_OPT_FLAGS_1_2;
}

/* The flags' names, for a message: "SL_OPT_SECRET, SL_OPT_IN_FILE". */
static void flag_names(unsigned flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"SL_OPT_REQUIRED", "SL_OPT_EXCLUSIVE", "SL_OPT_MAP_ENTRIES", "SL_OPT_SECRET",
		"SL_OPT_OUT_FILE", "SL_OPT_OUT_DIR", "SL_OPT_OUT_MKDIR", "SL_OPT_IN_FILE",
	};
	size_t used = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < 32 && used < len; i++)
		if (flags & (1u << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 i < sizeof(names) / sizeof(names[0]) ? names[i]
										     : "?");
}

/* The size of the member an option of this type fills. */
static size_t member_size(const struct sl_option *o)
{
	switch (o->type) {
	case SL_OPT_STRING: return sizeof(const char *);
	case SL_OPT_INT: return sizeof(int64_t);
	case SL_OPT_BOOL: return sizeof(bool);
	case SL_OPT_SIZE:
	case SL_OPT_DURATION: return sizeof(uint64_t);
	case SL_OPT_ENUM: return sizeof(int);
	case SL_OPT_LIST: return sizeof(struct sl_strlist);
	}
	return 0;
}

static void check_flags(struct checker *c, const struct sl_option *o)
{
	unsigned minor = c->d->abi_minor, known = SL_OPT_FLAGS_1_3;
	unsigned later = o->flags & known & ~plugin_check_opt_flags_of(minor);
	char names[256];

	if (o->flags & ~known)
		problem(c, "option '%s': flag bits 0x%x are not defined by ABI %d.%d", o->name,
			o->flags & ~known, SL_ABI_MAJOR, SL_ABI_MINOR);
	if (later) {
		flag_names(later, names, sizeof(names));
		problem(c, "option '%s' uses %s, defined since ABI 1.3, but the plugin declares "
			"it needs only ABI 1.%u (SL_PLUGIN_HEADER_MIN(%u)); a 1.%u daemon would "
			"ignore it: declare SL_PLUGIN_HEADER_MIN(3) or SL_PLUGIN_HEADER",
			o->name, names, minor, minor, minor);
	}
	if ((o->flags & SL_OPT_MAP_ENTRIES) && o->type != SL_OPT_LIST)
		problem(c, "option '%s': SL_OPT_MAP_ENTRIES on an option of type %s (only a list "
			"can hold a mapping)", o->name, options_type_name(o->type));
	if ((o->flags & SL_OPT_PATHS) && o->type != SL_OPT_STRING)
		problem(c, "option '%s': a path flag on an option of type %s (only a string names "
			"a path)", o->name, options_type_name(o->type));
	if ((o->flags & SL_OPT_REQUIRED) && o->def)
		problem(c, "option '%s' is required and has a default ('%s'): one or the other",
			o->name, (o->flags & SL_OPT_SECRET) ? "********" : o->def);
}

static void check_option(struct checker *c, const struct sl_option *o)
{
	char err[1024];

	for (const struct sl_option *p = c->d->options; p != o; p++)
		if (strcmp(p->name, o->name) == 0) {
			problem(c, "option '%s' is declared twice (rows %zu and %zu of the table)",
				o->name, (size_t)(p - c->d->options) + 1,
				(size_t)(o - c->d->options) + 1);
			break;
		}
	if (!*o->name)
		problem(c, "option %zu has an empty name", (size_t)(o - c->d->options) + 1);
	if (o->type < SL_OPT_STRING || o->type > SL_OPT_LIST) {
		problem(c, "option '%s' has an unknown type %d", o->name, (int)o->type);
		return;	/* nothing else about it can be checked */
	}
	check_flags(c, o);
	if (o->type == SL_OPT_ENUM && (!o->choices || !o->choices[0]))
		problem(c, "option '%s' is an enum without choices", o->name);
	if (o->offset + member_size(o) > c->d->config_size)
		problem(c, "option '%s' lies outside the config struct (offset %zu, %zu bytes, "
			"config_size %zu)", o->name, o->offset, member_size(o), c->d->config_size);
	if ((o->type == SL_OPT_INT || o->type == SL_OPT_SIZE || o->type == SL_OPT_DURATION) &&
	    (o->min || o->max) &&
	    (o->type == SL_OPT_INT ? o->min > o->max : (uint64_t)o->min > (uint64_t)o->max)) {
		problem(c, "option '%s' has an empty range (min %lld > max %lld)", o->name,
			(long long)o->min, (long long)o->max);
		return;	/* no default can be in it: one problem is enough */
	}
	if (o->def && options_check_default(o, err, sizeof(err))) {
		/* err begins "option 'x': "; a secret's value is never in it */
		problem(c, "bad default: %s", err);
	}
}

unsigned plugin_check(const char *path, const struct sl_plugin *d,
		      void (*report)(void *ctx, const char *msg), void *ctx)
{
	struct checker c = {.path = path, .d = d, .report = report, .ctx = ctx};

	for (const struct sl_option *o = d->options; o && o->name; o++)
		check_option(&c, o);
	/* `reads` is ABI 1.3: a 1.2 daemon copies every field instead. */
	if (d->abi_minor < 3 && d->size >= offsetof(struct sl_plugin, reads) + sizeof(d->reads) &&
	    d->reads)
		problem(&c, "sets .reads, defined since ABI 1.3, but declares it needs only "
			"ABI 1.%u (SL_PLUGIN_HEADER_MIN(%u)): declare SL_PLUGIN_HEADER_MIN(3) or "
			"SL_PLUGIN_HEADER", d->abi_minor, d->abi_minor);
	return c.problems;
}
