/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A deliberately wrong out-of-tree filter, for the tests of what a plugin
 * may write (sluice-plugin(3), "What a plugin may write and see"): it
 * overwrites each record's `prefix` without declaring it in `provides`,
 * and allocates memory in every process().  A correct filter that rewrites
 * the prefix lists SL_FIELD_DECL(SL_F_PREFIX) in its provides and takes
 * its memory from the batch arena (sl_batch_alloc()).  sluice refuses the
 * write below a fan-out (counted in `undeclared_writes`) and, in strict
 * mode, everywhere, and counts the allocations (`strict_mallocs`).
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

struct retag_config {
	const char *prefix;
};

static const struct sl_option retag_options[] = {
	SL_OPT_STR("prefix", struct retag_config, prefix, "REWRITTEN", "the prefix it writes"),
	SL_OPT_END,
};

static const struct sl_field_decl retag_needs[] = {SL_FIELD_DECL(SL_F_PREFIX), SL_FIELD_END};
/* The mistake: `prefix` belongs here. */
static const struct sl_field_decl retag_provides[] = {SL_FIELD_END};

static int retag_process(void *state, struct sl_batch *b)
{
	const struct retag_config *cfg = state;
	size_t len = strlen(cfg->prefix);
	/* The other mistake: memory from malloc() on the hot path. */
	char *scratch = malloc(len + 1);

	if (!scratch)
		return -1;
	memcpy(scratch, cfg->prefix, len + 1);
	for (unsigned i = 0; i < b->count; i++)
		if (sl_has(b->rec[i], SL_F_PREFIX))
			sl_set_bytes(b->rec[i], SL_F_PREFIX, cfg->prefix, (uint32_t)len);
	free(scratch);
	return 0;
}

static int retag_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	(void)host;
	(void)inst;
	*state = (void *)config;
	return 0;
}

static const struct sl_plugin retag_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "retag",
	.description = "deliberately wrong test filter: rewrites prefix without providing it",
	.config_size = sizeof(struct retag_config),
	.options = retag_options,
	.needs = retag_needs,
	.provides = retag_provides,
	.configure = retag_configure,
	.process = retag_process,
};

SLUICE_PLUGIN(retag_plugin)
