/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --describe and --describe-all: a plugin's descriptor (options with type,
 * accepted values, default; the fields it needs and provides) as text for
 * people, as man(7) for sluice.yaml(5), as markdown for docs/PLUGINS.md.
 * Everything printed comes from the option tables, so docs built from it
 * cannot drift from what the daemon validates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "describe.h"
#include "core_keys.h"
#include "options.h"
#include "plugin_loader.h"
#include "secret.h"

int describe_parse_format(const char *s, enum describe_format *fmt)
{
	static const char *const names[] = {"text", "man", "markdown"};

	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*fmt = (enum describe_format)i;
			return 0;
		}
	return -1;
}

/* The default as --describe shows it: a secret's, or a password in it, masked. */
static void format_default(const struct sl_option *o, char *buf, size_t len)
{
	char def[512];

	options_format_default(o, def, sizeof(def));
	secret_show(def, o->flags & SL_OPT_SECRET, buf, len);
}

/* ---- text ---- */

static void text_fields(const char *title, const struct sl_field_decl *f)
{
	printf("%s:", title);
	if (!f || !f->name)
		printf(" -");
	for (; f && f->name; f++)
		printf(" %s", f->name);
	printf("\n");
}

static void text_plugin(const struct loaded_plugin *p)
{
	const struct sl_plugin *d = p->desc;
	const struct sl_field_decl *const *alts = plugin_loader_needs_one_of(d);

	printf("%s (%s plugin): %s\n", d->name, plugin_loader_kind_name(d->kind), d->description);
	printf("file: %s\n", p->path);
	text_fields("needs", d->needs);
	for (const struct sl_field_decl *const *alt = alts; alt && *alt; alt++)
		text_fields(alt == alts ? "needs one of" : "          or", *alt);
	text_fields("provides", d->provides);
	/* What `thread:` defaults to; docs/CONFIG.md lists these (test_docs_commands.sh). */
	if (core_keys_default_thread(d))
		printf("thread: own thread by default (a network output; thread: false to change)\n");
	printf("options:\n");
	if (!d->options || !d->options->name)
		printf("  (none)\n");
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		char values[512], def[512];

		options_describe_values(o, values, sizeof(values));
		format_default(o, def, sizeof(def));
		printf("  %s (%s)\n", o->name, options_shown_type(o));
		printf("      %s\n", o->description ? o->description : "");
		printf("      values: %s\n", values);
		if (o->flags & SL_OPT_EXCLUSIVE)
			printf("      exclusive: one instance of %s per value\n", d->name);
		if (o->flags & SL_OPT_SECRET)
			printf("      secret: %s shown as %s, in sluice -t and every message\n",
			       (o->flags & SL_OPT_MAP_ENTRIES) ? "the value of a name containing "
				       SECRET_WORDS " is" : "its value is", SECRET_MASK);
		if (o->flags & SL_OPT_REQUIRED)
			printf("      required\n");
		else if (o->def)
			printf("      default: %s\n", def);
		else
			printf("      default: unset\n");
	}
}

/* ---- man(7) ---- */

/* Text on a line of its own, safe for troff: no request, no escape. */
static void man_text(const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
	}
}

static void man_fields(const struct sl_field_decl *f)
{
	if (!f || !f->name)
		printf("none");
	for (const struct sl_field_decl *g = f; g && g->name; g++) {
		/* \% keeps a field name from being hyphenated. */
		printf("%s\\%%", g != f ? ", " : "");
		man_text(g->name);
	}
	printf("\n");
}

static void man_plugin(const struct loaded_plugin *p)
{
	const struct sl_plugin *d = p->desc;
	const struct sl_field_decl *const *alts = plugin_loader_needs_one_of(d);

	printf(".SS %s (%s)\n", d->name, plugin_loader_kind_name(d->kind));
	man_text(d->description ? d->description : "");
	printf(".\n.PP\nNeeds: ");
	man_fields(d->needs);
	for (const struct sl_field_decl *const *alt = alts; alt && *alt; alt++) {
		printf(".br\n%s", alt == alts ? "and one of these sets: " : "or: ");
		man_fields(*alt);
	}
	printf(".br\nProvides: ");
	man_fields(d->provides);
	if (!d->options || !d->options->name)
		printf(".PP\nNo options.\n");
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		char values[512], def[512];

		options_describe_values(o, values, sizeof(values));
		format_default(o, def, sizeof(def));
		printf(".TP\n.BR ");
		man_text(o->name);
		printf(" \" (%s)\"\n", options_shown_type(o));
		if (o->description && *o->description) {
			man_text(o->description);
			printf(".\n.br\n");
		}
		printf("Values: ");
		man_text(values);
		printf(".\n.br\n");
		if (o->flags & SL_OPT_EXCLUSIVE)
			printf("Exclusive: two instances with the same value are a configuration error.\n.br\n");
		if (o->flags & SL_OPT_SECRET)
			printf("Secret: %s shown as %s, in sluice \\-t and every message.\n.br\n",
			       (o->flags & SL_OPT_MAP_ENTRIES) ? "the value of a name containing "
				       SECRET_WORDS " is" : "its value is", SECRET_MASK);
		if (o->flags & SL_OPT_REQUIRED) {
			printf("Required.\n");
		} else if (o->def) {
			printf("Default: ");
			man_text(def);
			printf(".\n");
		} else {
			printf("Default: unset.\n");
		}
	}
}

