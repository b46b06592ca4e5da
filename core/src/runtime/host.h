/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runtime side of the core: the struct sl_host table handed to
 * plugins, the batch pool, delivery of batches down the graph (with
 * fan-out), counters, and flushing/stopping every instance (starting
 * them is the reload's, reload.c, at start too).
 */
#ifndef SLUICE_HOST_H
#define SLUICE_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "graph.h"
#include "host_table.h"
#include "runtime.h"

/*
 * A runtime laid out for g's field registry (records, queues), running
 * an empty graph: the start applies g to it as a reload applies a new
 * graph (reload.c).  threads: 0, or daemon.threads (inputs spread over
 * that many threads, made here).  0 or -1.
 */
int host_init(struct runtime *rt, struct graph *g, struct event_loop *loop,
		 unsigned batch_size, unsigned threads);
/*
 * Bind an instance to the runtime and make its fan-out scratch (the start
 * and a reload, for every instance of the graph they apply).  0 or -1.
 */
int host_prepare(struct runtime *rt, struct sl_instance *inst);
/* Run one instance on the batch, here and now, then what is below it. */
void host_process(struct sl_instance *inst, struct sl_batch *b);
/* Start the threads (after the instances' start() and the privilege drop). */
int host_run_threads(struct runtime *rt);
/*
 * Flush and stop everything: inputs first, so held records reach the
 * outputs, then each output queue drains and its output flushes and stops.
 */
void host_shutdown(struct runtime *rt);
/*
 * Reopen every output's files (each on its thread), waiting up to wait_ms
 * for the threads.  The number of instances that failed (or whose thread
 * did not answer in time); msg gets one line "NAME: WHY" for each, with
 * control and non-ASCII bytes written as \xNN.
 */
size_t host_reopen(struct runtime *rt, unsigned wait_ms, char *msg, size_t len);
void host_log_counters(const struct runtime *rt, int level);
void host_free(struct runtime *rt);
/* True when every input is finite and has finished. */
bool host_inputs_finished(const struct runtime *rt);
/*
 * Append text to buf[*used..len) (kept NUL-terminated) with control and
 * non-ASCII bytes and backslashes as \xNN: what a reply repeats of a
 * file name or a plugin's message.
 */
void host_put_escaped(char *buf, size_t len, size_t *used, const char *text);

#endif
