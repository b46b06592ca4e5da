// SPDX-License-Identifier: GPL-2.0-or-later
/* Nested spelling of options sharing a prefix (see opt_groups.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opt_groups.h"
#include "core_keys.h"
#include "options.h"

#define GROUP_NAME_MAX 64

static const struct sl_option *find_option(const struct sl_plugin *d, const char *name)
{
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

static bool in_group(const char *option, const char *group, size_t glen)
{
	return strncmp(option, group, glen) == 0 && option[glen] == '_' && option[glen + 1];
}

bool opt_groups_is(const struct sl_plugin *d, const char *key)
{
	size_t len = strlen(key);

	if (strcmp(key, "plugin") == 0 || core_keys_is_core(key) || find_option(d, key) ||
	    strchr(key, '_'))
		return false;
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (in_group(o->name, key, len))
			return true;
	return false;
}

/* "ca_file, cert_file, ..." : the members of a group, for messages. */
static void member_list(const struct sl_plugin *d, const char *group, char *buf, size_t len,
			const char **names, size_t max)
{
	size_t glen = strlen(group), used = 0, n = 0;

	buf[0] = 0;
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		if (!in_group(o->name, group, glen))
			continue;
		if (n + 1 < max)
			names[n++] = o->name + glen + 1;
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 o->name + glen + 1);
	}
	names[n] = NULL;
}

/* A member S of group K that is not an option K_S. */
static void unknown_member(struct diag *diag, const struct sl_plugin *d, const char *group,
			   const struct ynode *key)
{
	const char *names[128];
	char list[1024];
	const char *near;

	member_list(d, group, list, sizeof(list), names, 128);
	near = options_suggest(key->scalar, names);
	if (near)
		diag_error(diag, &key->mark,
			   "unknown option '%s' in group '%s' of plugin '%s'; did you mean '%s'?",
			   key->scalar, group, d->name, near);
	else
		diag_error(diag, &key->mark,
			   "unknown option '%s' in group '%s' of plugin '%s' (it takes: %s)",
			   key->scalar, group, d->name, list);
}

void opt_groups_not_map(struct diag *diag, const struct sl_plugin *d, const struct ynode *k,
		       const struct ynode *v)
{
	const char *names[128];
	char list[1024];

	member_list(d, k->scalar, list, sizeof(list), names, 128);
	diag_error(diag, &v->mark,
		   "option group '%s' of plugin '%s': expected a mapping of its options (%s), not %s",
		   k->scalar, d->name, list, yaml_tree_is_null(v) ? "nothing" : yaml_tree_kind_name(v->kind));
}

/* Entries the group expands to, or -1 after an error.  The group is a mapping. */
static int check_group(const struct sl_plugin *d, const struct ynode *opts, const struct ynode *k,
		       const struct ynode *v, struct diag *diag)
{
	char flat[GROUP_NAME_MAX * 2 + 2];
	unsigned before = diag->errors;

	for (size_t j = 0; j < v->n; j += 2) {
		const struct ynode *sk = v->items[j];
		const struct ynode *dup;

		snprintf(flat, sizeof(flat), "%s_%s", k->scalar, sk->scalar);
		if (strlen(sk->scalar) >= GROUP_NAME_MAX || !find_option(d, flat)) {
			unknown_member(diag, d, k->scalar, sk);
			continue;
		}
		dup = yaml_tree_map_key(opts, flat);
		if (dup)
			diag_error(diag, &sk->mark,
				   "option '%s' is written twice: as '%s' at line %u and here in "
				   "group '%s'",
				   flat, flat, dup->mark.line, k->scalar);
	}
	return diag->errors == before ? (int)(v->n / 2) : -1;
}

/* Group members become scalar key nodes with flat names, kept after the items. */
struct flat_map {
	struct ynode map;
	size_t nkeys;
	struct ynode keys[];
};

static const struct ynode *build_flat(const struct ynode *opts, size_t entries, size_t nkeys,
				      const struct sl_plugin *d)
{
	struct flat_map *fm = calloc(1, sizeof(*fm) + nkeys * sizeof(struct ynode));
	size_t at = 0, key = 0;

	if (!fm || !(fm->map.items = calloc(2 * entries, sizeof(struct ynode *)))) {
		free(fm);
		return NULL;
	}
	fm->map.kind = YN_MAP;
	fm->map.mark = opts->mark;
	for (size_t i = 0; i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i], *v = opts->items[i + 1];

		if (!(v->kind == YN_MAP && opt_groups_is(d, k->scalar))) {
			fm->map.items[at++] = (struct ynode *)k;
			fm->map.items[at++] = (struct ynode *)v;
			continue;
		}
		for (size_t j = 0; j < v->n; j += 2) {
			struct ynode *nk = &fm->keys[key++];
			size_t len = strlen(k->scalar) + strlen(v->items[j]->scalar) + 2;

			*nk = *v->items[j];
			nk->scalar = malloc(len);
			fm->nkeys = key;
			if (!nk->scalar) {
				opt_groups_free(&fm->map, NULL);
				return NULL;
			}
			snprintf(nk->scalar, len, "%s_%s", k->scalar, v->items[j]->scalar);
			fm->map.items[at++] = nk;
			fm->map.items[at++] = v->items[j + 1];
		}
	}
	fm->map.n = at;
	return &fm->map;
}

const struct ynode *opt_groups_flatten(const struct sl_plugin *d, const struct ynode *opts,
				       struct diag *diag)
{
	size_t entries = 0, nkeys = 0, groups = 0;
	const struct ynode *flat;
	bool bad = false;

	for (size_t i = 0; opts && i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i], *v = opts->items[i + 1];
		int n;

		entries++;
		/* Not a mapping: not written as a group (options_fill names the unknown key). */
		if (v->kind != YN_MAP || !opt_groups_is(d, k->scalar))
			continue;
		n = check_group(d, opts, k, v, diag);
		if (n < 0) {
			bad = true;
			continue;
		}
		groups++;
		entries += (size_t)n - 1;
		nkeys += (size_t)n;
	}
	if (bad)
		return NULL;
	if (!groups)
		return opts;
	flat = build_flat(opts, entries, nkeys, d);
	if (!flat)
		diag_error(diag, &opts->mark, "out of memory");
	return flat;
}

void opt_groups_free(const struct ynode *flat, const struct ynode *opts)
{
	struct flat_map *fm;

	if (!flat || flat == opts)
		return;
	fm = (struct flat_map *)((char *)flat - offsetof(struct flat_map, map));
	for (size_t i = 0; i < fm->nkeys; i++)
		free(fm->keys[i].scalar);
	free(fm->map.items);
	free(fm);
}
