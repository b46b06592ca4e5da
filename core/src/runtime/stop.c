/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "log.h"
#include "stop.h"
#include "worker.h"

struct stop_guard {
	struct runtime *rt;
	uint64_t timeout_ms;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* monotonic: done */
	bool done, abandoned;
	struct timespec abandon_at, exit_at;
};

static struct timespec mono_after(uint64_t ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (time_t)(ms / 1000);
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* Under the lock: wait for done or the time; true when done. */
static bool wait_done(struct stop_guard *g, const struct timespec *at)
{
	while (!g->done && pthread_cond_timedwait(&g->cond, &g->lock, at) != ETIMEDOUT)
		;
	return g->done;
}

static void *guard_main(void *arg)
{
	struct stop_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	if (!wait_done(g, &g->abandon_at)) {
		g->abandoned = true;
		pthread_mutex_unlock(&g->lock);
		log_msg(SL_LOG_WARNING, "stop: daemon.stop_timeout (%llu ms) nearly over: what is "
			"still queued is dropped, the outputs write what they hold and close",
			(unsigned long long)g->timeout_ms);
		worker_abandon(g->rt);
		pthread_mutex_lock(&g->lock);
	}
	if (wait_done(g, &g->exit_at)) {
		pthread_mutex_unlock(&g->lock);
		return NULL;
	}
	/* Kept locked: stop_guard_end() cannot return (and the runtime go) under the report. */
	log_msg(SL_LOG_ERR, "stop: not finished within daemon.stop_timeout (%llu ms): exiting",
		(unsigned long long)g->timeout_ms);
	worker_stop_report(g->rt, true);
	host_log_counters(g->rt, SL_LOG_INFO);
	worker_join_finished(g->rt);
	fflush(stdout);
	fflush(stderr);
	_exit(STOP_EXIT_STATUS);
}

struct stop_guard *stop_guard_start(struct runtime *rt, uint64_t timeout_ms)
{
	struct stop_guard *g = calloc(1, sizeof(*g));
	uint64_t grace = timeout_ms / 5 < 1000 ? timeout_ms / 5 : 1000;
	pthread_condattr_t attr;
	sigset_t all, old;
	int rc;

	if (!g) {
		log_msg(SL_LOG_ERR, "stop: out of memory: no stop deadline");
		return NULL;
	}
	g->rt = rt;
	g->timeout_ms = timeout_ms;
	g->abandon_at = mono_after(timeout_ms - grace);
	g->exit_at = mono_after(timeout_ms);
	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cond, &attr);
	pthread_condattr_destroy(&attr);
	/* Signals stay on the main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&g->tid, NULL, guard_main, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		log_msg(SL_LOG_ERR, "stop: cannot start a thread: no stop deadline");
		pthread_cond_destroy(&g->cond);
		pthread_mutex_destroy(&g->lock);
		free(g);
		return NULL;
	}
	pthread_setname_np(g->tid, "sl:stop");
	return g;
}

bool stop_guard_end(struct stop_guard *g)
{
	bool abandoned;

	if (!g)
		return false;
	pthread_mutex_lock(&g->lock);
	g->done = true;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->tid, NULL);
	abandoned = g->abandoned;
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
	return abandoned;
}
