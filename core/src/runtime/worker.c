/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "event_loop.h"
#include "graph.h"
#include "inst_keys.h"
#include "log.h"
#include "queue.h"
#include "runtime.h"
#include "strict.h"
#include "worker.h"

/* Items a worker takes from its queue before it serves its own fds and timers. */
#define DRAIN_PER_TURN 16

/* ---- batch pools ---- */

struct sl_batch *worker_batch_get(struct worker *w)
{
	struct runtime *rt = w->rt;
	struct sl_batch *b;

	if (w->nfree) {
		b = w->free_batches[--w->nfree];
	} else {
		/* Only while the pool grows to what the thread needs at once. */
		b = queue_batch_new(rt->batch_size, rt->stride, rt->arena_size);
		if (b)
			w->nbatches++;
	}
	if (b) {
		b->count = 0;
		b->filled = 0;
		b->arena.used = 0;
	}
	return b;
}

void worker_batch_put(struct worker *w, struct sl_batch *b)
{
	if (!b)
		return;
	if (strict_on)
		strict_poison(b);
	if (w->nfree == w->free_cap) {
		size_t cap = w->free_cap ? w->free_cap * 2 : 16;
		struct sl_batch **grown = realloc(w->free_batches, cap * sizeof(*grown));

		if (!grown) {
			free(b);
			w->nbatches--;
			return;
		}
		w->free_batches = grown;
		w->free_cap = cap;
	}
	w->free_batches[w->nfree++] = b;
}

/* ---- the plan: which instance runs where ---- */

static struct worker *worker_new(struct runtime *rt, struct event_loop *loop, unsigned inbox_max,
				 bool block)
{
	struct worker *w = calloc(1, sizeof(*w)), **grown;
	pthread_condattr_t attr;

	if (!w)
		return NULL;
	grown = realloc(rt->workers, (rt->nworkers + 1) * sizeof(*grown));
	if (!grown) {
		free(w);
		return NULL;
	}
	rt->workers = grown;
	rt->workers[rt->nworkers] = w;
	w->id = (unsigned)rt->nworkers++;
	w->rt = rt;
	pthread_mutex_init(&w->pause_lock, NULL);
	/* Monotonic: worker_reopen() waits with a deadline on it. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->pause_cond, &attr);
	pthread_condattr_destroy(&attr);
	w->loop = loop ? loop : event_loop_new();
	if (!w->loop)
		return NULL;
	/* the main thread: no inbox, signals instead */
	if (!loop && !(w->inbox = queue_new(inbox_max, block, rt->batch_size, rt->stride,
					 rt->queue_arena_size, rt->types, rt->nfields)))
		return NULL;
	/* A few batches up front: the hot path then never allocates. */
	for (int i = 0; i < 4; i++) {
		struct sl_batch *b = queue_batch_new(rt->batch_size, rt->stride, rt->arena_size);

		if (!b)
			return NULL;
		w->nbatches++;
		worker_batch_put(w, b);
	}
	return w;
}

