/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert KIND [--check] FILE`: the table of converters, their
 * common command line, and the answers to "does this build's plugin X
 * have option Y" they ask (from the plugins' own option tables, so the
 * YAML they print is what `sluice -t` accepts here).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "convert.h"
#include "convert_ulogd.h"
#include "plugin_loader.h"
#include "ulogd_ini.h"

struct converter {
	const char *kind;
	int (*run)(const char *file, FILE *in, bool check, struct plugin_loader *l);
	const char *help;
};

static int plugin_has(void *ctx, const char *plugin, const char *option, const char *choice)
{
	const struct loaded_plugin *lp;
	char err[256];

	lp = loader_find(ctx, plugin, err, sizeof(err));
	if (!lp)
		return 0;
	if (!option)
		return 1;
	for (const struct sl_option *o = lp->desc->options; o && o->name; o++) {
		if (strcmp(o->name, option) != 0)
			continue;
		if (!choice)
			return 1;
		for (const char *const *ch = o->choices; ch && *ch; ch++)
			if (strcmp(*ch, choice) == 0)
				return 1;
		return 0;
	}
	return 0;
}

static int run_ulogd(const char *file, FILE *in, bool check, struct plugin_loader *l)
{
	struct convert_caps caps = { .has = plugin_has, .ctx = l };
	struct convert_result res;
	struct ulogd_ini ini;
	FILE *out = check ? fopen("/dev/null", "w") : stdout;
	int ret;

	if (!out) {
		perror("sluice convert: /dev/null");
		return EX_OSERR;
	}
	if (ulogd_ini_read(&ini, in)) {
		fprintf(stderr, "%s:%u:%u: error: %s\n", file, ini.err_line, ini.err_col, ini.err);
		ulogd_ini_free(&ini);
		if (check)
			fclose(out);
		return 2;
	}
	ret = convert_ulogd(&ini, file, &caps, out, stderr, &res);
	ulogd_ini_free(&ini);
	if (check)
		fclose(out);
	else
		fflush(out);
	if (ret) {
		fprintf(stderr, "sluice convert: %u error%s in %s; nothing converted\n", res.errors,
			res.errors == 1 ? "" : "s", file);
		return 2;
	}
	if (check)
		fprintf(stderr, "%s: %u not converted, %u converted with differences\n", file,
			res.not_converted, res.notes);
	return check && res.not_converted ? 1 : 0;
}

static const struct converter converters[] = {
	{ "ulogd", run_ulogd, "a ulogd2 configuration (ulogd.conf) to sluice YAML" },
};

#define NCONV (sizeof(converters) / sizeof(converters[0]))

static void list(FILE *out)
{
	fprintf(out, "usage: sluice convert KIND [--check] FILE   (FILE - reads stdin)\n"
		"YAML on stdout, warnings on stderr; --check prints no YAML and exits 1 when\n"
		"something could not be converted, 2 when FILE is not valid.\nKinds:\n");
	for (size_t i = 0; i < NCONV; i++)
		fprintf(out, "  %-10s %s\n", converters[i].kind, converters[i].help);
}

int convert_is_command(const char *arg)
{
	return strcmp(arg, "convert") == 0;
}

int convert_main(int argc, char **argv)
{
	const struct converter *cv = NULL;
	const char *file = NULL;
	struct plugin_loader l;
	bool check = false;
	FILE *in;
	int ret;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		list(argc < 2 ? stderr : stdout);
		return argc < 2 ? EX_USAGE : 0;
	}
	for (size_t i = 0; i < NCONV; i++)
		if (strcmp(argv[1], converters[i].kind) == 0)
			cv = &converters[i];
	if (!cv) {
		fprintf(stderr, "sluice convert: unknown kind '%s'\n", argv[1]);
		list(stderr);
		return EX_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--check") == 0)
			check = true;
		else if (!file && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			file = argv[i];
		else {
			fprintf(stderr, "sluice convert %s: unexpected argument '%s'\n", cv->kind,
				argv[i]);
			return EX_USAGE;
		}
	}
	if (!file) {
		fprintf(stderr, "sluice convert %s: which file? (- for stdin)\n", cv->kind);
		return EX_USAGE;
	}
	in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	if (!in) {
		fprintf(stderr, "sluice convert: %s: %m\n", file);
		return EX_NOINPUT;
	}
	if (loader_init(&l, NULL, 0)) {
		if (in != stdin)
			fclose(in);
		return EX_OSERR;
	}
	ret = cv->run(strcmp(file, "-") == 0 ? "<stdin>" : file, in, check, &l);
	loader_free(&l);
	if (in != stdin)
		fclose(in);
	return ret;
}
