/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The running daemon: signals, start, the privilege drop, the main loop,
 * shutdown; and the operations a running daemon can be asked for.
 */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "event_loop.h"
#include "host.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "queue.h"
#include "reload.h"
#include "stats.h"
#include "stop.h"
#include "strict.h"
#include "tail.h"
#include "worker.h"

/*
 * How long a reopen waits for the outputs on threads of their own: each
 * reopens after what is queued before it, usually at once.  The main loop
 * stands still meanwhile; within the control socket's deadline.
 */
#define REOPEN_WAIT_MS 3000

/* "N outputs not reopened:" and their lines, after head (may be empty). */
static void say_not_reopened(char *msg, size_t len, const char *head, size_t n,
			     const char *fails)
{
	snprintf(msg, len, "%s%s%zu output%s not reopened:\n%s", head, *head ? "\n" : "", n,
		 n == 1 ? "" : "s", fails);
}

/* A reload or reopen cannot run while the main thread waits for room. */
static bool busy_waiting(struct daemon *d, const char *what, char *msg, size_t len)
{
	if (!d->waiting_for)
		return false;
	snprintf(msg, len, "cannot %s now: the inputs on the main thread wait for room in the "
		 "queue of '%s' (when_full: block), whose output does not keep up; try again once "
		 "it drains", what, d->waiting_for->name);
	log_msg(SL_LOG_WARNING, "%s", msg);
	return true;
}

int daemon_reopen(struct daemon *d, char *msg, size_t len)
{
	char fails[3072];
	size_t n;

	if (busy_waiting(d, "reopen", msg, len))
		return -1;
	d->in_op = true;
	n = host_reopen(d->rt, REOPEN_WAIT_MS, fails, sizeof(fails));
	d->in_op = false;
	if (!n) {
		snprintf(msg, len, "ok");
		return 0;
	}
	log_msg(SL_LOG_ERR, "reopen: %zu output%s could not reopen %s files", n,
		n == 1 ? "" : "s", n == 1 ? "its" : "their");
	say_not_reopened(msg, len, "", n, fails);
	return -1;
}

int daemon_reload(struct daemon *d, daemon_reload_cb cb, void *ctx)
{
	char msg[512];

	if (busy_waiting(d, "reload", msg, sizeof(msg))) {
		if (cb)
			cb(ctx, -1, msg);
		return 0;
	}
	return reload_ask(d, cb, ctx);
}

void daemon_reload_forget(struct daemon *d, void *ctx)
{
	reload_forget(d, ctx);
}

void daemon_reload_begins(struct daemon *d)
{
	notify_reloading(d->notify);
}

int daemon_reload_ends(struct daemon *d, int ret, const char *text, char *msg, size_t len)
{
	char head[2080], fails[2048], status[128];
	size_t n;

	/* Even after a failed reload: logrotate's postrotate may send HUP. */
	n = host_reopen(d->rt, REOPEN_WAIT_MS, fails, sizeof(fails));
	if (ret >= 0 && !n) {
		snprintf(msg, len, "ok: %s", ret ? "configuration unchanged, files reopened" : text);
		notify_reloaded(d->notify, NULL);
		return 0;
	}
	if (n)
		log_msg(SL_LOG_ERR, "reload: %zu output%s could not reopen %s files", n,
			n == 1 ? "" : "s", n == 1 ? "its" : "their");
	if (ret < 0) {
		if (n)
			say_not_reopened(msg, len, text, n, fails);
		else
			snprintf(msg, len, "%s", text);
		notify_reloaded(d->notify, "reload failed, running the previous configuration; "
				"see the log");
		return -1;
	}
	/* The configuration is in place; some files are not. */
	snprintf(head, sizeof(head), "%s%s", ret ? "configuration unchanged" : "reloaded: ",
		 ret ? "" : text);
	say_not_reopened(msg, len, head, n, fails);
	snprintf(status, sizeof(status), "reload: %zu output%s not reopened; see the log", n,
		 n == 1 ? "" : "s");
	notify_reloaded(d->notify, status);
	return -1;
}

/* The control socket's commands (control.h): the daemon's operations above. */
static int ctl_stats(void *ctx, struct stats_snap *s)
{
	const struct daemon *d = ctx;

	return stats_take(s, d->rt, d->start_time, d->reloads_ok, d->reloads_failed);
}

static int ctl_reload(void *ctx, daemon_reload_cb answer, void *asker)
{
	return daemon_reload(ctx, answer, asker);
}

static void ctl_reload_forget(void *ctx, void *asker)
{
	daemon_reload_forget(ctx, asker);
}

