/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "graph.h"
#include "host.h"
#include "options.h"

/* Everything a plugin element resolves to, before it becomes an instance. */
struct resolved {
	const struct loaded_plugin *plugin;
	const struct ynode *opts;	/* mapping with 'plugin' and options, or NULL */
	const struct instance_spec *named;
	struct ymark mark;
};

static int grow(void **arr, size_t n, size_t size)
{
	void *p = realloc(*arr, (n + 1) * size);

	if (!p)
		return -1;
	*arr = p;
	return 0;
}

static const char *kind_article(enum sl_kind k)
{
	return k == SL_KIND_INPUT ? "an input" : k == SL_KIND_FILTER ? "a filter" : "an output";
}

/* Levenshtein distance, for "did you mean" hints on typos. */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned prev = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cur = row[j];
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

static const struct sl_option *find_option(const struct sl_plugin *d, const char *name)
{
	for (const struct sl_option *o = d->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

static void unknown_option(struct diag *diag, const struct ynode *key, const struct sl_plugin *d)
{
	const struct sl_option *best = NULL;
	unsigned best_dist = 3;
	char list[1024] = "";
	size_t used = 0;

	for (const struct sl_option *o = d->options; o && o->name; o++) {
		unsigned dist = edit_distance(key->scalar, o->name);

		if (dist < best_dist) {
			best_dist = dist;
			best = o;
		}
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
						 used ? ", " : "", o->name);
	}
	if (best)
		diag_error(diag, &key->mark, "unknown option '%s' for plugin '%s'; did you mean '%s'?",
			   key->scalar, d->name, best->name);
	else if (used)
		diag_error(diag, &key->mark, "unknown option '%s' for plugin '%s' (options: %s)",
			   key->scalar, d->name, list);
	else
		diag_error(diag, &key->mark, "unknown option '%s': plugin '%s' takes no options",
			   key->scalar, d->name);
}

/* Split a list default "a,b" into a NULL-terminated array kept by the instance. */
static const char **split_list(const char *text, unsigned *n)
{
	size_t count = 1, len = strlen(text);
	char *copy, **items;
	unsigned k = 0;

	for (const char *c = text; *c; c++)
		count += *c == ',';
	items = calloc(count + 1, sizeof(char *));
	copy = malloc(len + 1);
	if (!items || !copy) {
		free(items);
		free(copy);
		return NULL;
	}
	memcpy(copy, text, len + 1);
	for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
		items[k++] = tok;
	if (!k)
		free(copy);
	*n = k;
	return (const char **)items;
}

/* Fill inst->config from its option mapping and the table's defaults. */
static int fill_options(struct sl_instance *inst, struct diag *diag)
{
	const struct sl_plugin *d = inst->desc;
	const struct ynode *opts = inst->opts;
	unsigned before = diag->errors;
	char err[1024], what[512];

	inst->config = calloc(1, d->config_size ? d->config_size : 1);
	if (!inst->config) {
		diag_error(diag, &inst->mark, "out of memory");
		return -1;
	}
	/* Options the user wrote. */
	for (size_t i = 0; opts && i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i], *v = opts->items[i + 1];
		const struct sl_option *o;

		if (strcmp(k->scalar, "plugin") == 0)
			continue;
		o = find_option(d, k->scalar);
		if (!o) {
			unknown_option(diag, k, d);
			continue;
		}
		opt_describe_values(o, what, sizeof(what));
		if (o->type == SL_OPT_LIST) {
			const char **items;

			if (v->kind == YN_MAP) {
				diag_error(diag, &v->mark, "option '%s': expected %s, not a mapping",
					   o->name, what);
				continue;
			}
			if (v->kind == YN_SCALAR) {
				items = calloc(2, sizeof(char *));
				items[0] = v->scalar;
				opt_store_list(o, items, 1, inst->config);
				continue;
			}
			items = calloc(v->n + 1, sizeof(char *));
			for (size_t j = 0; j < v->n; j++) {
				if (v->items[j]->kind != YN_SCALAR)
					diag_error(diag, &v->items[j]->mark,
						   "option '%s': list items must be values", o->name);
				else
					items[j] = v->items[j]->scalar;
			}
			opt_store_list(o, items, (unsigned)v->n, inst->config);
			continue;
		}
		if (v->kind != YN_SCALAR) {
			diag_error(diag, &v->mark, "option '%s': expected %s, not %s", o->name, what,
				   ytree_kind_name(v->kind));
			continue;
		}
		if (ytree_is_null(v) && o->type != SL_OPT_STRING) {
			diag_error(diag, &v->mark, "option '%s': expected %s, got nothing", o->name,
				   what);
			continue;
		}
		if (opt_store_scalar(o, v->scalar, inst->config, err, sizeof(err)))
			diag_error(diag, &v->mark, "%s", err);
	}
	/* Defaults, and required options left out. */
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		if (ytree_map_get(opts, o->name))
			continue;
		if (o->def) {
			if (o->type == SL_OPT_LIST) {
				unsigned n = 0;
				const char **items = split_list(o->def, &n);

				if (items)
					opt_store_list(o, items, n, inst->config);
			} else if (opt_store_scalar(o, o->def, inst->config, err, sizeof(err))) {
				diag_error(diag, &inst->mark, "plugin '%s' has a bad default: %s",
					   d->name, err);
			}
		} else if (o->flags & SL_OPT_REQUIRED) {
			opt_describe_values(o, what, sizeof(what));
			diag_error(diag, &inst->mark, "plugin '%s' needs option '%s' (%s)", d->name,
				   o->name, what);
		}
	}
	return diag->errors == before ? 0 : -1;
}