static int place(struct worker *w, struct sl_instance *inst)
{
	struct sl_instance **grown = realloc(w->insts, (w->ninsts + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	w->insts = grown;
	w->insts[w->ninsts++] = inst;
	inst->worker = w;
	return 0;
}

static void on_inbox(void *ctx, int fd, uint32_t events);

/* The k-th (from 1) of daemon.threads' workers, or NULL. */
static struct worker *spread_worker(struct runtime *rt, unsigned k)
{
	for (size_t i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->spread && --k == 0)
			return rt->workers[i];
	return NULL;
}

/*
 * The placement rule, once (docs/ARCHITECTURE.md, "Who runs where").  up:
 * the worker of the instance's parent, NULL for an input.
 */
static struct worker *place_one(struct runtime *rt, struct sl_instance *inst, struct worker *up)
{
	bool input = inst->desc->kind == SL_KIND_INPUT;
	unsigned nthreads = 0;

	if (input && inst->thread)
		return worker_add(rt, NULL);
	if (input && inst->input_thread) {
		for (size_t i = 1; i < rt->nworkers; i++)
			nthreads += rt->workers[i]->spread;
		if (nthreads)
			return spread_worker(rt, (inst->input_thread - 1) % nthreads + 1);
	}
	/* Fed from several threads, inst_keys_place() gave it a thread. */
	if (inst->desc->kind == SL_KIND_OUTPUT && inst->thread)
		return worker_add(rt, inst);
	return up ? up : rt->workers[0];
}

int worker_place(struct runtime *rt, struct graph *g)
{
	/*
	 * Parents come before children in g->all: a child follows its parent.
	 * Outputs are placed last, once every parent they may have is.
	 */
	for (int outputs = 0; outputs < 2; outputs++)
		for (size_t i = 0; i < g->nall; i++) {
			struct sl_instance *inst = g->all[i], *up = inst->parent;

			if (inst->twin || (inst->desc->kind == SL_KIND_OUTPUT) != (bool)outputs)
				continue;
			if (up && up->twin)
				up = up->twin;	/* kept: its twin runs */
			if (!(inst->worker = place_one(rt, inst, up ? up->worker : NULL)))
				return -1;
		}
	return 0;
}

int worker_plan(struct runtime *rt, unsigned nthreads)
{
	if (!worker_new(rt, rt->loop, 0, false))
		return -1;
	for (unsigned i = 0; i < nthreads; i++) {
		struct worker *w = worker_add(rt, NULL);

		if (!w)
			return -1;
		w->spread = true;
	}
	return 0;
}

/* ---- what a worker does ---- */

void worker_feed(struct sl_instance *out, const struct sl_batch *b)
{
	uint64_t dropped = queue_put(out->queue, b);

	if (dropped) {
		/* Never seen by process(): in and dropped, so in == out + dropped + errors. */
		counter_add64(&out->in, dropped);
		counter_add64(&out->dropped, dropped);
		counter_add64(&out->queue->dropped, dropped);
	}
}

/* flush(), stop() or reopen() of every started instance on this worker. */
enum inst_op { OP_FLUSH, OP_STOP, OP_REOPEN };

static void each_started(struct worker *w, enum inst_op op)
{
	static const char *const what[] = {"flush", "stop", "reopen"};

	for (size_t i = 0; i < w->ninsts; i++) {
		struct sl_instance *inst = w->insts[i];
		const struct sl_plugin *p = inst->desc;
		int rc = 0;

		if (op == OP_REOPEN)
			inst->reopen_failed = false;
		if (!inst->started)
			continue;
		if (op == OP_FLUSH && p->flush) {
			rc = p->flush(inst->state);
		} else if (op == OP_REOPEN && p->reopen) {
			/* host_log() keeps the plugin's first error for the answer. */
			inst->in_reopen = true;
			inst->reopen_said = false;
			rc = p->reopen(inst->state);
			inst->in_reopen = false;
			inst->reopen_failed = rc < 0;
			if (rc >= 0)
				inst->reopen_err[0] = 0;
		} else if (op == OP_STOP && p->stop) {
			p->stop(inst->state);
		}
		if (op == OP_STOP)
			inst->started = false;
		if (rc < 0)
			log_msg(SL_LOG_WARNING, "%s: %s failed", inst->name, what[op]);
	}
}

static void flush_here(struct worker *w) { each_started(w, OP_FLUSH); }
static void stop_here(struct worker *w) { each_started(w, OP_STOP); }
static void reopen_here(struct worker *w) { each_started(w, OP_REOPEN); }

/*
 * The queue in order: batches for the output, a reopen between them, and
 * last the stop.  A few items per turn, so the output's own descriptors
 * and timers (a TCP socket draining) are served in between.
 */
/* Reload: wait for the main thread; false if this worker is to end. */
static bool pause_here(struct worker *w)
{
	bool quit;

	pthread_mutex_lock(&w->pause_lock);
	w->paused = true;
	pthread_cond_broadcast(&w->pause_cond);
	while (!w->go)
		pthread_cond_wait(&w->pause_cond, &w->pause_lock);
	w->go = false;
	w->paused = false;
	quit = w->quit;
	pthread_mutex_unlock(&w->pause_lock);
	return !quit;
}

static void on_inbox(void *ctx, int fd, uint32_t events)
{
	struct worker *w = ctx;
	struct bq_item it;

	queue_clear_wakeup(w->inbox);
	for (int k = 0; k < DRAIN_PER_TURN; k++) {
		if (!queue_get(w->inbox, &it))
			return;
		switch (it.kind) {
		case BQ_BATCH:
			if (queue_abandoned(w->inbox)) {
				/* The stop deadline passed: never seen by process(). */
				counter_add64(&w->output->in, it.b->count);
				counter_add64(&w->output->dropped, it.b->count);
				counter_add64(&w->inbox->stop_dropped, it.b->count);
			} else {
				__atomic_store_n(&w->inflight, it.b->count, __ATOMIC_RELAXED);
				w->rt->process(w->output, it.b);
				__atomic_store_n(&w->inflight, 0, __ATOMIC_RELAXED);
			}
			queue_release(w->inbox, it.b);
			break;
		case BQ_REOPEN: {
			/*
			 * This reopen answers every request made before it starts:
			 * reopens in a row coalesce into one queue item.
			 */
			unsigned asked;

			pthread_mutex_lock(&w->pause_lock);
			asked = w->reopen_asked;
			pthread_mutex_unlock(&w->pause_lock);
			reopen_here(w);
			/* The results in the instances, then the answer (worker_reopen waits). */
			pthread_mutex_lock(&w->pause_lock);
			w->reopen_done = asked;
			pthread_cond_broadcast(&w->pause_cond);
			pthread_mutex_unlock(&w->pause_lock);
			break;
		}
		case BQ_STOP:
			flush_here(w);
			stop_here(w);
			event_loop_stop(w->loop);
			return;
		case BQ_PAUSE:
			if (!pause_here(w)) {
				event_loop_stop(w->loop);
				return;
			}
			break;
		}
	}
	queue_wake(w->inbox);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	if (event_loop_run(w->loop))
		log_msg(SL_LOG_ERR, "thread %u: event loop failed", w->id);
	__atomic_store_n(&w->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

int worker_start(struct runtime *rt)
{
	sigset_t all, old;
	int rc = 0;

	/* Signals stay on the main thread: every worker starts with all blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (size_t i = 1; i < rt->nworkers && !rc; i++) {
		struct worker *w = rt->workers[i];
		char name[16];

		if (w->running)
			continue;	/* a reload starts only the new ones */
		__atomic_store_n(&w->finished, false, __ATOMIC_RELAXED);
		__atomic_store_n(&w->join_claimed, false, __ATOMIC_RELAXED);
		if (pthread_create(&w->tid, NULL, worker_main, w)) {
			log_msg(SL_LOG_ERR, "cannot start thread %u", w->id);
			rc = -1;
			break;
		}
		w->running = true;
		snprintf(name, sizeof(name), "sl:%s", w->insts ? w->insts[0]->name : "idle");
		pthread_setname_np(w->tid, name);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Wait until w answered every reopen asked of it, or until the deadline. */
static bool reopen_answered(struct worker *w, const struct timespec *deadline)
{
	bool done;

	pthread_mutex_lock(&w->pause_lock);
	while (w->reopen_done != w->reopen_asked &&
	       pthread_cond_timedwait(&w->pause_cond, &w->pause_lock, deadline) != ETIMEDOUT)
		;
	done = w->reopen_done == w->reopen_asked;
	pthread_mutex_unlock(&w->pause_lock);
	return done;
}

void worker_reopen(struct runtime *rt, unsigned wait_ms)
{
	struct timespec deadline;

	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		w->reopen = REOPEN_ANSWERED;
		if (!w->running || w->stopping || w->quit)
			continue;	/* nothing of it runs any more */
		/* Counted before it is queued: the thread reads it when it takes the item. */
		pthread_mutex_lock(&w->pause_lock);
		w->reopen_asked++;
		pthread_mutex_unlock(&w->pause_lock);
		if (queue_put_ctl(w->inbox, BQ_REOPEN)) {
			log_msg(SL_LOG_WARNING, "thread %u: cannot pass the reopen on", w->id);
			w->reopen = REOPEN_NOT_PASSED;
		}
	}
	reopen_here(rt->workers[0]);
	/*
	 * Each thread reopens after what is queued before: usually at once.
	 * The main loop waits for them, but no longer than wait_ms in all.
	 */
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait_ms / 1000;
	deadline.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		if (w->running && !w->stopping && !w->quit && w->reopen == REOPEN_ANSWERED &&
		    !reopen_answered(w, &deadline))
			w->reopen = REOPEN_LATE;
	}
}

/* Stop one worker after everything queued before, and wait for it. */
static void finish(struct worker *w)
{
	if (!w->running) {
		/* Its thread never ran: nothing was queued, stop here. */
		stop_here(w);
		__atomic_store_n(&w->join_claimed, true, __ATOMIC_RELEASE);	/* nothing to join */
		__atomic_store_n(&w->finished, true, __ATOMIC_RELEASE);
		return;
	}
	while (queue_put_ctl(w->inbox, BQ_STOP))
		;	/* cannot fail: a stop never follows a stop */
	/* the stop guard may join it first, just before it ends the process */
	if (!__atomic_exchange_n(&w->join_claimed, true, __ATOMIC_ACQ_REL))
		pthread_join(w->tid, NULL);
	w->running = false;
}

void worker_join_finished(struct runtime *rt)
{
	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		/* Not w->running: the main thread writes it meanwhile. */
		if (__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE) &&
		    !__atomic_exchange_n(&w->join_claimed, true, __ATOMIC_ACQ_REL))
			pthread_join(w->tid, NULL);
	}
}

void worker_shutdown(struct runtime *rt)
{
	/* Inputs first: held records reach the outputs (and their queues). */
	for (size_t i = 1; i < rt->nworkers; i++)
		if (!rt->workers[i]->output && rt->workers[i]->running)
			queue_put_ctl(rt->workers[i]->inbox, BQ_STOP);
	flush_here(rt->workers[0]);
	for (size_t i = 1; i < rt->nworkers; i++)
		if (!rt->workers[i]->output)
			finish(rt->workers[i]);
	stop_here(rt->workers[0]);
	/*
	 * Then each output's queue drains fully, and the output flushes and
	 * stops: all at once, so one that is stuck holds up no other.
	 */
	for (size_t i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->output && rt->workers[i]->running)
			queue_put_ctl(rt->workers[i]->inbox, BQ_STOP);
	for (size_t i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->output)
			finish(rt->workers[i]);
}

void worker_abandon(struct runtime *rt)
{
	/* Read-only here: a reload never runs once the stop began. */
	for (size_t i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->output)
			queue_abandon(rt->workers[i]->inbox);
}

size_t worker_stop_report(struct runtime *rt, bool stuck)
{
	size_t named = 0;

	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];
		struct sl_instance *out = w->output;
		uint64_t queued = 0, inflight = 0, lost;
		/* Not w->running: the main thread writes it meanwhile. */
		bool busy = stuck && !__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE);

		if (!out)
			continue;
		if (busy) {
			/* Its thread is stuck in the output's code: what it holds stays there. */
			queued = queue_take_queued(w->inbox);
			inflight = __atomic_exchange_n(&w->inflight, 0, __ATOMIC_RELAXED);
			counter_add64(&out->in, queued);
			counter_add64(&out->dropped, queued + inflight);
			counter_take64(&out->out, inflight);
			counter_add64(&w->inbox->stop_dropped, queued + inflight);
		}
		lost = counter_get64(&w->inbox->stop_dropped);
		if (busy)
			log_msg(SL_LOG_ERR,
				"%s: still busy at the stop deadline (daemon.stop_timeout): %llu records "
				"not flushed (%llu in process(), the rest queued), and what it buffered "
				"itself is lost",
				out->name, (unsigned long long)lost, (unsigned long long)inflight);
		else if (lost)
			log_msg(SL_LOG_ERR,
				"%s: %llu records not flushed: dropped at the stop deadline "
				"(daemon.stop_timeout)",
				out->name, (unsigned long long)lost);
		named += busy || lost;
	}
	return named;
}

