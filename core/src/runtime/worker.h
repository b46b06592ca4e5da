/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Threads.  A worker is a thread with its own event loop and batch pool;
 * worker 0 is the main thread (signals, and every instance not placed
 * elsewhere).  An input with `thread: true` (or spread by daemon.threads)
 * gets a worker, and its whole subtree runs there; an output with a thread
 * gets a worker of its own, fed through its bounded queue (queue.c).  The
 * plugin code of one instance runs on one thread at a time: configure() and
 * start() on the main thread before any worker thread exists, process(),
 * flush(), reopen() and stop() on its worker's thread.  A reload
 * (reload.c) pauses every thread first, then starts new instances and
 * flushes and stops removed ones on the main thread while they wait; the
 * start is a reload onto an empty graph, with no thread running yet.
 */
#ifndef SLUICE_WORKER_H
#define SLUICE_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct runtime;
struct sl_batch;
struct sl_instance;

struct worker {
	unsigned id;
	struct runtime *rt;
	struct event_loop *loop;
	struct bqueue *inbox;		/* NULL on the main thread */
	struct sl_instance *output;	/* an output worker: the output it runs */
	struct sl_instance **insts;	/* instances run here, in graph order */
	size_t ninsts;
	/* the batch pool (not shared: each thread takes from its own) */
	struct sl_batch **free_batches;
	size_t nfree, free_cap, nbatches;
	pthread_t tid;
	bool running;
	bool finished;			/* atomic: the thread left its loop (stop deadline) */
	bool join_claimed;		/* atomic: the main thread or the stop guard joins it */
	unsigned inflight;		/* atomic: records of the batch in process(), output threads */
	bool spread;			/* one of daemon.threads' (kept while empty) */
	/* reload: the thread waits here while the main thread rewires the graph */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	bool paused, go, quit;
	bool stopping;			/* reload: BQ_STOP queued, joined and freed after */
	/*
	 * reopen, under pause_lock: requests made, and how many of them the
	 * thread had seen when it began its last reopen; then the outcome of
	 * the last worker_reopen() for this thread (main thread only).
	 */
	unsigned reopen_asked, reopen_done;
	enum { REOPEN_ANSWERED, REOPEN_NOT_PASSED, REOPEN_LATE } reopen;
};

struct graph;

/*
 * The workers that run whatever the graph (host_init): the main
 * thread's, and daemon.threads' (kept while empty).  The instances are
 * placed when started, at start as at a reload (worker_place()).  0 or -1.
 */
int worker_plan(struct runtime *rt, unsigned nthreads);
/*
 * Where each instance of g runs, the one placement rule of the start and
 * of a reload: sets inst->worker for every instance a reload does not
 * keep (inst->twin; a kept parent's place is its twin's).  An input with
 * `thread: true`, and an output with a thread (its own, or the one
 * inst_keys_place() gave it when fed from several threads), get a new
 * worker, not started, appended to rt->workers; an input spread by
 * daemon.threads goes to its slot's worker; a filter or an output without
 * a thread runs where its parent runs, any other input on the main
 * thread.  worker_replan() then builds the workers' lists.  0, or -1 (out
 * of memory: what it made stays in rt->workers, from where it was).
 */
int worker_place(struct runtime *rt, struct graph *g);
/* Start the threads (after every start() and the privilege drop). 0 or -1. */
int worker_start(struct runtime *rt);
/*
 * Reopen: every instance reopens, on its own thread, after what it was
 * handed; each records its result (inst->reopen_failed, reopen_err).
 * Waits up to wait_ms for the threads' answers; w->reopen says, per
 * thread, whether it answered in time (only then are its results read).
 */
void worker_reopen(struct runtime *rt, unsigned wait_ms);
/*
 * TERM, or every input done: inputs stop and flush, their subtrees with
 * them; then each output queue drains, and its output flushes and stops.
 */
void worker_shutdown(struct runtime *rt);
/*
 * The stop deadline (stop.c), from any thread: no producer waits for
 * room any more, and each output thread drops what is still queued
 * (counted), then flushes and stops its output.
 */
void worker_abandon(struct runtime *rt);
/*
 * Log, for each output, the records not written because of the stop
 * deadline; with stuck, also take what is queued for the outputs whose
 * thread has not finished (and the batch in their process()), count it
 * and name them.  The number of outputs named.
 */
size_t worker_stop_report(struct runtime *rt, bool stuck);
/*
 * The stop deadline, just before the process ends: join the output and
 * input threads that have finished and that the main thread is not
 * joining, so an exit leaves no finished thread unjoined (a thread stuck
 * in an output cannot be joined, and is not waited for).
 */
void worker_join_finished(struct runtime *rt);
void worker_free(struct runtime *rt);

/*
 * Reload (reload.c).  worker_pause(): every running thread waits at a
 * point between two items of its queue: the inputs' threads first, then
 * the outputs' once their queues are drained, so nothing is in flight and
 * the main thread may call any instance and change any worker.
 * worker_resume() lets them go on (those marked quit leave their loop).
 */
void worker_pause(struct runtime *rt);
void worker_resume(struct runtime *rt);
/* A new worker (not started) for an input thread, or for an output and its queue. */
struct worker *worker_add(struct runtime *rt, struct sl_instance *output);
/* Remove a worker whose thread is not running (or was joined) and free it. */
void worker_discard(struct runtime *rt, struct worker *w);
/* Rebuild every worker's instance list from inst->worker: graph order, outputs last. */
int worker_replan(struct runtime *rt);
/* Join the workers marked quit or stopping, and free them. */
void worker_reap(struct runtime *rt);
/* Stop the instances placed on w, here (w paused or not running). */
void worker_flush_stop(struct sl_instance *inst);

/* A producer hands a batch to a threaded output: copied, or dropped and counted. */
void worker_feed(struct sl_instance *out, const struct sl_batch *b);

/* The batch pool of the thread an instance runs on. */
struct sl_batch *worker_batch_get(struct worker *w);
void worker_batch_put(struct worker *w, struct sl_batch *b);

#endif