/* The identity of an element for prefix sharing: plugin + effective options. */
static char *element_key(const struct sl_plugin *d, const struct ynode *opts)
{
	size_t cap = 256, len = 0;
	char *key = malloc(cap);

	if (!key)
		return NULL;
	len = (size_t)snprintf(key, cap, "%s", d->name);
	for (const struct sl_option *o = d->options; o && o->name; o++) {
		const struct ynode *v = ytree_map_get(opts, o->name);
		char part[4096];
		size_t plen = 0;

		if (!v)
			plen = (size_t)snprintf(part, sizeof(part), "\x1f%s=%s", o->name,
						o->def ? o->def : "");
		else if (v->kind == YN_SCALAR)
			plen = (size_t)snprintf(part, sizeof(part), "\x1f%s=%s", o->name, v->scalar);
		else {
			plen = (size_t)snprintf(part, sizeof(part), "\x1f%s=[", o->name);
			for (size_t j = 0; j < v->n && plen < sizeof(part); j++)
				plen += (size_t)snprintf(part + plen, sizeof(part) - plen, "%s\x1e",
							 v->items[j]->kind == YN_SCALAR
								 ? v->items[j]->scalar
								 : "?");
		}
		if (plen >= sizeof(part))
			plen = sizeof(part) - 1;
		if (len + plen + 1 > cap) {
			char *bigger;

			cap = (len + plen + 1) * 2;
			bigger = realloc(key, cap);
			if (!bigger) {
				free(key);
				return NULL;
			}
			key = bigger;
		}
		memcpy(key + len, part, plen + 1);
		len += plen;
	}
	return key;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Filter plugins (on the search path) that provide a field, sorted by name. */
static void list_providers(struct graph *g, const char *field, char *buf, size_t len)
{
	const char *names[256];
	size_t n = 0, used = 0;

	buf[0] = 0;
	loader_load_all(&g->loader, NULL);
	for (const struct loaded_plugin *p = g->loader.loaded; p && n < 256; p = p->next) {
		/* Only a filter can be inserted before the element that needs it. */
		if (p->desc->kind != SL_KIND_FILTER)
			continue;
		for (const struct sl_field_decl *f = p->desc->provides; f && f->name; f++)
			if (strcmp(f->name, field) == 0 && n < 256)
				names[n++] = p->desc->name;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
}

static bool name_taken(const struct graph *g, const char *name)
{
	for (size_t i = 0; i < g->nall; i++)
		if (strcmp(g->all[i]->name, name) == 0)
			return true;
	for (size_t i = 0; i < g->cfg->ninstances; i++)
		if (strcmp(g->cfg->instances[i].name, name) == 0)
			return true;
	return false;
}

static char *auto_name(const struct graph *g, const char *stack, const char *plugin)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s.%s", stack, plugin);
	for (unsigned i = 2; name_taken(g, buf); i++)
		snprintf(buf, sizeof(buf), "%s.%s%u", stack, plugin, i);
	return strdup(buf);
}

static int add_stack_name(struct sl_instance *inst, const char *stack)
{
	for (size_t i = 0; i < inst->nstacks; i++)
		if (strcmp(inst->stacks[i], stack) == 0)
			return 0;
	if (grow((void **)&inst->stacks, inst->nstacks, sizeof(char *)))
		return -1;
	inst->stacks[inst->nstacks++] = stack;
	return 0;
}

static int add_child(struct sl_instance *parent, struct sl_instance *child)
{
	if (grow((void **)&parent->children, parent->nchildren, sizeof(*parent->children)))
		return -1;
	parent->children[parent->nchildren++] = child;
	return 0;
}

/* Check that every field the instance needs is set upstream. */
static void check_needs(struct graph *g, struct sl_instance *inst, const char *stack)
{
	const uint64_t *avail = inst->parent ? inst->parent->avail : NULL;

	if (inst->desc->kind == SL_KIND_INPUT)
		return;
	for (const struct sl_field_decl *f = inst->desc->needs; f && f->name; f++) {
		int id = fields_lookup(f->name);
		char providers[512];

		if (id >= 0 && avail && ((avail[id >> 6] >> (id & 63)) & 1))
			continue;
		list_providers(g, f->name, providers, sizeof(providers));
		if (providers[0])
			diag_error(g->diag, &inst->mark,
				   "plugin '%s' needs field '%s', which nothing before it in stack '%s' "
				   "provides (provided by: %s)",
				   inst->desc->name, f->name, stack, providers);
		else
			diag_error(g->diag, &inst->mark,
				   "plugin '%s' needs field '%s', which nothing before it in stack '%s' "
				   "provides, and no filter plugin found provides it",
				   inst->desc->name, f->name, stack);
	}
}

static bool field_avail(const uint64_t *avail, const char *name)
{
	int id = fields_lookup(name);

	return id >= 0 && avail && ((avail[id >> 6] >> (id & 63)) & 1);
}

/* needs_one_of: at least one alternative must be wholly provided upstream. */
static void check_alternatives(struct graph *g, struct sl_instance *inst, const char *stack)
{
	const struct sl_field_decl *const *alt = sl_plugin_needs_one_of(inst->desc);
	const uint64_t *avail = inst->parent ? inst->parent->avail : NULL;
	char msg[2048];
	size_t used = 0;

	if (!alt || !*alt || inst->desc->kind == SL_KIND_INPUT)
		return;
	for (const struct sl_field_decl *const *a = alt; *a; a++) {
		bool all = true;

		for (const struct sl_field_decl *f = *a; f->name; f++)
			all &= field_avail(avail, f->name);
		if (all)
			return;
	}
	/* None is: say what each alternative lacks and who could provide it. */
	for (const struct sl_field_decl *const *a = alt; *a && used < sizeof(msg); a++) {
		bool first = true;

		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s", a == alt ? "" : "; or ");
		for (const struct sl_field_decl *f = *a; f->name && used < sizeof(msg); f++) {
			char providers[512];

			if (field_avail(avail, f->name))
				continue;
			list_providers(g, f->name, providers, sizeof(providers));
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s%s%s%s%s",
						 first ? "" : ", ", f->name,
						 providers[0] ? " (from " : "", providers,
						 providers[0] ? ")" : "");
			first = false;
		}
	}
	diag_error(g->diag, &inst->mark,
		   "plugin '%s' needs, before it in stack '%s', one of these sets of fields, "
		   "missing: %s",
		   inst->desc->name, stack, msg);
}

