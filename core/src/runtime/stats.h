/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A snapshot of the running daemon's counters (every instance's, and the
 * daemon's own), and its two renderings: JSON for scripts and an aligned
 * table for people.  The daemon takes snapshots for the control socket;
 * `sluice stats` reads the JSON back (stats_parse.c) to print the table
 * and, with --watch, rates between two snapshots.
 */
#ifndef SLUICE_STATS_H
#define SLUICE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct runtime;

struct stats_counter {
	char *name;
	uint64_t value;
};

struct stats_inst {
	char *name;
	char *plugin;
	char *kind;			/* input, filter, output */
	char **stacks;			/* every stack through it (shared prefixes) */
	size_t nstacks;
	uint64_t in, out, dropped, errors;
	struct stats_counter *counters;	/* the plugin's own */
	size_t ncounters;
	bool queued;			/* runs on its own thread behind a queue */
	uint64_t queue_depth;		/* batches queued or in process() now */
	uint64_t queue_capacity;	/* its bound, in batches */
	uint64_t queue_high;		/* most batches ever in use at once */
	uint64_t queue_bytes;		/* memory of the batches in use now */
	uint64_t queue_dropped;		/* records refused: queue full */
};

struct stats_snap {
	char *version;
	int64_t start_time;		/* unix seconds */
	int64_t now;			/* unix seconds, when taken */
	uint64_t reloads_ok, reloads_failed;
	struct stats_inst *inst;
	size_t n;
};

/*
 * Every instance's counters of rt now, with the daemon's own: when it
 * started (unix seconds) and its reloads so far.  0, or -1 (out of memory).
 */
int stats_take(struct stats_snap *s, const struct runtime *rt, int64_t start_time,
	       uint64_t reloads_ok, uint64_t reloads_failed);
void stats_free(struct stats_snap *s);

void stats_write_json(const struct stats_snap *s, FILE *out);
/*
 * The aligned table.  With prev (an earlier snapshot of the same daemon,
 * secs seconds before), also per-second rates of in/out/dropped/errors.
 */
void stats_write_table(const struct stats_snap *s, const struct stats_snap *prev, double secs,
		       FILE *out);

/* Read stats_write_json()'s output back.  0, or -1 with a reason in err. */
int stats_parse_json(struct stats_snap *s, const char *text, char *err, size_t errlen);

#endif
