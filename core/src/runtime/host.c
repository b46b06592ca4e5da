/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_loop.h"
#include "fields.h"
#include "guard.h"
#include "host.h"
#include "log.h"
#include "queue.h"
#include "secret.h"
#include "strict.h"
#include "tap.h"
#include "worker.h"

/* ---- batches: each thread has its own pool (worker.c) ---- */

static struct sl_batch *host_batch_get(struct sl_instance *inst)
{
	return worker_batch_get(inst->worker);
}

static void host_batch_put(struct sl_instance *inst, struct sl_batch *b)
{
	worker_batch_put(inst->worker, b);
}

/* ---- delivery down the graph ---- */

static void deliver(struct sl_instance *from, struct sl_batch *b);

/* First failure of an instance, then at most one warning a minute. */
static void batch_failed(struct sl_instance *inst, unsigned lost)
{
	uint64_t now = event_loop_now_ms();

	if (inst->batch_fail_logged && now - inst->batch_fail_ms < 60000)
		return;
	inst->batch_fail_logged = true;
	inst->batch_fail_ms = now;
	log_msg(SL_LOG_WARNING, "%s: process() failed: %u records lost (counted as errors, %llu so far)",
		inst->name, lost, (unsigned long long)inst->errors);
}

/*
 * Records of b on which inst wrote a field id it never registered.  An id
 * from SL_FIELD_REFUSED up was refused by the setter, which set that bit
 * (record.h); an id between the graph's last field and it was written (the
 * setters cannot know the graph), past the record's values, and left its
 * presence bit.  Clear those bits before anything below sees them, count
 * the records, say it once.  A few words per record, read right after the
 * plugin touched them.
 */
static void check_refused(struct sl_instance *inst, struct sl_batch *b)
{
	const uint64_t *beyond = inst->rt->beyond;
	uint64_t n = 0;

	for (unsigned i = 0; i < b->filled; i++) {
		struct sl_record *r = (struct sl_record *)(b->storage + (size_t)i * b->stride);
		uint64_t hit = 0;

		for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
			hit |= r->present[w] & beyond[w];
		if (hit) {
			for (unsigned w = 0; w < SL_PRESENCE_WORDS; w++)
				r->present[w] &= ~beyond[w];
			n++;
		}
	}
	if (!n)
		return;
	counter_add64(&inst->bad_field_writes, n);
	if (!__atomic_exchange_n(&inst->bad_field_logged, true, __ATOMIC_RELAXED))
		log_msg(SL_LOG_WARNING,
			"%s: plugin '%s' wrote a field id it never registered (field_id() answered -1?): "
			"counted as bad_field_writes (%llu records so far), not logged again",
			inst->name, inst->desc->name, (unsigned long long)n);
}

void host_process(struct sl_instance *inst, struct sl_batch *b)
{
	unsigned before = b->count;
	int rc;

	counter_add64(&inst->in, before);
	/*
	 * The batch is in `out` before process() runs, so that an output
	 * losing some of it inside process() moves them with dropped_add()
	 * from an `out` that holds them (host_dropped_add).
	 */
	counter_add64(&inst->out, before);
	if (inst->read_masked)
		guard_mask_reads(inst, b);
	if (inst->strict)
		strict_before(inst, b);
	rc = inst->desc->process(inst->state, b);
	if (inst->strict)
		strict_after(inst, b);
	/* the queue's copy of a threaded output cannot reach another stack */
	if (inst->guard_from && !inst->queue && inst->guard_from->guard_batch == b)
		guard_check(inst, b);
	check_refused(inst, b);
	if (rc < 0) {
		/* The whole batch is lost: count it, and say so now and then. */
		counter_take64(&inst->out, before);
		counter_add64(&inst->errors, before);
		batch_failed(inst, before);
		return;
	}
	counter_take64(&inst->out, before - b->count);
	counter_add64(&inst->dropped, before - b->count);
	/* a `sluice tail` session (rare): one load and a branch otherwise */
	if (__builtin_expect(__atomic_load_n(&inst->taps, __ATOMIC_RELAXED) != 0, 0))
		tap_batch(inst, b);
	/* an output has no children: nothing more to do for it */
	if (b->count && inst->nchildren)
		deliver(inst, b);
}

