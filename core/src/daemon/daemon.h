/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The running daemon: the event loop, the runtime of the current graph,
 * and the operations that signals and (later) the control socket ask
 * for.  Everything here runs on the main thread.
 */
#ifndef SLUICE_DAEMON_H
#define SLUICE_DAEMON_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "graph.h"
#include "privileges.h"

struct event_loop;
struct metrics;
struct notify;
struct loop_timer;
struct reload_state;
struct runtime;
struct sl_instance;
struct stop_guard;

struct daemon {
	struct event_loop *loop;
	struct runtime *rt;		/* the running graph's */
	const char *config_file;	/* what a reload reads again */
	int exit_signal;
	time_t start_time;		/* wall clock, for stats and metrics */
	uint64_t reloads_ok;		/* main thread only */
	uint64_t reloads_failed;
	struct metrics *metrics;	/* daemon.metrics; NULL: not configured */
	struct notify *notify;		/* $NOTIFY_SOCKET; NULL: not asked */
	struct reload_state *reload;	/* reload.c: the running graph and configurations */
	uint64_t stop_timeout_ms;	/* daemon.stop_timeout, of the running configuration */
	struct stop_guard *stop;	/* from SIGTERM on: the stop deadline (stop.c) */
	/*
	 * The output whose full queue (when_full: block) the main thread
	 * waits on, serving only signals and the control socket meanwhile;
	 * NULL when it does not wait.  A reload or reopen waits for it.
	 */
	struct sl_instance *waiting_for;
	bool in_op;			/* inside a reload or reopen: waits serve nothing */
	bool hup_pending;		/* SIGHUP while waiting: reload once it is over */
	struct loop_timer *hup_timer;
};

/*
 * Start everything, run until TERM/INT or every input has finished.
 * Returns the exit status: 0, or 1 (a failed start or loop, or records
 * given up at the stop deadline: STOP_EXIT_STATUS).
 */
int daemon_run(struct graph *g, const struct config *cfg, const char *config_file,
	       const struct drop_target *drop);

/* A reload's answer: rc 0 or -1, "ok: ..." or the reasons, one a line. */
typedef void (*daemon_reload_cb)(void *ctx, int rc, const char *msg);
/*
 * What SIGHUP does: reload the configuration, then reopen every output's
 * files, even when the reload failed.  The file is read and checked off
 * the main thread (reload.h, reload_ask()); cb (may be NULL) gets the
 * answer; counted in reloads_ok/failed.  0, or -1: out of memory.
 */
int daemon_reload(struct daemon *d, daemon_reload_cb cb, void *ctx);
/* The asker ctx went away before its answer. */
void daemon_reload_forget(struct daemon *d, void *ctx);
/* For reload_read.c: a reload begins (systemd's RELOADING=1). */
void daemon_reload_begins(struct daemon *d);
/*
 * For reload_read.c: a reload has been applied (ret: reload_apply()'s;
 * text its answer): reopen every output's files, tell systemd, and write
 * the whole answer into msg.  0 or -1.
 */
int daemon_reload_ends(struct daemon *d, int ret, const char *text, char *msg, size_t len);
/*
 * Reopen every output's files (logrotate); same contract as reload.  Both
 * refuse while the main thread waits for room in a queue (waiting_for):
 * the instances they would call are in the middle of a batch.
 */
int daemon_reopen(struct daemon *d, char *msg, size_t len);

#endif