/* ---- markdown ---- */

/* A table cell: '|' would end it. */
static void md_cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else
			putchar(*s);
	}
}

static void md_fields(const struct sl_field_decl *f)
{
	if (!f || !f->name)
		printf("-");
	for (const struct sl_field_decl *g = f; g && g->name; g++)
		printf("%s`%s`", g == f ? "" : ", ", g->name);
}

/* The type column: "int 0-65535", "size 4KiB-128KiB", "`raw` \| `nflog`". */
static void md_type(const struct sl_option *o)
{
	char range[128];

	if (o->type == SL_OPT_ENUM) {
		for (int i = 0; o->choices && o->choices[i]; i++)
			printf("%s`%s`", i ? " \\| " : "", o->choices[i]);
		return;
	}
	options_format_range(o, range, sizeof(range));
	printf("%s%s%s%s", o->type == SL_OPT_INT ? "int" : options_shown_type(o),
	       range[0] ? " " : "", range, (o->flags & SL_OPT_SECRET) ? " (secret)" : "");
}

static void md_plugin(const struct loaded_plugin *p)
{
	const struct sl_plugin *d = p->desc;
	const struct sl_field_decl *const *alts = plugin_loader_needs_one_of(d);

	printf("## %s (%s)\n\n%s\n\n", d->name, plugin_loader_kind_name(d->kind), d->description);
	printf("Needs: ");
	md_fields(d->needs);
	for (const struct sl_field_decl *const *alt = alts; alt && *alt; alt++) {
		printf("%s", alt == alts ? "; and one of: " : "; or: ");
		md_fields(*alt);
	}
	printf("  \nProvides: ");
	md_fields(d->provides);
	printf("\n\n");
	if (!d->options || !d->options->name) {
		printf("No options.\n\n");
		return;
	}
	printf("| option | type | default | meaning |\n|---|---|---|---|\n");
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		char def[512];

		format_default(o, def, sizeof(def));
		printf("| `%s` | ", o->name);
		md_type(o);
		if (o->flags & SL_OPT_REQUIRED)
			printf(" | required | ");
		else if (o->def)
			printf(" | `%s` | ", def);
		else
			printf(" | unset | ");
		md_cell(o->description ? o->description : "");
		printf(" |\n");
	}
	printf("\n");
}

/* ---- finding them ---- */

/* plugin_loader_load_all() reports through a callback without a context. */
static int load_errors;

static void count_load_error(const char *msg, bool error)
{
	fprintf(stderr, "sluice: %s%s\n", error ? "" : "warning: ", msg);
	load_errors += error;
}

static int cmp_plugin(const void *a, const void *b)
{
	const struct sl_plugin *x = (*(const struct loaded_plugin *const *)a)->desc;
	const struct sl_plugin *y = (*(const struct loaded_plugin *const *)b)->desc;

	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return strcmp(x->name, y->name);
}

int describe_all(enum describe_format fmt, const char *const *dirs, size_t ndirs)
{
	static void (*const print[])(const struct loaded_plugin *) = {
		[DESCRIBE_TEXT] = text_plugin,
		[DESCRIBE_MAN] = man_plugin,
		[DESCRIBE_MARKDOWN] = md_plugin,
	};
	const struct loaded_plugin **all;
	struct plugin_loader l;
	size_t n = 0, k = 0;

	if (plugin_loader_init(&l, dirs, ndirs))
		return EX_OSERR;
	load_errors = 0;
	plugin_loader_load_all(&l, count_load_error);
	for (const struct loaded_plugin *p = l.loaded; p; p = p->next)
		n++;
	all = calloc(n ? n : 1, sizeof(*all));
	if (!all) {
		plugin_loader_free(&l);
		return EX_OSERR;
	}
	for (const struct loaded_plugin *p = l.loaded; p; p = p->next)
		all[k++] = p;
	qsort(all, n, sizeof(*all), cmp_plugin);
	for (k = 0; k < n; k++) {
		if (k && fmt == DESCRIBE_TEXT)
			printf("\n");
		print[fmt](all[k]);
	}
	free(all);
	plugin_loader_free(&l);
	if (!n)
		fprintf(stderr, "sluice: no plugins found\n");
	return n && !load_errors ? 0 : EX_UNAVAILABLE;
}

int describe_plugin(const char *name, const char *const *dirs, size_t ndirs)
{
	struct plugin_loader l;
	const struct loaded_plugin *p;
	char err[1024];

	if (plugin_loader_init(&l, dirs, ndirs))
		return EX_OSERR;
	p = strchr(name, '/') ? plugin_loader_load_path(&l, name, err, sizeof(err))
			      : plugin_loader_find(&l, name, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "sluice: %s\n", err);
		plugin_loader_free(&l);
		return EX_CONFIG;
	}
	text_plugin(p);
	plugin_loader_free(&l);
	return 0;
}
