/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reload, the reading: the new file is read, parsed, checked and
 * configured on a thread of its own, so the main loop (and the inputs on
 * it, daemon.threads: 0) keeps running however large the file is.  Then
 * the main loop applies it (reload.c) and answers whoever asked.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "event_loop.h"
#include "log.h"
#include "reload.h"
#include "reload_int.h"

/* ---- the reading thread ---- */

/* Every configuration error: logged, and part of the answer. */
static void on_diag(void *ctx, const char *line)
{
	log_msg(SL_LOG_ERR, "reload: %s", line);
	reload_say(ctx, "%s", line);
}

static const struct ymark *daemon_key_mark(const struct config *c, const char *key)
{
	const struct ynode *v = yaml_tree_map_get(yaml_tree_map_get(c->root, "daemon"), key);

	return v ? &v->mark : NULL;
}

static bool same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool same_path(const struct config *a, const struct config *b)
{
	if (a->nplugin_path != b->nplugin_path)
		return false;
	for (size_t i = 0; i < a->nplugin_path; i++)
		if (strcmp(a->plugin_path[i], b->plugin_path[i]))
			return false;
	return true;
}

/*
 * user: root is gone once started; plugin_path: the plugins mapped are
 * the running ones; batch_size: every pool and queue is sized by it;
 * threads: the spread threads run; control_socket and metrics: bound
 * as root before the drop.  Each is refused, with its position.
 */
static void check_fixed(const struct config *old, const struct config *c, struct diag *d)
{
	static const char why[] = "cannot change while sluice runs; restart sluice to change it";

	if (!same_str(old->user, c->user))
		diag_error(d, daemon_key_mark(c, "user"), "daemon.user %s", why);
	if (!same_path(old, c))
		diag_error(d, daemon_key_mark(c, "plugin_path"), "daemon.plugin_path %s", why);
	if (old->batch_size != c->batch_size)
		diag_error(d, daemon_key_mark(c, "batch_size"), "daemon.batch_size %s", why);
	if (old->threads != c->threads)
		diag_error(d, daemon_key_mark(c, "threads"), "daemon.threads %s", why);
	if (!same_str(old->control_socket, c->control_socket))
		diag_error(d, daemon_key_mark(c, "control_socket"), "daemon.control_socket %s", why);
	if (old->metrics.enabled != c->metrics.enabled ||
	    old->metrics.allow_remote != c->metrics.allow_remote ||
	    strcmp(old->metrics.listen, c->metrics.listen))
		diag_error(d, daemon_key_mark(c, "metrics"), "daemon.metrics %s", why);
	/* a plugin author's switch: not worth refusing a reload over */
	if (old->strict_plugins != c->strict_plugins)
		log_msg(SL_LOG_WARNING, "reload: daemon.strict_plugins takes effect at the next start");
}

static bool cancelled(const struct reload_state *st)
{
	return __atomic_load_n(&st->cancel, __ATOMIC_RELAXED);
}

/*
 * Parse, check and build what `sluice -t` would, beside the running graph
 * (which only the main thread changes, and not before this has finished).
 * 0 or -1.
 */
static int load_new(struct reload_state *st, struct reload_job *j)
{
	if (config_load(j->cfg, j->d->config_file, &j->diag) || cancelled(st))
		return -1;
	check_fixed(st->cfg, j->cfg, &j->diag);
	if (j->diag.errors)
		return -1;
	if (graph_build_seeded(j->g, j->cfg, &j->diag, &st->graph->loader.fields) ||
	    j->diag.errors)
		return -1;
	j->g->diag = NULL;	/* configure() is over */
	for (size_t i = 0; i < j->g->nall; i++)
		j->g->all[i]->gen = st->gen + 1;
	return 0;
}

