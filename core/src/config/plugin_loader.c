/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fields.h"
#include "metrics_module.h"
#include "tail_module.h"
#include "plugin_check.h"
#include "plugin_loader.h"

#ifndef SLUICE_PLUGIN_DIR
#define SLUICE_PLUGIN_DIR "/usr/local/lib/sluice/plugins"
#endif

/* Descriptor size of ABI 1.0: fields up to destroy. */
#define SL_PLUGIN_MIN_SIZE (offsetof(struct sl_plugin, destroy) + sizeof(void *))

const char *plugin_loader_kind_name(enum sl_kind kind)
{
	static const char *const names[] = {
		[SL_KIND_INPUT] = "input", [SL_KIND_FILTER] = "filter", [SL_KIND_OUTPUT] = "output",
	};

	return (unsigned)kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "?";
}

const struct sl_field_decl *const *plugin_loader_needs_one_of(const struct sl_plugin *d)
{
	if (d->size < offsetof(struct sl_plugin, needs_one_of) + sizeof(d->needs_one_of))
		return NULL;
	return d->needs_one_of;
}

static int add_dir(struct plugin_loader *l, const char *dir, size_t len)
{
	char **dirs;
	char *copy;

	if (!len)
		return 0;
	copy = strndup(dir, len);
	dirs = realloc(l->dirs, (l->ndirs + 1) * sizeof(*dirs));
	if (!copy || !dirs) {
		free(copy);
		return -1;
	}
	dirs[l->ndirs++] = copy;
	l->dirs = dirs;
	return 0;
}

