/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reload, the main thread's part: diff the new graph (read and checked by
 * reload_read.c on a thread of its own) against the running one, then
 * start what is new (rolled back if it fails) and stop what is gone.  The
 * other threads wait in worker_pause() while instances are started,
 * stopped and rewired.  The daemon's start is the same apply onto the
 * empty graph host_init() runs (reload_start()), so a failed start is
 * rolled back as a failed reload is.  docs/ARCHITECTURE.md ("Reload") says why no
 * record is lost or doubled.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fields.h"
#include "guard.h"
#include "host.h"
#include "identity.h"
#include "infile.h"
#include "log.h"
#include "pathcheck.h"
#include "privileges.h"
#include "queue.h"
#include "reload.h"
#include "reload_int.h"
#include "tap.h"
#include "worker.h"

#define say reload_say

/* One more line of the answer (the control socket returns it). */
void reload_say(struct reload *r, const char *fmt, ...)
{
	va_list ap;

	if (r->used + 1 >= r->len)
		return;
	if (r->used)
		r->msg[r->used++] = '\n';
	va_start(ap, fmt);
	r->used += (size_t)vsnprintf(r->msg + r->used, r->len - r->used, fmt, ap);
	va_end(ap);
	if (r->used >= r->len)
		r->used = r->len - 1;
}

int reload_file_hash(const char *file, uint64_t *h)
{
	unsigned char buf[8192];
	char why[128];
	FILE *f = infile_fopen(file, why, sizeof(why));
	size_t n;

	if (!f)
		return -1;
	*h = 14695981039346656037ull;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			*h = (*h ^ buf[i]) * 1099511628211ull;
	n = (size_t)ferror(f);
	fclose(f);
	return n ? -1 : 0;
}

int reload_init(struct daemon *d, struct graph *g, const struct config *cfg)
{
	struct reload_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -1;
	st->graph = g;
	st->cfg = (struct config *)cfg;
	st->hashed = reload_file_hash(d->config_file, &st->hash) == 0;
	st->donefd = -1;
	d->reload = st;
	return 0;
}

/* ---- the diff ---- */

/*
 * An instance's identity is the chain of element keys from its input
 * (identity.c's identity_key(): plugin, options, core keys) with the names of
 * named instances; the i-th instance of a chain that occurs twice gets
 * "#i".  chains[] is indexed like g->all; the set borrows its strings.
 */
static int chains_of(struct graph *g, char **chains, struct strset *set)
{
	for (size_t i = 0; i < g->nall; i++)
		g->all[i]->pos = i;
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];
		const char *up = inst->parent ? chains[inst->parent->pos] : "";
		size_t n = strlen(up) + strlen(inst->key) + strlen(inst->name) + 32;
		char *c = malloc(n);
		int len;

		if (!c)
			return -1;
		len = snprintf(c, n, "%s\x1d%s%s%s", up, inst->named ? inst->name : "",
			       inst->named ? "\x1c" : "", inst->key);
		for (unsigned k = 2; strset_find(set, c); k++)
			snprintf(c + len, n - (size_t)len, "#%u", k);
		chains[i] = c;
		if (strset_add(set, c, g->all[i], NULL) < 0)
			return -1;
	}
	return 0;
}

/* Same element, same place, same thread: it may keep running. */
static bool keepable(const struct sl_instance *o, const struct sl_instance *n)
{
	return o->desc == n->desc && o->started && !o->twin && o->thread == n->thread &&
	       o->block_when_full == n->block_when_full && o->queue_batches == n->queue_batches &&
	       o->input_thread == n->input_thread && (!n->parent || n->parent->twin);
}

