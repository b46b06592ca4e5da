/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test filter "taint": sets each record's text anew, in other memory of
 * the batch arena, with an ESC byte appended.  A converter's text_safe
 * mark then no longer matches the text (other pointer, other length), so
 * a text output must escape the ESC: the test that the mark cannot vouch
 * for text a later filter made.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

struct taint_config {
	int unused;
};

struct taint {
	const struct sl_host *host;
};

static const struct sl_option taint_options[] = {
	SL_OPT_END,
};

static const struct sl_field_decl taint_needs[] = {{"text", SL_T_STRING}, SL_FIELD_END};
static const struct sl_field_decl taint_provides[] = {{"text", SL_T_STRING}, SL_FIELD_END};

static int taint_process(void *state, struct sl_batch *b)
{
	(void)state;
	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		const struct sl_bytes *t = &r->v[SL_F_TEXT].bytes;
		uint8_t *out;

		if (!sl_has(r, SL_F_TEXT))
			continue;
		out = sl_batch_alloc(b, (size_t)t->len + 1);
		if (!out)
			continue;
		memcpy(out, t->ptr, t->len);
		out[t->len] = 0x1b;
		sl_set_bytes(r, SL_F_TEXT, out, t->len + 1);
	}
	return 0;
}

static int taint_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	struct taint *t = calloc(1, sizeof(*t));

	(void)inst;
	(void)config;
	if (!t)
		return -1;
	t->host = host;
	*state = t;
	return 0;
}

static void taint_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin taint_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "taint",
	.description = "test filter: sets the text anew with an ESC byte appended",
	.config_size = sizeof(struct taint_config),
	.options = taint_options,
	.needs = taint_needs,
	.provides = taint_provides,
	.configure = taint_configure,
	.process = taint_process,
	.destroy = taint_destroy,
};

SLUICE_PLUGIN(taint_plugin)