int plugin_loader_init(struct plugin_loader *l, const char *const *config_dirs, size_t n)
{
	const char *env = getenv("SLUICE_PLUGIN_PATH");

	memset(l, 0, sizeof(*l));
	while (env && *env) {
		const char *colon = strchr(env, ':');
		size_t len = colon ? (size_t)(colon - env) : strlen(env);

		if (add_dir(l, env, len))
			return -1;
		env = colon ? colon + 1 : NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (add_dir(l, config_dirs[i], strlen(config_dirs[i])))
			return -1;
	return add_dir(l, SLUICE_PLUGIN_DIR, strlen(SLUICE_PLUGIN_DIR));
}

void plugin_loader_free(struct plugin_loader *l)
{
	struct loaded_plugin *p = l->loaded;

	while (p) {
		struct loaded_plugin *next = p->next;

		/* Plugins stay mapped: their strings may still be referenced. */
		free(p->path);
		free(p);
		p = next;
	}
	for (size_t i = 0; i < l->ndirs; i++)
		free(l->dirs[i]);
	free(l->dirs);
	for (size_t i = 0; i < l->failed.cap; i++) {
		free((char *)l->failed.slot[i].key);
		free(l->failed.slot[i].value);
	}
	strset_free(&l->failed);
	fields_free(&l->fields);
	memset(l, 0, sizeof(*l));
}

/* The problems plugin_check() finds, one a line, in the caller's buffer. */
struct problems {
	char *buf;
	size_t len, used;
};

static void collect_problem(void *ctx, const char *msg)
{
	struct problems *p = ctx;

	if (p->used < p->len)
		p->used += (size_t)snprintf(p->buf + p->used, p->len - p->used, "%s%s",
					    p->used ? "\n" : "", msg);
}

static int check_descriptor(const char *path, const struct sl_plugin *d, char *err, size_t errlen)
{
	if (d->abi_major == 0) {
		snprintf(err, errlen,
			 "%s: plugin descriptor has no ABI version: it must begin with "
			 "SL_PLUGIN_HEADER (from <sluice/plugin.h>), as in "
			 "'static const struct sl_plugin p = { SL_PLUGIN_HEADER, .kind = ... }'",
			 path);
		return -1;
	}
	if (d->abi_major != SL_ABI_MAJOR) {
		snprintf(err, errlen,
			 "%s: plugin built for sluice plugin ABI %u.%u, this daemon has ABI %d.%d; "
			 "rebuild the plugin against this sluice's headers",
			 path, d->abi_major, d->abi_minor, SL_ABI_MAJOR, SL_ABI_MINOR);
		return -1;
	}
	/* abi_minor is the minor the plugin needs (SL_PLUGIN_HEADER_MIN). */
	if (d->abi_minor > SL_ABI_MINOR) {
		snprintf(err, errlen,
			 "%s: plugin needs sluice plugin ABI %u.%u, this daemon has ABI %d.%d; "
			 "upgrade sluice, or build the plugin with SL_PLUGIN_HEADER_MIN(%d) if it "
			 "uses nothing newer",
			 path, d->abi_major, d->abi_minor, SL_ABI_MAJOR, SL_ABI_MINOR, SL_ABI_MINOR);
		return -1;
	}
	if (d->size < SL_PLUGIN_MIN_SIZE) {
		snprintf(err, errlen, "%s: plugin descriptor is %u bytes, ABI %d.%d needs at least %zu",
			 path, d->size, SL_ABI_MAJOR, SL_ABI_MINOR, (size_t)SL_PLUGIN_MIN_SIZE);
		return -1;
	}
	if (!d->name || !d->description ||
	    (d->kind != SL_KIND_INPUT && d->kind != SL_KIND_FILTER && d->kind != SL_KIND_OUTPUT)) {
		snprintf(err, errlen, "%s: plugin descriptor lacks a name, description or valid kind",
			 path);
		return -1;
	}
	if (!d->configure || (d->kind != SL_KIND_INPUT && !d->process)) {
		snprintf(err, errlen, "%s: plugin '%s' lacks its configure%s callback", path, d->name,
			 d->kind != SL_KIND_INPUT ? "/process" : "");
		return -1;
	}
	return plugin_check(path, d, collect_problem, &(struct problems){err, errlen, 0}) ? -1 : 0;
}

/*
 * A name that is new but one or two edits from a known field is likely a
 * typo that would silently become a field nothing sets: say so.
 */
static void warn_if_typo(struct plugin_loader *l, const char *path, const struct sl_plugin *d,
			 const char *name, const char *list)
{
	const char *near = fields_suggest(&l->fields, name);

	if (near && strlen(name) > 3)
		fprintf(stderr,
			"%s: warning: plugin '%s' declares field '%s' in its %s, a field nothing "
			"else knows, so it is registered as a new field; did you mean '%s'?\n",
			path, d->name, name, list, near);
}

static int declare_list(struct plugin_loader *l, const char *path, const struct sl_plugin *d,
			const struct sl_field_decl *list, const char *what, char *err,
			size_t errlen)
{
	char msg[512];

	for (const struct sl_field_decl *f = list; f && f->name; f++) {
		unsigned before = fields_count(&l->fields);

		if (fields_declare(&l->fields, f->name, f->type, d->name, msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "%s: %s", path, msg);
			return -1;
		}
		if (fields_count(&l->fields) > before)
			warn_if_typo(l, path, d, f->name, what);
	}
	return 0;
}

static int declare_fields(struct plugin_loader *l, const char *path, const struct sl_plugin *d,
			  char *err, size_t errlen)
{
	const struct sl_field_decl *const *alt = plugin_loader_needs_one_of(d);

	if (declare_list(l, path, d, d->provides, "provides", err, errlen) ||
	    declare_list(l, path, d, d->needs, "needs", err, errlen))
		return -1;
	for (; alt && *alt; alt++)
		if (declare_list(l, path, d, *alt, "needs_one_of", err, errlen))
			return -1;
	return 0;
}

/*
 * Load PATH; with `expect`, the plugin must call itself that (the file
 * NAME.so found for NAME).  Nothing is registered unless every check
 * passed, so a misnamed file cannot take another plugin's name.
 */
static const struct loaded_plugin *load_path(struct plugin_loader *l, const char *path,
					     const char *expect, char *err, size_t errlen)
{
	const struct sl_plugin *(*entry)(void);
	const struct sl_plugin *desc;
	struct loaded_plugin *p;
	void *h;

	for (p = l->loaded; p; p = p->next)
		if (strcmp(p->path, path) == 0)
			return p;
	/* RTLD_LOCAL: two plugins may use the same static helper names. */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "%s: cannot load plugin: %s", path, dlerror());
		return NULL;
	}
	*(void **)&entry = dlsym(h, SL_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		snprintf(err, errlen, "%s: not a sluice plugin: no '%s' symbol", path,
			 SL_PLUGIN_ENTRY_SYMBOL);
		dlclose(h);
		return NULL;
	}
	desc = entry();
	if (!desc) {
		snprintf(err, errlen, "%s: %s() returned no descriptor", path, SL_PLUGIN_ENTRY_SYMBOL);
		dlclose(h);
		return NULL;
	}
	if (check_descriptor(path, desc, err, errlen)) {
		dlclose(h);
		return NULL;
	}
	if (expect && strcmp(desc->name, expect) != 0) {
		snprintf(err, errlen, "%s: file is named '%s' but the plugin calls itself '%s'",
			 path, expect, desc->name);
		dlclose(h);
		return NULL;
	}
	for (p = l->loaded; p; p = p->next)
		if (strcmp(p->desc->name, desc->name) == 0) {
			snprintf(err, errlen, "%s: plugin name '%s' clashes with %s, loaded first "
				 "under that name", path, desc->name, p->path);
			dlclose(h);
			return NULL;
		}
	if (declare_fields(l, path, desc, err, errlen)) {
		dlclose(h);
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p || !(p->path = strdup(path))) {
		free(p);
		dlclose(h);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->handle = h;
	p->desc = desc;
	p->next = l->loaded;
	l->loaded = p;
	return p;
}

