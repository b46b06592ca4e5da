/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict mode for plugin development (SLUICE_STRICT=1, or
 * daemon.strict_plugins: true; fixed at start).  For every filter and
 * output, on top of what guard.c always does:
 *   - every field present before its process() that it does not provide
 *     and whose value changed is put back and counted (undeclared_writes),
 *     wherever it runs, not only below a fan-out;
 *   - malloc(), calloc() and realloc() calls made inside process() are
 *     counted (strict_mallocs; the daemon's executable wraps glibc's
 *     allocator, strict_malloc.c: not in sanitizer builds);
 *   - a filter sees only the fields it needs and reads, as an output does;
 *   - a batch returned to a pool is overwritten with 0xa5 bytes, so a
 *     plugin that kept a pointer into it reads garbage at once.
 * The first finding of each kind is logged per instance.
 */
#ifndef SLUICE_STRICT_H
#define SLUICE_STRICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"

extern bool strict_on;
/* Counted by strict_malloc.c while strict_counting is set (this thread). */
extern __thread bool strict_counting;
extern __thread uint64_t strict_mallocs;

/* SLUICE_STRICT=1 or the configuration's daemon.strict_plugins. */
void strict_init(bool configured);
/* inst's snapshots for batches of batch_size records of stride bytes.  0 or -1. */
int strict_prepare(struct sl_instance *inst, unsigned batch_size, size_t stride);
void strict_before(struct sl_instance *inst, struct sl_batch *b);
void strict_after(struct sl_instance *inst, struct sl_batch *b);
/* A batch going back to a pool. */
void strict_poison(struct sl_batch *b);
void strict_free(struct sl_instance *inst);

#endif