void worker_free(struct runtime *rt)
{
	for (size_t i = 0; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		for (size_t k = 0; k < w->nfree; k++)
			free(w->free_batches[k]);
		free(w->free_batches);
		free(w->insts);
		if (i) {
			queue_free(w->inbox);
			event_loop_free(w->loop);
		}
		pthread_mutex_destroy(&w->pause_lock);
		pthread_cond_destroy(&w->pause_cond);
		free(w);
	}
	free(rt->workers);
	rt->workers = NULL;
	rt->nworkers = 0;
}

/* ---- reload ---- */

static void pause_one(struct worker *w)
{
	if (!w->running)
		return;
	/* Full only of control items the thread is about to take: try again. */
	while (queue_put_ctl(w->inbox, BQ_PAUSE))
		sched_yield();
	pthread_mutex_lock(&w->pause_lock);
	while (!w->paused)
		pthread_cond_wait(&w->pause_cond, &w->pause_lock);
	pthread_mutex_unlock(&w->pause_lock);
}

void worker_pause(struct runtime *rt)
{
	/*
	 * Inputs first: once they wait, nothing feeds an output queue (the
	 * main thread is here), so each output drains it up to its pause.
	 */
	for (size_t i = 1; i < rt->nworkers; i++)
		if (!rt->workers[i]->output)
			pause_one(rt->workers[i]);
	for (size_t i = 1; i < rt->nworkers; i++)
		if (rt->workers[i]->output)
			pause_one(rt->workers[i]);
}

