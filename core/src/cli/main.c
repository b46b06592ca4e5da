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
#include "convert.h"
#include "ctl_client.h"
#include "daemon.h"
#include "describe.h"
#include "event_loop.h"
#include "fields.h"
#include "graph.h"
#include "host.h"
#include "log.h"
#include "options.h"
#include "pathcheck.h"
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
		"       sluice --check-plugin FILE.so   check a plugin as the loader does, list\n"
		"                                       every problem (for plugin authors)\n"
		"       sluice --describe-all [--format=text|man|markdown]\n"
		"                                       describe every plugin found\n"
		"       sluice stats [-c FILE | --socket PATH] [--json] [--watch]\n"
		"                                       a running daemon's counters\n"
		"       sluice reload|reopen [-c FILE | --socket PATH]\n"
		"                                       reload its configuration, reopen its files\n"
		"       sluice tail [-c FILE | --socket PATH] [INSTANCE] [--where EXPR]\n"
		"                   [--json | --text] [-n COUNT]  its records as they pass\n"
		"       sluice convert ulogd [--check] FILE\n"
		"                                       a ulogd2 ulogd.conf as sluice YAML\n"
		"       sluice convert nft [--group N] [--file RULESET.json|-] [--yaml OUT]\n"
		"                      [--apply | --check]  printk log rules to NFLOG (--help: more)\n"
		"\n"
		"  -c, --config FILE   configuration (default " SLUICE_CONF_DIR "/sluice.yaml)\n"
		"  -t, --check         validate the configuration, print the stacks, exit\n"
		"  -v, --verbose       log debug messages\n"
		"  -V, --version       print the version\n"
		"  -h, --help          this help\n"
		"\n"
		"Plugins are searched in $SLUICE_PLUGIN_PATH (colon-separated), then\n"
		"daemon.plugin_path, then " SLUICE_PLUGIN_DIR ".\n"
		"With -c FILE, --list-plugins and --describe read its daemon.plugin_path\n"
		"(nothing else of it); without -c they read no file.\n"
		"Signals: TERM/INT flush and exit, HUP reloads the configuration and reopens files,\n"
		"USR1 logs counters.\n"
		"stats, reload, reopen and tail talk to daemon.control_socket (or --socket PATH).\n"
		"Exit status: 0 ok, 1 runtime failure (a failed reload, --check-plugin refused),\n"
		"64 usage, 69 no daemon answers or no plugin loadable, 78 configuration error.\n"
		"sluice convert: 0 converted, 1 --check found something not converted (nft: or\n"
		"--apply failed, nothing changed), 2 invalid file, 66 file not readable.\n");
}

static void print_load_error(const char *msg, bool error)
{
	fprintf(stderr, "sluice: %s%s\n", error ? "" : "warning: ", msg);
}

/*
 * --check-plugin FILE.so: everything the loader checks, every problem of
 * the option table on its own line.  0 sound, 1 refused.
 */
static int check_plugin(const char *file)
{
	char path[4096], err[8192];
	const struct loaded_plugin *p;
	struct plugin_loader l;

	/* dlopen() searches the library path for a bare name: make it a file. */
	snprintf(path, sizeof(path), "%s%s", strchr(file, '/') ? "" : "./", file);
	if (plugin_loader_init(&l, NULL, 0))
		return EX_OSERR;
	p = plugin_loader_load_path(&l, path, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "%s\n", err);
		fprintf(stderr, "sluice: %s: the loader refuses this plugin\n", path);
		plugin_loader_free(&l);
		return 1;
	}
	printf("%s: plugin '%s' (%s), needs ABI %u.%u (this sluice has %d.%d): OK\n", path,
	       p->desc->name, plugin_loader_kind_name(p->desc->kind), p->desc->abi_major,
	       p->desc->abi_minor, SL_ABI_MAJOR, SL_ABI_MINOR);
	plugin_loader_free(&l);
	return 0;
}

