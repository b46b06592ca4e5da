/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The interface between the core and its HTTP module (metrics_http.so,
 * plugins/service/metrics_http.c), which links libmicrohttpd so that the
 * core does not have to.  The core binds the listening socket itself (a
 * clear error for a port in use, before anything starts) and hands it
 * over; the module serves GET /metrics from text the core renders.
 *
 * Everything runs on the main thread: the module runs libmicrohttpd
 * without a thread of its own, the core watches the descriptor epoll_fd()
 * returns and calls run() when it is readable and when timeout_ms() has
 * passed.  It is the core's private interface (the module is built with
 * the core, from the same tree), not part of the plugin ABI.
 */
#ifndef SLUICE_METRICS_MODULE_H
#define SLUICE_METRICS_MODULE_H

#include <stddef.h>
#include <stdint.h>

/* The file, looked up on the plugin search path; --list-plugins skips it. */
#define SL_METRICS_MODULE_NAME "metrics_http"
/* Bumped on any change below; the core refuses another version. */
#define SL_METRICS_IFACE_VERSION 1
#define SL_METRICS_ENTRY "sluice_metrics_entry"

/* The body of one response: the core's buffer, valid until the next call. */
typedef int (*sl_metrics_render_fn)(void *ctx, const char **text, size_t *len);
typedef void (*sl_metrics_log_fn)(void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct sl_metrics_server;

struct sl_metrics_module {
	uint32_t version;		/* SL_METRICS_IFACE_VERSION */
	uint32_t size;			/* sizeof(struct sl_metrics_module) */
	/*
	 * Serve HTTP on listen_fd (bound and listening, non-blocking; the
	 * module owns it from now on, also when this fails).  NULL and a
	 * message in err on failure.
	 */
	struct sl_metrics_server *(*start)(int listen_fd, sl_metrics_render_fn render,
					   sl_metrics_log_fn log, void *ctx, char *err,
					   size_t errlen);
	int (*epoll_fd)(struct sl_metrics_server *srv);
	/* Handle whatever is ready (never blocks).  0, or -1 if the server failed. */
	int (*run)(struct sl_metrics_server *srv);
	/* Milliseconds until run() must be called even if nothing is ready; -1: none. */
	int64_t (*timeout_ms)(struct sl_metrics_server *srv);
	/* Close every connection and the listening socket. */
	void (*stop)(struct sl_metrics_server *srv);
};

typedef const struct sl_metrics_module *(*sl_metrics_entry_fn)(void);

#endif