static void run_instance(struct sl_instance *inst, struct sl_batch *b)
{
	/* An output on its own thread gets a copy through its queue. */
	if (inst->queue)
		worker_feed(inst, b);
	else
		host_process(inst, b);
}

/*
 * Hand a batch to every child of `from`.  With several children, each
 * must see the batch as `from` left it: the record list, presence bits and
 * values are saved before the first child and restored before each next
 * one (guard.c), so one branch's filters never leak fields or drops into
 * another branch.
 */
static void deliver(struct sl_instance *from, struct sl_batch *b)
{
	unsigned count = b->count;
	size_t arena = sl_batch_mark(b);
	const struct sl_batch *outer;

	if (from->nchildren == 1) {
		run_instance(from->children[0], b);
		return;
	}
	guard_save(from, b);
	outer = from->guard_batch;
	from->guard_batch = b;
	for (size_t c = 0; c < from->nchildren; c++) {
		if (c) {
			/* What a branch wrote in the arena is dead once it returned. */
			sl_batch_rewind(b, arena);
			guard_restore(from, b, count);
		}
		run_instance(from->children[c], b);
	}
	from->guard_batch = outer;
}

static void host_emit(struct sl_instance *inst, struct sl_batch *b)
{
	check_refused(inst, b);
	if (inst->desc->kind == SL_KIND_INPUT)
		counter_add64(&inst->in, b->count);
	counter_add64(&inst->out, b->count);
	if (__builtin_expect(__atomic_load_n(&inst->taps, __ATOMIC_RELAXED) != 0, 0))
		tap_batch(inst, b);
	if (b->count && inst->nchildren)
		deliver(inst, b);
	host_batch_put(inst, b);
}

/* ---- logging and errors ---- */

static void log_who(int level, const char *who, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_msgv(level, who, fmt, ap);
	va_end(ap);
}

/* What a plugin says may repeat an option's secret (a library's error text): masked. */
static void host_log(struct sl_instance *inst, enum sl_log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	/* a reopen's error is kept for its reply even below the log level */
	if ((int)level > log_get_level() && !(inst->in_reopen && level <= SL_LOG_WARNING))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	secret_scrub(inst->desc->options, inst->opt.config, msg, sizeof(msg));
	/* The first error of a reopen is what `sluice reopen` answers with. */
	if (inst->in_reopen && level <= SL_LOG_WARNING && !inst->reopen_said) {
		inst->reopen_said = true;
		size_t n = strnlen(msg, sizeof(inst->reopen_err) - 1);

		memcpy(inst->reopen_err, msg, n);
		inst->reopen_err[n] = '\0';
	}
	log_who(level, inst->name, "%s", msg);
}

static void host_config_error(struct sl_instance *inst, const char *option, const char *fmt, ...)
{
	struct diag *d = inst->graph->diag;
	const struct ymark *m = graph_option_mark(inst, option);
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	secret_scrub(inst->desc->options, inst->opt.config, msg, sizeof(msg));
	if (!inst->configuring) {
		/* Outside configure() there is no position to blame: just log it. */
		log_msg(SL_LOG_ERR, "%s: %s%s%s", inst->name, option ? option : "",
			option ? ": " : "", msg);
		return;
	}
	if (option)
		diag_error(d, m, "%s: option '%s': %s", inst->desc->name, option, msg);
	else
		diag_error(d, m, "%s: %s", inst->desc->name, msg);
}

static int host_field_id(struct sl_instance *inst, const char *name)
{
	return fields_lookup(&inst->graph->loader.fields, name);
}