static int match(struct graph *og, struct graph *ng, struct reload *r)
{
	char **oc = calloc(og->nall + 1, sizeof(*oc)), **nc = calloc(ng->nall + 1, sizeof(*nc));
	struct strset os = {0}, ns = {0};
	int rc = -1;

	if (oc && nc && !chains_of(og, oc, &os) && !chains_of(ng, nc, &ns)) {
		for (size_t i = 0; i < ng->nall; i++) {
			struct sl_instance *n = ng->all[i], *o = strset_get(&os, nc[i]);

			if (o && keepable(o, n)) {
				o->twin = n;
				n->twin = o;
				r->kept++;
			} else if (o && o->desc == n->desc && (!n->parent || n->parent->twin)) {
				/* Same element, same place: only where it runs changed. */
				log_msg(SL_LOG_NOTICE, "reload: %s restarts: its thread, queue or "
					"when_full changed", n->name);
			}
		}
		r->added = ng->nall - r->kept;
		r->removed = og->nall - r->kept;
		rc = 0;
	}
	for (size_t i = 0; oc && i < og->nall; i++)
		free(oc[i]);
	for (size_t i = 0; nc && i < ng->nall; i++)
		free(nc[i]);
	free(oc);
	free(nc);
	strset_free(&os);
	strset_free(&ns);
	return rc;
}

static void unmatch(struct graph *g)
{
	for (size_t i = 0; i < g->nall; i++)
		g->all[i]->twin = NULL;
}

/* ---- the swap ---- */

/* What belongs to the running plugin, not to the place in the graph. */
static void take_runtime(struct sl_instance *dst, const struct sl_instance *src)
{
	dst->state = src->state;
	dst->configured = src->configured;
	dst->started = src->started;
	dst->done = src->done;
	dst->in = src->in;
	dst->out = src->out;
	dst->dropped = src->dropped;
	dst->errors = src->errors;
	dst->batch_fail_ms = src->batch_fail_ms;
	dst->batch_fail_logged = src->batch_fail_logged;
	dst->bad_field_writes = src->bad_field_writes;
	dst->bad_field_logged = src->bad_field_logged;
	dst->counters = src->counters;
	dst->ncounters = src->ncounters;
	dst->opt = src->opt;		/* the plugin's state may point into opt.config */
	dst->worker = src->worker;
	dst->queue = src->queue;
	dst->rt = src->rt;
	dst->configuring = src->configuring;
	dst->twin = src->twin;
	dst->gen = src->gen;		/* its strings are in that configuration */
	/* indexes into `counters`: guard_adopt() adds one a kept instance now needs */
	dst->undeclared_ctr = src->undeclared_ctr;
	dst->undeclared_logged = src->undeclared_logged;
	dst->strict = src->strict;
}

static struct sl_instance *mapped(struct sl_instance *p)
{
	return p && p->twin ? p->twin : p;
}

/*
 * A kept instance's struct is the one its plugin holds (the handle passed
 * to configure()), so it stays: it takes the new graph's place (name,
 * links, stacks, fan-out scratch, options as written), and its twin in
 * the new graph takes the old place, to be freed with the old graph (its
 * fresh state destroyed, never started).  Then every pointer in both
 * graphs to one of a pair is turned to the other.  The build's indexes
 * (names, kids, roots) are not used after the build and are left as they are.
 */
static void swap_kept(struct graph *og, struct graph *ng)
{
	struct graph *gs[2] = {og, ng};

	for (size_t i = 0; i < ng->nall; i++) {
		struct sl_instance *n = ng->all[i], *o = n->twin, so, sn;

		if (!o)
			continue;
		so = *o;
		sn = *n;
		*o = sn;
		take_runtime(o, &so);
		*n = so;
		take_runtime(n, &sn);
		if (strcmp(o->name, n->name) == 0) {
			/* host->name() stays valid while the name does not change */
			char *name = o->name;

			o->name = n->name;
			n->name = name;
		}
	}
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < gs[k]->nall; i++)
			gs[k]->all[i] = mapped(gs[k]->all[i]);
	for (int k = 0; k < 2; k++)
		for (size_t i = 0; i < gs[k]->nall; i++) {
			struct sl_instance *inst = gs[k]->all[i];

			inst->parent = mapped(inst->parent);
			inst->guard_from = mapped(inst->guard_from);
			for (size_t c = 0; c < inst->nchildren; c++)
				inst->children[c] = mapped(inst->children[c]);
		}
	unmatch(og);
	unmatch(ng);
}

/* ---- starting the new, stopping the gone ---- */

/*
 * Undo start_new() and worker_place(): the running graph is as it was.
 * The workers from had on were made for the new instances.
 */
