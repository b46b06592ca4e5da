/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * benchnull: an output that consumes records and does nothing else, for
 * measuring what the elements above it cost (bench/offline.sh builds it
 * into its work directory; it is never installed).
 *
 * It reads one word of each record (the presence bits), as any real
 * output would touch the record, so a stack ending here does not look
 * cheaper than it is merely because nothing pulled the records into the
 * cache.
 */
#include <stdlib.h>

#include <sluice/plugin.h>

struct benchnull_cfg {
	int unused;
};

struct benchnull {
	uint64_t sink;
};

static const struct sl_option benchnull_options[] = {
	SL_OPT_END
};

static int benchnull_configure(const struct sl_host *host, struct sl_instance *inst,
			       const void *config, void **state)
{
	(void)host;
	(void)inst;
	(void)config;
	*state = calloc(1, sizeof(struct benchnull));
	return *state ? 0 : -1;
}

static int benchnull_process(void *state, struct sl_batch *b)
{
	struct benchnull *st = state;

	for (unsigned i = 0; i < b->count; i++)
		st->sink += b->rec[i]->present[0];
	return 0;
}

static void benchnull_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin benchnull_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "benchnull",
	.description = "benchmark sink: consume records, write nothing",
	.config_size = sizeof(struct benchnull_cfg),
	.options = benchnull_options,
	.configure = benchnull_configure,
	.process = benchnull_process,
	.destroy = benchnull_destroy,
};

SLUICE_PLUGIN(benchnull_plugin)