static enum sl_type host_field_type(struct sl_instance *inst, int id)
{
	const struct field_info *f = id >= 0 ? fields_get(&inst->graph->loader.fields, (unsigned)id)
					     : NULL;

	return f ? f->type : (enum sl_type)0;
}

static const char *host_field_name(struct sl_instance *inst, int id)
{
	const struct field_info *f = id >= 0 ? fields_get(&inst->graph->loader.fields, (unsigned)id)
					     : NULL;

	return f ? f->name : NULL;
}

static int host_need_field(struct sl_instance *inst, const char *option, const char *name)
{
	if (!inst->configuring) {
		log_msg(SL_LOG_ERR, "%s: need_field() outside configure()", inst->name);
		return -1;
	}
	return graph_need_field(inst, option, name);
}

static int host_read_field(struct sl_instance *inst, const char *name)
{
	int id;

	if (!inst->configuring) {
		log_msg(SL_LOG_ERR, "%s: read_field() outside configure()", inst->name);
		return -1;
	}
	id = fields_lookup(&inst->graph->loader.fields, name);
	if (id >= 0)
		inst->asked[id >> 6] |= 1ull << (id & 63);
	return id;
}

static void host_series_source(struct sl_instance *inst, sl_series_cb cb, void *ctx)
{
	inst->series_cb = cb;
	inst->series_ctx = ctx;
}

static const uint64_t *host_subtree_reads(struct sl_instance *inst)
{
	return inst->subtree_reads;
}

/* ---- descriptors and timers ---- */

static int host_watch_fd(struct sl_instance *inst, int fd, uint32_t events, sl_fd_cb cb,
			 void *ctx)
{
	return event_loop_watch(inst->worker->loop, fd, events, cb, ctx);
}

static int host_modify_fd(struct sl_instance *inst, int fd, uint32_t events)
{
	return event_loop_modify(inst->worker->loop, fd, events);
}

static void host_unwatch_fd(struct sl_instance *inst, int fd)
{
	event_loop_unwatch(inst->worker->loop, fd);
}

static struct sl_timer *host_timer_new(struct sl_instance *inst, sl_timer_cb cb, void *ctx)
{
	/* The loop of the thread the instance runs on (set by host_init). */
	return (struct sl_timer *)event_loop_timer_new(inst->worker->loop, cb, ctx);
}

static void host_timer_arm(struct sl_timer *t, uint64_t delay_ms, uint64_t period_ms)
{
	event_loop_timer_arm((struct loop_timer *)t, delay_ms, period_ms);
}

static void host_timer_disarm(struct sl_timer *t)
{
	event_loop_timer_disarm((struct loop_timer *)t);
}

static void host_timer_free(struct sl_timer *t)
{
	event_loop_timer_free((struct loop_timer *)t);
}

/* ---- counters ---- */

