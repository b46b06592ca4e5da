/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.metrics: the configuration (metrics_config.c), the Prometheus
 * text of the running daemon (metrics_text.c), and the HTTP module the
 * core loads to serve it (metrics.c, metrics_module.h).
 */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "metrics_config.h"

/* The rendered text, and the scratch it is rendered with (kept between scrapes). */
struct metrics_text {
	char *buf;
	size_t len, cap;
	bool failed;			/* out of memory while rendering */
	struct metrics_family_row *rows;	/* plugin counters, sorted into families */
	size_t nrows, caprows;
};

struct daemon;
/* Render every metric of the daemon into t->buf.  0, or -1 (out of memory). */
int metrics_text_render(const struct daemon *d, struct metrics_text *t);
void metrics_text_free(struct metrics_text *t);

struct plugin_loader;
struct metrics;
/*
 * Bind the listening socket, load the module from the plugin search
 * path, and serve on the main loop.  NULL after logging why (the port is
 * in use, the module is missing): a start failure.
 */
struct metrics *metrics_start(const struct metrics_config *mc, const struct plugin_loader *l,
			      struct daemon *d);
void metrics_stop(struct metrics *m);

#endif