static void set_avail(struct sl_instance *inst)
{
	if (inst->parent)
		memcpy(inst->avail, inst->parent->avail, sizeof(inst->avail));
	for (const struct sl_field_decl *f = inst->desc->provides; f && f->name; f++) {
		int id = fields_lookup(f->name);

		if (id >= 0)
			inst->avail[id >> 6] |= (uint64_t)1 << (id & 63);
	}
}

static bool resolve(struct graph *g, const struct elem_spec *e, struct resolved *r)
{
	const struct ynode *pname;
	const char *plugin;
	char err[2048];

	memset(r, 0, sizeof(*r));
	r->mark = e->mark;
	if (e->name) {
		r->named = config_find_instance(g->cfg, e->name);
		if (r->named) {
			r->opts = r->named->map;
			plugin = ytree_map_get(r->opts, "plugin")->scalar;
		} else {
			plugin = e->name;
		}
	} else {
		r->opts = e->map;
		pname = ytree_map_get(e->map, "plugin");
		plugin = pname->scalar;
		r->mark = pname->mark;
	}
	r->plugin = loader_find(&g->loader, plugin, err, sizeof(err));
	if (!r->plugin) {
		if (r->named) {
			/* Say it once, at the instance, however many stacks use it. */
			for (size_t i = 0; i < g->nfailed; i++)
				if (g->failed[i] == r->named)
					return false;
			if (!grow((void **)&g->failed, g->nfailed, sizeof(*g->failed)))
				g->failed[g->nfailed++] = r->named;
			diag_error(g->diag, &ytree_map_get(r->opts, "plugin")->mark, "%s", err);
		} else if (e->name && strstr(err, "unknown plugin")) {
			diag_error(g->diag, &r->mark, "'%s' is neither a named instance nor a plugin: %s",
				   e->name, err);
		} else {
			diag_error(g->diag, &r->mark, "%s", err);
		}
		return false;
	}
	return true;
}

