/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stack graph: every configured element becomes one instance; stacks
 * that start alike share their common prefix, so the graph is a forest
 * whose roots are inputs and whose leaves are outputs.  Building it checks
 * everything that can be checked before start: plugins exist, positions
 * fit kinds, options are valid, every needed field is provided upstream,
 * and each plugin's own configure() accepts its options.
 */
#ifndef SLUICE_GRAPH_H
#define SLUICE_GRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "options.h"
#include "plugin_loader.h"
#include "strset.h"

struct runtime;
struct guard_run;

struct named_counter {
	char *name;
	uint64_t value;
};

struct sl_instance {
	char *name;
	const struct sl_plugin *desc;
	struct ymark mark;		/* where it was first written */
	const struct ynode *opts;	/* its options mapping (may be NULL) */
	bool named;			/* declared under instances: */
	char *key;			/* identity_key(): sharing and reload; NULL if !opts_valid */
	bool opts_valid;		/* options and core keys parsed without error */
	char *bare_key;			/* "\x01PLUGIN" in the siblings' set, once used bare */

	struct sl_instance *parent;
	struct sl_instance **children;
	size_t nchildren;
	struct strset kids;		/* unnamed children by key, for prefix sharing */
	const char **stacks;		/* stacks running through it */
	size_t nstacks;
	uint64_t avail[SL_PRESENCE_WORDS]; /* fields set once this element ran */
	uint64_t asked[SL_PRESENCE_WORDS]; /* fields configure() asked for: need_field(), read_field() */
	uint64_t subtree_reads[SL_PRESENCE_WORDS]; /* inputs: what their subtree reads (inst_keys.c) */

	struct opt_values opt;		/* opt.config: filled from the option table */
	void *state;			/* from configure() */
	bool configured, started, done;

	/* counters */
	uint64_t in, out, dropped, errors;
	uint64_t batch_fail_ms;		/* last warning about a failed process() */
	bool batch_fail_logged;
	uint64_t bad_field_writes;	/* records it wrote an unregistered id on (host.c) */
	bool bad_field_logged;
	struct named_counter *counters;
	size_t ncounters;
	sl_series_cb series_cb;		/* series_source(): the plugin's labelled series */
	void *series_ctx;

	/* fan-out scratch: the batch as it was before the first child ran */
	struct sl_record **save_rec;
	uint64_t (*save_presence)[SL_PRESENCE_WORDS];
	sl_field *restore;		/* fields set here that a branch below may overwrite */
	size_t nrestore;
	union sl_value *save_values;	/* [record][save]: the fields of save_ids */
	sl_field *save_ids;		/* avail here when something below is guarded, else restore */
	size_t nsave;
	uint16_t *save_col;		/* field id -> its column in save_values (guard.c) */
	struct guard_run *save_runs;	/* save_ids as runs of contiguous ids */
	size_t nsave_runs;
	unsigned *save_pos;		/* record slot in the batch's storage -> index in save_rec */
	const struct sl_batch *guard_batch; /* the batch being delivered to the children now */

	/* undeclared writes (guard.c): checked against the nearest fan-out above */
	struct sl_instance *guard_from;	/* that fan-out; NULL: nothing to guard */
	struct guard_run *guard;	/* fields set there that this instance does not provide */
	size_t nguard;			/* runs of them: contiguous ids and saved columns */
	int undeclared_ctr;		/* named counter "undeclared_writes", -1: none */
	bool undeclared_logged;
	uint64_t read_mask[SL_PRESENCE_WORDS]; /* an output sees only these (inst_keys_copy_mask) */
	bool read_masked;		/* read_mask is not every field */
	struct strict_inst *strict;	/* strict mode (strict.c); NULL when off */

	struct graph *graph;
	struct runtime *rt;
	unsigned taps;			/* atomic: bits of the tail sessions fed here (tap.h) */
	bool configuring;		/* config_error() allowed */

	/* threads (inst_keys.c reads the keys, worker.c places the instance) */
	bool thread;			/* runs on a thread of its own */
	bool thread_set;		/* `thread:` written (not the default) */
	bool block_when_full;		/* when_full: block */
	unsigned queue_batches;		/* queue: bound of its inbox, in batches */
	unsigned input_thread;		/* daemon.threads: which spread thread (1..N); 0 none */
	struct worker *worker;		/* whose event loop and batch pool it uses */
	struct bqueue *queue;		/* threaded output: the queue it is fed through */
	struct sl_instance *twin;	/* reload.c, while it runs: the same instance in the other graph */
	size_t pos;			/* reload.c, while it runs: its index in graph->all */
	unsigned gen;			/* reload.c: the configuration its option strings point into */

	/* reopen (worker.c), written on the instance's thread, read after its answer */
	bool in_reopen;			/* host_log() keeps its first error (also a reload's start()) */
	bool reopen_said;		/* this reopen logged an error */
	bool reopen_failed;
	char reopen_err[256];		/* the last failed reopen's first error */
};

struct graph {
	struct plugin_loader loader;
	struct diag *diag;
	const struct config *cfg;
	struct sl_instance **all;	/* parents before children */
	size_t nall;
	size_t ninputs;
	/* Indexes, so that checking n elements takes O(n), not O(n^2): */
	struct strset names;		/* every name taken: declared and generated */
	struct strset named;		/* named instances placed: name -> instance */
	struct strset roots;		/* unnamed inputs by key, for prefix sharing */
	struct strset bases;		/* "stack.plugin" -> struct name_base */
	struct strset failed;		/* named instances already reported */
	struct strset orphans;		/* named instances met after a stack's error */
	bool loaded_all;		/* every plugin on the path is loaded */
};

/* Build and check everything; run each plugin's configure().  0 or -1. */
int graph_build(struct graph *g, const struct config *cfg, struct diag *d);
/*
 * The same, with the field registry starting as a copy of seed (a
 * reload: the running graph's ids stay valid).  seed may be NULL.
 */
int graph_build_seeded(struct graph *g, const struct config *cfg, struct diag *d,
		       const struct field_registry *seed);
/* Print the stacks as a tree with shared prefixes visible. */
void graph_print(const struct graph *g, FILE *out);
/* destroy() every instance and free the graph. */
void graph_free(struct graph *g);

/*
 * host->need_field(): the field an option of inst names must be set
 * before it.  Its id, or -1 after a configuration error.
 */
int graph_need_field(struct sl_instance *inst, const char *option, const char *name);

/* Position of an option's value (or of the element) for error messages. */
const struct ymark *graph_option_mark(const struct sl_instance *inst, const char *option);

#endif