void worker_resume(struct runtime *rt)
{
	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		pthread_mutex_lock(&w->pause_lock);
		if (w->paused) {
			w->go = true;
			pthread_cond_broadcast(&w->pause_cond);
		}
		pthread_mutex_unlock(&w->pause_lock);
	}
}

struct worker *worker_add(struct runtime *rt, struct sl_instance *output)
{
	struct worker *w = worker_new(rt, NULL, output ? output->queue_batches : 0,
				      output ? output->block_when_full : false);

	if (!w)
		return NULL;
	if (output) {
		w->output = output;
		output->queue = w->inbox;
		output->queue->owner = output;
		inst_keys_copy_mask(output, output->queue->fields.copy);
	}
	if (event_loop_watch(w->loop, w->inbox->efd, EPOLLIN, on_inbox, w)) {
		worker_discard(rt, w);
		return NULL;
	}
	return w;
}

void worker_discard(struct runtime *rt, struct worker *w)
{
	size_t k = 0;

	for (size_t i = 0; i < rt->nworkers; i++)
		if (rt->workers[i] != w)
			rt->workers[k++] = rt->workers[i];
	rt->nworkers = k;
	/* Ids name threads in messages; the remaining keep theirs. */
	for (size_t i = 0; i < w->nfree; i++)
		free(w->free_batches[i]);
	free(w->free_batches);
	free(w->insts);
	if (w->output && w->output->queue == w->inbox)
		w->output->queue = NULL;
	queue_free(w->inbox);
	event_loop_free(w->loop);
	pthread_mutex_destroy(&w->pause_lock);
	pthread_cond_destroy(&w->pause_cond);
	free(w);
}

