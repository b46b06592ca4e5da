/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "graph.h"
#include "guard.h"
#include "host_table.h"
#include "identity.h"
#include "inst_keys.h"
#include "options.h"
#include "secret.h"
#include "strict.h"

/* Everything a plugin element resolves to, before it becomes an instance. */
struct resolved {
	const struct loaded_plugin *plugin;
	const struct ynode *opts;	/* mapping with 'plugin' and options, or NULL */
	const struct instance_spec *named;
	struct ymark mark;
};

/*
 * Make room for item n of an array that only ever grows by one through
 * here: it holds the next power of two of n, so n appends copy O(n).
 */
static int grow(void **arr, size_t n, size_t size)
{
	void *p;

	if (n & (n - 1))
		return 0;
	if (n > SIZE_MAX / 2 / size)
		return -1;
	p = realloc(*arr, (n ? n * 2 : 1) * size);
	if (!p)
		return -1;
	*arr = p;
	return 0;
}

static const char *kind_article(enum sl_kind k)
{
	return k == SL_KIND_INPUT ? "an input" : k == SL_KIND_FILTER ? "a filter" : "an output";
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
	/* Once: rescanning the path for every missing field made errors slow. */
	if (!g->loaded_all) {
		plugin_loader_load_all(&g->loader, NULL);
		g->loaded_all = true;
	}
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

/* How far auto_name() got with one "stack.plugin" base. */
struct name_base {
	unsigned next;		/* the number to try next */
	char base[];
};

/*
 * "stack.plugin", or else the first free "stack.pluginN" from N = 2, the
 * names sluice has always given.  Names are only ever added, so a number
 * once found taken stays taken: each base remembers where its search
 * stopped, and naming n elements costs O(n), not a probe from 2 for each.
 * The name is not yet taken; new_instance() takes it.
 */
static char *auto_name(struct graph *g, const char *stack, const char *plugin)
{
	size_t blen = strlen(stack) + 1 + strlen(plugin);
	char *name = malloc(blen + 12);
	struct name_base *nb;

	if (!name)
		return NULL;
	snprintf(name, blen + 1, "%s.%s", stack, plugin);
	if (!strset_find(&g->names, name))
		return name;
	nb = strset_get(&g->bases, name);
	if (!nb) {
		nb = malloc(sizeof(*nb) + blen + 1);
		if (!nb || strset_add(&g->bases, memcpy(nb->base, name, blen + 1), nb, NULL) < 0) {
			free(nb);
			free(name);
			return NULL;
		}
		nb->next = 2;
	}
	do
		snprintf(name + blen, 12, "%u", nb->next++);
	while (strset_find(&g->names, name));
	return name;
}

/* Instances are visited once per stack, so a repeat can only be the last. */
static int add_stack_name(struct sl_instance *inst, const char *stack)
{
	if (inst->nstacks && strcmp(inst->stacks[inst->nstacks - 1], stack) == 0)
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

/* One more predecessor of a named output (once per parent). */
static int add_parent(struct sl_instance *out, struct sl_instance *parent)
{
	for (size_t c = 0; c < parent->nchildren; c++)
		if (parent->children[c] == out)
			return 0;
	return add_child(parent, out);
}

/* Check that every field the instance needs is set upstream. */
static void check_needs(struct graph *g, struct sl_instance *inst,
			const struct sl_instance *parent, const char *stack)
{
	const uint64_t *avail = parent ? parent->avail : NULL;

	if (inst->desc->kind == SL_KIND_INPUT)
		return;
	for (const struct sl_field_decl *f = inst->desc->needs; f && f->name; f++) {
		int id = fields_lookup(&g->loader.fields, f->name);
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

static bool field_avail(struct graph *g, const uint64_t *avail, const char *name)
{
	int id = fields_lookup(&g->loader.fields, name);

	return id >= 0 && avail && ((avail[id >> 6] >> (id & 63)) & 1);
}

/* needs_one_of: at least one alternative must be wholly provided upstream. */
static void check_alternatives(struct graph *g, struct sl_instance *inst,
			       const struct sl_instance *parent, const char *stack)
{
	const struct sl_field_decl *const *alt = plugin_loader_needs_one_of(inst->desc);
	const uint64_t *avail = parent ? parent->avail : NULL;
	char msg[2048];
	size_t used = 0;

	if (!alt || !*alt || inst->desc->kind == SL_KIND_INPUT)
		return;
	for (const struct sl_field_decl *const *a = alt; *a; a++) {
		bool all = true;

		for (const struct sl_field_decl *f = *a; f->name; f++)
			all &= field_avail(g, avail, f->name);
		if (all)
			return;
	}
	/* None is: say what each alternative lacks and who could provide it. */
	for (const struct sl_field_decl *const *a = alt; *a && used < sizeof(msg); a++) {
		bool first = true;

		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s", a == alt ? "" : "; or ");
		for (const struct sl_field_decl *f = *a; f->name && used < sizeof(msg); f++) {
			char providers[512];

			if (field_avail(g, avail, f->name))
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

static void set_avail(struct graph *g, struct sl_instance *inst)
{
	if (inst->parent)
		memcpy(inst->avail, inst->parent->avail, sizeof(inst->avail));
	for (const struct sl_field_decl *f = inst->desc->provides; f && f->name; f++) {
		int id = fields_lookup(&g->loader.fields, f->name);

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
			plugin = r->named->plugin->scalar;
		} else if (config_is_bad_name(g->cfg, e->name)) {
			return false;	/* reported where it was declared */
		} else {
			plugin = e->name;
		}
	} else {
		r->opts = e->map;
		pname = e->plugin;
		plugin = pname->scalar;
		r->mark = pname->mark;
	}
	r->plugin = plugin_loader_find(&g->loader, plugin, err, sizeof(err));
	if (!r->plugin) {
		if (r->named) {
			/* Say it once, at the instance, however many stacks use it. */
			if (strset_add(&g->failed, r->named->name, NULL, NULL) == 0)
				return false;
			diag_error(g->diag, &r->named->plugin->mark, "%s", err);
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

/*
 * Take the instance's name and index it: by name, or, unnamed, by key
 * among its siblings.  The sets borrow inst->name and inst->key.  Room is
 * made first, so the instance is either in every index and in g->all, or
 * in none.
 */
static int add_instance(struct graph *g, struct sl_instance *inst)
{
	struct strset *siblings = inst->parent ? &inst->parent->kids : &g->roots;

	if (strset_reserve(&g->names, 1) || strset_reserve(&g->named, 1) ||
	    strset_reserve(siblings, 1) || grow((void **)&g->all, g->nall, sizeof(*g->all)))
		return -1;
	if (inst->named) {
		/* Declared names were taken when the build began. */
		strset_add(&g->named, inst->name, inst, NULL);
	} else {
		strset_add(&g->names, inst->name, inst, NULL);
		/* One unnamed child per key: a second would have been shared. */
		if (inst->key)
			strset_add(siblings, inst->key, inst, NULL);
	}
	g->all[g->nall++] = inst;
	return 0;
}

/*
 * An instance of a resolved element with its options parsed and its key
 * made, not yet in the graph: prefix sharing compares that key (parsed
 * values) with the siblings' before keeping or discarding it.  Option
 * errors are reported here, at each element written with them.
 */
static struct sl_instance *prepare_instance(struct graph *g, const struct resolved *r,
					    struct sl_instance *parent)
{
	struct sl_instance *inst = calloc(1, sizeof(*inst));
	unsigned before = g->diag->errors;

	if (!inst)
		return NULL;
	inst->graph = g;
	inst->desc = r->plugin->desc;
	inst->opts = r->opts;
	inst->named = r->named != NULL;
	inst->mark = r->named ? r->named->mark : r->mark;
	inst->parent = parent;
	options_fill(&inst->opt, inst->desc, inst->opts, &inst->mark, g->diag);
	if (inst->opt.opts)	/* groups written flat: marks and lookups by flat name */
		inst->opts = inst->opt.opts;
	inst_keys_parse(inst, g->diag);
	inst->opts_valid = g->diag->errors == before;
	/* Without valid values there is no identity: never shared. */
	if (inst->opts_valid &&
	    !(inst->key = identity_key(inst->desc, inst->opt.config, inst->thread,
					inst->queue_batches, inst->block_when_full))) {
		options_values_free(&inst->opt, inst->desc);
		free(inst);
		return NULL;
	}
	return inst;
}

static void discard_instance(struct sl_instance *inst)
{
	options_values_free(&inst->opt, inst->desc);
	free(inst->key);
	free(inst);
}

/* Name it and put it in the graph.  -1: out of memory (inst freed). */
static int commit_instance(struct graph *g, struct sl_instance *inst, const char *stack,
			   const struct resolved *r)
{
	inst->name = r->named ? strdup(r->named->name) : auto_name(g, stack, inst->desc->name);
	if (!inst->name || add_instance(g, inst)) {
		free(inst->name);
		discard_instance(inst);
		return -1;
	}
	if (inst->desc->kind == SL_KIND_INPUT)
		g->ninputs++;
	set_avail(g, inst);
	return 0;
}

/*
 * A bare plugin name after a given predecessor always makes the same
 * instance: it is found again by "\x01NAME" among the siblings, without
 * parsing the defaults once per stack (100,000 stacks sharing `decode`).
 */
#define BARE_KEY_MAX 128

static struct sl_instance *find_bare(struct graph *g, struct sl_instance *parent,
				     const char *plugin)
{
	char key[BARE_KEY_MAX];

	if (strlen(plugin) + 2 > sizeof(key))
		return NULL;
	snprintf(key, sizeof(key), "\x01%s", plugin);
	return strset_get(parent ? &parent->kids : &g->roots, key);
}

/* Only an optimisation: without memory the next one is parsed again. */
static void remember_bare(struct graph *g, struct sl_instance *inst)
{
	size_t n = strlen(inst->desc->name) + 2;

	if (inst->bare_key || !inst->key || n > BARE_KEY_MAX || !(inst->bare_key = malloc(n)))
		return;
	snprintf(inst->bare_key, n, "\x01%s", inst->desc->name);
	if (strset_add(inst->parent ? &inst->parent->kids : &g->roots, inst->bare_key, inst,
		       NULL) < 0) {
		free(inst->bare_key);
		inst->bare_key = NULL;
	}
}

/*
 * An element after an error in its stack: it cannot be wired (nothing
 * known comes before it), but its options are still checked on their own.
 * A named instance is checked once, at the end, if no stack placed it.
 */
static void check_alone(struct graph *g, const struct resolved *r)
{
	struct sl_instance *inst;

	if (r->named) {
		if (strset_add(&g->orphans, r->named->name, (void *)r->named, NULL) < 0)
			diag_error(g->diag, &r->mark, "out of memory");
		return;
	}
	inst = prepare_instance(g, r, NULL);
	if (inst)
		discard_instance(inst);
}

static int cmp_spec_mark(const void *a, const void *b)
{
	const struct instance_spec *x = *(const struct instance_spec *const *)a;
	const struct instance_spec *y = *(const struct instance_spec *const *)b;

	return ymark_cmp(&x->mark, &y->mark);
}

/* No two instances hold one SL_OPT_EXCLUSIVE resource (identity.h). */
static void check_exclusive(struct graph *g)
{
	struct identity_holder *h = calloc(g->nall + 1, sizeof(*h));
	size_t n = 0;

	if (!h) {
		diag_error(g->diag, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];
		const struct sl_option *o;

		/* Instances whose options had errors are left out. */
		if (!inst->opts_valid || !(o = identity_first_exclusive(inst->desc)))
			continue;
		h[n++] = (struct identity_holder){.name = inst->name, .desc = inst->desc,
						  .config = inst->opt.config, .mark = &inst->mark,
						  .at = graph_option_mark(inst, o->name)};
	}
	identity_check_exclusive(h, n, g->diag);
	free(h);
}

/* Named instances only met after errors: their options, in file order. */
static void check_orphans(struct graph *g)
{
	const struct instance_spec **v = calloc(g->orphans.n + 1, sizeof(*v));
	size_t n = 0;

	if (!v) {
		diag_error(g->diag, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < g->orphans.cap; i++) {
		const struct instance_spec *spec = g->orphans.slot[i].value;

		if (spec && !strset_find(&g->named, spec->name))
			v[n++] = spec;
	}
	qsort(v, n, sizeof(*v), cmp_spec_mark);
	for (size_t i = 0; i < n; i++) {
		struct elem_spec e = {.mark = v[i]->mark, .name = v[i]->name};
		struct resolved r;
		struct sl_instance *inst;

		if (!resolve(g, &e, &r))
			continue;
		inst = prepare_instance(g, &r, NULL);
		if (inst)
			discard_instance(inst);
	}
	free(v);
}

/* Is the element's plugin of the kind its position in the stack wants? */
static bool kind_fits(struct graph *g, const struct stack_spec *s, size_t j,
		      const struct resolved *r)
{
	enum sl_kind want = j == 0 ? SL_KIND_INPUT : j == s->n - 1 ? SL_KIND_OUTPUT : SL_KIND_FILTER;

	if (r->plugin->desc->kind == want)
		return true;
	diag_error(g->diag, &s->elems[j].mark,
		   "'%s' is %s plugin, but the %s of stack '%s' must be %s", r->plugin->desc->name,
		   kind_article(r->plugin->desc->kind),
		   j == 0 ? "first element" : j == s->n - 1 ? "last element" : "middle element",
		   s->name, kind_article(want));
	return false;
}

/*
 * The instance an element becomes after `parent`: with `share`, an
 * unnamed sibling with the same key, else a new one (*made).  NULL: out
 * of memory.
 */
static struct sl_instance *place_element(struct graph *g, const struct resolved *r,
					 const char *stack, struct sl_instance *parent, bool share,
					 bool *made)
{
	struct sl_instance *inst = NULL, *mine;

	*made = false;
	if (share && !r->named && !r->opts && (inst = find_bare(g, parent, r->plugin->desc->name)))
		return inst;
	mine = prepare_instance(g, r, parent);
	if (!mine)
		return NULL;
	/* Same plugin, same parsed values, after the same predecessor: share. */
	if (share && !r->named && mine->key)
		inst = strset_get(parent ? &parent->kids : &g->roots, mine->key);
	if (inst) {
		discard_instance(mine);
		return inst;
	}
	if (commit_instance(g, mine, stack, r) || (parent && add_child(parent, mine)))
		return NULL;
	*made = true;
	return mine;
}

/*
 * Wire one stack into the graph, sharing existing prefixes.  After an
 * error the stack is broken: the rest of its elements are checked alone.
 */
static void add_stack(struct graph *g, const struct stack_spec *s)
{
	struct sl_instance *parent = NULL;
	bool shared_so_far = true, broken = false;

	for (size_t j = 0; j < s->n; j++) {
		const struct elem_spec *e = &s->elems[j];
		struct sl_instance *inst = NULL;
		struct resolved r;
		bool made;

		if (e->bad || !resolve(g, e, &r) || !kind_fits(g, s, j, &r)) {
			broken = true;
			continue;
		}
		if (broken) {
			check_alone(g, &r);
			continue;
		}
		if (r.named) {
			/* A named instance is one instance wherever it is used. */
			inst = strset_get(&g->named, r.named->name);
			if (inst && inst->parent != parent && j == s->n - 1 && parent) {
				/*
				 * Stacks may meet in a named output (inputs on several
				 * threads writing one file): it gets one more parent.
				 */
				if (add_parent(inst, parent)) {
					diag_error(g->diag, &e->mark, "out of memory");
					return;
				}
				check_needs(g, inst, parent, s->name);
				check_alternatives(g, inst, parent, s->name);
			} else if (inst && inst->parent != parent) {
				diag_error(g->diag, &e->mark,
					   "instance '%s' is used after '%s' here but after '%s' in stack "
					   "'%s'; a named instance has one place in the graph",
					   inst->name, parent ? parent->name : "nothing",
					   inst->parent ? inst->parent->name : "nothing", inst->stacks[0]);
				broken = true;
				continue;
			}
		}
		if (!inst) {
			inst = place_element(g, &r, s->name, parent, shared_so_far, &made);
			if (!inst) {
				diag_error(g->diag, &e->mark, "out of memory");
				return;
			}
			if (made) {
				check_needs(g, inst, parent, s->name);
				check_alternatives(g, inst, parent, s->name);
				shared_so_far = false;
			}
		}
		if (!r.named && !r.opts)
			remember_bare(g, inst);
		add_stack_name(inst, s->name);
		parent = inst;
	}
}

int graph_need_field(struct sl_instance *inst, const char *option, const char *name)
{
	struct graph *g = inst->graph;
	const uint64_t *avail = inst->parent ? inst->parent->avail : NULL;
	const struct ynode *v = option ? yaml_tree_map_get(inst->opts, option) : NULL;
	const struct ymark *at = graph_option_mark(inst, option);
	const char *stack = inst->nstacks ? inst->stacks[0] : "?";
	int id = fields_lookup(&g->loader.fields, name);
	char providers[512], where[256] = "";

	if (id >= 0 && avail && ((avail[id >> 6] >> (id & 63)) & 1)) {
		inst->asked[id >> 6] |= 1ull << (id & 63);
		return id;
	}
	if (option)
		snprintf(where, sizeof(where), " (option '%s')", option);
	/* Blame the list item that names the field, when there is one. */
	for (size_t i = 0; v && v->kind == YN_SEQ && i < v->n; i++)
		if (v->items[i]->kind == YN_SCALAR && strcmp(v->items[i]->scalar, name) == 0) {
			at = &v->items[i]->mark;
			break;
		}
	if (id < 0) {
		const char *near = fields_suggest(&g->loader.fields, name);

		diag_error(g->diag, at, "plugin '%s' needs field '%s'%s, but no field has that name%s%s%s",
			   inst->desc->name, name, where, near ? "; did you mean '" : "",
			   near ? near : "", near ? "'?" : "");
		return -1;
	}
	list_providers(g, name, providers, sizeof(providers));
	diag_error(g->diag, at,
		   "plugin '%s' needs field '%s'%s, which nothing before it in stack '%s' provides "
		   "(%s%s)",
		   inst->desc->name, name, where, stack, providers[0] ? "provided by: " : "",
		   providers[0] ? providers : "no filter plugin found provides it");
	return -1;
}

const struct ymark *graph_option_mark(const struct sl_instance *inst, const char *option)
{
	const char *slash = option ? strchr(option, '/') : NULL;
	const struct ynode *v;

	if (slash && (size_t)(slash - option) < 128) {
		/* "option/name": an entry of a mapping option (SL_OPT_MAP_ENTRIES) */
		char head[128];
		const struct ynode *key;

		memcpy(head, option, (size_t)(slash - option));
		head[slash - option] = 0;
		v = yaml_tree_map_get(inst->opts, head);
		key = v && v->kind == YN_MAP ? yaml_tree_map_key(v, slash + 1) : NULL;
		if (key)
			return &key->mark;
		return v ? &v->mark : &inst->mark;
	}
	v = option ? yaml_tree_map_get(inst->opts, option) : NULL;

	return v ? &v->mark : &inst->mark;
}

/* The unused instances of one plugin: how many, the first few by name. */
struct unused {
	const struct instance_spec *first[3];
	size_t n;
};

/*
 * Instances no stack uses: one warning per plugin, at its first such
 * instance, with a count (a generated file may hold a million of them;
 * a reload must not log a line for each).
 */
static void warn_unused(struct graph *g, const struct config *cfg)
{
	struct unused *u = calloc(cfg->ninstances + 1, sizeof(*u));
	struct strset by_plugin = {0};
	size_t nu = 0;

	for (size_t i = 0; u && i < cfg->ninstances; i++) {
		const struct instance_spec *spec = &cfg->instances[i];
		const char *plugin = spec->plugin && spec->plugin->kind == YN_SCALAR ?
				     spec->plugin->scalar : "?";
		void *had = NULL;
		struct unused *e;

		if (strset_find(&g->named, spec->name))
			continue;
		if (strset_add(&by_plugin, plugin, &u[nu], &had) < 0)
			break;
		e = had ? had : &u[nu++];
		if (e->n < 3)
			e->first[e->n] = spec;
		e->n++;
	}
	for (size_t k = 0; k < nu; k++) {
		const struct unused *e = &u[k];
		const char *plugin = e->first[0]->plugin && e->first[0]->plugin->kind == YN_SCALAR ?
				     e->first[0]->plugin->scalar : "?";

		if (e->n == 1) {
			diag_warning(g->diag, &e->first[0]->mark,
				     "instance '%s' is not used by any stack", e->first[0]->name);
			continue;
		}
		diag_warning(g->diag, &e->first[0]->mark,
			     "%zu instances of plugin '%s' are not used by any stack ('%s', '%s'%s%s%s)",
			     e->n, plugin, e->first[0]->name, e->first[1]->name,
			     e->n > 2 ? ", '" : "", e->n > 2 ? e->first[2]->name : "",
			     e->n > 3 ? "', ..." : e->n > 2 ? "'" : "");
	}
	if (!u)
		diag_warning(g->diag, NULL, "out of memory listing the instances no stack uses");
	strset_free(&by_plugin);
	free(u);
}

int graph_build(struct graph *g, const struct config *cfg, struct diag *d)
{
	return graph_build_seeded(g, cfg, d, NULL);
}

int graph_build_seeded(struct graph *g, const struct config *cfg, struct diag *d,
		       const struct field_registry *seed)
{
	memset(g, 0, sizeof(*g));
	g->diag = d;
	g->cfg = cfg;
	if (plugin_loader_init(&g->loader, cfg->plugin_path, cfg->nplugin_path) ||
	    (seed && fields_copy(&g->loader.fields, seed))) {
		diag_error(d, NULL, "out of memory");
		return -1;
	}
	/* Generated names never take a declared one. */
	for (size_t i = 0; i < cfg->ninstances; i++)
		if (strset_add(&g->names, cfg->instances[i].name, NULL, NULL) < 0) {
			diag_error(d, NULL, "out of memory");
			return -1;
		}
	for (size_t i = 0; i < cfg->nstacks; i++)
		add_stack(g, &cfg->stacks[i]);
	check_orphans(g);
	check_exclusive(g);
	if (!d->errors)
		warn_unused(g, cfg);
	inst_keys_place(g, cfg->threads);
	/*
	 * Every plugin checks its own options; nothing is opened yet.  Also
	 * after errors elsewhere (a bad `loop:` must not hide a bad `expr`),
	 * but only where the table accepted the options.
	 */
	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *inst = g->all[i];
		unsigned before = d->errors;

		if (!inst->opts_valid)
			continue;

		inst->configuring = true;
		if (inst->desc->configure(&host_table, inst, inst->opt.config, &inst->state) == 0)
			inst->configured = true;
		else if (d->errors == before)
			diag_error(d, &inst->mark, "plugin '%s' refused its configuration",
				   inst->desc->name);
		inst->configuring = false;
	}
	inst_keys_subtree_reads(g);
	return d->errors ? -1 : 0;
}

/* One value as the tree shows it (secret.h); "?" for a nested node or no memory. */
static void print_value(const struct sl_option *o, const char *entry, const struct ynode *v,
			const char *fmt, FILE *out)
{
	size_t len = v->kind == YN_SCALAR ? strlen(v->scalar) + SECRET_SHOW_EXTRA : 0;
	char *shown = len ? malloc(len) : NULL;

	fprintf(out, fmt, shown ? secret_show_option(o, entry, v->scalar, shown, len) : "?");
	free(shown);
}

/* The options written for an instance, for the tree view. */
static void print_options(const struct sl_instance *inst, FILE *out)
{
	const struct ynode *opts = inst->opts;

	for (size_t i = 0; opts && i < opts->n; i += 2) {
		const struct ynode *k = opts->items[i], *v = opts->items[i + 1];
		const struct sl_option *o = options_find(inst->desc, k->scalar);

		if (strcmp(k->scalar, "plugin") == 0)
			continue;
		if (v->kind == YN_SCALAR) {
			bool quote = strpbrk(v->scalar, " \t\"") != NULL || !v->scalar[0];

			fprintf(out, " %s=", k->scalar);
			print_value(o, NULL, v, quote ? "\"%s\"" : "%s", out);
		} else {
			bool map = v->kind == YN_MAP;	/* SL_OPT_MAP: name:value pairs */

			fprintf(out, " %s=%c", k->scalar, map ? '{' : '[');
			for (size_t j = 0; j < v->n; j++) {
				const struct ynode *it = v->items[j];

				fputs(j ? (map && j % 2 ? ":" : ",") : "", out);
				if (map && j % 2 == 0)	/* a name: shown */
					fputs(it->kind == YN_SCALAR ? it->scalar : "?", out);
				else
					print_value(o, map ? v->items[j - 1]->scalar : NULL, it, "%s",
						    out);
			}
			fputc(map ? '}' : ']', out);
		}
	}
}

/*
 * The indentation grows one step per level while it fits in this many
 * bytes (as it always has), then stays: a long stack is a chain, and
 * without a cap its tree would be quadratic in size.
 */
#define TREE_MAX_INDENT 1023

struct tree_frame {
	const struct sl_instance *inst;
	size_t next;		/* child to print next */
	size_t indent;		/* length of its children's indentation */
};

static int grow_frames(struct tree_frame **st, size_t *cap, size_t need)
{
	struct tree_frame *bigger;

	if (need <= *cap)
		return 0;
	bigger = realloc(*st, need * 2 * sizeof(**st));
	if (!bigger)
		return -1;
	*st = bigger;
	*cap = need * 2;
	return 0;
}

static void print_line(const struct sl_instance *inst, const char *indent, const char *branch,
		       FILE *out)
{
	fprintf(out, "%s%s%s (%s", indent, branch, inst->name, inst->desc->name);
	print_options(inst, out);
	if (inst->thread && inst->desc->kind == SL_KIND_OUTPUT)
		fprintf(out, "; own thread, queue %u batches, when_full %s", inst->queue_batches,
			inst->block_when_full ? "block" : "drop");
	else if (inst->thread)
		fprintf(out, "; own thread");
	else if (inst->input_thread)
		fprintf(out, "; input thread %u", inst->input_thread);
	fprintf(out, ")  [");
	for (size_t i = 0; i < inst->nstacks; i++)
		fprintf(out, "%s%s", i ? ", " : "", inst->stacks[i]);
	fprintf(out, "]\n");
}

/* One tree, depth first, without recursion: a stack may be very long. */
static int print_tree(const struct sl_instance *root, FILE *out)
{
	char indent[TREE_MAX_INDENT + 1] = "";
	struct tree_frame *st = NULL;
	size_t top = 0, cap = 0;

	print_line(root, "", "", out);
	if (grow_frames(&st, &cap, 1))
		return -1;
	st[top++] = (struct tree_frame){root, 0, 0};
	while (top) {
		struct tree_frame *f = &st[top - 1];
		const struct sl_instance *child;
		const char *step;
		size_t len = f->indent;
		bool last;

		if (f->next == f->inst->nchildren) {
			top--;
			continue;
		}
		child = f->inst->children[f->next++];
		last = f->next == f->inst->nchildren;
		indent[len] = 0;
		print_line(child, indent, last ? "└─ " : "├─ ", out);
		if (!child->nchildren)
			continue;
		step = last ? "   " : "│  ";
		if (len + strlen(step) <= TREE_MAX_INDENT) {
			memcpy(indent + len, step, strlen(step));
			len += strlen(step);
		}
		if (grow_frames(&st, &cap, top + 1)) {
			free(st);
			return -1;
		}
		st[top] = (struct tree_frame){child, 0, len};
		top++;
	}
	free(st);
	return 0;
}

void graph_print(const struct graph *g, FILE *out)
{
	for (size_t i = 0; i < g->nall; i++)
		if (!g->all[i]->parent && print_tree(g->all[i], out))
			fprintf(out, "(out of memory)\n");
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
		strset_free(&inst->kids);
		free(inst->stacks);
		guard_free(inst);
		strict_free(inst);
		options_values_free(&inst->opt, inst->desc);
		free(inst->key);
		free(inst->bare_key);
		free(inst->name);
		free(inst);
	}
	free(g->all);
	for (size_t i = 0; i < g->bases.cap; i++)
		free(g->bases.slot[i].value);
	strset_free(&g->bases);
	strset_free(&g->names);
	strset_free(&g->named);
	strset_free(&g->roots);
	strset_free(&g->failed);
	strset_free(&g->orphans);
	plugin_loader_free(&g->loader);
	memset(g, 0, sizeof(*g));
}
