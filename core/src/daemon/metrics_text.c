/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The running daemon as Prometheus text (exposition format 0.0.4): the
 * same counters host_log_counters() logs, one family after the other
 * with HELP and TYPE, label values escaped.  Runs on the main thread,
 * which owns the graph; counters of other threads are read atomically.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "metrics.h"
#include "queue.h"

/* One plugin counter of one instance, sorted by family name. */
struct metrics_family_row {
	char family[160];
	size_t order;			/* instance index: keeps graph order in a family */
	const struct sl_instance *inst;
	const char *counter;		/* its name */
	const uint64_t *value;
};

static void put(struct metrics_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool reserve(struct metrics_text *t, size_t more)
{
	size_t cap = t->cap ? t->cap : 16384;
	char *grown;

	if (t->len + more < t->cap)
		return true;
	while (cap <= t->len + more)
		cap *= 2;
	grown = realloc(t->buf, cap);
	if (!grown) {
		t->failed = true;
		return false;
	}
	t->buf = grown;
	t->cap = cap;
	return true;
}

static void put(struct metrics_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = true;
		return;
	}
	if ((size_t)n >= t->cap - t->len) {
		if (!reserve(t, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
	}
	t->len += (size_t)n;
}

/* A label value escapes '"' too; HELP text only backslash and newline. */
static void put_escaped(struct metrics_text *t, const char *s, bool quote)
{
	for (; *s && !t->failed; s++) {
		if (!reserve(t, 3))
			return;
		if (*s == '\\' || (quote && *s == '"')) {
			t->buf[t->len++] = '\\';
			t->buf[t->len++] = *s;
		} else if (*s == '\n') {
			t->buf[t->len++] = '\\';
			t->buf[t->len++] = 'n';
		} else {
			t->buf[t->len++] = *s;
		}
	}
	if (reserve(t, 1))
		t->buf[t->len] = 0;
}

static void put_value(struct metrics_text *t, const char *s)
{
	put_escaped(t, s, true);
}

static void family(struct metrics_text *t, const char *name, const char *type, const char *help)
{
	put(t, "# HELP %s ", name);
	put_escaped(t, help, false);
	put(t, "\n# TYPE %s %s\n", name, type);
}

/* name{instance="..",plugin=".." and the rest of the labels as written */
static void open_sample(struct metrics_text *t, const char *name, const struct sl_instance *inst)
{
	put(t, "%s{instance=\"", name);
	put_value(t, inst->name);
	put(t, "\",plugin=\"");
	put_value(t, inst->desc->name);
	put(t, "\"");
}

static void close_sample(struct metrics_text *t, uint64_t v)
{
	put(t, "} %llu\n", (unsigned long long)v);
}

static void put_records(struct metrics_text *t, const struct graph *g)
{
	family(t, "sluice_records_total", "counter",
	       "Records an instance took in and passed on (stack: every stack through it).");
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];
		static const char *const dir[] = {"in", "out"};
		const uint64_t *c[] = {&inst->in, &inst->out};

		for (int d = 0; d < 2; d++) {
			open_sample(t, "sluice_records_total", inst);
			put(t, ",stack=\"");
			for (size_t s = 0; s < inst->nstacks; s++) {
				if (s)
					put(t, ",");
				put_value(t, inst->stacks[s]);
			}
			put(t, "\",direction=\"%s\"", dir[d]);
			close_sample(t, counter_get64(c[d]));
		}
	}
}

static void put_drops(struct metrics_text *t, const struct graph *g)
{
	family(t, "sluice_dropped_total", "counter",
	       "Records not passed on: filtered out, refused by a full queue, lost by an output.");
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];
		/* The queue's share first: worker_feed() counts `dropped` before it. */
		uint64_t queued = inst->queue ? counter_get64(&inst->queue->dropped) : 0;
		uint64_t all = counter_get64(&inst->dropped);
		const char *reason = inst->desc->kind == SL_KIND_FILTER	  ? "filtered"
				     : inst->desc->kind == SL_KIND_OUTPUT ? "output"
									  : "input";

		open_sample(t, "sluice_dropped_total", inst);
		put(t, ",reason=\"%s\"", reason);
		close_sample(t, all > queued ? all - queued : 0);
		if (inst->queue) {
			open_sample(t, "sluice_dropped_total", inst);
			put(t, ",reason=\"queue_full\"");
			close_sample(t, queued);
		}
	}
	family(t, "sluice_errors_total", "counter",
	       "Records lost to errors (a failed process(), an output's write errors).");
	for (size_t i = 0; i < g->nall; i++) {
		open_sample(t, "sluice_errors_total", g->all[i]);
		close_sample(t, counter_get64(&g->all[i]->errors));
	}
}

