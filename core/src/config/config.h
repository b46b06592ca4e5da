/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The configuration file: its YAML shape (daemon:, instances:, stacks:)
 * checked and turned into specs.  Plugin options are checked later, by
 * the graph, against each plugin's own option table.
 */
#ifndef SLUICE_CONFIG_H
#define SLUICE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "metrics_config.h"
#include "strset.h"
#include "yaml_tree.h"

/* One element of a stack as written. */
struct elem_spec {
	struct ymark mark;
	const char *name;		/* instance name or bare plugin name; NULL if inline */
	const struct ynode *map;	/* inline {plugin: ..., options...}; NULL otherwise */
	const struct ynode *plugin;	/* inline: the value of its 'plugin' key */
	bool bad;			/* an error was reported at it */
};

struct stack_spec {
	const char *name;
	struct ymark mark;
	struct elem_spec *elems;
	size_t n;
};

/* A named instance from instances: */
struct instance_spec {
	const char *name;
	struct ymark mark;
	const struct ynode *map;	/* {plugin: ..., options...} */
	const struct ynode *plugin;	/* the value of its 'plugin' key */
};

struct config {
	const char *file;
	struct ynode *root;
	const char **plugin_path;
	size_t nplugin_path;
	int log_level;			/* -1: not set */
	unsigned batch_size;
	unsigned threads;		/* daemon.threads: inputs spread over N threads; 0: main */
	bool strict_plugins;		/* daemon.strict_plugins: strict.c's checks (at start) */
	const char *user;		/* drop root privileges to this user after start */
	struct ymark user_mark;
	struct metrics_config metrics;	/* daemon.metrics */
	const char *control_socket;	/* daemon.control_socket; NULL: none */
	uint64_t stop_timeout_ms;	/* daemon.stop_timeout: from SIGTERM to the exit, at most */
	struct instance_spec *instances;
	size_t ninstances;
	struct strset instance_index;	/* name -> struct instance_spec * */
	struct strset bad_names;	/* instances reported bad, or under a misspelt key */
	struct stack_spec *stacks;
	size_t nstacks;
};

#define CONFIG_DEFAULT_BATCH_SIZE 256
/* daemon.stop_timeout: default and range, in ms */
#define CONFIG_DEFAULT_STOP_TIMEOUT_MS 10000
#define CONFIG_MIN_STOP_TIMEOUT_MS 1000
#define CONFIG_MAX_STOP_TIMEOUT_MS 3600000
/* sizeof(sockaddr_un.sun_path) on Linux */
#define CONFIG_MAX_SOCKET_PATH 108

/*
 * Load and check the file's shape.  0, or -1 with errors reported to d.
 * After -1, c->root is NULL when the YAML itself could not be read (a
 * syntax error, an alias, a duplicate key, a limit: reading stops there);
 * otherwise the parts without errors are kept, so the graph can still be
 * checked and every error reported in one run.
 */
int config_load(struct config *c, const char *file, struct diag *d);
/* The same from a string (tests). */
int config_load_string(struct config *c, const char *name, const char *text, struct diag *d);
/*
 * Only daemon.plugin_path (for --list-plugins and --describe with -c):
 * the file must be YAML, errors elsewhere in it are not looked for.
 */
int config_load_plugin_path(struct config *c, const char *file, struct diag *d);
void config_free(struct config *c);

/* A name of an instance that was reported bad: uses of it are not errors again. */
bool config_is_bad_name(const struct config *c, const char *name);
const struct instance_spec *config_find_instance(const struct config *c, const char *name);

#endif