static void roll_back(struct runtime *rt, struct graph *ng, size_t had)
{
	for (size_t i = 0; i < ng->nall; i++) {
		struct sl_instance *inst = ng->all[i];

		if (inst->twin)
			continue;
		if (inst->started && inst->desc->stop)
			inst->desc->stop(inst->state);
		inst->started = false;
		inst->worker = NULL;
	}
	while (rt->nworkers > had)
		worker_discard(rt, rt->workers[rt->nworkers - 1]);
}

/*
 * New instances start while the ones they replace still run: one that
 * wants what a replaced one holds (its NFLOG group) fails.  That one, or NULL.
 */
static const struct sl_instance *holder(const struct graph *og, const struct sl_instance *inst,
					char *what, size_t len)
{
	for (size_t i = 0; i < og->nall; i++) {
		const struct sl_instance *o = og->all[i];

		if (!o->twin && identity_same_resource(o->desc, o->opt.config, inst->desc,
						       inst->opt.config, what, len))
			return o;
	}
	return NULL;
}

/* "NAME could not start: WHY", WHY the first error start() logged (escaped). */
static void say_not_started(struct graph *og, const struct sl_instance *inst, struct reload *r)
{
	const struct sl_instance *old;
	char why[768], what[256];
	size_t used = 0;

	host_put_escaped(why, sizeof(why), &used, inst->name);
	host_put_escaped(why, sizeof(why), &used, " could not start: ");
	host_put_escaped(why, sizeof(why), &used, inst->reopen_err[0] ? inst->reopen_err :
			 "its start failed (see the log)");
	say(r, "%s", why);
	if ((old = holder(og, inst, what, sizeof(what)))) {
		used = 0;
		host_put_escaped(why, sizeof(why), &used, old->name);
		say(r, "(%s, which it would replace, holds the same %s until the new one has "
		    "started: restart sluice to make this change)", why, what);
	}
}

/*
 * Outputs first: nothing flows before its sinks are open.
 * What start() logs first at warning or above is kept (as a reopen's is):
 * the answer says why, not only that.
 */
static int start_new(struct graph *og, struct graph *ng, struct reload *r)
{
	for (size_t i = ng->nall; i-- > 0;) {
		struct sl_instance *inst = ng->all[i];
		int rc;

		if (inst->twin)
			continue;
		inst->started = true;
		if (!inst->desc->start)
			continue;
		inst->in_reopen = true;
		inst->reopen_said = false;
		inst->reopen_err[0] = 0;
		rc = inst->desc->start(inst->state);
		inst->in_reopen = false;
		if (rc < 0 && r->start) {
			log_msg(SL_LOG_ERR, "%s: could not start; stopping", inst->name);
			return -1;
		}
		if (rc < 0) {
			log_msg(SL_LOG_ERR, "reload: %s could not start", inst->name);
			say_not_started(og, inst, r);
			return -1;
		}
		inst->reopen_err[0] = 0;
	}
	return 0;
}

/*
 * Gone instances, their threads waiting: flushed in graph order (what an
 * input held reaches the outputs below it), then stopped.  An output on
 * its own thread gets BQ_STOP behind what those flushes queued for it and
 * stops on its thread once resumed; worker_reap() joins it.
 */
static void stop_gone(struct graph *og)
{
	for (size_t i = 0; i < og->nall; i++) {
		struct sl_instance *inst = og->all[i];

		if (inst->twin || !inst->started || inst->queue)
			continue;
		if (inst->desc->flush && inst->desc->flush(inst->state) < 0)
			log_msg(SL_LOG_WARNING, "%s: flush failed", inst->name);
	}
	for (size_t i = 0; i < og->nall; i++) {
		struct sl_instance *inst = og->all[i];

		if (inst->twin || !inst->started)
			continue;
		if (inst->queue && inst->worker->running) {
			inst->worker->stopping = true;
			while (queue_put_ctl(inst->queue, BQ_STOP))
				;	/* a paused queue is empty: no room problem */
			continue;
		}
		if (inst->desc->stop)
			inst->desc->stop(inst->state);
		inst->started = false;
	}
}