static void put_queues(struct metrics_text *t, const struct graph *g)
{
	static const char *const names[] = {"sluice_queue_batches", "sluice_queue_high_batches"};
	static const char *const help[] = {
		"Batches waiting in a threaded output's queue now.",
		"Most batches its queue ever held (the bound is the instance's queue:).",
	};

	for (int f = 0; f < 2; f++) {
		bool any = false;

		for (size_t i = 0; i < g->nall; i++) {
			struct sl_instance *inst = g->all[i];
			unsigned depth;
			uint64_t high;

			if (!inst->queue)
				continue;
			if (!any)
				family(t, names[f], "gauge", help[f]);
			any = true;
			queue_stats(inst->queue, &depth, &high);
			open_sample(t, names[f], inst);
			close_sample(t, f ? high : depth);
		}
	}
}

/* Prometheus names are [a-zA-Z_:][a-zA-Z0-9_:]*: anything else becomes '_'. */
static void name_part(char *out, size_t len, const char *s)
{
	size_t n = 0;

	for (; *s && n + 1 < len; s++)
		out[n++] = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
				   (*s >= '0' && *s <= '9') || *s == '_'
			   ? *s
			   : '_';
	out[n] = 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct metrics_family_row *x = a, *y = b;
	int c = strcmp(x->family, y->family);

	return c ? c : (x->order > y->order) - (x->order < y->order);
}

static void add_row(struct metrics_text *t, size_t i, const struct sl_instance *inst,
		    const char *name, const uint64_t *value)
{
	struct metrics_family_row *r = &t->rows[t->nrows++];
	char plugin[64], counter[80];

	name_part(plugin, sizeof(plugin), inst->desc->name);
	name_part(counter, sizeof(counter), name);
	snprintf(r->family, sizeof(r->family), "sluice_%s_%s_total", plugin, counter);
	r->order = i;
	r->inst = inst;
	r->counter = name;
	r->value = value;
}

/*
 * sluice_<plugin>_<counter>_total{instance=}: the instances of one plugin
 * share a family, so the rows are sorted by family name first (n log n,
 * not a scan of every instance per counter).  The core's bad_field_writes
 * (host.c) joins them once an instance has one, as in the counters line.
 */
static void put_plugin_counters(struct metrics_text *t, const struct graph *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nall; i++)
		n += g->all[i]->ncounters + 1;
	if (n > t->caprows) {
		struct metrics_family_row *grown = realloc(t->rows, n * sizeof(*grown));

		if (!grown) {
			t->failed = true;
			return;
		}
		t->rows = grown;
		t->caprows = n;
	}
	t->nrows = 0;
	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		for (size_t k = 0; k < inst->ncounters; k++)
			add_row(t, i, inst, inst->counters[k].name, &inst->counters[k].value);
		if (counter_get64(&inst->bad_field_writes))
			add_row(t, i, inst, "bad_field_writes", &inst->bad_field_writes);
	}
	qsort(t->rows, t->nrows, sizeof(*t->rows), row_cmp);
	for (size_t r = 0; r < t->nrows; r++) {
		const struct metrics_family_row *row = &t->rows[r];

		if (!r || strcmp(row->family, t->rows[r - 1].family) != 0) {
			char help[160];

			snprintf(help, sizeof(help), "The %s plugin's counter %s.",
				 row->inst->desc->name, row->counter);
			family(t, row->family, "counter", help);
		}
		put(t, "%s{instance=\"", row->family);
		put_value(t, row->inst->name);
		put(t, "\"");
		close_sample(t, counter_get64(row->value));
	}
}

/*
 * Room in *rows (capacity *cap rows of `size` bytes, doubled from 64) for
 * row n, the next; false when out of memory (*rows as it was).
 */