static struct sl_instance *new_instance(struct graph *g, const struct resolved *r,
					const char *stack, struct sl_instance *parent)
{
	struct sl_instance *inst = calloc(1, sizeof(*inst));

	if (!inst)
		return NULL;
	inst->graph = g;
	inst->desc = r->plugin->desc;
	inst->opts = r->opts;
	inst->named = r->named != NULL;
	inst->mark = r->named ? r->named->mark : r->mark;
	inst->parent = parent;
	inst->name = r->named ? strdup(r->named->name) : auto_name(g, stack, inst->desc->name);
	inst->key = element_key(inst->desc, r->opts);
	if (!inst->name || !inst->key || grow((void **)&g->all, g->nall, sizeof(*g->all))) {
		free(inst->name);
		free(inst->key);
		free(inst);
		return NULL;
	}
	g->all[g->nall++] = inst;
	if (inst->desc->kind == SL_KIND_INPUT)
		g->ninputs++;
	fill_options(inst, g->diag);
	set_avail(inst);
	return inst;
}

/* Wire one stack into the graph, sharing existing prefixes. */
static void add_stack(struct graph *g, const struct stack_spec *s)
{
	struct sl_instance *parent = NULL;
	bool shared_so_far = true;

	for (size_t j = 0; j < s->n; j++) {
		const struct elem_spec *e = &s->elems[j];
		enum sl_kind want = j == 0 ? SL_KIND_INPUT
				    : j == s->n - 1 ? SL_KIND_OUTPUT
						    : SL_KIND_FILTER;
		struct sl_instance *inst = NULL;
		struct resolved r;

		if (!resolve(g, e, &r))
			return;
		if (r.plugin->desc->kind != want) {
			diag_error(g->diag, &e->mark,
				   "'%s' is %s plugin, but the %s of stack '%s' must be %s",
				   r.plugin->desc->name, kind_article(r.plugin->desc->kind),
				   j == 0 ? "first element" : j == s->n - 1 ? "last element"
									 : "middle element",
				   s->name, kind_article(want));
			return;
		}
		if (r.named) {
			/* A named instance is one instance wherever it is used. */
			for (size_t i = 0; i < g->nall; i++)
				if (g->all[i]->named && strcmp(g->all[i]->name, r.named->name) == 0)
					inst = g->all[i];
			if (inst && inst->parent != parent) {
				diag_error(g->diag, &e->mark,
					   "instance '%s' is used after '%s' here but after '%s' in stack "
					   "'%s'; a named instance has one place in the graph",
					   inst->name, parent ? parent->name : "nothing",
					   inst->parent ? inst->parent->name : "nothing", inst->stacks[0]);
				return;
			}
		} else if (shared_so_far) {
			/* Same plugin, same options, after the same predecessor: share. */
			char *key = element_key(r.plugin->desc, r.opts);
			struct sl_instance **peers = parent ? parent->children : g->all;
			size_t npeers = parent ? parent->nchildren : g->nall;

			for (size_t i = 0; key && i < npeers; i++)
				if (!peers[i]->named && peers[i]->parent == parent &&
				    strcmp(peers[i]->key, key) == 0)
					inst = peers[i];
			free(key);
		}
		if (!inst) {
			inst = new_instance(g, &r, s->name, parent);
			if (!inst) {
				diag_error(g->diag, &e->mark, "out of memory");
				return;
			}
			if (parent)
				add_child(parent, inst);
			check_needs(g, inst, s->name);
			check_alternatives(g, inst, s->name);
			shared_so_far = false;
		}
		add_stack_name(inst, s->name);
		parent = inst;
	}
}

const struct ymark *graph_option_mark(const struct sl_instance *inst, const char *option)
{
	const struct ynode *v = option ? ytree_map_get(inst->opts, option) : NULL;

	return v ? &v->mark : &inst->mark;
}