static int host_counter_new(struct sl_instance *inst, const char *name)
{
	struct named_counter *grown;

	for (size_t i = 0; i < inst->ncounters; i++)
		if (strcmp(inst->counters[i].name, name) == 0)
			return (int)i;
	grown = realloc(inst->counters, (inst->ncounters + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	inst->counters = grown;
	grown[inst->ncounters].name = strdup(name);
	grown[inst->ncounters].value = 0;
	if (!grown[inst->ncounters].name)
		return -1;
	return (int)inst->ncounters++;
}

static void host_counter_add(struct sl_instance *inst, int counter, uint64_t n)
{
	if (counter >= 0 && (size_t)counter < inst->ncounters)
		counter_add64(&inst->counters[counter].value, n);
}

static void host_error_add(struct sl_instance *inst, uint64_t n)
{
	counter_add64(&inst->errors, n);
}

static void host_dropped_add(struct sl_instance *inst, uint64_t n)
{
	/*
	 * An output's `out` counted the records when process() accepted them;
	 * those it later lost are moved, so out means "delivered or still
	 * queued".  A filter's drops are already counted by run_instance().
	 */
	/* Only the output's own thread changes its `out`: no lost update. */
	counter_take64(&inst->out, n);
	counter_add64(&inst->dropped, n);
}

static void host_input_done(struct sl_instance *inst)
{
	if (inst->done)
		return;
	inst->done = true;
	__atomic_fetch_add(&inst->rt->inputs_done, 1, __ATOMIC_RELAXED);
	log_msg(SL_LOG_DEBUG, "%s: input finished", inst->name);
	/* The main loop's, from whichever thread the input runs on. */
	if (host_inputs_finished(inst->rt))
		event_loop_stop(inst->rt->loop);
}

static const char *host_name(struct sl_instance *inst)
{
	return inst->name;
}

const struct sl_host host_table = {
	.size = sizeof(struct sl_host),
	.log = host_log,
	.config_error = host_config_error,
	.field_id = host_field_id,
	.batch_get = host_batch_get,
	.emit = host_emit,
	.batch_put = host_batch_put,
	.watch_fd = host_watch_fd,
	.modify_fd = host_modify_fd,
	.unwatch_fd = host_unwatch_fd,
	.timer_new = host_timer_new,
	.timer_arm = host_timer_arm,
	.timer_disarm = host_timer_disarm,
	.counter_new = host_counter_new,
	.counter_add = host_counter_add,
	.error_add = host_error_add,
	.input_done = host_input_done,
	.name = host_name,
	.dropped_add = host_dropped_add,
	.field_type = host_field_type,
	.field_name = host_field_name,
	.need_field = host_need_field,
	.timer_free = host_timer_free,
	.subtree_reads = host_subtree_reads,
	.read_field = host_read_field,
	.series_source = host_series_source,
};

/* ---- lifecycle ---- */

int host_prepare(struct runtime *rt, struct sl_instance *inst)
{
	inst->rt = rt;
	if (guard_prepare(inst, rt->batch_size))
		return -1;
	return strict_prepare(inst, rt->batch_size, rt->stride);
}

/* What the runtime runs until the start applies the configured graph: nothing (never written). */
static struct graph no_instances;

int host_init(struct runtime *rt, struct graph *g, struct event_loop *loop,
		 unsigned batch_size, unsigned threads)
{
	memset(rt, 0, sizeof(*rt));
	rt->graph = &no_instances;
	rt->loop = loop;
	rt->process = host_process;
	rt->batch_size = batch_size;
	/* The stride comes from this graph's registry: another graph may differ. */
	rt->stride = (sizeof(struct sl_record) +
		      fields_count(&g->loader.fields) * sizeof(union sl_value) + 63) & ~(size_t)63;
	/* Room for each record's text line and, for replay, its packet copy. */
	rt->arena_size = (size_t)batch_size * 4096;
	/* A queued batch holds copies; one that overflows continues in the next. */
	rt->queue_arena_size = (size_t)batch_size * 2048;
	rt->nfields = fields_count(&g->loader.fields);
	/* A reload never changes the count (reload.c refuses more fields). */
	for (unsigned id = rt->nfields; id < SL_MAX_FIELDS; id++)
		rt->beyond[id >> 6] |= (uint64_t)1 << (id & 63);
	for (unsigned id = 0; id < rt->nfields && id < SL_MAX_FIELDS; id++)
		rt->types[id] = (uint8_t)fields_get(&g->loader.fields, id)->type;
	return worker_plan(rt, threads);
}

bool host_inputs_finished(const struct runtime *rt)
{
	return rt->graph->ninputs &&
	       __atomic_load_n(&rt->inputs_done, __ATOMIC_RELAXED) == rt->graph->ninputs;
}

int host_run_threads(struct runtime *rt)
{
	return worker_start(rt);
}

void host_shutdown(struct runtime *rt)
{
	worker_shutdown(rt);
}

void host_put_escaped(char *buf, size_t len, size_t *used, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		char one[5];
		int n = *p < 0x20 || *p >= 0x7f || *p == '\\' ? snprintf(one, sizeof(one), "\\x%02x", *p)
							    : snprintf(one, sizeof(one), "%c", *p);

		if (*used + (size_t)n >= len)
			return;
		memcpy(buf + *used, one, (size_t)n + 1);
		*used += (size_t)n;
	}
}

/* One line "NAME: WHY" of host_reopen()'s answer. */
static void reopen_line(char *msg, size_t len, size_t *used, const struct sl_instance *inst,
			const char *why)
{
	if (*used && *used + 1 < len) {
		msg[(*used)++] = '\n';
		msg[*used] = 0;
	}
	host_put_escaped(msg, len, used, inst->name);
	host_put_escaped(msg, len, used, ": ");
	host_put_escaped(msg, len, used, why);
}

size_t host_reopen(struct runtime *rt, unsigned wait_ms, char *msg, size_t len)
{
	const struct graph *g = rt->graph;
	size_t failed = 0, used = 0;
	char why[64];

	if (len)
		msg[0] = 0;
	worker_reopen(rt, wait_ms);
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		if (!inst->started || !inst->desc->reopen || !inst->worker)
			continue;
		switch (inst->worker->reopen) {
		case REOPEN_NOT_PASSED:
			reopen_line(msg, len, &used, inst, "its thread's queue took no reopen (see the log)");
			break;
		case REOPEN_LATE:
			snprintf(why, sizeof(why), "no answer from its thread within %u s (see the log)",
				 (wait_ms + 999) / 1000);
			reopen_line(msg, len, &used, inst, why);
			break;
		case REOPEN_ANSWERED:
			if (!inst->reopen_failed)
				continue;
			/*
			 * A plugin that logs an error once per interval may be
			 * silent now: then the last failed reopen's error stands.
			 */
			reopen_line(msg, len, &used, inst, inst->reopen_err[0] ? inst->reopen_err :
				    "reopen failed (the reason is in the log, from before)");
			break;
		}
		failed++;
	}
	return failed;
}