/* After the swap: threads left without an instance end when resumed. */
static void mark_idle(struct runtime *rt)
{
	for (size_t i = 1; i < rt->nworkers; i++) {
		struct worker *w = rt->workers[i];

		if (!w->ninsts && !w->spread && !w->stopping) {
			w->quit = true;
			if (!w->running)
				w->stopping = true;	/* reaped at once */
		}
	}
}

static void adopt_fields(struct runtime *rt, struct graph *ng)
{
	rt->nfields = fields_count(&ng->loader.fields);
	/* Ids only ever get appended: the entries queues use do not move. */
	for (unsigned id = 0; id < rt->nfields; id++)
		rt->types[id] = (uint8_t)fields_get(&ng->loader.fields, id)->type;
	/* Queues' pointer masks (bq_fields) were made from the same types. */
}

static size_t inputs_done(const struct graph *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nall; i++)
		n += g->all[i]->desc->kind == SL_KIND_INPUT && g->all[i]->done;
	return n;
}

/*
 * Switch the runtime from og to ng: a reload, and the start (og empty, no
 * thread running yet).  New instances are placed and started, with the
 * threads paused; if one cannot start, the new ones are stopped, their
 * workers freed and the files and directories their start created
 * removed (pathcheck.c).  The new threads are the caller's to start.
 * 0, or -1 with og running as before.
 */
static int apply(struct runtime *rt, struct graph *og, struct graph *ng, struct reload *r)
{
	struct pathcheck_marks marks = {0};
	size_t had = rt->nworkers;

	if (match(og, ng, r)) {
		unmatch(og);
		unmatch(ng);
		say(r, "out of memory");
		return -1;
	}
	/* Fan-out scratch of kept instances too: made on the twin, the swap moves it. */
	for (size_t i = 0; i < ng->nall; i++)
		if (host_prepare(rt, ng->all[i])) {
			say(r, "out of memory");
			goto fail;
		}
	/* What the new instances may create, so that a failed start leaves nothing. */
	if (pathcheck_mark(&marks, ng)) {
		say(r, "out of memory");
		goto fail;
	}
	/* tail sessions watch instances this may stop: they end here (tap.h) */
	tap_end_all();
	worker_pause(rt);
	if (worker_place(rt, ng)) {
		say(r, "out of memory");
		roll_back(rt, ng, had);
		worker_resume(rt);
		goto fail;
	}
	if (start_new(og, ng, r)) {
		roll_back(rt, ng, had);
		pathcheck_undo(&marks);
		worker_resume(rt);
		goto fail;
	}
	pathcheck_marks_free(&marks);
	stop_gone(og);
	swap_kept(og, ng);
	guard_adopt(ng);
	rt->graph = ng;
	adopt_fields(rt, ng);
	if (worker_replan(rt))
		log_msg(SL_LOG_ERR, "%sout of memory placing the instances", r->start ? "" : "reload: ");
	__atomic_store_n(&rt->inputs_done, inputs_done(ng), __ATOMIC_RELAXED);
	mark_idle(rt);
	worker_resume(rt);
	return 0;
fail:
	pathcheck_marks_free(&marks);
	unmatch(og);
	unmatch(ng);
	return -1;
}

int reload_start(struct daemon *d)
{
	char msg[512];
	struct reload r = {.msg = msg, .len = sizeof(msg), .start = true};

	msg[0] = 0;
	/* host_init() left it running the empty graph. */
	if (!apply(d->rt, d->rt->graph, d->reload->graph, &r))
		return 0;
	/* A start() that failed said so; anything else is said here. */
	if (r.used)
		log_msg(SL_LOG_ERR, "%s", msg);
	return -1;
}

/* ---- the whole reload ---- */

void reload_free_config(struct config *c, bool owned)
{
	config_free(c);
	if (owned)
		free(c);
}

/*
 * Option strings point into the YAML tree they were parsed from (opt.c),
 * and a plugin may keep them: a replaced configuration lives on until no
 * running instance came from it.
 */