const struct loaded_plugin *plugin_loader_load_path(struct plugin_loader *l, const char *path,
					     char *err, size_t errlen)
{
	return load_path(l, path, NULL, err, errlen);
}

static bool valid_plugin_name(const char *name)
{
	if (!*name)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-' || (*c >= 'A' && *c <= 'Z')))
			return false;
	return true;
}

/*
 * The package that holds plugin NAME, from the build's
 * SLUICE_PLUGIN_PACKAGES ("name=package,...", set by distribution
 * packaging that splits the plugins); false when the build names none.
 */
static bool plugin_package(const char *name, char *pkg, size_t len)
{
#ifdef SLUICE_PLUGIN_PACKAGES
	size_t n = strlen(name);

	for (const char *p = SLUICE_PLUGIN_PACKAGES; *p;) {
		const char *end = strchr(p, ',');

		if (!end)
			end = p + strlen(p);
		if ((size_t)(end - p) > n + 1 && strncmp(p, name, n) == 0 && p[n] == '=') {
			snprintf(pkg, len, "%.*s", (int)(end - p - n - 1), p + n + 1);
			return true;
		}
		p = *end ? end + 1 : end;
	}
#else
	(void)name, (void)pkg, (void)len;
#endif
	return false;
}

/* The search itself: loaded already, or the first NAME.so on the path. */
static const struct loaded_plugin *search(struct plugin_loader *l, const char *name, char *err,
					  size_t errlen)
{
	char path[4096];

	if (!valid_plugin_name(name)) {
		snprintf(err, errlen, "'%s' is not a valid plugin name", name);
		return NULL;
	}
	for (size_t i = 0; i < l->ndirs; i++) {
		snprintf(path, sizeof(path), "%s/%s.so", l->dirs[i], name);
		if (access(path, F_OK) != 0)
			continue;
		return load_path(l, path, name, err, errlen);
	}
	{
		size_t used = (size_t)snprintf(err, errlen, "unknown plugin '%s' (searched:", name);
		for (size_t i = 0; i < l->ndirs && used < errlen; i++)
			used += (size_t)snprintf(err + used, errlen - used, " %s", l->dirs[i]);
		if (used < errlen)
			used += (size_t)snprintf(err + used, errlen - used, ")");
		char pkg[64];
		if (used < errlen && plugin_package(name, pkg, sizeof(pkg)))
			snprintf(err + used, errlen - used, ": it comes in the package %s", pkg);
	}
	return NULL;
}