void host_log_counters(const struct runtime *rt, int level)
{
	const struct graph *g = rt->graph;

	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];
		char extra[1024] = "";
		size_t used = 0;

		for (size_t k = 0; k < inst->ncounters && used < sizeof(extra); k++)
			used += (size_t)snprintf(extra + used, sizeof(extra) - used, " %s=%llu",
						 inst->counters[k].name,
						 (unsigned long long)counter_get64(&inst->counters[k].value));
		if (counter_get64(&inst->bad_field_writes) && used < sizeof(extra))
			used += (size_t)snprintf(extra + used, sizeof(extra) - used,
						 " bad_field_writes=%llu",
						 (unsigned long long)counter_get64(&inst->bad_field_writes));
		if (inst->queue && used < sizeof(extra)) {
			unsigned depth;
			uint64_t high;

			queue_stats(inst->queue, &depth, &high);
			used += (size_t)snprintf(extra + used, sizeof(extra) - used,
						 " queue_dropped=%llu queue_batches=%u queue_high=%llu",
						 (unsigned long long)counter_get64(&inst->queue->dropped),
						 depth, (unsigned long long)high);
		}
		log_msg(level, "counters: %s (%s): in=%llu out=%llu dropped=%llu errors=%llu%s",
			inst->name, inst->desc->name, (unsigned long long)counter_get64(&inst->in),
			(unsigned long long)counter_get64(&inst->out),
			(unsigned long long)counter_get64(&inst->dropped),
			(unsigned long long)counter_get64(&inst->errors), extra);
	}
}

void host_free(struct runtime *rt)
{
	for (size_t i = 0; i < rt->graph->nall; i++) {
		rt->graph->all[i]->worker = NULL;
		rt->graph->all[i]->queue = NULL;
	}
	worker_free(rt);
	memset(rt, 0, sizeof(*rt));
}
