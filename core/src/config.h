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

#include "strset.h"
#include "yaml_tree.h"

/* Error reporting with positions: "FILE:LINE:COL: error: ...". */
struct diag {
	const char *file;
	unsigned errors;
	/* NULL: stderr.  Otherwise each whole message, without the newline. */
	void (*sink)(void *ctx, const char *line);
	void *sink_ctx;
};
void diag_error(struct diag *d, const struct ymark *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One element of a stack as written. */
struct elem_spec {
	struct ymark mark;
	const char *name;		/* instance name or bare plugin name; NULL if inline */
	const struct ynode *map;	/* inline {plugin: ..., options...}; NULL otherwise */
	const struct ynode *plugin;	/* inline: the value of its 'plugin' key */
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
	const char *user;		/* drop root privileges to this user after start */
	struct ymark user_mark;
	struct instance_spec *instances;
	size_t ninstances;
	struct strset instance_index;	/* name -> struct instance_spec * */
	struct stack_spec *stacks;
	size_t nstacks;
};

#define CONFIG_DEFAULT_BATCH_SIZE 256

/* Load and check the file's shape.  0, or -1 with errors reported to d. */
int config_load(struct config *c, const char *file, struct diag *d);
/* The same from a string (tests). */
int config_load_string(struct config *c, const char *name, const char *text, struct diag *d);
void config_free(struct config *c);

const struct instance_spec *config_find_instance(const struct config *c, const char *name);

#endif