int graph_build(struct graph *g, const struct config *cfg, struct diag *d)
{
	memset(g, 0, sizeof(*g));
	g->diag = d;
	g->cfg = cfg;
	fields_reset();
	if (loader_init(&g->loader, cfg->plugin_path, cfg->nplugin_path)) {
		diag_error(d, NULL, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < cfg->nstacks; i++)
		add_stack(g, &cfg->stacks[i]);
	for (size_t i = 0; i < cfg->ninstances && !d->errors; i++) {
		bool used = false;

		for (size_t k = 0; k < g->nall; k++)
			used |= g->all[k]->named && strcmp(g->all[k]->name, cfg->instances[i].name) == 0;
		if (!used)
			fprintf(stderr, "%s:%u:%u: warning: instance '%s' is not used by any stack\n",
				cfg->file, cfg->instances[i].mark.line, cfg->instances[i].mark.col,
				cfg->instances[i].name);
	}
	if (d->errors)
		return -1;
	/* Every plugin checks its own options; nothing is opened yet. */
	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *inst = g->all[i];
		unsigned before = d->errors;

		inst->configuring = true;
		if (inst->desc->configure(&sluice_host, inst, inst->config, &inst->state) == 0)
			inst->configured = true;
		else if (d->errors == before)
			diag_error(d, &inst->mark, "plugin '%s' refused its configuration",
				   inst->desc->name);
		inst->configuring = false;
	}
	return d->errors ? -1 : 0;
}

/* The options written for an instance, for the tree view. */
static void print_options(const struct sl_instance *inst, FILE *out)
{
	const struct ynode *opts = inst->opts;

	for (size_t i = 0; opts && i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i], *v = opts->items[i + 1];

		if (strcmp(k->scalar, "plugin") == 0)
			continue;
		if (v->kind == YN_SCALAR) {
			bool quote = strpbrk(v->scalar, " \t\"") != NULL || !v->scalar[0];

			fprintf(out, quote ? " %s=\"%s\"" : " %s=%s", k->scalar, v->scalar);
		} else {
			fprintf(out, " %s=[", k->scalar);
			for (size_t j = 0; j < v->n; j++)
				fprintf(out, "%s%s", j ? "," : "",
					v->items[j]->kind == YN_SCALAR ? v->items[j]->scalar : "?");
			fputc(']', out);
		}
	}
}

static void print_node(const struct sl_instance *inst, const char *indent, bool last, bool root,
		       FILE *out)
{
	char child_indent[1024];

	fprintf(out, "%s%s%s (%s", indent, root ? "" : last ? "└─ " : "├─ ", inst->name,
		inst->desc->name);
	print_options(inst, out);
	fprintf(out, ")  [");
	for (size_t i = 0; i < inst->nstacks; i++)
		fprintf(out, "%s%s", i ? ", " : "", inst->stacks[i]);
	fprintf(out, "]\n");
	snprintf(child_indent, sizeof(child_indent), "%s%s", indent,
		 root ? "" : last ? "   " : "│  ");
	for (size_t i = 0; i < inst->nchildren; i++)
		print_node(inst->children[i], child_indent, i + 1 == inst->nchildren, false, out);
}

void graph_print(const struct graph *g, FILE *out)
{
	for (size_t i = 0; i < g->nall; i++)
		if (!g->all[i]->parent)
			print_node(g->all[i], "", true, true, out);
}

/* List values: arrays made by fill_options (and the split copy of a default). */
static void free_list_options(struct sl_instance *inst)
{
	for (const struct sl_option *o = inst->desc->options; inst->config && o && o->name; o++) {
		struct sl_strlist *l;

		if (o->type != SL_OPT_LIST)
			continue;
		l = (struct sl_strlist *)((char *)inst->config + o->offset);
		if (!ytree_map_get(inst->opts, o->name) && l->n)
			free((char *)l->v[0]);
		free((void *)l->v);
	}
}

void graph_free(struct graph *g)
{
	for (size_t i = g->nall; i-- > 0;) {
		struct sl_instance *inst = g->all[i];

		if (inst->configured && inst->desc->destroy)
			inst->desc->destroy(inst->state);
		for (size_t k = 0; k < inst->ncounters; k++)
			free(inst->counters[k].name);
		free(inst->counters);
		free(inst->children);
		free(inst->stacks);
		free(inst->save_rec);
		free(inst->save_presence);
		free(inst->restore);
		free(inst->save_values);
		free_list_options(inst);
		free(inst->config);
		free(inst->key);
		free(inst->name);
		free(inst);
	}
	free(g->all);
	free(g->failed);
	loader_free(&g->loader);
	memset(g, 0, sizeof(*g));
}
