/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Finding and loading plugin shared objects: the search path
 * ($SLUICE_PLUGIN_PATH, then daemon.plugin_path, then the built-in
 * directory), dlopen, the ABI check, and registration of the fields a
 * plugin declares.
 */
#ifndef SLUICE_PLUGIN_LOADER_H
#define SLUICE_PLUGIN_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <sluice/plugin.h>

#include "fields.h"
#include "strset.h"

struct loaded_plugin {
	char *path;
	void *handle;
	const struct sl_plugin *desc;
	struct loaded_plugin *next;
};

struct plugin_loader {
	char **dirs;
	size_t ndirs;
	struct loaded_plugin *loaded;
	/*
	 * Names that failed -> their error (both owned): every element naming
	 * an unknown plugin would otherwise search every directory again.
	 */
	struct strset failed;
	/* The fields of the plugins loaded through this loader, and the core's. */
	struct field_registry fields;
};

/* Search path: env first, then the given dirs, then the built-in one. */
int plugin_loader_init(struct plugin_loader *l, const char *const *config_dirs, size_t n);
void plugin_loader_free(struct plugin_loader *l);

/* Find NAME.so on the search path and load it (once). NULL + err on failure. */
const struct loaded_plugin *plugin_loader_find(struct plugin_loader *l, const char *name, char *err,
					size_t errlen);
/* Load one file by path (for tests and --describe PATH). */
const struct loaded_plugin *plugin_loader_load_path(struct plugin_loader *l, const char *path,
					     char *err, size_t errlen);
/*
 * Load every *.so on the search path (first one of a name wins).  Files
 * that fail to load are reported through the callback (may be NULL), each
 * message naming the file and why (error true); a file a same-named one
 * earlier on the path shadows is reported with error false.
 */
void plugin_loader_load_all(struct plugin_loader *l, void (*on_error)(const char *msg, bool error));

const char *plugin_loader_kind_name(enum sl_kind kind);

/* Members added after ABI 1.0: read only when the descriptor has them. */
const struct sl_field_decl *const *plugin_loader_needs_one_of(const struct sl_plugin *d);

#endif
