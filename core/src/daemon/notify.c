/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sd_notify(3)'s documented datagram protocol: newline-separated
 * KEY=VALUE lines in one datagram to the AF_UNIX socket $NOTIFY_SOCKET
 * names (a path, or an abstract name written with a leading '@').  The
 * socket is made before the privilege drop; sending needs no privilege.
 * A lost datagram is not an error worth more than a debug line: systemd
 * times out or restarts us, which is the watchdog's point.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "event_loop.h"
#include "graph.h"
#include "log.h"
#include "notify.h"
#include "options.h"
#include "runtime.h"

/* STATUS= is refreshed this often (ms): `systemctl status` reads it. */
#define NOTIFY_STATUS_MS 3000

struct notify {
	const struct runtime *rt;	/* its graph changes at a reload */
	int fd;
	struct sockaddr_un addr;
	socklen_t addrlen;
	uint64_t watchdog_ms;		/* ping period: half of $WATCHDOG_USEC; 0: none */
	struct loop_timer *status_timer, *watchdog_timer;
	bool stopping;
	char failure[160];		/* the last reload's failure, "" after a good one */
};

static void send_text(struct notify *n, const char *text)
{
	if (sendto(n->fd, text, strlen(text), MSG_NOSIGNAL, (const struct sockaddr *)&n->addr,
		   n->addrlen) < 0)
		log_msg(SL_LOG_DEBUG, "notify: %s", strerror(errno));
}

/*
 * What the last reload failed at, if it did, then records in (what inputs
 * passed on), out (what outputs accepted), dropped, errors.
 */
static void status_line(const struct notify *n, char *buf, size_t len)
{
	const struct graph *g = n->rt->graph;
	uint64_t in = 0, out = 0, dropped = 0, errors = 0;

	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		if (inst->desc->kind == SL_KIND_INPUT)
			in += counter_get64(&inst->out);
		if (inst->desc->kind == SL_KIND_OUTPUT) {
			out += counter_get64(&inst->out);
			dropped += counter_get64(&inst->dropped);
		}
		errors += counter_get64(&inst->errors);
	}
	snprintf(buf, len, "STATUS=%s%srecords in %llu, out %llu, dropped %llu, errors %llu",
		 n->failure, n->failure[0] ? "; " : "", (unsigned long long)in,
		 (unsigned long long)out, (unsigned long long)dropped, (unsigned long long)errors);
}

static void on_status(void *ctx)
{
	char line[400];

	status_line(ctx, line, sizeof(line));
	send_text(ctx, line);
}

static void on_watchdog(void *ctx)
{
	send_text(ctx, "WATCHDOG=1");
}

/* $WATCHDOG_USEC, unless $WATCHDOG_PID says the pings are for another process. */
static uint64_t watchdog_period_ms(void)
{
	const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	int64_t v, p;

	if (!usec || options_parse_int(usec, &v) || v <= 0)
		return 0;
	if (pid && (options_parse_int(pid, &p) || p != (int64_t)getpid()))
		return 0;
	return (uint64_t)v / 2000 ? (uint64_t)v / 2000 : 1;
}

struct notify *notify_open(struct event_loop *loop, const struct runtime *rt)
{
	const char *name = getenv("NOTIFY_SOCKET");
	struct notify *n;
	size_t len;

	if (!name || !*name)
		return NULL;
	len = strlen(name);
	if ((name[0] != '/' && name[0] != '@') || len >= sizeof(n->addr.sun_path)) {
		log_msg(SL_LOG_WARNING, "NOTIFY_SOCKET '%s' is neither a path nor an abstract "
			"name (@...): not notifying", name);
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->rt = rt;
	n->addr.sun_family = AF_UNIX;
	memcpy(n->addr.sun_path, name, len);
	if (name[0] == '@')
		n->addr.sun_path[0] = 0;	/* abstract: no terminating NUL is part of it */
	n->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
				 (name[0] == '/'));
	n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	n->watchdog_ms = watchdog_period_ms();
	n->status_timer = event_loop_timer_new(loop, on_status, n);
	if (n->watchdog_ms)
		n->watchdog_timer = event_loop_timer_new(loop, on_watchdog, n);
	/* Services: the loop is alive while the inputs wait for room (daemon.c). */
	if (n->status_timer)
		event_loop_timer_service(n->status_timer);
	if (n->watchdog_timer)
		event_loop_timer_service(n->watchdog_timer);
	if (n->fd < 0 || !n->status_timer || (n->watchdog_ms && !n->watchdog_timer)) {
		log_msg(SL_LOG_WARNING, "notify: cannot set up: %s", strerror(errno));
		notify_close(n);
		return NULL;
	}
	return n;
}

void notify_ready(struct notify *n)
{
	char msg[400];

	if (!n)
		return;
	strcpy(msg, "READY=1\n");
	status_line(n, msg + strlen(msg), sizeof(msg) - strlen(msg));
	send_text(n, msg);
	event_loop_timer_arm(n->status_timer, NOTIFY_STATUS_MS, NOTIFY_STATUS_MS);
	if (n->watchdog_ms) {
		send_text(n, "WATCHDOG=1");
		event_loop_timer_arm(n->watchdog_timer, n->watchdog_ms, n->watchdog_ms);
	}
}

void notify_reloading(struct notify *n)
{
	struct timespec ts;
	char msg[96];

	if (!n)
		return;
	/* systemd >= 253 (Type=notify-reload) matches the reload by this timestamp. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	send_text(n, msg);
}

void notify_reloaded(struct notify *n, const char *failure)
{
	char msg[400];

	if (!n)
		return;
	/* Kept for every STATUS= until a reload succeeds. */
	snprintf(n->failure, sizeof(n->failure), "%s", failure ? failure : "");
	strcpy(msg, "READY=1\n");
	status_line(n, msg + strlen(msg), sizeof(msg) - strlen(msg));
	send_text(n, msg);
}

void notify_stopping(struct notify *n)
{
	if (!n || n->stopping)
		return;
	n->stopping = true;
	event_loop_timer_disarm(n->status_timer);
	send_text(n, "STOPPING=1");
}

void notify_close(struct notify *n)
{
	if (!n)
		return;
	if (n->status_timer)
		event_loop_timer_free(n->status_timer);
	if (n->watchdog_timer)
		event_loop_timer_free(n->watchdog_timer);
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}