static int list_plugins(const char *const *dirs, size_t ndirs)
{
	struct plugin_loader l;
	size_t n = 0;

	if (plugin_loader_init(&l, dirs, ndirs))
		return EX_OSERR;
	plugin_loader_load_all(&l, print_load_error);
	/* The loader keeps them newest first; print in the order found. */
	for (int kind = SL_KIND_INPUT; kind <= SL_KIND_OUTPUT; kind++) {
		const struct loaded_plugin *sorted[256];
		size_t k = 0;

		for (const struct loaded_plugin *p = l.loaded; p && k < 256; p = p->next)
			if ((int)p->desc->kind == kind)
				sorted[k++] = p;
		while (k-- > 0) {
			printf("%-10s %-7s %s\n", sorted[k]->desc->name,
			       plugin_loader_kind_name(sorted[k]->desc->kind), sorted[k]->desc->description);
			n++;
		}
	}
	if (!n)
		fprintf(stderr, "sluice: no plugins found\n");
	plugin_loader_free(&l);
	return n ? 0 : EX_UNAVAILABLE;
}

/*
 * --list-plugins, --describe, --describe-all: with -c, the search path includes the
 * file's daemon.plugin_path (only that is read; without -c no file is).
 */
static int plugins_mode(const char *file, bool list, const char *describe,
			enum describe_format fmt)
{
	struct config cfg;
	struct diag diag = {0};
	int status;

	memset(&cfg, 0, sizeof(cfg));
	if (file && config_load_plugin_path(&cfg, file, &diag)) {
		fprintf(stderr, "sluice: %u error%s in %s (read for daemon.plugin_path)\n", diag.errors,
			diag.errors == 1 ? "" : "s", file);
		config_free(&cfg);
		return EX_CONFIG;
	}
	if (list)
		status = list_plugins(cfg.plugin_path, cfg.nplugin_path);
	else if (describe)
		status = describe_plugin(describe, cfg.plugin_path, cfg.nplugin_path);
	else
		status = describe_all(fmt, cfg.plugin_path, cfg.nplugin_path);
	config_free(&cfg);
	return status;
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
		{"describe-all", no_argument, NULL, 'A'},
		{"format", required_argument, NULL, 'F'},
		{"check-plugin", required_argument, NULL, 'P'},
		{NULL, 0, NULL, 0},
	};
	const char *file = SLUICE_CONF_DIR "/sluice.yaml", *describe = NULL, *plugin = NULL;
	bool check = false, verbose = false, list = false, file_given = false;
	bool all = false, fmt_given = false;
	enum describe_format fmt = DESCRIBE_TEXT;
	struct config cfg;
	struct diag diag = {0};
	struct drop_target drop;
	struct graph g;
	int c, status;

	if (argc > 1 && ctl_client_is_command(argv[1]))
		return ctl_client_main(argc - 1, argv + 1, file);
	if (argc > 1 && convert_is_command(argv[1]))
		return convert_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "c:tvVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': file = optarg; file_given = true; break;
		case 't': check = true; break;
		case 'v': verbose = true; break;
		case 'V': printf("sluice %s (plugin ABI %d.%d)\n", SLUICE_VERSION, SL_ABI_MAJOR,
				 SL_ABI_MINOR);
			return 0;
		case 'h': usage(stdout); return 0;
		case 'L': list = true; break;
		case 'D': describe = optarg; break;
		case 'A': all = true; break;
		case 'P': plugin = optarg; break;
		case 'F':
			fmt_given = true;
			if (describe_parse_format(optarg, &fmt) == 0)
				break;
			fprintf(stderr, "sluice: --format: expected text, man or markdown, got '%s'\n",
				optarg);
			return EX_USAGE;
		default: usage(stderr); return EX_USAGE;
		}
	}
	if (fmt_given && !all) {
		fprintf(stderr, "sluice: --format is for --describe-all\n");
		return EX_USAGE;
	}
	if (optind < argc) {
		fprintf(stderr, "sluice: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EX_USAGE;
	}
	if (plugin)
		return check_plugin(plugin);
	if (list || describe || all)
		return plugins_mode(file_given ? file : NULL, list, describe, fmt);
	/* Shape errors do not stop the check: the graph reports its own too. */
	if (config_load(&cfg, file, &diag) && !cfg.root) {
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
	/* What the daemon will open as its user, checked as that user. */
	if (check && pathcheck_config(&g, file, cfg.user ? &drop : NULL, &diag)) {
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