static int ctl_reopen(void *ctx, char *msg, size_t len)
{
	return daemon_reopen(ctx, msg, len);
}

static int ctl_rules(void *ctx, FILE *out)
{
	const struct daemon *d = ctx;

	return metrics_text_rules(d->rt, out);
}

static int ctl_tail(void *ctx, const char *inst, int json, const char *where, char *err,
		    size_t errlen)
{
	const struct daemon *d = ctx;

	return tail_session_open(d->rt, inst, json, where, err, errlen);
}

/* What a scrape of daemon.metrics serves (metrics.h). */
static int metrics_render(void *ctx, struct metrics_text *t)
{
	const struct daemon *d = ctx;

	return metrics_text_render(d->rt, d->start_time, d->reloads_ok, d->reloads_failed, t);
}

static const struct control_ops ctl_ops = {
	.stats = ctl_stats,
	.reload = ctl_reload,
	.reload_forget = ctl_reload_forget,
	.reopen = ctl_reopen,
	.rules = ctl_rules,
	.tail = ctl_tail,
};

/* The HTTP server and the notify socket, which only the main loop serves. */
static void daemon_services_stop(struct daemon *d)
{
	metrics_stop(d->metrics);
	d->metrics = NULL;
	notify_close(d->notify);
	d->notify = NULL;
}

/* SIGHUP, or one that came while the main thread waited for room. */
static void hup(struct daemon *d)
{
	if (d->waiting_for) {
		if (!d->hup_pending)
			log_msg(SL_LOG_NOTICE, "SIGHUP: the reload waits until the queue of '%s' has "
				"room (when_full: block)", d->waiting_for->name);
		d->hup_pending = true;
		return;
	}
	d->hup_pending = false;
	/* reload.c logs what it did and every error */
	if (daemon_reload(d, NULL, NULL))
		log_msg(SL_LOG_ERR, "reload: out of memory");
}

static void on_hup_timer(void *ctx)
{
	struct daemon *d = ctx;

	if (d->hup_pending)
		hup(d);
}

static void on_signal(void *ctx, int signo)
{
	struct daemon *d = ctx;

	switch (signo) {
	case SIGTERM:
	case SIGINT:
		if (d->exit_signal)
			break;	/* the deadline runs already */
		log_msg(SL_LOG_NOTICE, "%s: flushing and exiting (at most %llu ms: daemon.stop_timeout)",
			strsignal(signo), (unsigned long long)d->stop_timeout_ms);
		d->exit_signal = signo;
		d->stop = stop_guard_start(d->rt, d->stop_timeout_ms);
		notify_stopping(d->notify);
		event_loop_stop(d->loop);
		break;
	case SIGHUP:
		hup(d);
		break;
	case SIGUSR1:
		host_log_counters(d->rt, SL_LOG_NOTICE);
		break;
	}
}

/*
 * The main thread's inputs hand a batch to an output whose queue is full
 * (when_full: block): wait for room, serving signals, the control socket
 * and the metrics meanwhile, so the daemon stays answerable and TERM ends
 * it.  Back-pressure stalls the inputs here, nothing else.  Inside a
 * reload or reopen nothing is served (they are in the middle of the
 * graph): only the wait.
 */
static int wait_room(void *ctx, struct bqueue *q)
{
	struct daemon *d = ctx;

	if (d->in_op || d->waiting_for) {
		struct pollfd pfd = {.fd = q->room_fd, .events = POLLIN};

		poll(&pfd, 1, -1);
		return 0;
	}
	d->waiting_for = q->owner;
	event_loop_serve(d->loop, q->room_fd, -1);
	d->waiting_for = NULL;
	/* A SIGHUP that came meanwhile: on the next turn of the loop. */
	if (d->hup_pending && d->hup_timer)
		event_loop_timer_arm(d->hup_timer, 0, 0);
	return 0;
}

/* The sockets that need root are bound: the instances start as the user. */
static int drop_root(const struct drop_target *drop)
{
	char err[256];

	if (!drop)
		return 0;
	if (geteuid() != 0) {
		log_msg(SL_LOG_WARNING, "not running as root: daemon.user ignored");
		return 0;
	}
	if (privileges_drop(drop, err, sizeof(err))) {
		log_msg(SL_LOG_ERR, "%s", err);
		return -1;
	}
	log_msg(SL_LOG_INFO, "running as user %s (keeping CAP_NET_ADMIN)", drop->name);
	return 0;
}

