/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph.h"
#include "host.h"
#include "queue.h"
#include "stats.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "unknown"
#endif

/* What one queued batch costs: the allocation queue_batch_new() makes. */
static uint64_t queue_batch_bytes(const struct runtime *rt)
{
	return sizeof(struct sl_batch) + rt->batch_size * sizeof(struct sl_record *) +
	       (uint64_t)rt->batch_size * rt->stride + rt->queue_arena_size;
}

static int take_inst(struct stats_inst *si, const struct sl_instance *inst,
		     const struct runtime *rt)
{
	uint64_t bad;

	si->name = strdup(inst->name);
	si->plugin = strdup(inst->desc->name);
	si->kind = strdup(plugin_loader_kind_name(inst->desc->kind));
	si->stacks = calloc(inst->nstacks ? inst->nstacks : 1, sizeof(char *));
	/* one more for the core's bad_field_writes (host.c), shown once there is one */
	si->counters = calloc(inst->ncounters + 1, sizeof(*si->counters));
	if (!si->name || !si->plugin || !si->kind || !si->stacks || !si->counters)
		return -1;
	for (; si->nstacks < inst->nstacks; si->nstacks++)
		if (!(si->stacks[si->nstacks] = strdup(inst->stacks[si->nstacks])))
			return -1;
	for (; si->ncounters < inst->ncounters; si->ncounters++) {
		struct stats_counter *c = &si->counters[si->ncounters];

		if (!(c->name = strdup(inst->counters[si->ncounters].name)))
			return -1;
		c->value = counter_get64(&inst->counters[si->ncounters].value);
	}
	if ((bad = counter_get64(&inst->bad_field_writes))) {
		struct stats_counter *c = &si->counters[si->ncounters];

		if (!(c->name = strdup("bad_field_writes")))
			return -1;
		c->value = bad;
		si->ncounters++;
	}
	si->in = counter_get64(&inst->in);
	si->out = counter_get64(&inst->out);
	si->dropped = counter_get64(&inst->dropped);
	si->errors = counter_get64(&inst->errors);
	if (inst->queue) {
		unsigned depth;

		queue_stats(inst->queue, &depth, &si->queue_high);
		si->queued = true;
		si->queue_depth = depth;
		si->queue_capacity = inst->queue->max;
		si->queue_bytes = depth * queue_batch_bytes(rt);
		si->queue_dropped = counter_get64(&inst->queue->dropped);
	}
	return 0;
}

int stats_take(struct stats_snap *s, const struct runtime *rt, int64_t start_time,
	       uint64_t reloads_ok, uint64_t reloads_failed)
{
	const struct graph *g = rt->graph;

	memset(s, 0, sizeof(*s));
	s->version = strdup(SLUICE_VERSION);
	s->start_time = start_time;
	s->now = time(NULL);
	s->reloads_ok = reloads_ok;
	s->reloads_failed = reloads_failed;
	s->inst = calloc(g->nall ? g->nall : 1, sizeof(*s->inst));
	if (!s->version || !s->inst)
		goto fail;
	for (; s->n < g->nall; s->n++)
		if (take_inst(&s->inst[s->n], g->all[s->n], rt)) {
			s->n++;	/* free what it took */
			goto fail;
		}
	return 0;
fail:
	stats_free(s);
	return -1;
}

void stats_free(struct stats_snap *s)
{
	for (size_t i = 0; s->inst && i < s->n; i++) {
		struct stats_inst *si = &s->inst[i];

		free(si->name);
		free(si->plugin);
		free(si->kind);
		for (size_t k = 0; si->stacks && k < si->nstacks; k++)
			free(si->stacks[k]);
		free(si->stacks);
		for (size_t k = 0; si->counters && k < si->ncounters; k++)
			free(si->counters[k].name);
		free(si->counters);
	}
	free(s->inst);
	free(s->version);
	memset(s, 0, sizeof(*s));
}

/* ---- JSON ---- */

