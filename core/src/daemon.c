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

#include "daemon.h"
#include "event_loop.h"
#include "host.h"
#include "log.h"
#include "reload.h"

int daemon_reopen(struct daemon *d, char *msg, size_t len)
{
	runtime_reopen(d->rt);
	snprintf(msg, len, "ok");
	return 0;
}

int daemon_reload(struct daemon *d, char *msg, size_t len)
{
	return reload_config(d, msg, len);
}

static void on_signal(void *ctx, int signo)
{
	struct daemon *d = ctx;

	switch (signo) {
	case SIGTERM:
	case SIGINT:
		log_msg(SL_LOG_NOTICE, "%s: flushing and exiting", strsignal(signo));
		d->exit_signal = signo;
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

int daemon_run(struct graph *g, const struct config *cfg, const char *config_file,
	       const struct drop_target *drop)
{
	static const int signals[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, 0};
	struct daemon d = {.config_file = config_file, .start_time = time(NULL)};
	struct runtime rt;
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
	d.loop = loop_new();
	if (!d.loop || runtime_init(&rt, g, d.loop, cfg->batch_size, cfg->threads)) {
		log_msg(SL_LOG_ERR, "out of memory");
		return 1;
	}
	d.rt = &rt;
	if (loop_signals(d.loop, signals, on_signal, &d)) {
		log_msg(SL_LOG_ERR, "cannot set up signal handling");
		return 1;
	}
	if (runtime_start(&rt)) {
		runtime_free(&rt);
		loop_free(d.loop);
		return 1;
	}
	/* Every socket and file is open: root is no longer needed. */
	if (drop && geteuid() == 0) {
		char err[256];

		if (privileges_drop(drop, err, sizeof(err))) {
			log_msg(SL_LOG_ERR, "%s", err);
			runtime_stop(&rt);
			runtime_free(&rt);
			loop_free(d.loop);
			return 1;
		}
		log_msg(SL_LOG_INFO, "running as user %s (keeping CAP_NET_ADMIN)", drop->name);
	} else if (drop) {
		log_msg(SL_LOG_WARNING, "not running as root: daemon.user ignored");
	}
	/* Threads start after the drop, so each inherits the reduced credentials. */
	if (runtime_run_threads(&rt))
		status = 1;
	else if (rt.nworkers > 1)
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs, %zu threads", g->nall,
			g->ninputs, rt.nworkers);
	else
		log_msg(SL_LOG_INFO, "started: %zu instances, %zu inputs", g->nall, g->ninputs);
	if (!status && loop_run(d.loop))
		status = 1;
	if (!d.exit_signal && runtime_inputs_finished(&rt))
		log_msg(SL_LOG_INFO, "every input has finished");
	/* stop() closes the last files: count them before reporting. */
	runtime_shutdown(&rt);
	runtime_log_counters(&rt, SL_LOG_INFO);
	runtime_free(&rt);
	reload_free(&d);
	loop_free(d.loop);
	return status;
}

