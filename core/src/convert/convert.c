/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert KIND ...`: the table of converters and the dispatch to
 * them; `convert ulogd [--check] FILE`'s command line, and the answers to
 * "does this build's plugin X have option Y" it asks (from the plugins'
 * own option tables, so the YAML it prints is what `sluice -t` accepts
 * here).  `convert nft` is in convert_nft.c.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "convert.h"
#include "convert_ulogd.h"
#include "infile.h"
#include "plugin_loader.h"
#include "ulogd_ini.h"


static int plugin_has(void *ctx, const char *plugin, const char *option, const char *choice)
{
	const struct loaded_plugin *lp;
	char err[256];

	lp = plugin_loader_find(ctx, plugin, err, sizeof(err));
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

static int convert_ulogd_file(const char *file, FILE *in, bool check, struct plugin_loader *l)
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
	if (!res.stacks) {
		/* exit 1, never 0 with a YAML that `sluice -t` would refuse */
		fprintf(stderr, "sluice convert: nothing in %s was convertible: no stack could be "
			"converted (the warnings say why); no YAML written\n", file);
		return 1;
	}
	if (check)
		fprintf(stderr, "%s: %u not converted, %u converted with differences\n", file,
			res.not_converted, res.notes);
	return check && res.not_converted ? 1 : 0;
}

static const char converters_help_ulogd[] =
	"ulogd [--check] FILE\n"
	"      a ulogd2 configuration (ulogd.conf; - reads stdin) to sluice YAML on stdout,\n"
	"      warnings on stderr; exits 1 without YAML when no stack could be converted;\n"
	"      --check prints no YAML and exits 1 when something could not be\n"
	"      converted, 2 when FILE is not valid";

/* `sluice convert ulogd [--check] FILE` (FILE - reads stdin) */
static int convert_ulogd_main(int argc, char **argv)
{
	const char *file = NULL;
	struct plugin_loader l;
	bool check = false;
	char why[128];
	FILE *in;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			printf("usage: sluice convert %s\n", converters_help_ulogd);
			return 0;
		}
		if (strcmp(argv[i], "--check") == 0)
			check = true;
		else if (!file && (argv[i][0] != '-' || strcmp(argv[i], "-") == 0))
			file = argv[i];
		else {
			fprintf(stderr, "sluice convert ulogd: unexpected argument '%s'\n", argv[i]);
			return EX_USAGE;
		}
	}
	if (!file) {
		fprintf(stderr, "sluice convert ulogd: which file? (- for stdin)\n");
		return EX_USAGE;
	}
	in = strcmp(file, "-") == 0 ? stdin : infile_fopen(file, why, sizeof(why));
	if (!in) {
		fprintf(stderr, "sluice convert: %s: %s\n", file, why);
		return EX_NOINPUT;
	}
	if (plugin_loader_init(&l, NULL, 0)) {
		if (in != stdin)
			fclose(in);
		return EX_OSERR;
	}
	ret = convert_ulogd_file(strcmp(file, "-") == 0 ? "<stdin>" : file, in, check, &l);
	plugin_loader_free(&l);
	if (in != stdin)
		fclose(in);
	return ret;
}

static const struct {
	const char *kind;
	int (*run)(int argc, char **argv);
	const char *help;
} converters[] = {
	{"ulogd", convert_ulogd_main, converters_help_ulogd},
	{"nft", convert_nft_main,
	 "nft [--group N] [--file RULESET.json|-] [--yaml OUT] [--apply] [--check]\n"
	 "      printk `log` rules of the live ruleset (or a `nft -j list ruleset` file)\n"
	 "      to `log group N`, with a sluice YAML writing the same lines"},
};

#define NCONV (sizeof(converters) / sizeof(converters[0]))

static void usage(FILE *out)
{
	fputs("usage: sluice convert KIND [OPTIONS]\n", out);
	for (size_t i = 0; i < NCONV; i++)
		fprintf(out, "  %s\n", converters[i].help);
	fputs("  sluice convert KIND --help: its options\n", out);
}

int convert_is_command(const char *arg)
{
	return strcmp(arg, "convert") == 0;
}

int convert_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EX_USAGE : 0;
	}
	for (size_t i = 0; i < NCONV; i++)
		if (strcmp(argv[1], converters[i].kind) == 0)
			return converters[i].run(argc - 1, argv + 1);
	fprintf(stderr, "sluice convert: unknown kind '%s'\n", argv[1]);
	usage(stderr);
	return EX_USAGE;
}