int worker_replan(struct runtime *rt)
{
	struct graph *g = rt->graph;

	for (size_t i = 0; i < rt->nworkers; i++)
		if (!rt->workers[i]->stopping)
			rt->workers[i]->ninsts = 0;
	/* Outputs last on each worker: flushed after what feeds them. */
	for (int outputs = 0; outputs < 2; outputs++)
		for (size_t i = 0; i < g->nall; i++)
			if ((g->all[i]->desc->kind == SL_KIND_OUTPUT) == (bool)outputs &&
			    place(g->all[i]->worker, g->all[i]))
				return -1;
	return 0;
}

void worker_reap(struct runtime *rt)
{
	for (size_t i = rt->nworkers; i-- > 1;) {
		struct worker *w = rt->workers[i];

		if (!w->quit && !w->stopping)
			continue;
		if (w->running && !__atomic_exchange_n(&w->join_claimed, true, __ATOMIC_ACQ_REL))
			pthread_join(w->tid, NULL);
		w->running = false;
		worker_discard(rt, w);
	}
}

void worker_flush_stop(struct sl_instance *inst)
{
	if (inst->started && inst->desc->flush && inst->desc->flush(inst->state) < 0)
		log_msg(SL_LOG_WARNING, "%s: flush failed", inst->name);
	if (inst->started && inst->desc->stop)
		inst->desc->stop(inst->state);
	inst->started = false;
}
