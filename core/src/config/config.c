/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ident.h"
#include "log.h"
#include "options.h"

static bool expect_kind(struct diag *d, const struct ynode *n, enum ynode_kind kind,
			const char *what)
{
	if (n->kind == kind)
		return true;
	diag_error(d, &n->mark, "%s must be %s, not %s", what, yaml_tree_kind_name(kind),
		   yaml_tree_kind_name(n->kind));
	return false;
}

/* An optional top-level section: absent or null is fine, else a mapping. */
static bool optional_map(struct diag *d, const struct ynode *map, const char *what)
{
	return !yaml_tree_is_null(map) && expect_kind(d, map, YN_MAP, what);
}

/* daemon.plugin_path: a list of directories, or one. */
static void parse_plugin_path(struct config *c, const struct ynode *v, struct diag *d)
{
	free(c->plugin_path);
	c->plugin_path = NULL;
	c->nplugin_path = 0;
	if (v->kind == YN_SCALAR) {
		c->plugin_path = calloc(1, sizeof(char *));
		if (!c->plugin_path) {
			diag_error(d, &v->mark, "out of memory");
			return;
		}
		c->plugin_path[0] = v->scalar;
		c->nplugin_path = 1;
	} else if (expect_kind(d, v, YN_SEQ, "'plugin_path'")) {
		c->plugin_path = calloc(v->n ? v->n : 1, sizeof(char *));
		if (!c->plugin_path) {
			diag_error(d, &v->mark, "out of memory");
			return;
		}
		for (size_t j = 0; j < v->n; j++) {
			if (expect_kind(d, v->items[j], YN_SCALAR, "a plugin_path entry"))
				c->plugin_path[c->nplugin_path++] = v->items[j]->scalar;
		}
	}
}

/* An absolute path that fits sockaddr_un's sun_path with its NUL. */
static void parse_control_socket(struct config *c, const struct ynode *v, struct diag *d)
{
	size_t len = strlen(v->scalar);

	if (v->scalar[0] != '/' || len >= CONFIG_MAX_SOCKET_PATH || v->scalar[len - 1] == '/')
		diag_error(d, &v->mark,
			   "control_socket: expected an absolute path of a socket file, at most "
			   "%d bytes, got '%s'",
			   CONFIG_MAX_SOCKET_PATH - 1, v->scalar);
	else
		c->control_socket = v->scalar;
}

/* daemon.batch_size, daemon.threads: an integer in [min, max] into *out. */
static void parse_daemon_uint(struct diag *d, const struct ynode *v, const char *key, int64_t min,
			      int64_t max, unsigned *out)
{
	char what[64];
	int64_t n;

	snprintf(what, sizeof(what), "'%s'", key);
	if (!expect_kind(d, v, YN_SCALAR, what))
		return;
	options_check_octal(d, &v->mark, key, v->scalar);
	if (options_parse_int(v->scalar, &n) || n < min || n > max)
		diag_error(d, &v->mark, "%s: expected an integer from %lld to %lld, got '%s'", key,
			   (long long)min, (long long)max, v->scalar);
	else
		*out = (unsigned)n;
}

/* daemon.stop_timeout: a duration from 1 s to 1 h. */
static void parse_stop_timeout(struct config *c, const struct ynode *v, struct diag *d)
{
	uint64_t ms;

	if (!expect_kind(d, v, YN_SCALAR, "'stop_timeout'"))
		return;
	if (options_parse_duration(v->scalar, &ms) || ms < CONFIG_MIN_STOP_TIMEOUT_MS ||
	    ms > CONFIG_MAX_STOP_TIMEOUT_MS)
		diag_error(d, &v->mark, "stop_timeout: expected a duration from 1s to 1h, got '%s'",
			   v->scalar);
	else
		c->stop_timeout_ms = ms;
}