static void json_string(FILE *out, const char *str)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_inst(const struct stats_inst *si, FILE *out)
{
	fprintf(out, "{\"name\":");
	json_string(out, si->name);
	fprintf(out, ",\"plugin\":");
	json_string(out, si->plugin);
	fprintf(out, ",\"kind\":");
	json_string(out, si->kind);
	fprintf(out, ",\"stacks\":[");
	for (size_t k = 0; k < si->nstacks; k++) {
		if (k)
			fputc(',', out);
		json_string(out, si->stacks[k]);
	}
	fprintf(out, "],\"in\":%llu,\"out\":%llu,\"dropped\":%llu,\"errors\":%llu,\"counters\":{",
		(unsigned long long)si->in, (unsigned long long)si->out,
		(unsigned long long)si->dropped, (unsigned long long)si->errors);
	for (size_t k = 0; k < si->ncounters; k++) {
		if (k)
			fputc(',', out);
		json_string(out, si->counters[k].name);
		fprintf(out, ":%llu", (unsigned long long)si->counters[k].value);
	}
	fprintf(out, "},\"queue\":");
	if (si->queued)
		fprintf(out,
			"{\"depth\":%llu,\"capacity\":%llu,\"high_water\":%llu,\"bytes\":%llu,"
			"\"dropped\":%llu}",
			(unsigned long long)si->queue_depth, (unsigned long long)si->queue_capacity,
			(unsigned long long)si->queue_high, (unsigned long long)si->queue_bytes,
			(unsigned long long)si->queue_dropped);
	else
		fprintf(out, "null");
	fputc('}', out);
}

void stats_write_json(const struct stats_snap *s, FILE *out)
{
	fprintf(out, "{\"version\":");
	json_string(out, s->version);
	fprintf(out,
		",\"start_time\":%lld,\"now\":%lld,\"uptime_seconds\":%lld,\"reloads_ok\":%llu,"
		"\"reloads_failed\":%llu,\"instances\":[",
		(long long)s->start_time, (long long)s->now, (long long)(s->now - s->start_time),
		(unsigned long long)s->reloads_ok, (unsigned long long)s->reloads_failed);
	for (size_t i = 0; i < s->n; i++) {
		fprintf(out, i ? ",\n" : "\n");
		json_inst(&s->inst[i], out);
	}
	fprintf(out, "\n]}\n");
}

/* ---- the table ---- */

enum { C_STACK, C_INST, C_PLUGIN, C_IN, C_OUT, C_DROP, C_ERR, C_RIN, C_ROUT, C_RDROP, C_RERR,
       C_QUEUE, C_QBYTES, C_QDROP, C_COUNTERS, NCOLS };

static const char *const col_title[NCOLS] = {
	"STACK", "INSTANCE", "PLUGIN", "IN", "OUT", "DROPPED", "ERRORS", "IN/s", "OUT/s",
	"DROP/s", "ERR/s", "QUEUE", "QBYTES", "QDROP", "COUNTERS",
};

static const struct stats_inst *find_inst(const struct stats_snap *s, const struct stats_inst *si)
{
	for (size_t i = 0; s && i < s->n; i++)
		if (strcmp(s->inst[i].name, si->name) == 0 &&
		    strcmp(s->inst[i].plugin, si->plugin) == 0)
			return &s->inst[i];
	return NULL;
}

static char *fmt_rate(uint64_t now, const uint64_t *then, double secs)
{
	char *c = NULL;

	if (!then || now < *then || secs <= 0)
		return strdup("-");
	if (asprintf(&c, "%.0f", (double)(now - *then) / secs) < 0)
		return NULL;
	return c;
}

static char *sl_fmt_u64(uint64_t v)
{
	char *c = NULL;

	return asprintf(&c, "%llu", (unsigned long long)v) < 0 ? NULL : c;
}

static char *fmt_join(char *const *v, size_t n, const char *sep)
{
	size_t len = 1;
	char *c;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + strlen(sep);
	if (!(c = malloc(len)))
		return NULL;
	*c = 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(c, sep);
		strcat(c, v[i]);
	}
	return c;
}

static char *fmt_counters(const struct stats_inst *si)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t k = 0; k < si->ncounters; k++)
		fprintf(f, "%s%s=%llu", k ? " " : "", si->counters[k].name,
			(unsigned long long)si->counters[k].value);
	fclose(f);
	return buf;
}

