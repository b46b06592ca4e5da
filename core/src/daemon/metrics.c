/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Serving daemon.metrics: bind the socket (before anything starts, as
 * root, so a port in use is a plain start failure), dlopen the HTTP
 * module from the plugin search path (the core itself links no HTTP
 * library), and run it on the main loop: its epoll descriptor is watched
 * there and its timeout is a loop timer, so each scrape renders the graph
 * on the thread that owns (and reloads) it.
 */
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event_loop.h"
#include "log.h"
#include "metrics.h"
#include "metrics_module.h"
#include "plugin_loader.h"

struct metrics {
	struct event_loop *loop;
	metrics_render_fn render;
	void *ctx;			/* render's */
	void *handle;
	const struct sl_metrics_module *mod;
	struct sl_metrics_server *srv;
	int epfd;
	struct loop_timer *timer;
	struct metrics_text text;
};

static int render(void *ctx, const char **text, size_t *len)
{
	struct metrics *m = ctx;

	if (m->render(m->ctx, &m->text) < 0)
		return -1;
	*text = m->text.buf;
	*len = m->text.len;
	return 0;
}

static void module_log(void *ctx, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(SL_LOG_WARNING, "%s", msg);
}

/* After every run(): when libmicrohttpd wants to be called again regardless. */
static void rearm(struct metrics *m)
{
	int64_t ms = m->mod->timeout_ms(m->srv);

	if (ms < 0)
		event_loop_timer_disarm(m->timer);
	else
		event_loop_timer_arm(m->timer, (uint64_t)ms, 0);
}

static void serve(struct metrics *m)
{
	if (m->mod->run(m->srv) < 0)
		log_msg(SL_LOG_WARNING, "metrics: libmicrohttpd failed to serve a request");
	rearm(m);
}

static void on_ready(void *ctx, int fd, uint32_t events)
{
	serve(ctx);
}

static void on_timeout(void *ctx)
{
	serve(ctx);
}

static int listen_socket(const struct metrics_config *mc)
{
	int fd = socket(mc->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;

	if (fd < 0) {
		log_msg(SL_LOG_ERR, "daemon.metrics: socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (mc->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&mc->addr, mc->addrlen) < 0 || listen(fd, 16) < 0) {
		log_msg(SL_LOG_ERR, "daemon.metrics: cannot listen on %s: %s", mc->listen,
			strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* metrics_http.so from the first directory of the plugin search path that has it. */
static int load_module(struct metrics *m, const struct plugin_loader *l)
{
	sl_metrics_entry_fn entry;
	char path[4096];

	for (size_t i = 0; i < l->ndirs && !m->handle; i++) {
		snprintf(path, sizeof(path), "%s/%s.so", l->dirs[i], SL_METRICS_MODULE_NAME);
		if (access(path, F_OK) != 0)
			continue;
		m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!m->handle) {
			log_msg(SL_LOG_ERR, "daemon.metrics: %s", dlerror());
			return -1;
		}
	}
	if (!m->handle) {
		log_msg(SL_LOG_ERR,
			"daemon.metrics: %s.so is not on the plugin search path (%s%s); was sluice "
			"built with -DSLUICE_WITH_METRICS=OFF?", SL_METRICS_MODULE_NAME,
			l->ndirs ? l->dirs[0] : "", l->ndirs > 1 ? ", ..." : "");
		return -1;
	}
	entry = (sl_metrics_entry_fn)dlsym(m->handle, SL_METRICS_ENTRY);
	m->mod = entry ? entry() : NULL;
	if (!m->mod || m->mod->version != SL_METRICS_IFACE_VERSION ||
	    m->mod->size < sizeof(*m->mod)) {
		log_msg(SL_LOG_ERR, "daemon.metrics: %s is not a metrics module of interface "
			"version %d", path, SL_METRICS_IFACE_VERSION);
		return -1;
	}
	return 0;
}

struct metrics *metrics_start(const struct metrics_config *mc, const struct plugin_loader *l,
			      struct event_loop *loop, metrics_render_fn fill, void *ctx)
{
	struct metrics *m = calloc(1, sizeof(*m));
	char err[256];
	int fd;

	if (!m) {
		log_msg(SL_LOG_ERR, "out of memory");
		return NULL;
	}
	m->loop = loop;
	m->render = fill;
	m->ctx = ctx;
	m->epfd = -1;
	if (load_module(m, l) || (fd = listen_socket(mc)) < 0)
		goto fail;
	m->srv = m->mod->start(fd, render, module_log, m, err, sizeof(err));
	if (!m->srv) {
		log_msg(SL_LOG_ERR, "daemon.metrics: %s", err);
		goto fail;
	}
	m->epfd = m->mod->epoll_fd(m->srv);
	m->timer = event_loop_timer_new(loop, on_timeout, m);
	if (m->timer)
		event_loop_timer_service(m->timer);	/* scraped also while the inputs wait */
	if (m->epfd < 0 || !m->timer || event_loop_watch_service(loop, m->epfd, EPOLLIN, on_ready, m)) {
		log_msg(SL_LOG_ERR, "daemon.metrics: cannot watch the HTTP server's descriptor");
		m->epfd = -1;
		goto fail;
	}
	rearm(m);
	log_msg(SL_LOG_INFO, "metrics: serving http://%s/metrics", mc->listen);
	return m;
fail:
	metrics_stop(m);
	return NULL;
}

void metrics_stop(struct metrics *m)
{
	if (!m)
		return;
	if (m->epfd >= 0)
		event_loop_unwatch(m->loop, m->epfd);
	if (m->timer)
		event_loop_timer_free(m->timer);
	if (m->srv)
		m->mod->stop(m->srv);
	/* The module stays mapped, as plugins do: nothing of it is referenced after this. */
	metrics_text_free(&m->text);
	free(m);
}