static void parse_daemon(struct config *c, const struct ynode *map, struct diag *d)
{
	if (!optional_map(d, map, "'daemon'"))
		return;
	for (size_t i = 0; i < map->n; i += 2) {
		const struct ynode *k = map->items[i], *v = map->items[i + 1];

		if (strcmp(k->scalar, "plugin_path") == 0) {
			parse_plugin_path(c, v, d);
		} else if (strcmp(k->scalar, "log_level") == 0) {
			if (expect_kind(d, v, YN_SCALAR, "'log_level'")) {
				c->log_level = log_level_from_name(v->scalar);
				if (c->log_level < 0)
					diag_error(d, &v->mark,
						   "log_level: expected one of: err, warning, notice, "
						   "info, debug, got '%s'",
						   v->scalar);
			}
		} else if (strcmp(k->scalar, "batch_size") == 0) {
			parse_daemon_uint(d, v, "batch_size", 1, 65536, &c->batch_size);
		} else if (strcmp(k->scalar, "threads") == 0) {
			parse_daemon_uint(d, v, "threads", 0, 256, &c->threads);
		} else if (strcmp(k->scalar, "strict_plugins") == 0) {
			if (expect_kind(d, v, YN_SCALAR, "'strict_plugins'") &&
			    options_parse_bool(v->scalar, &c->strict_plugins))
				diag_error(d, &v->mark, "strict_plugins: expected true or false, got '%s'",
					   v->scalar);
		} else if (strcmp(k->scalar, "user") == 0) {
			if (expect_kind(d, v, YN_SCALAR, "'user'")) {
				c->user = v->scalar;
				c->user_mark = v->mark;
			}
		} else if (strcmp(k->scalar, "metrics") == 0) {
			metrics_config_parse(&c->metrics, v, d);
		} else if (strcmp(k->scalar, "control_socket") == 0) {
			if (expect_kind(d, v, YN_SCALAR, "'control_socket'"))
				parse_control_socket(c, v, d);
		} else if (strcmp(k->scalar, "stop_timeout") == 0) {
			parse_stop_timeout(c, v, d);
		} else {
			diag_error(d, &k->mark,
				   "unknown key 'daemon.%s' (expected plugin_path, log_level, "
				   "batch_size, threads, user, metrics, control_socket, stop_timeout or "
				   "strict_plugins)",
				   k->scalar);
		}
	}
}

/* A key naming an instance or a stack; reported when it is not a valid name. */
static bool name_ok(struct diag *d, const struct ynode *k, const char *what)
{
	if (ident_valid(k->scalar))
		return true;
	diag_error(d, &k->mark, "%s name '%s' may only hold letters, digits, '_', '-' and '.'", what,
		   k->scalar);
	return false;
}

/*
 * An inline element or named instance: a mapping with a 'plugin' key.
 * Its value, or NULL after an error.  Kept, so that an instance used in
 * many stacks is not searched for its key each time.
 */
static const struct ynode *check_plugin_map(const struct ynode *map, struct diag *d,
					    const char *what)
{
	const struct ynode *p = yaml_tree_map_get(map, "plugin");

	if (!p) {
		diag_error(d, &map->mark, "%s needs a 'plugin:' key naming its plugin", what);
		return NULL;
	}
	if (p->kind != YN_SCALAR || !ident_valid(p->scalar)) {
		diag_error(d, &p->mark, "'plugin' must be a plugin name");
		return NULL;
	}
	return p;
}

static void bad_name(struct config *c, const struct ynode *k, struct diag *d)
{
	if (k->kind == YN_SCALAR && strset_add(&c->bad_names, k->scalar, NULL, NULL) < 0)
		diag_error(d, &k->mark, "out of memory");
}

static void parse_instances(struct config *c, const struct ynode *map, struct diag *d)
{
	if (!optional_map(d, map, "'instances'"))
		return;
	c->instances = calloc(map->n / 2 + 1, sizeof(*c->instances));
	if (!c->instances) {
		diag_error(d, &map->mark, "out of memory");
		return;
	}
	for (size_t i = 0; i < map->n; i += 2) {
		const struct ynode *k = map->items[i], *v = map->items[i + 1], *p;
		struct instance_spec *s;

		if (!name_ok(d, k, "instance") || !expect_kind(d, v, YN_MAP, "an instance") ||
		    !(p = check_plugin_map(v, d, "an instance"))) {
			/* Its uses are not errors again: they end their stacks quietly. */
			bad_name(c, k, d);
			continue;
		}
		s = &c->instances[c->ninstances++];
		s->name = k->scalar;
		s->mark = k->mark;
		s->map = v;
		s->plugin = p;
		/* Names are unique (duplicate keys are refused), so this only adds. */
		if (strset_add(&c->instance_index, s->name, s, NULL) < 0)
			diag_error(d, &k->mark, "out of memory");
	}
}

