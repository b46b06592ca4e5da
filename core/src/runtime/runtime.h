/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The running graph's shared state, below both halves of the runtime:
 * host.c (delivery, the plugins' host functions, starting and stopping
 * instances) and worker.c (the threads, their loops and batch pools).
 * Also the counter helpers every thread uses.
 */
#ifndef SLUICE_RUNTIME_H
#define SLUICE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

struct event_loop;
struct graph;
struct sl_batch;
struct sl_instance;
struct worker;

struct runtime {
	struct graph *graph;
	struct event_loop *loop;	/* the main thread's */
	unsigned batch_size;
	size_t stride;			/* bytes per record */
	size_t arena_size;		/* bytes of text arena per batch */
	size_t queue_arena_size;	/* the same, for a batch in an output's queue */
	struct worker **workers;	/* [0]: the main thread (worker.c) */
	size_t nworkers;
	uint8_t types[SL_MAX_FIELDS];	/* enum sl_type of each field, for queue copies */
	unsigned nfields;
	/* presence bits of ids no field of this graph has, SL_FIELD_REFUSED's too */
	uint64_t beyond[SL_PRESENCE_WORDS];
	size_t inputs_done;		/* atomic: inputs finish on their own threads */
	/*
	 * host_process() (host.c), which an output's thread (worker.c)
	 * runs each batch of its queue through: handed down, so the threads
	 * need nothing of host.c.
	 */
	void (*process)(struct sl_instance *inst, struct sl_batch *b);
};

/* Counters are written on one thread and read on another (SIGUSR1, exit). */
static inline void counter_add64(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* Take up to n back (never below zero); what was taken. */
static inline uint64_t counter_take64(uint64_t *c, uint64_t n)
{
	uint64_t have = __atomic_load_n(c, __ATOMIC_RELAXED);

	if (n > have)
		n = have;
	__atomic_fetch_sub(c, n, __ATOMIC_RELAXED);
	return n;
}

static inline uint64_t counter_get64(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif
