/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * where: keep the records that match an expression over their fields
 * (plugins/common/expr.h), drop the others.
 *
 * The expression is compiled once, in configure(); every field it names is
 * asked for with need_field(), so the graph check blames a field nothing
 * upstream sets, and a threaded output's queue copies what it reads.  Kept
 * records are counted by the core as `out`, the others as `dropped`.
 * Since stacks fan out from shared prefixes, one input with several stacks
 * each starting with its own `where` is a router (conf/routing.yaml).
 */
#include <stdlib.h>

#include <sluice/plugin.h>

#include "expr.h"
#include "plugin_state.h"

struct where_cfg {
	const char *expr;
};

struct where_state {
	SL_STATE_HEAD(struct where_cfg);
	struct sl_expr *expr;
};

/* The resolver of sl_expr_compile(); ctx is the state being configured. */
static int resolve(void *ctx, const char *name, enum sl_type *type)
{
	const struct where_state *st = ctx;
	int id = st->host->field_id(st->inst, name);

	if (id >= 0)
		*type = st->host->field_type(st->inst, id);
	return id;
}

/* need_field() for every field the expression reads: all set upstream? */
static int need_fields(const struct sl_host *host, struct sl_instance *inst, const struct sl_expr *e)
{
	int rc = 0;

	for (unsigned i = 0; i < sl_expr_nfields(e); i++)
		if (host->need_field(inst, "expr", host->field_name(inst, sl_expr_field(e, i))) < 0)
			rc = -1;
	return rc;
}

static int where_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			   void **state)
{
	const struct where_cfg *cfg = config;
	struct sl_expr_error err;
	struct where_state *st = sl_state_new(struct where_state, host, inst, config);

	if (!st)
		return -1;
	st->expr = sl_expr_compile(cfg->expr, resolve, st, &err);
	if (!st->expr) {
		host->config_error(inst, "expr", "column %u of the expression: %s", err.column, err.msg);
		free(st);
		return -1;
	}
	if (need_fields(host, inst, st->expr) < 0) {
		sl_expr_free(st->expr);
		free(st);
		return -1;
	}
	*state = st;
	return 0;
}

static int where_process(void *state, struct sl_batch *b)
{
	const struct sl_expr *e = ((struct where_state *)state)->expr;
	unsigned i, kept = 0;

	for (i = 0; i < b->count; i++)
		if (sl_expr_match(e, b->rec[i]))
			b->rec[kept++] = b->rec[i];
	b->count = kept;
	return 0;
}

static void where_destroy(void *state)
{
	struct where_state *st = state;

	sl_expr_free(st->expr);
	free(st);
}

static const struct sl_option where_options[] = {
	SL_OPT_STR("expr", struct where_cfg, expr, SL_REQUIRED,
		   "keep records matching this expression over their fields (sluice-where(7))"),
	SL_OPT_END
};

/* Everything it reads is asked for by need_field() in configure(). */
static const struct sl_field_decl where_reads[] = {
	SL_FIELD_END
};

static const struct sl_plugin where_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "where",
	.description = "keep records whose fields match an expression (and route stacks by it)",
	.config_size = sizeof(struct where_cfg),
	.options = where_options,
	.configure = where_configure,
	.process = where_process,
	.destroy = where_destroy,
	.reads = where_reads,
};

SLUICE_PLUGIN(where_plugin)
