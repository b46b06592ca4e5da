/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics_http.so: GET /metrics over libmicrohttpd for the core
 * (core/src/metrics_module.h).  libmicrohttpd runs without a thread of
 * its own (MHD_USE_EPOLL): the core watches its epoll descriptor on the
 * main loop and calls run(), so the text is rendered on the thread that
 * owns the graph, with no locks.  Nothing here knows what a metric is.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics_module.h"

/* Connections in all, and from one client address (see srv_start). */
#define SL_METRICS_CONNECTIONS 64
#define SL_METRICS_PER_CLIENT 4

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct sl_metrics_server {
	struct MHD_Daemon *mhd;
	sl_metrics_render_fn render;
	sl_metrics_log_fn log;
	void *ctx;
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct sl_metrics_server *srv = cls;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	srv->log(srv->ctx, "metrics: %s", msg);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *body,
			     size_t len, const char *type, bool allow_get)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (allow_get)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

#define REPLY_TEXT(conn, status, text, allow_get) \
	reply(conn, status, text, sizeof(text) - 1, "text/plain", allow_get)

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct sl_metrics_server *srv = cls;
	const char *text;
	size_t len;

	/* Answered on the first call: no request here has a body worth reading. */
	if (strcmp(url, "/metrics") != 0)
		return REPLY_TEXT(conn, MHD_HTTP_NOT_FOUND, "not found: only /metrics is served\n",
				  false);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
		return REPLY_TEXT(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: GET only\n",
				  true);
	if (srv->render(srv->ctx, &text, &len) < 0)
		return REPLY_TEXT(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", false);
	return reply(conn, MHD_HTTP_OK, text, len, CONTENT_TYPE, false);
}

static struct sl_metrics_server *srv_start(int fd, sl_metrics_render_fn render,
					   sl_metrics_log_fn log, void *ctx, char *err,
					   size_t errlen)
{
	struct sl_metrics_server *srv = calloc(1, sizeof(*srv));

	if (!srv) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	srv->render = render;
	srv->log = log;
	srv->ctx = ctx;
	/*
	 * A scraper needs one connection; a few more for a curl next to it.
	 * One client (address) gets PER_CLIENT of them, so one host holding
	 * idle connections cannot take the CONNECTIONS every other one needs;
	 * idle connections are closed after 10 s so none is held for long.
	 */
	srv->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request,
				    srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
				    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned)SL_METRICS_CONNECTIONS,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				    (unsigned)SL_METRICS_PER_CLIENT,
				    MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!srv->mhd) {
		close(fd);
		free(srv);
		snprintf(err, errlen, "libmicrohttpd did not start (see the messages above)");
		return NULL;
	}
	return srv;
}

static int srv_epoll_fd(struct sl_metrics_server *srv)
{
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->mhd,
							       MHD_DAEMON_INFO_EPOLL_FD);

	return info ? info->epoll_fd : -1;
}

static unsigned srv_connections(struct sl_metrics_server *srv)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return info ? info->num_connections : 0;
}

/*
 * At the connection limit libmicrohttpd takes the listening socket out of
 * its epoll set, and puts it back only at the start of a later MHD_run():
 * connections closed during a run are freed at its end.  If that run
 * closed the last of them, nothing would ever make the epoll descriptor
 * ready again and /metrics would stay dead.  So run again as long as a
 * run closed connections: the next one re-arms the listener (it ends,
 * as every run frees fewer connections than there were).
 */
static int srv_run(struct sl_metrics_server *srv)
{
	unsigned before, after;

	do {
		before = srv_connections(srv);
		if (MHD_run(srv->mhd) != MHD_YES)
			return -1;
		after = srv_connections(srv);
	} while (after < before);
	return 0;
}

static int64_t srv_timeout_ms(struct sl_metrics_server *srv)
{
	MHD_UNSIGNED_LONG_LONG ms;

	if (MHD_get_timeout(srv->mhd, &ms) != MHD_YES)
		return -1;
	return ms > INT64_MAX ? INT64_MAX : (int64_t)ms;
}

static void srv_stop(struct sl_metrics_server *srv)
{
	MHD_stop_daemon(srv->mhd);	/* closes the listening socket too */
	free(srv);
}

static const struct sl_metrics_module module = {
	.version = SL_METRICS_IFACE_VERSION,
	.size = sizeof(struct sl_metrics_module),
	.start = srv_start,
	.epoll_fd = srv_epoll_fd,
	.run = srv_run,
	.timeout_ms = srv_timeout_ms,
	.stop = srv_stop,
};

__attribute__((visibility("default"))) const struct sl_metrics_module *sluice_metrics_entry(void);
__attribute__((visibility("default"))) const struct sl_metrics_module *sluice_metrics_entry(void)
{
	return &module;
}
