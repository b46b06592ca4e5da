/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `sluice convert KIND`: the table of converters and the dispatch to them. */
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

#include "convert.h"

static const struct {
	const char *kind;
	int (*run)(int argc, char **argv);
	const char *help;
} converters[] = {
	{"nft", convert_nft_main,
	 "nft [--group N] [--file RULESET.json|-] [--yaml OUT] [--apply] [--check]\n"
	 "      printk `log` rules of the live ruleset (or a `nft -j list ruleset` file)\n"
	 "      to `log group N`, with a sluice YAML writing the same lines"},
};

static void usage(FILE *out)
{
	fputs("usage: sluice convert KIND [OPTIONS]\n", out);
	for (size_t i = 0; i < sizeof(converters) / sizeof(converters[0]); i++)
		fprintf(out, "  %s\n", converters[i].help);
	fputs("  sluice convert KIND --help: its options\n", out);
}

int convert_main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EX_USAGE : 0;
	}
	for (size_t i = 0; i < sizeof(converters) / sizeof(converters[0]); i++)
		if (strcmp(argv[1], converters[i].kind) == 0)
			return converters[i].run(argc - 1, argv + 1);
	fprintf(stderr, "sluice convert: unknown kind '%s'\n", argv[1]);
	usage(stderr);
	return EX_USAGE;
}
