/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core_keys.h"
#include "graph.h"
#include "inst_keys.h"
#include "options.h"

static const struct sl_field_decl *plugin_reads(const struct sl_plugin *d)
{
	if (d->size < offsetof(struct sl_plugin, reads) + sizeof(d->reads))
		return NULL;
	return d->reads;
}

static void add_decls(uint64_t *mask, struct field_registry *reg, const struct sl_field_decl *f)
{
	for (; f && f->name; f++) {
		int id = fields_lookup(reg, f->name);

		if (id >= 0)
			mask[id >> 6] |= 1ull << (id & 63);
	}
}

void inst_keys_copy_mask(const struct sl_instance *inst, uint64_t mask[SL_PRESENCE_WORDS])
{
	const struct sl_plugin *p = inst->desc;
	const struct sl_field_decl *reads = plugin_reads(p);
	struct field_registry *reg = &inst->graph->loader.fields;

	if (!reads) {
		memset(mask, 0xff, SL_PRESENCE_WORDS * sizeof(*mask));
		return;
	}
	memcpy(mask, inst->asked, SL_PRESENCE_WORDS * sizeof(*mask));
	add_decls(mask, reg, p->needs);
	for (const struct sl_field_decl *const *alt = plugin_loader_needs_one_of(p); alt && *alt; alt++)
		add_decls(mask, reg, *alt);
	add_decls(mask, reg, reads);
}

/*
 * OR into mask what every instance below root reads. A loop with a stack
 * of its own, not recursion: a stack may be tens of thousands of elements
 * long (test_config_scale's chains), deeper than the thread's stack.
 * -1 when out of memory.
 */
static int or_subtree(const struct sl_instance *root, uint64_t mask[SL_PRESENCE_WORDS])
{
	size_t cap = 64, n = 0;
	const struct sl_instance **todo = malloc(cap * sizeof(*todo));

	if (!todo)
		return -1;
	todo[n++] = root;
	while (n) {
		const struct sl_instance *inst = todo[--n];

		for (size_t c = 0; c < inst->nchildren; c++) {
			const struct sl_instance *k = inst->children[c];
			uint64_t m[SL_PRESENCE_WORDS];

			inst_keys_copy_mask(k, m);
			for (int w = 0; w < SL_PRESENCE_WORDS; w++)
				mask[w] |= m[w];
			if (n == cap) {
				const struct sl_instance **grown =
					realloc(todo, 2 * cap * sizeof(*todo));

				if (!grown) {
					free(todo);
					return -1;
				}
				todo = grown;
				cap *= 2;
			}
			todo[n++] = k;
		}
	}
	free(todo);
	return 0;
}

void inst_keys_subtree_reads(struct graph *g)
{
	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *inst = g->all[i];

		if (inst->desc->kind != SL_KIND_INPUT)
			continue;
		memset(inst->subtree_reads, 0, sizeof(inst->subtree_reads));
		/* out of memory: the input parses everything, as without .reads */
		if (or_subtree(inst, inst->subtree_reads))
			memset(inst->subtree_reads, 0xff, sizeof(inst->subtree_reads));
	}
}

/* The scalar value of a core key, or NULL (absent, or an error reported). */
static const struct ynode *scalar_key(const struct sl_instance *inst, const char *key,
				      struct diag *d)
{
	const struct ynode *v = yaml_tree_map_get(inst->opts, key);

	if (v && v->kind != YN_SCALAR) {
		diag_error(d, &v->mark, "%s: '%s' must be a value, not %s", inst->desc->name, key,
			   yaml_tree_kind_name(v->kind));
		return NULL;
	}
	return v;
}

/*
 * Below a finite input (replay) a full queue only means the output is
 * slower than the file is read: wait, do not drop.  (A named output's
 * first predecessor decides.)
 */
static bool fed_by_finite_input(const struct sl_instance *inst)
{
	const struct sl_instance *root = inst;

	while (root->parent)
		root = root->parent;
	return root != inst && (core_keys_plugin_flags(root->desc) & SL_PLUGIN_FINITE);
}

void inst_keys_parse(struct sl_instance *inst, struct diag *d)
{
	static const char *const policies[] = {"drop", "block", NULL};
	const struct sl_plugin *p = inst->desc;
	const struct ynode *thread = scalar_key(inst, "thread", d);
	const struct ynode *when = scalar_key(inst, "when_full", d);
	const struct ynode *queue = scalar_key(inst, "queue", d);
	int64_t n;
	int e;

	inst->thread = core_keys_default_thread(p);
	inst->queue_batches = INST_QUEUE_DEFAULT;
	/* Outputs only: the walk to the root is then once per leaf. */
	inst->block_when_full = p->kind == SL_KIND_OUTPUT && fed_by_finite_input(inst);
	if (thread) {
		if (p->kind == SL_KIND_FILTER)
			diag_error(d, &thread->mark,
				   "%s: 'thread' applies to inputs and outputs; a filter runs on "
				   "the thread of the input above it", p->name);
		else if (options_parse_bool(thread->scalar, &inst->thread))
			diag_error(d, &thread->mark, "%s: 'thread': expected true or false, got '%s'",
				   p->name, thread->scalar);
		else
			inst->thread_set = true;
	}
	if (when) {
		if (p->kind != SL_KIND_OUTPUT)
			diag_error(d, &when->mark, "%s: 'when_full' applies to outputs only", p->name);
		else if (!inst->thread)
			diag_error(d, &when->mark,
				   "%s: 'when_full' needs 'thread: true' (without a thread of its "
				   "own the output always holds up its input)", p->name);
		else if (options_parse_enum(when->scalar, policies, &e))
			diag_error(d, &when->mark,
				   "%s: 'when_full': expected one of: drop, block, got '%s'", p->name,
				   when->scalar);
		else
			inst->block_when_full = e == 1;
	}
	if (queue) {
		if (p->kind != SL_KIND_OUTPUT)
			diag_error(d, &queue->mark, "%s: 'queue' applies to outputs only", p->name);
		else if (!inst->thread)
			diag_error(d, &queue->mark, "%s: 'queue' needs 'thread: true'", p->name);
		else if (options_parse_int(queue->scalar, &n) || n < 2 || n > INST_QUEUE_MAX)
			diag_error(d, &queue->mark,
				   "%s: 'queue': expected a number of batches from 2 to %d, got '%s'",
				   p->name, INST_QUEUE_MAX, queue->scalar);
		else
			inst->queue_batches = (unsigned)n;
		options_check_octal(d, &queue->mark, "queue", queue->scalar);
	}
}

/* The thread an input's subtree runs on: 0 main, else a distinct number. */
static uintptr_t thread_of(const struct sl_instance *inst)
{
	while (inst->parent)
		inst = inst->parent;
	if (inst->thread)
		return (uintptr_t)inst;	/* its own */
	return inst->input_thread;	/* 0: main; 1..N: a spread thread */
}

void inst_keys_place(struct graph *g, unsigned nthreads)
{
	unsigned next = 0;

	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *inst = g->all[i];

		if (inst->desc->kind == SL_KIND_INPUT && nthreads && !inst->thread_set)
			inst->input_thread = 1 + next++ % nthreads;
	}
	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *p = g->all[i];

		for (size_t c = 0; c < p->nchildren; c++) {
			struct sl_instance *out = p->children[c];

			if (out->desc->kind == SL_KIND_OUTPUT && !out->thread && out->parent != p &&
			    thread_of(out->parent) != thread_of(p))
				out->thread = true;
		}
	}
}
