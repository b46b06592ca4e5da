/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime side of the core: the struct sl_host table handed to
 * plugins, the batch pool, delivery of batches down the graph (with
 * fan-out), counters, and starting/flushing/stopping every instance.
 */
#ifndef SLUICE_HOST_H
#define SLUICE_HOST_H

#include <stdbool.h>
#include <stdio.h>

#include "graph.h"

struct event_loop;

extern const struct sl_host sluice_host;

struct runtime {
	struct graph *graph;
	struct event_loop *loop;
	unsigned batch_size;
	size_t stride;			/* bytes per record */
	size_t arena_size;		/* bytes of text arena per batch */
	struct sl_batch **free_batches;	/* the pool */
	size_t nfree, free_cap;
	size_t nbatches;		/* allocated in all */
	size_t inputs_done;
};

int runtime_init(struct runtime *rt, struct graph *g, struct event_loop *loop,
		 unsigned batch_size);
/* Start every instance, outputs first; on failure stop what started. */
int runtime_start(struct runtime *rt);
/* Flush every instance, inputs first, so held records reach the outputs. */
void runtime_flush(struct runtime *rt);
void runtime_reopen(struct runtime *rt);
void runtime_log_counters(const struct runtime *rt, int level);
/* Stop every started instance, inputs first. */
void runtime_stop(struct runtime *rt);
void runtime_free(struct runtime *rt);
/* True when every input is finite and has finished. */
bool runtime_inputs_finished(const struct runtime *rt);

#endif