static void parse_stacks(struct config *c, const struct ynode *map, struct diag *d)
{
	if (!expect_kind(d, map, YN_MAP, "'stacks'"))
		return;
	if (map->n == 0) {
		diag_error(d, &map->mark, "'stacks' is empty: declare at least one stack");
		return;
	}
	c->stacks = calloc(map->n / 2, sizeof(*c->stacks));
	if (!c->stacks) {
		diag_error(d, &map->mark, "out of memory");
		return;
	}
	for (size_t i = 0; i < map->n; i += 2) {
		const struct ynode *k = map->items[i], *v = map->items[i + 1];
		struct stack_spec *s;

		if (!name_ok(d, k, "stack"))
			continue;
		if (!expect_kind(d, v, YN_SEQ, "a stack"))
			continue;
		if (v->n < 2) {
			diag_error(d, &v->mark,
				   "stack '%s' needs at least an input and an output, has %zu element%s",
				   k->scalar, v->n, v->n == 1 ? "" : "s");
			continue;
		}
		s = &c->stacks[c->nstacks++];
		s->name = k->scalar;
		s->mark = k->mark;
		s->elems = calloc(v->n, sizeof(*s->elems));
		if (!s->elems) {
			c->nstacks--;
			diag_error(d, &v->mark, "out of memory");
			continue;
		}
		for (size_t j = 0; j < v->n; j++) {
			const struct ynode *e = v->items[j];
			struct elem_spec *es = &s->elems[s->n++];

			/* A bad element stays, marked: the rest keep their positions. */
			es->mark = e->mark;
			es->bad = true;
			if (e->kind == YN_SCALAR) {
				if (!ident_valid(e->scalar)) {
					diag_error(d, &e->mark,
						   "expected an instance name, a plugin name or "
						   "{plugin: ...}, got '%s'",
						   e->scalar);
					continue;
				}
				es->name = e->scalar;
			} else if (e->kind == YN_MAP) {
				es->plugin = check_plugin_map(e, d, "an inline element");
				if (!es->plugin)
					continue;
				es->map = e;
			} else {
				diag_error(d, &e->mark,
					   "expected an instance name, a plugin name or {plugin: ...}, "
					   "not a list");
				continue;
			}
			es->bad = false;
		}
	}
}

static int parse_root(struct config *c, struct diag *d)
{
	const struct ynode *root = c->root;
	bool have_stacks = false;

	c->log_level = -1;
	c->batch_size = CONFIG_DEFAULT_BATCH_SIZE;
	c->stop_timeout_ms = CONFIG_DEFAULT_STOP_TIMEOUT_MS;
	if (!expect_kind(d, root, YN_MAP, "the configuration"))
		return -1;
	for (size_t i = 0; i < root->n; i += 2) {
		const struct ynode *k = root->items[i], *v = root->items[i + 1];

		if (strcmp(k->scalar, "daemon") == 0) {
			parse_daemon(c, v, d);
		} else if (strcmp(k->scalar, "instances") == 0) {
			parse_instances(c, v, d);
		} else if (strcmp(k->scalar, "stacks") == 0) {
			have_stacks = true;
			parse_stacks(c, v, d);
		} else {
			diag_error(d, &k->mark,
				   "unknown top-level key '%s' (expected daemon, instances or stacks)",
				   k->scalar);
			/* A misspelt `instances:`: its names are not errors again in stacks. */
			for (size_t j = 0; v->kind == YN_MAP && j < v->n; j += 2)
				bad_name(c, v->items[j], d);
		}
	}
	if (!have_stacks)
		diag_error(d, &root->mark, "no 'stacks:' section: nothing to run");
	return d->errors ? -1 : 0;
}

/*
 * Read the YAML tree of FILE (text: of the string named FILE).  A YAML
 * error already names file:line:column; it goes where the diag's go.
 */
static int load_tree(struct config *c, const char *file, const char *text, struct diag *d)
{
	char err[1024];

	memset(c, 0, sizeof(*c));
	c->file = file;
	d->file = file;
	c->root = text ? yaml_tree_load_string(file, text, err, sizeof(err))
		       : yaml_tree_load_file(file, err, sizeof(err));
	if (c->root)
		return 0;
	if (d->sink)
		d->sink(d->sink_ctx, err);
	else
		fprintf(stderr, "%s\n", err);
	d->errors++;
	return -1;
}

int config_load(struct config *c, const char *file, struct diag *d)
{
	if (load_tree(c, file, NULL, d))
		return -1;
	return parse_root(c, d);
}

int config_load_plugin_path(struct config *c, const char *file, struct diag *d)
{
	const struct ynode *daemon, *v;

	if (load_tree(c, file, NULL, d))
		return -1;
	daemon = c->root->kind == YN_MAP ? yaml_tree_map_get(c->root, "daemon") : NULL;
	v = daemon && daemon->kind == YN_MAP ? yaml_tree_map_get(daemon, "plugin_path") : NULL;
	if (v)
		parse_plugin_path(c, v, d);
	return d->errors ? -1 : 0;
}

bool config_is_bad_name(const struct config *c, const char *name)
{
	return strset_find(&c->bad_names, name) != NULL;
}

int config_load_string(struct config *c, const char *name, const char *text, struct diag *d)
{
	if (load_tree(c, name, text, d))
		return -1;
	return parse_root(c, d);
}

void config_free(struct config *c)
{
	strset_free(&c->instance_index);
	strset_free(&c->bad_names);
	for (size_t i = 0; i < c->nstacks; i++)
		free(c->stacks[i].elems);
	free(c->stacks);
	free(c->instances);
	free(c->plugin_path);
	yaml_tree_free(c->root);
	memset(c, 0, sizeof(*c));
}

const struct instance_spec *config_find_instance(const struct config *c, const char *name)
{
	return strset_get(&c->instance_index, name);
}