static void retire(struct reload_state *st, struct config *old, unsigned gen, bool owned)
{
	struct retired *grown = realloc(st->retired, (st->nretired + 1) * sizeof(*grown));
	size_t k = 0;

	if (grown) {
		st->retired = grown;
		grown[st->nretired++] = (struct retired){old, gen, owned};
	} else {
		log_msg(SL_LOG_WARNING, "reload: out of memory: the old configuration is kept");
	}
	for (size_t i = 0; i < st->nretired; i++) {
		bool used = false;

		for (size_t j = 0; j < st->graph->nall && !used; j++)
			used = st->graph->all[j]->gen == st->retired[i].gen;
		if (used)
			st->retired[k++] = st->retired[i];
		else
			reload_discard(st, st->retired[i].cfg, st->retired[i].owned);
	}
	st->nretired = k;
}

static void apply_log_level(const struct config *old, const struct config *c)
{
	if (c->log_level == old->log_level)
		return;	/* as it was, or as -v made it */
	log_set_level(c->log_level >= 0 ? c->log_level : SL_LOG_INFO);
}

/* The file is the one running: nothing to do but the reopen that follows. */
static int unchanged(struct daemon *d)
{
	log_msg(SL_LOG_NOTICE, "reload: %s unchanged: reopening output files", d->config_file);
	d->reloads_ok++;
	return 1;
}

void reload_job_free(struct reload_job *j)
{
	if (!j)
		return;
	if (j->g)
		graph_free(j->g);
	free(j->g);
	if (j->cfg)
		reload_discard(j->d->reload, j->cfg, true);
	free(j);
}

int reload_apply(struct daemon *d, struct reload_job *j)
{
	struct reload_state *st = d->reload;
	struct reload *r = &j->r;

	if (j->rc == 1)
		return unchanged(d);
	if (j->rc < 0 && !j->oom) {
		log_msg(SL_LOG_ERR, "reload failed: %u error%s in %s; the running configuration stays",
			j->diag.errors, j->diag.errors == 1 ? "" : "s", d->config_file);
		say(r, "reload failed: %u error%s in %s", j->diag.errors,
		    j->diag.errors == 1 ? "" : "s", d->config_file);
		d->reloads_failed++;
		return -1;
	}
	if (j->rc < 0)
		goto failed;
	if (fields_count(&j->g->loader.fields) > d->rt->nfields) {
		/* Records and queues are laid out for the fields known at start. */
		say(r, "a plugin registers fields sluice did not know when it started "
		    "(installed since?): restart sluice to use it");
		goto failed;
	}
	if (apply(d->rt, st->graph, j->g, r))
		goto failed;
	if (worker_start(d->rt))
		say(r, "a new thread could not start");
	worker_reap(d->rt);
	apply_log_level(st->cfg, j->cfg);
	d->stop_timeout_ms = j->cfg->stop_timeout_ms;	/* read at the next SIGTERM */
	graph_free(st->graph);
	if (st->owned)
		free(st->graph);
	st->graph = j->g;
	retire(st, st->cfg, st->gen, st->owned);
	st->cfg = j->cfg;
	st->owned = true;
	st->gen++;
	st->hash = j->hash;
	st->hashed = j->hashed;
	j->g = NULL;
	j->cfg = NULL;
	log_msg(SL_LOG_NOTICE, "reload: %zu kept, %zu added, %zu removed", r->kept, r->added,
		r->removed);
	say(r, "%zu kept, %zu added, %zu removed", r->kept, r->added, r->removed);
	d->reloads_ok++;
	return 0;
failed:
	log_msg(SL_LOG_ERR, "reload failed: %s; the running configuration stays",
		r->used ? r->msg : "?");
	d->reloads_failed++;
	return -1;
}

void reload_free(struct daemon *d)
{
	struct reload_state *st = d->reload;

	if (!st)
		return;
	reload_cancel(d);
	reload_reap_wait(st);
	for (size_t i = 0; i < st->ngarbage; i++)
		reload_free_config(st->garbage[i].cfg, st->garbage[i].owned);
	free(st->garbage);
	/* The graph first: destroy() may still read its options. */
	if (st->owned) {
		graph_free(st->graph);
		free(st->graph);
		reload_free_config(st->cfg, true);
	}
	for (size_t i = 0; i < st->nretired; i++)
		reload_free_config(st->retired[i].cfg, st->retired[i].owned);
	free(st->retired);
	free(st->askers);
	free(st);
	d->reload = NULL;
}