static bool room_for_row(void **rows, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *grown;

	if (n < *cap)
		return true;
	ncap = *cap ? 2 * *cap : 64;
	grown = realloc(*rows, ncap * size);
	if (!grown)
		return false;
	*rows = grown;
	*cap = ncap;
	return true;
}

/* A plugin's series, labels written out, sorted into families. */
struct series_row {
	char *family, *help, *labels;	/* labels: ,name="value"... escaped */
	size_t order;
	uint64_t value;
};

struct series_out {
	struct metrics_text *t;
	struct series_row *rows;
	size_t n, cap;
	size_t order;			/* the instance's index */
	struct metrics_text tmp;	/* where a row's labels are written */
	bool failed;
};

/* A metric or label name: [a-zA-Z_:][a-zA-Z0-9_:]* (labels: no ':'; not checked). */
static bool name_ok(const char *s)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == ':'))
			return false;
	return true;
}

static void series_put(void *arg, const struct sl_series *s)
{
	struct series_out *o = arg;
	struct series_row *r;

	if (o->failed || !name_ok(s->family))
		return;
	for (unsigned i = 0; i < s->nlabels; i++)
		if (!name_ok(s->names[i]) || !s->labels[i])
			return;
	if (!room_for_row((void **)&o->rows, &o->cap, o->n, sizeof(*o->rows))) {
		o->failed = true;
		return;
	}
	o->tmp.len = 0;
	o->tmp.failed = !reserve(&o->tmp, 1);
	for (unsigned i = 0; i < s->nlabels; i++) {
		put(&o->tmp, ",%s=\"", s->names[i]);
		put_value(&o->tmp, s->labels[i]);
		put(&o->tmp, "\"");
	}
	r = &o->rows[o->n];
	r->family = strdup(s->family);
	r->help = strdup(s->help ? s->help : "");
	r->labels = o->tmp.failed ? NULL : strndup(o->tmp.buf ? o->tmp.buf : "", o->tmp.len);
	r->order = o->order;
	r->value = s->value;
	if (!r->family || !r->help || !r->labels) {
		free(r->family);
		free(r->help);
		free(r->labels);
		o->failed = true;
		return;
	}
	o->n++;
}

static int series_cmp(const void *a, const void *b)
{
	const struct series_row *x = a, *y = b;
	int c = strcmp(x->family, y->family);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* The series plugins keep themselves (series_source()), one family after the other. */
static void put_series(struct metrics_text *t, const struct graph *g)
{
	struct series_out o = {.t = t};

	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		if (!inst->series_cb || !inst->started)
			continue;
		o.order = i;	/* the instance, whose labels go first */
		inst->series_cb(inst->series_ctx, series_put, &o);
	}
	if (o.n)	/* rows is NULL without series: qsort's arguments must not be */
		qsort(o.rows, o.n, sizeof(*o.rows), series_cmp);
	for (size_t r = 0; r < o.n; r++) {
		const struct series_row *row = &o.rows[r];

		if (!r || strcmp(row->family, o.rows[r - 1].family) != 0)
			family(t, row->family, "counter", row->help);
		open_sample(t, row->family, g->all[row->order]);
		put(t, "%s", row->labels);
		close_sample(t, row->value);
	}
	for (size_t r = 0; r < o.n; r++) {
		free(o.rows[r].family);
		free(o.rows[r].help);
		free(o.rows[r].labels);
	}
	free(o.rows);
	free(o.tmp.buf);
	if (o.failed)
		t->failed = true;
}

int metrics_text_render(const struct runtime *rt, int64_t start_time, uint64_t reloads_ok,
			uint64_t reloads_failed, struct metrics_text *t)
{
	const struct graph *g = rt->graph;

	t->len = 0;
	t->failed = !reserve(t, 1);
	family(t, "sluice_build_info", "gauge", "The running daemon's version and plugin ABI.");
	put(t, "sluice_build_info{version=\"%s\",abi=\"%d.%d\"} 1\n", SLUICE_VERSION, SL_ABI_MAJOR,
	    SL_ABI_MINOR);
	family(t, "sluice_start_time_seconds", "gauge",
	       "When the daemon started, in seconds since the Unix epoch.");
	put(t, "sluice_start_time_seconds %lld\n", (long long)start_time);
	family(t, "sluice_reloads_total", "counter", "Configuration reloads by their result.");
	put(t, "sluice_reloads_total{result=\"ok\"} %llu\n", (unsigned long long)reloads_ok);
	put(t, "sluice_reloads_total{result=\"failed\"} %llu\n",
	    (unsigned long long)reloads_failed);
	put_records(t, g);
	put_drops(t, g);
	put_queues(t, g);
	put_plugin_counters(t, g);
	put_series(t, g);
	return t->failed ? -1 : 0;
}

