/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sluice: the daemon's command line.  Runs in the foreground (a service
 * manager supervises it); every check happens before anything starts.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "event_loop.h"
#include "fields.h"
#include "graph.h"
#include "host.h"
#include "log.h"
#include "options.h"
#include "plugin_loader.h"
#include "privileges.h"

#ifndef SLUICE_CONF_DIR
#define SLUICE_CONF_DIR "/etc/sluice"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sluice [-v] [-c FILE]           run in the foreground\n"
		"       sluice -t [-c FILE]             check the configuration and show its stacks\n"
		"       sluice --list-plugins           list the plugins found\n"
		"       sluice --describe NAME          show a plugin's options and fields\n"
		"\n"
		"  -c, --config FILE   configuration (default " SLUICE_CONF_DIR "/sluice.yaml)\n"
		"  -t, --check         validate the configuration, print the stacks, exit\n"
		"  -v, --verbose       log debug messages\n"
		"  -V, --version       print the version\n"
		"  -h, --help          this help\n"
		"\n"
		"Plugins are searched in $SLUICE_PLUGIN_PATH (colon-separated), then\n"
		"daemon.plugin_path, then " SLUICE_PLUGIN_DIR ".\n"
		"Signals: TERM/INT flush and exit, HUP reloads the configuration and reopens files,\n"
		"USR1 logs counters.\n"
		"Exit status: 0 ok, 1 runtime failure, 64 usage, 78 configuration error.\n");
}

static void print_load_error(const char *msg)
{
	fprintf(stderr, "sluice: %s\n", msg);
}

static int list_plugins(void)
{
	struct plugin_loader l;
	size_t n = 0;

	if (loader_init(&l, NULL, 0))
		return EX_OSERR;
	loader_load_all(&l, print_load_error);
	/* The loader keeps them newest first; print in the order found. */
	for (int kind = SL_KIND_INPUT; kind <= SL_KIND_OUTPUT; kind++) {
		const struct loaded_plugin *sorted[256];
		size_t k = 0;

		for (const struct loaded_plugin *p = l.loaded; p && k < 256; p = p->next)
			if ((int)p->desc->kind == kind)
				sorted[k++] = p;
		while (k-- > 0) {
			printf("%-10s %-7s %s\n", sorted[k]->desc->name,
			       loader_kind_name(sorted[k]->desc->kind), sorted[k]->desc->description);
			n++;
		}
	}
	if (!n)
		fprintf(stderr, "sluice: no plugins found\n");
	loader_free(&l);
	return n ? 0 : EX_UNAVAILABLE;
}

static void print_fields(const char *title, const struct sl_field_decl *f)
{
	printf("%s:", title);
	if (!f || !f->name)
		printf(" -");
	for (; f && f->name; f++)
		printf(" %s", f->name);
	printf("\n");
}

static int describe_plugin(const char *name)
{
	struct plugin_loader l;
	const struct loaded_plugin *p;
	char err[1024];

	if (loader_init(&l, NULL, 0))
		return EX_OSERR;
	p = strchr(name, '/') ? loader_load_path(&l, name, err, sizeof(err))
			      : loader_find(&l, name, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "sluice: %s\n", err);
		loader_free(&l);
		return EX_CONFIG;
	}
	printf("%s (%s plugin): %s\n", p->desc->name, loader_kind_name(p->desc->kind),
	       p->desc->description);
	printf("file: %s\n", p->path);
	print_fields("needs", p->desc->needs);
	for (const struct sl_field_decl *const *alt = sl_plugin_needs_one_of(p->desc); alt && *alt;
	     alt++)
		print_fields(alt == sl_plugin_needs_one_of(p->desc) ? "needs one of" : "          or",
			     *alt);
	print_fields("provides", p->desc->provides);
	printf("options:\n");
	if (!p->desc->options || !p->desc->options->name)
		printf("  (none)\n");
	for (const struct sl_option *o = p->desc->options; o && o->name; o++) {
		char values[512], def[512];

		opt_describe_values(o, values, sizeof(values));
		opt_format_default(o, def, sizeof(def));
		printf("  %s (%s)\n", o->name, opt_type_name(o->type));
		printf("      %s\n", o->description ? o->description : "");
		printf("      values: %s\n", values);
		if (o->flags & SL_OPT_REQUIRED)
			printf("      required\n");
		else if (o->def)
			printf("      default: %s\n", def);
		else
			printf("      default: unset\n");
	}
	loader_free(&l);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check", no_argument, NULL, 't'},
		{"verbose", no_argument, NULL, 'v'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{"list-plugins", no_argument, NULL, 'L'},
		{"describe", required_argument, NULL, 'D'},
		{NULL, 0, NULL, 0},
	};
	const char *file = SLUICE_CONF_DIR "/sluice.yaml";
	bool check = false, verbose = false;
	struct config cfg;
	struct diag diag = {0};
	struct drop_target drop;
	struct graph g;
	int c, status;

	while ((c = getopt_long(argc, argv, "c:tvVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': file = optarg; break;
		case 't': check = true; break;
		case 'v': verbose = true; break;
		case 'V': printf("sluice %s (plugin ABI %d.%d)\n", SLUICE_VERSION, SL_ABI_MAJOR,
				 SL_ABI_MINOR);
			return 0;
		case 'h': usage(stdout); return 0;
		case 'L': return list_plugins();
		case 'D': return describe_plugin(optarg);
		default: usage(stderr); return EX_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sluice: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EX_USAGE;
	}
	if (config_load(&cfg, file, &diag)) {
		fprintf(stderr, "sluice: %u error%s in %s; nothing started\n", diag.errors,
			diag.errors == 1 ? "" : "s", file);
		config_free(&cfg);
		return EX_CONFIG;
	}
	if (verbose)
		log_set_level(SL_LOG_DEBUG);
	else if (cfg.log_level >= 0)
		log_set_level(cfg.log_level);
	if (cfg.user) {
		char err[256];

		if (privileges_lookup(cfg.user, &drop, err, sizeof(err)))
			diag_error(&diag, &cfg.user_mark, "%s", err);
	}
	if (graph_build(&g, &cfg, &diag) || diag.errors) {
		fprintf(stderr, "sluice: %u error%s in %s; nothing started\n", diag.errors,
			diag.errors == 1 ? "" : "s", file);
		graph_free(&g);
		config_free(&cfg);
		return EX_CONFIG;
	}
	if (check) {
		printf("%s: configuration OK (%zu instances, %zu stacks)\n", file, g.nall,
		       cfg.nstacks);
		graph_print(&g, stdout);
		status = 0;
	} else {
		status = daemon_run(&g, &cfg, file, cfg.user ? &drop : NULL);
	}
	graph_free(&g);
	config_free(&cfg);
	return status;
}