/* Threads start after the drop, so each inherits the reduced credentials. */
static int run_threads(struct runtime *rt, const struct graph *g)
{
	if (host_run_threads(rt))
		return -1;
	if (rt->nworkers > 1)
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs, %zu threads", g->nall,
			g->ninputs, rt->nworkers);
	else
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs", g->nall, g->ninputs);
	return 0;
}

/* A plugin on the path that cannot be used: the file and why, never silence. */
static void log_load_error(const char *msg, bool error)
{
	if (error)
		log_msg(SL_LOG_WARNING, "%s; the plugin is skipped", msg);
	else	/* shadowed by design (an override earlier on the path): -v shows it */
		log_msg(SL_LOG_DEBUG, "%s", msg);
}

int daemon_run(struct graph *g, const struct config *cfg, const char *config_file,
	       const struct drop_target *drop)
{
	static const int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0};
	struct daemon d = {.config_file = config_file, .start_time = time(NULL),
			   .stop_timeout_ms = cfg->stop_timeout_ms};
	struct bq_waiter waiter = {wait_room, &d};
	struct control *ctl = NULL;
	struct runtime rt;
	char err[512];
	int status = 0;

	/* A vanished TCP peer must be an EPIPE for the output, not our death. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Every field any plugin on the path registers gets its id now, so
	 * records are laid out for every graph a reload may build (reload.c).
	 */
	if (!g->loaded_all) {
		plugin_loader_load_all(&g->loader, log_load_error);
		g->loaded_all = true;
	}
	if (reload_init(&d, g, cfg)) {
		log_msg(SL_LOG_ERR, "out of memory");
		return 1;
	}
	strict_init(cfg->strict_plugins);
	d.loop = event_loop_new();
	if (!d.loop || host_init(&rt, g, d.loop, cfg->batch_size, cfg->threads)) {
		log_msg(SL_LOG_ERR, "out of memory");
		goto out_loop;
	}
	d.rt = &rt;
	d.hup_timer = event_loop_timer_new(d.loop, on_hup_timer, &d);
	if (!d.hup_timer || event_loop_signals(d.loop, signals, on_signal, &d)) {
		log_msg(SL_LOG_ERR, "cannot set up signal handling");
		goto out_runtime;
	}
	/* Bound as root before anything starts: a port in use starts nothing. */
	if (cfg->metrics.enabled && !(d.metrics = metrics_start(&cfg->metrics, &g->loader, d.loop,
						     metrics_render, &d)))
		goto out_runtime;
	d.notify = notify_open(d.loop, d.rt);
	/*
	 * A start check (another daemon answers there, a folder to create):
	 * before any instance makes a file or binds a group.  Made as root,
	 * owned by the user.
	 */
	if (cfg->control_socket &&
	    !(ctl = control_open(d.loop, &ctl_ops, &d, cfg->control_socket, drop, err,
				  sizeof(err)))) {
		log_msg(SL_LOG_ERR, "%s", err);
		goto out_services;
	}
	/*
	 * Instances start as the user: every file, folder and spool segment
	 * is the user's from the first one, as at every later reopen, rotation
	 * and reload.  The start is a reload from the empty graph: a failed
	 * one is rolled back as a reload is, and removes what it created.
	 */
	if (drop_root(drop) || reload_start(&d))
		goto out_control;
	if (run_threads(&rt, g))
		status = 1;
	/* Every input bound, every output open, the threads running. */
	if (!status)
		notify_ready(d.notify);
	queue_set_waiter(&waiter);
	if (!status && event_loop_run(d.loop))
		status = 1;
	reload_cancel(&d);
	if (!d.exit_signal && host_inputs_finished(&rt))
		log_msg(SL_LOG_INFO, "every input has finished");
	notify_stopping(d.notify);
	daemon_services_stop(&d);
	control_close(ctl);
	/*
	 * stop() closes the last files: count them before reporting.  Within
	 * daemon.stop_timeout after SIGTERM, or stop.c ends the process.
	 */
	host_shutdown(&rt);
	queue_set_waiter(NULL);
	/* Given up at the deadline, but finished: named, and a failure all the same. */
	if (stop_guard_end(d.stop) && worker_stop_report(&rt, false))
		status = STOP_EXIT_STATUS;
	host_log_counters(&rt, SL_LOG_INFO);
	host_free(&rt);
	reload_free(&d);
	event_loop_free(d.loop);
	return status;

out_control:
	control_close(ctl);
out_services:
	daemon_services_stop(&d);
out_runtime:
	host_free(&rt);
out_loop:
	reload_free(&d);
	event_loop_free(d.loop);
	return 1;
}