/* ---- `sluice stats --rules`: the per-rule series as a table ---- */

struct rule_row {
	const char *inst;	/* the instance's name: lives as long as the graph */
	char *labels[6];	/* netns, family, table, chain, handle, comment */
	uint64_t records, bytes;
};

struct rules_out {
	struct rule_row *rows;
	size_t n, cap;
	const char *inst;
	bool failed;
};

static bool same_rule(const struct rule_row *r, const char *inst, const struct sl_series *s)
{
	if (r->inst != inst)
		return false;
	for (unsigned i = 0; i < 6; i++)
		if (strcmp(r->labels[i], s->labels[i]))
			return false;
	return true;
}

static void rules_put(void *arg, const struct sl_series *s)
{
	struct rules_out *o = arg;
	bool records = !strcmp(s->family, "sluice_rule_records_total");
	struct rule_row *r = NULL;

	if (o->failed || s->nlabels != 6 || (!records && strcmp(s->family, "sluice_rule_bytes_total")))
		return;
	/* a rule's two series come one after the other */
	for (size_t i = o->n; i-- > 0 && i + 4 >= o->n;)
		if (same_rule(&o->rows[i], o->inst, s)) {
			r = &o->rows[i];
			break;
		}
	if (!r) {
		if (!room_for_row((void **)&o->rows, &o->cap, o->n, sizeof(*o->rows))) {
			o->failed = true;
			return;
		}
		r = &o->rows[o->n];
		memset(r, 0, sizeof(*r));
		r->inst = o->inst;
		for (unsigned i = 0; i < 6; i++)
			if (!(r->labels[i] = strdup(s->labels[i] ? s->labels[i] : "")))
				o->failed = true;
		o->n++;
	}
	if (records)
		r->records = s->value;
	else
		r->bytes = s->value;
}

static int busiest_first(const void *a, const void *b)
{
	const struct rule_row *x = a, *y = b;

	if (x->records != y->records)
		return x->records > y->records ? -1 : 1;
	return x->bytes > y->bytes ? -1 : x->bytes < y->bytes;
}

/* A value from a ruleset, for a terminal: controls, DEL and '\' as \xNN. */
static void put_plain(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '\\')
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

int metrics_text_rules(const struct runtime *rt, FILE *out)
{
	const struct graph *g = rt->graph;
	struct rules_out o = {0};

	for (size_t i = 0; i < g->nall; i++) {
		const struct sl_instance *inst = g->all[i];

		if (!inst->series_cb || !inst->started)
			continue;
		o.inst = inst->name;
		inst->series_cb(inst->series_ctx, rules_put, &o);
	}
	if (!o.failed) {
		if (o.n)	/* NULL without rules: not for qsort() */
			qsort(o.rows, o.n, sizeof(*o.rows), busiest_first);
		fprintf(out, "%12s %14s  %s\n", "RECORDS", "BYTES",
			"INSTANCE NETNS FAMILY TABLE CHAIN HANDLE COMMENT");
		for (size_t r = 0; r < o.n; r++) {
			const struct rule_row *row = &o.rows[r];

			fprintf(out, "%12llu %14llu  ", (unsigned long long)row->records,
				(unsigned long long)row->bytes);
			put_plain(out, row->inst);
			for (unsigned i = 0; i < 6; i++) {
				fputc(' ', out);
				if (i == 5)
					fputc('"', out);
				put_plain(out, row->labels[i]);
				if (i == 5)
					fputc('"', out);
			}
			fputc('\n', out);
		}
	}
	for (size_t r = 0; r < o.n; r++)
		for (unsigned i = 0; i < 6; i++)
			free(o.rows[r].labels[i]);
	free(o.rows);
	return o.failed ? -1 : 0;
}

void metrics_text_free(struct metrics_text *t)
{
	free(t->buf);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
