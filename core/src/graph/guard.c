/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "guard.h"
#include "host_table.h"
#include "inst_keys.h"
#include "log.h"

static void add_provides(const struct sl_instance *inst, uint64_t *set)
{
	for (const struct sl_field_decl *f = inst->desc->provides; f && f->name; f++) {
		int id = fields_lookup(&inst->graph->loader.fields, f->name);

		if (id >= 0)
			set[id >> 6] |= (uint64_t)1 << (id & 63);
	}
}

/* Collect the fields any instance below `node` provides. */
static void provided_below(const struct sl_instance *node, uint64_t *set)
{
	for (size_t c = 0; c < node->nchildren; c++) {
		add_provides(node->children[c], set);
		provided_below(node->children[c], set);
	}
}

static int push_field(sl_field **list, size_t *n, unsigned id)
{
	sl_field *grown = realloc(*list, (*n + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	*list = grown;
	grown[(*n)++] = (sl_field)id;
	return 0;
}

/* Add field id, saved in column col, to a list of runs. */
static int push_run(struct guard_run **runs, size_t *n, unsigned id, unsigned col)
{
	struct guard_run *last = *n ? &(*runs)[*n - 1] : NULL, *grown;

	if (last && last->id + last->len == id && last->col + last->len == col) {
		last->len++;
		return 0;
	}
	if (!(grown = realloc(*runs, (*n + 1) * sizeof(*grown))))
		return -1;
	*runs = grown;
	grown[(*n)++] = (struct guard_run){(uint16_t)id, (uint16_t)col, 1};
	return 0;
}

static bool in_set(const uint64_t *set, unsigned id)
{
	return (set[id >> 6] >> (id & 63)) & 1;
}

/*
 * A fan-out saves every field set before it (the guard below compares
 * with them; unless its children are all threaded outputs, which write
 * into their queues' copies) and restores for each next branch those a
 * branch below may overwrite by right, because it provides them (a
 * filter rewriting the text line): usually none.
 */
static int plan_fanout(struct sl_instance *inst, unsigned batch_size)
{
	unsigned n = fields_count(&inst->graph->loader.fields);
	uint64_t below[SL_PRESENCE_WORDS] = {0};
	bool guarded = false;

	provided_below(inst, below);
	/* only threaded outputs below: nothing to compare with, restore only */
	for (size_t c = 0; c < inst->nchildren; c++)
		guarded |= inst->children[c]->desc->kind != SL_KIND_OUTPUT ||
			   !inst->children[c]->thread;
	inst->save_col = malloc(SL_MAX_FIELDS * sizeof(*inst->save_col));
	if (!inst->save_col)
		return -1;
	memset(inst->save_col, 0xff, SL_MAX_FIELDS * sizeof(*inst->save_col));
	for (unsigned id = 0; id < n && id < SL_MAX_FIELDS; id++) {
		if (!in_set(inst->avail, id) || (!guarded && !in_set(below, id)))
			continue;
		inst->save_col[id] = (uint16_t)inst->nsave;
		if (push_field(&inst->save_ids, &inst->nsave, id) ||
		    (in_set(below, id) && push_field(&inst->restore, &inst->nrestore, id)) ||
		    push_run(&inst->save_runs, &inst->nsave_runs, id, inst->save_col[id]))
			return -1;
	}
	inst->save_rec = calloc(batch_size, sizeof(*inst->save_rec));
	inst->save_presence = calloc(batch_size, sizeof(*inst->save_presence));
	inst->save_pos = calloc(batch_size, sizeof(*inst->save_pos));
	inst->save_values = calloc((size_t)batch_size * (inst->nsave ? inst->nsave : 1),
				   sizeof(*inst->save_values));
	return inst->save_rec && inst->save_presence && inst->save_pos && inst->save_values ? 0 : -1;
}

/*
 * The fields a filter or output may not change: those set at the nearest
 * fan-out above it that neither it nor a plugin between provides.
 */
static int plan_guard(struct sl_instance *inst)
{
	uint64_t provided[SL_PRESENCE_WORDS] = {0};
	struct sl_instance *p = inst;

	/* a threaded output writes into its queue's copy (inst_keys_place() decided) */
	if (inst->desc->kind == SL_KIND_OUTPUT && inst->thread)
		return 0;
	for (; p->parent; p = p->parent) {
		add_provides(p, provided);
		if (p->parent->nchildren >= 2)
			break;
	}
	if (!p->parent)
		return 0;
	inst->guard_from = p->parent;
	for (unsigned id = 0; id < SL_MAX_FIELDS; id++) {
		unsigned col = p->parent->save_col ? p->parent->save_col[id] : 0xffff;

		if (in_set(p->parent->avail, id) && !in_set(provided, id) && col != 0xffff &&
		    push_run(&inst->guard, &inst->nguard, id, col))
			return -1;
	}
	if (!inst->nguard)
		inst->guard_from = NULL;
	return 0;
}

int guard_prepare(struct sl_instance *inst, unsigned batch_size)
{
	inst->undeclared_ctr = -1;
	if (inst->desc->kind == SL_KIND_OUTPUT) {
		inst_keys_copy_mask(inst, inst->read_mask);
		inst->read_masked = false;
		for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
			inst->read_masked |= inst->read_mask[w] != ~(uint64_t)0;
	}
	if (inst->nchildren >= 2 && plan_fanout(inst, batch_size))
		return -1;
	if (plan_guard(inst))
		return -1;
	/* A kept instance (reload) keeps the counters it had: see take_runtime(). */
	if (inst->guard_from)
		inst->undeclared_ctr = host_table.counter_new(inst, "undeclared_writes");
	return 0;
}

void guard_adopt(struct graph *g)
{
	for (size_t i = 0; i < g->nall; i++)
		if (g->all[i]->guard_from && g->all[i]->undeclared_ctr < 0)
			g->all[i]->undeclared_ctr = host_table.counter_new(g->all[i], "undeclared_writes");
}

void guard_save(struct sl_instance *from, struct sl_batch *b)
{
	unsigned count = b->count;

	memcpy(from->save_rec, b->rec, count * sizeof(*b->rec));
	memset(from->save_pos, 0xff, b->capacity * sizeof(*from->save_pos));
	for (unsigned i = 0; i < count; i++) {
		const struct sl_record *r = b->rec[i];
		union sl_value *saved = from->save_values + (size_t)i * from->nsave;
		size_t off = (size_t)((const uint8_t *)r - b->storage);

		if ((const uint8_t *)r >= b->storage && off < (size_t)b->capacity * b->stride)
			from->save_pos[off / b->stride] = i;
		memcpy(from->save_presence[i], r->present, sizeof(r->present));
		for (size_t k = 0; k < from->nsave_runs; k++) {
			const struct guard_run *g = &from->save_runs[k];

			memcpy(&saved[g->col], &r->v[g->id], g->len * sizeof(*saved));
		}
	}
}

void guard_restore(struct sl_instance *from, struct sl_batch *b, unsigned count)
{
	b->count = count;
	memcpy(b->rec, from->save_rec, count * sizeof(*b->rec));
	for (unsigned i = 0; i < count; i++) {
		const union sl_value *saved = from->save_values + (size_t)i * from->nsave;
		struct sl_record *r = b->rec[i];

		memcpy(r->present, from->save_presence[i], sizeof(r->present));
		for (size_t f = 0; f < from->nrestore; f++)
			r->v[from->restore[f]] = saved[from->save_col[from->restore[f]]];
	}
}

void guard_refused(struct sl_instance *inst, uint64_t n, unsigned first)
{
	const char *name = fields_get(&inst->graph->loader.fields, first)->name;

	host_table.counter_add(inst, inst->undeclared_ctr, n);
	if (inst->undeclared_logged)
		return;
	inst->undeclared_logged = true;
	log_msg(SL_LOG_WARNING,
		"%s: plugin '%s' changed field '%s', which it does not declare in provides: "
		"refused (counted in undeclared_writes; see sluice-plugin(3))",
		inst->name, inst->desc->name, name);
}

/* A run that differs: put back what the record had at the fan-out. */
static uint64_t undo_run(struct sl_record *r, const struct guard_run *g, const uint64_t *had,
			 const union sl_value *saved, unsigned *first)
{
	uint64_t n = 0;

	for (unsigned k = 0; k < g->len; k++) {
		unsigned id = g->id + k;

		/* a field it lacked there: a splice's new record (splice.h) may set it */
		if (!in_set(had, id) || !memcmp(&r->v[id], &saved[g->col + k], sizeof(saved[0])))
			continue;
		r->v[id] = saved[g->col + k];
		if (!n++)
			*first = id;
	}
	return n;
}

void guard_check(struct sl_instance *inst, struct sl_batch *b)
{
	const struct sl_instance *from = inst->guard_from;
	size_t span = (size_t)b->capacity * b->stride;
	unsigned first = 0;
	uint64_t refused = 0;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		size_t off = (size_t)((uint8_t *)r - b->storage);
		unsigned pos;

		/* a record made below the fan-out has nothing to compare with */
		if ((uint8_t *)r < b->storage || off >= span ||
		    (pos = from->save_pos[off / b->stride]) == UINT_MAX)
			continue;
		const union sl_value *saved = from->save_values + (size_t)pos * from->nsave;

		/* a run of fields compared at once: the slow walk only where one differs */
		for (size_t k = 0; k < inst->nguard; k++) {
			const struct guard_run *g = &inst->guard[k];

			if (memcmp(&r->v[g->id], &saved[g->col], g->len * sizeof(saved[0]))) {
				unsigned f = 0;
				uint64_t n = undo_run(r, g, from->save_presence[pos], saved, &f);

				if (n && !refused)
					first = f;
				refused += n;
			}
		}
	}
	if (refused)
		guard_refused(inst, refused, first);
}

void guard_free(struct sl_instance *inst)
{
	free(inst->save_rec);
	free(inst->save_presence);
	free(inst->save_pos);
	free(inst->save_values);
	free(inst->save_ids);
	free(inst->save_col);
	free(inst->save_runs);
	free(inst->restore);
	free(inst->guard);
}