/* Remember a failure (best effort: without memory, the next call searches again). */
static void remember_failure(struct plugin_loader *l, const char *name, const char *err)
{
	char *key = strdup(name), *msg = strdup(err);

	if (!key || !msg || strset_add(&l->failed, key, msg, NULL) != 1) {
		free(key);
		free(msg);
	}
}

/* Copy a message, cut to fit (snprintf "%s" would make gcc warn about the cut). */
static void copy_msg(char *err, size_t errlen, const char *msg)
{
	size_t n = strlen(msg);

	if (!errlen)
		return;
	if (n >= errlen)
		n = errlen - 1;
	memcpy(err, msg, n);
	err[n] = 0;
}

const struct loaded_plugin *plugin_loader_find(struct plugin_loader *l, const char *name, char *err,
					size_t errlen)
{
	const struct loaded_plugin *p;
	const char *known;
	char msg[8192];

	for (p = l->loaded; p; p = p->next)
		if (strcmp(p->desc->name, name) == 0)
			return p;
	known = strset_get(&l->failed, name);
	if (known) {
		copy_msg(err, errlen, known);
		return NULL;
	}
	/* Whole in msg, so a later caller with a longer err gets all of it too. */
	p = search(l, name, msg, sizeof(msg));
	if (!p) {
		remember_failure(l, name, msg);
		copy_msg(err, errlen, msg);
	}
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void plugin_loader_load_all(struct plugin_loader *l, void (*on_error)(const char *msg, bool error))
{
	char err[8192];

	for (size_t i = 0; i < l->ndirs; i++) {
		DIR *d = opendir(l->dirs[i]);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0;

		if (!d)
			continue;
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			char **grown;

			if (len < 4 || strcmp(de->d_name + len - 3, ".so") != 0)
				continue;
			/* The core's own HTTP module lives there too; it is no plugin. */
			if ((len - 3 == strlen(SL_METRICS_MODULE_NAME) &&
			     strncmp(de->d_name, SL_METRICS_MODULE_NAME, len - 3) == 0) ||
			    (len - 3 == strlen(SL_TAIL_MODULE_NAME) &&
			     strncmp(de->d_name, SL_TAIL_MODULE_NAME, len - 3) == 0))
				continue;
			grown = realloc(names, (n + 1) * sizeof(*names));
			if (!grown)
				break;
			names = grown;
			names[n] = strndup(de->d_name, len - 3);
			if (names[n])
				n++;
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp_str);
		for (size_t k = 0; k < n; k++) {
			const struct loaded_plugin *have = NULL;

			for (struct loaded_plugin *p = l->loaded; p; p = p->next)
				if (strcmp(p->desc->name, names[k]) == 0)
					have = p;
			if (have) {
				/* The first NAME.so on the path wins: say which this one lost to. */
				snprintf(err, sizeof(err), "%s/%s.so", l->dirs[i], names[k]);
				if (on_error && strcmp(have->path, err) != 0) {
					char msg[8192 + 128];

					snprintf(msg, sizeof(msg), "%s: not used: plugin name '%s' is "
						 "taken by %s, earlier on the plugin path", err,
						 names[k], have->path);
					on_error(msg, false);
				}
			} else if (!plugin_loader_find(l, names[k], err, sizeof(err)) && on_error) {
				on_error(err, true);
			}
			free(names[k]);
		}
		free(names);
	}
}
