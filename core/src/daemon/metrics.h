/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon.metrics: the configuration (metrics_config.c), the Prometheus
 * text of the running daemon (metrics_text.c), and the HTTP module the
 * core loads to serve it (metrics.c, metrics_module.h).
 */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

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

struct runtime;
/*
 * Render every metric into t->buf: rt's instances, and the daemon's own
 * numbers (when it started, in unix seconds; its reloads so far).  0, or
 * -1 (out of memory).
 */
int metrics_text_render(const struct runtime *rt, int64_t start_time, uint64_t reloads_ok,
			uint64_t reloads_failed, struct metrics_text *t);
void metrics_text_free(struct metrics_text *t);
/*
 * `sluice stats --rules`: the plugins' per-rule series
 * (sluice_rule_records_total, sluice_rule_bytes_total) as a table, the
 * busiest rule first, values from rulesets escaped.  0, or -1 (out of
 * memory).
 */
int metrics_text_rules(const struct runtime *rt, FILE *out);

struct event_loop;
struct plugin_loader;
struct metrics;
/*
 * What a scrape serves: fill(ctx, t) fills t (metrics_text_render()
 * with the daemon's numbers, daemon.c), on the main loop.  0 or -1.
 */
typedef int (*metrics_render_fn)(void *ctx, struct metrics_text *t);
/*
 * Bind the listening socket, load the module from the plugin search
 * path, and serve on loop.  NULL after logging why (the port is in use,
 * the module is missing): a start failure.
 */
struct metrics *metrics_start(const struct metrics_config *mc, const struct plugin_loader *l,
			      struct event_loop *loop, metrics_render_fn fill, void *ctx);
void metrics_stop(struct metrics *m);

#endif
