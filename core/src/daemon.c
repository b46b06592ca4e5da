/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The running daemon: signals, start, the privilege drop, the main loop,
 * shutdown; and the operations a running daemon can be asked for.
 */
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
#include "pathcheck.h"
#include "reload.h"
#include "strict.h"

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

int daemon_reopen(struct daemon *d, char *msg, size_t len)
{
	char fails[3072];
	size_t n = runtime_reopen(d->rt, REOPEN_WAIT_MS, fails, sizeof(fails));

	if (!n) {
		snprintf(msg, len, "ok");
		return 0;
	}
	log_msg(SL_LOG_ERR, "reopen: %zu output%s could not reopen %s files", n,
		n == 1 ? "" : "s", n == 1 ? "its" : "their");
	say_not_reopened(msg, len, "", n, fails);
	return -1;
}

int daemon_reload(struct daemon *d, char *msg, size_t len)
{
	char text[2048], head[2080], fails[2048], status[128];
	size_t n;
	int ret;

	notify_reloading(d->notify);
	ret = reload_config(d, text, sizeof(text));
	/* Even after a failed reload: logrotate's postrotate may send HUP. */
	n = runtime_reopen(d->rt, REOPEN_WAIT_MS, fails, sizeof(fails));
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

/* The HTTP server and the notify socket, which only the main loop serves. */
static void daemon_services_stop(struct daemon *d)
{
	metrics_stop(d->metrics);
	d->metrics = NULL;
	notify_close(d->notify);
	d->notify = NULL;
}

static void on_signal(void *ctx, int signo)
{
	struct daemon *d = ctx;

	switch (signo) {
	case SIGTERM:
	case SIGINT:
		log_msg(SL_LOG_NOTICE, "%s: flushing and exiting", strsignal(signo));
		d->exit_signal = signo;
		notify_stopping(d->notify);
		loop_stop(d->loop);
		break;
	case SIGHUP:
	{
		char msg[4096];

		/* reload.c logs what it did and every error */
		daemon_reload(d, msg, sizeof(msg));
		break;
	}
	case SIGUSR1:
		runtime_log_counters(d->rt, SL_LOG_NOTICE);
		break;
	}
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
	if (runtime_run_threads(rt))
		return -1;
	if (rt->nworkers > 1)
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs, %zu threads", g->nall,
			g->ninputs, rt->nworkers);
	else
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs", g->nall, g->ninputs);
	return 0;
}

int daemon_run(struct graph *g, const struct config *cfg, const char *config_file,
	       const struct drop_target *drop)
{
	static const int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0};
	struct daemon d = {.config_file = config_file, .start_time = time(NULL)};
	struct control *ctl = NULL;
	struct pathcheck_marks marks = {0};
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
		loader_load_all(&g->loader, NULL);
		g->loaded_all = true;
	}
	if (reload_init(&d, g, cfg)) {
		log_msg(SL_LOG_ERR, "out of memory");
		return 1;
	}
	strict_init(cfg->strict_plugins);
	d.loop = loop_new();
	if (!d.loop || runtime_init(&rt, g, d.loop, cfg->batch_size, cfg->threads)) {
		log_msg(SL_LOG_ERR, "out of memory");
		goto out_loop;
	}
	d.rt = &rt;
	if (loop_signals(d.loop, signals, on_signal, &d)) {
		log_msg(SL_LOG_ERR, "cannot set up signal handling");
		goto out_runtime;
	}
	/* Bound as root before anything starts: a port in use starts nothing. */
	if (cfg->metrics.enabled && !(d.metrics = metrics_start(&cfg->metrics, &g->loader, &d)))
		goto out_runtime;
	d.notify = notify_open(&d);
	/*
	 * A start check (another daemon answers there, a folder to create):
	 * before any instance makes a file or binds a group.  Made as root,
	 * owned by the user.
	 */
	if (cfg->control_socket &&
	    !(ctl = control_open(&d, cfg->control_socket, drop, err, sizeof(err)))) {
		log_msg(SL_LOG_ERR, "%s", err);
		goto out_services;
	}
	/*
	 * Instances start as the user: every file, folder and spool segment
	 * is the user's from the first one, as at every later reopen, rotation
	 * and reload.  A failed start removes what it created.
	 */
	if (drop_root(drop) || pathcheck_mark(&marks, g))
		goto out_control;
	if (runtime_start(&rt)) {
		pathcheck_undo(&marks);
		goto out_control;
	}
	pathcheck_marks_free(&marks);
	if (run_threads(&rt, g))
		status = 1;
	/* Every input bound, every output open, the threads running. */
	if (!status)
		notify_ready(d.notify);
	if (!status && loop_run(d.loop))
		status = 1;
	if (!d.exit_signal && runtime_inputs_finished(&rt))
		log_msg(SL_LOG_INFO, "every input has finished");
	notify_stopping(d.notify);
	daemon_services_stop(&d);
	control_close(ctl);
	/* stop() closes the last files: count them before reporting. */
	runtime_shutdown(&rt);
	runtime_log_counters(&rt, SL_LOG_INFO);
	runtime_free(&rt);
	reload_free(&d);
	loop_free(d.loop);
	return status;

out_control:
	pathcheck_marks_free(&marks);
	control_close(ctl);
out_services:
	daemon_services_stop(&d);
out_runtime:
	runtime_free(&rt);
out_loop:
	reload_free(&d);
	loop_free(d.loop);
	return 1;
}
