/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "guard.h"
#include "host_table.h"
#include "inst_keys.h"
#include "log.h"
#include "strict.h"

bool strict_on;
/* Defined by strict_malloc.c, which sanitizer builds leave out. */
extern const bool strict_malloc_linked __attribute__((weak));
__thread bool strict_counting;
__thread uint64_t strict_mallocs;

/*
 * The presence bit below SL_FIELD_REFUSED, when no field has it; set and
 * read directly, since the setters refuse ids the graph lacks.  Cleared
 * from every record the batch handed out before host.c's check for
 * unregistered ids runs.
 */
#define STRICT_MARK (SL_FIELD_REFUSED - 1)
#define STRICT_MARK_BIT ((uint64_t)1 << (STRICT_MARK & 63))

struct strict_inst {
	uint8_t *snap;			/* the batch's records before process() */
	size_t snap_size;
	unsigned snap_filled;
	uint8_t *listed;		/* [slot]: in rec[] before process() */
	unsigned capacity;
	uint64_t provided[SL_PRESENCE_WORDS];
	uint64_t mask[SL_PRESENCE_WORDS];	/* a filter: what it reads */
	bool masked;
	bool marked;			/* STRICT_MARK is free (fewer fields than bits) */
	int mallocs_ctr;
	bool mallocs_logged;
};

void strict_init(bool configured)
{
	const char *env = getenv("SLUICE_STRICT");

	strict_on = configured || (env && strcmp(env, "1") == 0);
	if (strict_on)
		log_msg(SL_LOG_NOTICE, "strict plugin checks on (%s)%s",
			configured ? "daemon.strict_plugins" : "SLUICE_STRICT=1",
			&strict_malloc_linked ? "" :
			"; allocations are not counted in this build (a sanitizer owns malloc)");
}

int strict_prepare(struct sl_instance *inst, unsigned batch_size, size_t stride)
{
	struct strict_inst *s;

	if (!strict_on || inst->desc->kind == SL_KIND_INPUT || inst->strict)
		return 0;
	if (!(s = calloc(1, sizeof(*s))))
		return -1;
	inst->strict = s;
	s->capacity = batch_size;
	s->snap_size = (size_t)batch_size * stride;
	s->snap = malloc(s->snap_size);
	s->listed = malloc(batch_size);
	if (!s->snap || !s->listed)
		return -1;
	for (const struct sl_field_decl *f = inst->desc->provides; f && f->name; f++) {
		int id = fields_lookup(&inst->graph->loader.fields, f->name);

		if (id >= 0)
			s->provided[id >> 6] |= (uint64_t)1 << (id & 63);
	}
	memset(s->mask, 0xff, sizeof(s->mask));
	s->marked = fields_count(&inst->graph->loader.fields) <= STRICT_MARK;
	/* without the mark a filter's hidden fields could not be given back safely */
	if (inst->desc->kind == SL_KIND_FILTER && s->marked) {
		inst_keys_copy_mask(inst, s->mask);
		for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
			s->masked |= s->mask[w] != ~(uint64_t)0;
	}
	if (inst->undeclared_ctr < 0)
		inst->undeclared_ctr = host_table.counter_new(inst, "undeclared_writes");
	s->mallocs_ctr = host_table.counter_new(inst, "strict_mallocs");
	return 0;
}

static unsigned slot_of(const struct sl_batch *b, const struct sl_record *r)
{
	size_t off = (size_t)((const uint8_t *)r - b->storage);

	if ((const uint8_t *)r < b->storage || off >= (size_t)b->capacity * b->stride)
		return ~0u;
	return (unsigned)(off / b->stride);
}

void strict_before(struct sl_instance *inst, struct sl_batch *b)
{
	struct strict_inst *s = inst->strict;

	s->snap_filled = 0;
	if (b->capacity <= s->capacity && (size_t)b->filled * b->stride <= s->snap_size) {
		s->snap_filled = b->filled;
		memcpy(s->snap, b->storage, (size_t)b->filled * b->stride);
		memset(s->listed, 0, s->capacity);
		for (unsigned i = 0; i < b->count; i++) {
			unsigned slot = slot_of(b, b->rec[i]);

			if (slot < s->snap_filled)
				s->listed[slot] = 1;
		}
	}
	if (s->masked)
		guard_mask_reads_with(s->mask, b);
	/*
	 * The records it was handed carry a mark in the presence bit no field
	 * uses: a record in a dropped one's storage (splice.h) starts with no
	 * bit set, so it is told from the one it replaced.
	 */
	if (s->marked)
		for (unsigned i = 0; i < b->count; i++)
			b->rec[i]->present[STRICT_MARK >> 6] |= STRICT_MARK_BIT;
	strict_mallocs = 0;
	strict_counting = true;
}

/* Put back what process() changed of a record without providing it; how many. */
static uint64_t undo_record(const struct strict_inst *s, struct sl_record *r,
			    const struct sl_record *old, unsigned nfields, unsigned *first)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++) {
		for (uint64_t bits = old->present[w] & ~s->provided[w]; bits; bits &= bits - 1) {
			unsigned f = w * 64 + (unsigned)__builtin_ctzll(bits);

			if (f >= nfields || !memcmp(&r->v[f], &old->v[f], sizeof(r->v[f])))
				continue;
			r->v[f] = old->v[f];
			if (!n++ && *first == ~0u)
				*first = f;
		}
		/* a filter's hidden fields come back for the plugins after it */
		if (s->masked)
			r->present[w] |= old->present[w] & ~s->mask[w];
	}
	return n;
}

void strict_after(struct sl_instance *inst, struct sl_batch *b)
{
	struct strict_inst *s = inst->strict;
	unsigned nfields = fields_count(&inst->graph->loader.fields), first = ~0u;
	uint64_t mallocs = strict_mallocs, refused = 0;

	strict_counting = false;
	if (mallocs) {
		host_table.counter_add(inst, s->mallocs_ctr, mallocs);
		if (!s->mallocs_logged) {
			s->mallocs_logged = true;
			log_msg(SL_LOG_WARNING,
				"%s: strict: plugin '%s' allocates memory in process() (%llu calls in "
				"one batch; counted in strict_mallocs)",
				inst->name, inst->desc->name, (unsigned long long)mallocs);
		}
	}
	for (unsigned i = 0; i < b->count; i++) {
		unsigned slot = slot_of(b, b->rec[i]);

		if (slot >= s->snap_filled || !s->listed[slot])
			continue;
		if (s->marked && !(b->rec[i]->present[STRICT_MARK >> 6] & STRICT_MARK_BIT))
			continue;
		refused += undo_record(s, b->rec[i],
				       (const struct sl_record *)(s->snap + (size_t)slot * b->stride),
				       nfields, &first);
	}
	if (s->marked)
		for (unsigned i = 0; i < b->filled; i++)
			((struct sl_record *)(b->storage + (size_t)i * b->stride))
				->present[STRICT_MARK >> 6] &= ~STRICT_MARK_BIT;
	if (refused)
		guard_refused(inst, refused, first);
}

void strict_poison(struct sl_batch *b)
{
	memset(b->storage, 0xa5, (size_t)b->capacity * b->stride);
	memset(b->arena.base, 0xa5, b->arena.size);
}

void strict_free(struct sl_instance *inst)
{
	if (!inst->strict)
		return;
	free(inst->strict->snap);
	free(inst->strict->listed);
	free(inst->strict);
	inst->strict = NULL;
}