void reload_read(struct reload_state *st, struct reload_job *j)
{
	const char *file = j->d->config_file;

	j->hashed = reload_file_hash(file, &j->hash) == 0;
	if (j->hashed && st->hashed && j->hash == st->hash) {
		j->rc = 1;
		return;
	}
	log_msg(SL_LOG_NOTICE, "reload: reading %s", file);
	j->cfg = calloc(1, sizeof(*j->cfg));
	j->g = calloc(1, sizeof(*j->g));
	if (!j->cfg || !j->g) {
		free(j->cfg);
		free(j->g);
		j->cfg = NULL;
		j->g = NULL;
		reload_say(&j->r, "out of memory");
		j->oom = true;
		j->rc = -1;
		return;
	}
	j->rc = load_new(st, j);
}

static void *reader_main(void *arg)
{
	struct reload_job *j = arg;
	struct reload_state *st = j->d->reload;
	uint64_t one = 1;

	reload_read(st, j);
	/* The main loop takes it from here (finished()). */
	if (write(st->donefd, &one, sizeof(one)) < 0)
		log_msg(SL_LOG_ERR, "reload: cannot wake the main loop: %s", strerror(errno));
	return NULL;
}

/* ---- the main thread: askers, start, finish ---- */

/* The reading is over: nothing of it runs any more. */
static void reader_join(struct daemon *d)
{
	struct reload_state *st = d->reload;

	if (st->threaded)
		pthread_join(st->reader, NULL);
	st->threaded = false;
	if (st->donefd >= 0) {
		event_loop_unwatch(d->loop, st->donefd);
		close(st->donefd);
	}
	st->donefd = -1;
}

/* Everyone waiting for reload `run` or an earlier one (askers later wait for later ones). */
static void answer(struct reload_state *st, unsigned run, int rc, const char *msg)
{
	for (size_t i = 0; i < st->naskers;) {
		struct reload_asker a = st->askers[i];

		if (a.run > run) {
			i++;
			continue;
		}
		/* Taken out first: the callback may ask again or close another asker. */
		memmove(&st->askers[i], &st->askers[i + 1], (st->naskers - i - 1) * sizeof(a));
		st->naskers--;
		a.cb(a.ctx, rc, msg);
		i = 0;
	}
}

/* ---- freeing what a reload replaced, off the main thread ---- */

struct reap {
	struct retired *v;
	size_t n;
	bool *done;		/* atomic: set as the thread ends */
};

void reload_discard(struct reload_state *st, struct config *c, bool owned)
{
	struct retired *grown = realloc(st->garbage, (st->ngarbage + 1) * sizeof(*grown));

	if (!grown) {
		reload_free_config(c, owned);
		return;
	}
	st->garbage = grown;
	grown[st->ngarbage++] = (struct retired){.cfg = c, .owned = owned};
}

static void *reaper_main(void *arg)
{
	struct reap *r = arg;

	for (size_t i = 0; i < r->n; i++)
		reload_free_config(r->v[i].cfg, r->v[i].owned);
	free(r->v);
	__atomic_store_n(r->done, true, __ATOMIC_RELEASE);
	free(r);
	return NULL;
}

void reload_reap_wait(struct reload_state *st)
{
	if (st->reaping)
		pthread_join(st->reaper, NULL);
	st->reaping = false;
}

/* Hand what was discarded to a thread (or free it here if there is none). */
static void reap(struct reload_state *st)
{
	struct reap *r;
	sigset_t all, old;

	if (!st->ngarbage)
		return;
	/* The last ones still being freed: these wait for the next reload (or the exit). */
	if (st->reaping && !__atomic_load_n(&st->reaped, __ATOMIC_ACQUIRE))
		return;
	reload_reap_wait(st);
	r = malloc(sizeof(*r));
	if (r) {
		*r = (struct reap){st->garbage, st->ngarbage, &st->reaped};
		st->reaped = false;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		st->reaping = pthread_create(&st->reaper, NULL, reaper_main, r) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (st->reaping) {
			pthread_setname_np(st->reaper, "sl:reload-free");
			st->garbage = NULL;
			st->ngarbage = 0;
			return;
		}
		free(r);
	}
	for (size_t i = 0; i < st->ngarbage; i++)
		reload_free_config(st->garbage[i].cfg, st->garbage[i].owned);
	st->ngarbage = 0;
}

