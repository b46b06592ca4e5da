/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test input "gen": emits `count` records whose text is "<text> N", in
 * batches, from a 0 ms timer, then reports itself finished.  It lets the
 * core's tests run stacks without root, capture files or other plugins.
 * Built with -DGEN_ABI_MAJOR=99 it becomes a plugin of a future ABI,
 * with -DGEN_NO_ENTRY a shared object that is no plugin at all, with
 * -DGEN_NO_HEADER a descriptor without SL_PLUGIN_HEADER, and with
 * -DGEN_TYPO one that misspells a field in its provides.  ABI 1.3 loader
 * tests: -DGEN_ABI_MINOR=N declares it needs ABI 1.N (GEN_ABI_MINOR_NEXT:
 * one newer than the headers), -DGEN_SECRET adds an SL_OPT_SECRET option
 * (1.3), -DGEN_DUP_OPTION declares `count` twice, -DGEN_BAD_DEFAULT gives
 * an option a default that is no integer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#ifndef GEN_ABI_MAJOR
#define GEN_ABI_MAJOR SL_ABI_MAJOR
#endif
#ifdef GEN_ABI_MINOR_NEXT
#define GEN_ABI_MINOR (SL_ABI_MINOR + 1)
#endif
#ifndef GEN_ABI_MINOR
#define GEN_ABI_MINOR SL_ABI_MINOR
#endif
#ifndef GEN_NAME
#define GEN_NAME "gen"
#endif

struct gen_config {
	int64_t count;
	const char *text;
	uint64_t interval;
	int64_t per_tick;
	bool multiline;
	bool fail_start;
	const char *token;
	int64_t ratio;
};

struct gen {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct gen_config *cfg;
	struct sl_timer *timer;
	int64_t sent;
};

static const struct sl_option gen_options[] = {
	SL_OPT_INT("count", struct gen_config, count, "10", -1, 100000000,
		   "records to emit (-1: endless)"),
	SL_OPT_STR("text", struct gen_config, text, "record", "text of each record"),
	SL_OPT_DURATION("interval", struct gen_config, interval, "0", 0, 3600000,
			"pause between batches (0: none)"),
	SL_OPT_INT("per_tick", struct gen_config, per_tick, "1000000", 1, 1000000,
		   "records per batch at most"),
	SL_OPT_BOOL("multiline", struct gen_config, multiline, "false",
		    "allow newlines in text (to test that outputs escape them)"),
	SL_OPT_BOOL("fail_start", struct gen_config, fail_start, "false",
		    "fail in start() after creating the timer (stop() must free it)"),
#ifdef GEN_SECRET
	SL_OPT_STR("token", struct gen_config, token, SL_SECRET(NULL), "a secret (ABI 1.3)"),
#endif
#ifdef GEN_DUP_OPTION
	SL_OPT_INT("count", struct gen_config, ratio, "5", 0, 10, "the same name again"),
#endif
#ifdef GEN_BAD_DEFAULT
	SL_OPT_INT("ratio", struct gen_config, ratio, "lots", 0, 10, "a default that is no integer"),
#endif
	SL_OPT_END,
};

static const struct sl_field_decl gen_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_SEQ_LOCAL),
#ifdef GEN_TYPO
	{"seq_locl", SL_T_U64},
#endif
	SL_FIELD_END,
};

static void gen_tick(void *state)
{
	struct gen *g = state;
	struct sl_batch *b = g->host->batch_get(g->inst);
	struct sl_record *r;
	int64_t added = 0;

	while ((g->cfg->count < 0 || g->sent < g->cfg->count) && added++ < g->cfg->per_tick &&
	       (r = sl_batch_add(b))) {
		size_t room = strlen(g->cfg->text) + 24;
		char *line = sl_batch_alloc(b, room);
		int n;

		if (!line) {
			sl_batch_unadd(b);
			break;
		}
		n = snprintf(line, room, "%s %lld", g->cfg->text, (long long)g->sent);

		sl_set_bytes(r, SL_F_TEXT, line, (uint32_t)n);
		sl_set_u64(r, SL_F_SEQ_LOCAL, (uint64_t)g->sent);
		g->sent++;
	}
	g->host->emit(g->inst, b);
	if (g->cfg->count < 0 || g->sent < g->cfg->count)
		g->host->timer_arm(g->timer, g->cfg->interval, 0);
	else
		g->host->input_done(g->inst);
}

static int gen_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			 void **state)
{
	struct gen *g = calloc(1, sizeof(*g));

	if (!g)
		return -1;
	g->host = host;
	g->inst = inst;
	g->cfg = config;
	if (strchr(g->cfg->text, '\n') && !g->cfg->multiline) {
		host->config_error(inst, "text", "must be one line");
		free(g);
		return -1;
	}
	*state = g;
	return 0;
}

static int gen_start(void *state)
{
	struct gen *g = state;

	g->timer = g->host->timer_new(g->inst, gen_tick, g);
	if (!g->timer)
		return -1;
	if (g->cfg->fail_start) {
		g->host->log(g->inst, SL_LOG_ERR, "failing start() as told");
		return -1;
	}
	g->host->timer_arm(g->timer, 0, 0);
	return 0;
}

/* Also after a failed start(): the timer is freed here, not leaked. */
static void gen_stop(void *state)
{
	struct gen *g = state;

	if (g->timer) {
		g->host->timer_free(g->timer);
		g->host->log(g->inst, SL_LOG_INFO, "stopped: timer freed");
	}
	g->timer = NULL;
}

static void gen_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin gen_plugin = {
#ifndef GEN_NO_HEADER
	.abi_major = GEN_ABI_MAJOR,
	.abi_minor = GEN_ABI_MINOR,
	.size = sizeof(struct sl_plugin),
#endif
	.kind = SL_KIND_INPUT,
	.name = GEN_NAME,
	.description = "test input: emits numbered text records",
	.config_size = sizeof(struct gen_config),
	.options = gen_options,
	.provides = gen_provides,
	.configure = gen_configure,
	.start = gen_start,
	.stop = gen_stop,
	.destroy = gen_destroy,
};

#ifndef GEN_NO_ENTRY
SLUICE_PLUGIN(gen_plugin)
#else
/* Keep the descriptor referenced so the object still builds warning-free. */
const struct sl_plugin *not_the_entry(void);
const struct sl_plugin *not_the_entry(void)
{
	return &gen_plugin;
}
#endif
