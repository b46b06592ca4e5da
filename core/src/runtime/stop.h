/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stop deadline (daemon.stop_timeout).  From SIGTERM on, a thread of
 * its own keeps the time, whatever the main thread and the outputs are
 * stuck in.  A grace before the deadline (a fifth of it, at most 1 s) it
 * abandons every output queue (worker_abandon()): no producer waits for
 * room any more, what is still queued is dropped and counted, and the
 * outputs that are not stuck flush what they hold and close their files
 * within the grace.  At the deadline, if the shutdown has not finished,
 * it names each output still busy with the records it did not flush,
 * logs the counters and ends the process with STOP_EXIT_STATUS: a thread
 * blocked in a write() cannot be joined, and exit()'s destructors must
 * not run under it, so _exit().
 */
#ifndef SLUICE_STOP_H
#define SLUICE_STOP_H

#include <stdbool.h>
#include <stdint.h>

struct runtime;
struct stop_guard;

/* Exit status when records were given up at the stop deadline (sluice(8)). */
#define STOP_EXIT_STATUS 1

/* Start keeping the time: the deadline is timeout_ms from now.  NULL on failure (logged). */
struct stop_guard *stop_guard_start(struct runtime *rt, uint64_t timeout_ms);
/*
 * The shutdown finished in time: end the guard (waits for it).  true when
 * it abandoned the queues, so records may have been dropped: the caller
 * logs them (worker_stop_report()) and, if there were any, exits with
 * STOP_EXIT_STATUS.
 */
bool stop_guard_end(struct stop_guard *g);

#endif