/* One row's cells (malloc'd strings); false if out of memory. */
static bool row_cells(char **cell, const struct stats_inst *si, const struct stats_inst *old,
		      double secs)
{
	cell[C_STACK] = si->nstacks ? fmt_join(si->stacks, si->nstacks, ",") : strdup("-");
	cell[C_INST] = strdup(si->name);
	cell[C_PLUGIN] = strdup(si->plugin);
	cell[C_IN] = sl_fmt_u64(si->in);
	cell[C_OUT] = sl_fmt_u64(si->out);
	cell[C_DROP] = sl_fmt_u64(si->dropped);
	cell[C_ERR] = sl_fmt_u64(si->errors);
	cell[C_RIN] = fmt_rate(si->in, old ? &old->in : NULL, secs);
	cell[C_ROUT] = fmt_rate(si->out, old ? &old->out : NULL, secs);
	cell[C_RDROP] = fmt_rate(si->dropped, old ? &old->dropped : NULL, secs);
	cell[C_RERR] = fmt_rate(si->errors, old ? &old->errors : NULL, secs);
	if (si->queued) {
		if (asprintf(&cell[C_QUEUE], "%llu/%llu", (unsigned long long)si->queue_depth,
			     (unsigned long long)si->queue_capacity) < 0)
			cell[C_QUEUE] = NULL;
		cell[C_QBYTES] = sl_fmt_u64(si->queue_bytes);
		cell[C_QDROP] = sl_fmt_u64(si->queue_dropped);
	} else {
		cell[C_QUEUE] = strdup("-");
		cell[C_QBYTES] = strdup("-");
		cell[C_QDROP] = strdup("-");
	}
	cell[C_COUNTERS] = fmt_counters(si);
	for (int c = 0; c < NCOLS; c++)
		if (!cell[c])
			return false;
	return true;
}

static void write_header(const struct stats_snap *s, FILE *out)
{
	long long up = s->now - s->start_time;
	time_t start = (time_t)s->start_time;
	struct tm tm;
	char when[32] = "?";

	if (gmtime_r(&start, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(out, "sluice %s: up %lldd %02lld:%02lld:%02lld since %s; reloads %llu ok, %llu failed\n",
		s->version, up / 86400, up / 3600 % 24, up / 60 % 60, up % 60, when,
		(unsigned long long)s->reloads_ok, (unsigned long long)s->reloads_failed);
}

static bool col_shown(int c, bool rates)
{
	return rates || c < C_RIN || c > C_RERR;
}

void stats_write_table(const struct stats_snap *s, const struct stats_snap *prev, double secs,
		       FILE *out)
{
	char *(*cells)[NCOLS] = calloc(s->n ? s->n : 1, sizeof(*cells));
	size_t width[NCOLS];
	bool rates = prev != NULL;

	write_header(s, out);
	if (!cells) {
		fprintf(out, "out of memory\n");
		return;
	}
	for (int c = 0; c < NCOLS; c++)
		width[c] = strlen(col_title[c]);
	for (size_t i = 0; i < s->n; i++) {
		if (!row_cells(cells[i], &s->inst[i], find_inst(prev, &s->inst[i]), secs)) {
			fprintf(out, "out of memory\n");
			goto done;
		}
		for (int c = 0; c < NCOLS; c++)
			if (strlen(cells[i][c]) > width[c])
				width[c] = strlen(cells[i][c]);
	}
	/* Names left-aligned, numbers right-aligned, the free-form counters last. */
	for (size_t i = 0; i <= s->n; i++) {
		for (int c = 0; c < NCOLS; c++) {
			const char *v = i ? cells[i - 1][c] : col_title[c];

			if (!col_shown(c, rates) || (c == C_COUNTERS && !*v))
				continue;
			if (c)
				fputs("  ", out);
			if (c == C_COUNTERS)
				fputs(v, out);
			else if (c <= C_PLUGIN)
				fprintf(out, "%-*s", (int)width[c], v);
			else
				fprintf(out, "%*s", (int)width[c], v);
		}
		fputc('\n', out);
	}
done:
	for (size_t i = 0; i < s->n; i++)
		for (int c = 0; c < NCOLS; c++)
			free(cells[i][c]);
	free(cells);
}
