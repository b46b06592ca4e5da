/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a plugin may write and see (plugin ABI 1.3, issue 19).
 *
 * A fan-out saves, before its first branch, the presence bits of each
 * record and the values of every field set at that point; before each
 * next branch it restores the presence bits and the fields that plugins
 * below declare in `provides`.  Every filter and synchronous output below
 * a fan-out is checked after its process(): a field present at the
 * fan-out that it (or a plugin between it and the fan-out) does not
 * provide and whose value changed is put back, counted in the instance's
 * `undeclared_writes` and logged once.  So no plugin changes what another
 * stack sees.  An output sees only the fields it reads (`reads`, its
 * needs), on its own thread (the queue's copy) or not (presence masked
 * in place before its process()).
 */
#ifndef SLUICE_GUARD_H
#define SLUICE_GUARD_H

#include "graph.h"

/* Fields [id, id + len) of a record, saved in columns [col, col + len) of its fan-out's row. */
struct guard_run {
	uint16_t id, col, len;
};

/* Plan inst's guard, read mask and (for a fan-out) its scratch.  0 or -1. */
int guard_prepare(struct sl_instance *inst, unsigned batch_size);
/*
 * A reload, after the swap, with every thread paused: a kept instance
 * keeps its counters, and gets undeclared_writes if it is guarded now.
 */
void guard_adopt(struct graph *g);
/* A fan-out: save the batch before its first branch. */
void guard_save(struct sl_instance *from, struct sl_batch *b);
/* A fan-out: the batch as saved, before its next branch. */
void guard_restore(struct sl_instance *from, struct sl_batch *b, unsigned count);
/* After inst's process(): put back what it changed without providing it. */
void guard_check(struct sl_instance *inst, struct sl_batch *b);
/* Refused writes of inst: counted, and logged the first time (first: a field id). */
void guard_refused(struct sl_instance *inst, uint64_t n, unsigned first);
void guard_free(struct sl_instance *inst);

/* Hide the fields outside mask (presence bits only). */
static inline void guard_mask_reads_with(const uint64_t *mask, struct sl_batch *b)
{
	for (unsigned i = 0; i < b->count; i++)
		for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
			b->rec[i]->present[w] &= mask[w];
}

/* Before an output's process(): hide the fields it does not read. */
static inline void guard_mask_reads(const struct sl_instance *inst, struct sl_batch *b)
{
	guard_mask_reads_with(inst->read_mask, b);
}

#endif