static void begin(struct daemon *d);

/* The job read: apply it, reopen, answer; then the reload asked meanwhile. */
static void complete(struct daemon *d)
{
	struct reload_state *st = d->reload;
	struct reload_job *j = st->job;
	char msg[4096];
	int rc;

	reader_join(d);
	st->job = NULL;
	d->in_op = true;	/* a full queue's wait serves nothing meanwhile */
	rc = daemon_reload_ends(d, reload_apply(d, j), j->text, msg, sizeof(msg));
	d->in_op = false;
	answer(st, j->run, rc, msg);
	reload_job_free(j);
	reap(st);
	if (st->again)
		begin(d);
}

static void finished(void *ctx, int fd, uint32_t events)
{
	uint64_t n;

	(void)events;
	if (read(fd, &n, sizeof(n)) < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	complete(ctx);
}

/*
 * Read on a thread of its own, signals blocked (the main thread's signalfd
 * serves them).  Where no thread or eventfd can be had, read here: the
 * reload still happens, only the loop stands still meanwhile.
 */
static void begin(struct daemon *d)
{
	struct reload_state *st = d->reload;
	struct reload_job *j = calloc(1, sizeof(*j));
	sigset_t all, old;
	int err;

	st->again = false;
	st->runs++;
	if (!j) {
		log_msg(SL_LOG_ERR, "reload failed: out of memory; the running configuration stays");
		d->reloads_failed++;
		answer(st, st->runs, -1, "out of memory");
		return;
	}
	j->d = d;
	j->run = st->runs;
	j->r = (struct reload){.msg = j->text, .len = sizeof(j->text)};
	j->diag = (struct diag){.file = d->config_file, .sink = on_diag, .sink_ctx = &j->r};
	st->job = j;
	daemon_reload_begins(d);
	st->donefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (st->donefd >= 0 && event_loop_watch(d->loop, st->donefd, EPOLLIN, finished, d) == 0) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		err = pthread_create(&st->reader, NULL, reader_main, j);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (!err) {
			pthread_setname_np(st->reader, "sl:reload");
			st->threaded = true;
			return;
		}
	} else {
		err = errno;
	}
	log_msg(SL_LOG_WARNING, "reload: cannot read on a thread of its own (%s): reading "
		"on the main thread", strerror(err));
	reload_read(st, j);
	complete(d);
}

int reload_ask(struct daemon *d, daemon_reload_cb cb, void *ctx)
{
	struct reload_state *st = d->reload;

	if (cb) {
		struct reload_asker *grown = realloc(st->askers, (st->naskers + 1) * sizeof(*grown));

		if (!grown)
			return -1;
		st->askers = grown;
		/* The next reload: one begun before this asked may have read an older file. */
		grown[st->naskers++] = (struct reload_asker){cb, ctx, st->runs + 1};
	}
	if (st->job)
		st->again = true;
	else
		begin(d);
	return 0;
}

void reload_forget(struct daemon *d, void *ctx)
{
	struct reload_state *st = d->reload;
	size_t k = 0;

	for (size_t i = 0; st && i < st->naskers; i++)
		if (st->askers[i].ctx != ctx)
			st->askers[k++] = st->askers[i];
	if (st)
		st->naskers = k;
}

void reload_cancel(struct daemon *d)
{
	struct reload_state *st = d->reload;

	if (!st || !st->job)
		return;
	__atomic_store_n(&st->cancel, true, __ATOMIC_RELAXED);
	reader_join(d);
	log_msg(SL_LOG_NOTICE, "reload: abandoned (sluice stops)");
	reload_job_free(st->job);
	st->job = NULL;
	st->again = false;
	st->naskers = 0;
}
