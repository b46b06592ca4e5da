/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test filter "upcase": rewrites each record's text in upper case into the
 * batch arena and registers a field of its own, "upcase_len", the way a
 * third-party filter adds fields.  Option `drop_every` drops every Nth
 * record, to test drops and fan-out isolation; `fail` makes process()
 * fail every batch.
 */
#include <ctype.h>
#include <stdlib.h>

#include <sluice/plugin.h>

struct upcase_config {
	int64_t drop_every;
	bool fail;
};

struct upcase {
	const struct sl_host *host;
	const struct upcase_config *cfg;
	int len_field;
	uint64_t seen;
};

static const struct sl_option upcase_options[] = {
	SL_OPT_INT("drop_every", struct upcase_config, drop_every, "0", 0, 1000000,
		   "drop every Nth record (0: none)"),
	SL_OPT_BOOL("fail", struct upcase_config, fail, "false",
		    "return -1 from process() for every batch"),
	SL_OPT_END,
};

static const struct sl_field_decl upcase_needs[] = {SL_FIELD_DECL(SL_F_TEXT), SL_FIELD_END};
static const struct sl_field_decl upcase_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	{"upcase_len", SL_T_U64},
	SL_FIELD_END,
};

static int upcase_process(void *state, struct sl_batch *b)
{
	struct upcase *u = state;
	unsigned kept = 0;

	if (u->cfg->fail)
		return -1;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		const struct sl_bytes *t = &r->v[SL_F_TEXT].bytes;
		uint8_t *out;

		u->seen++;
		if (u->cfg->drop_every && u->seen % (uint64_t)u->cfg->drop_every == 0)
			continue;
		/* `needs` holds per stack: a record without text passes as it is. */
		if (!sl_has(r, SL_F_TEXT)) {
			b->rec[kept++] = r;
			continue;
		}
		out = sl_batch_alloc(b, t->len);
		if (!out)
			continue;
		for (uint32_t k = 0; k < t->len; k++)
			out[k] = (uint8_t)toupper(t->ptr[k]);
		sl_set_bytes(r, SL_F_TEXT, out, t->len);
		sl_set_u64(r, (sl_field)u->len_field, t->len);
		b->rec[kept++] = r;
	}
	b->count = kept;
	return 0;
}

static int upcase_configure(const struct sl_host *host, struct sl_instance *inst,
			    const void *config, void **state)
{
	struct upcase *u = calloc(1, sizeof(*u));

	if (!u)
		return -1;
	u->host = host;
	u->cfg = config;
	u->len_field = host->field_id(inst, "upcase_len");
	if (u->len_field < 0) {
		host->config_error(inst, NULL, "field upcase_len was not registered");
		free(u);
		return -1;
	}
	*state = u;
	return 0;
}

static void upcase_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin upcase_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "upcase",
	.description = "test filter: upper-cases the text line",
	.config_size = sizeof(struct upcase_config),
	.options = upcase_options,
	.needs = upcase_needs,
	.provides = upcase_provides,
	.configure = upcase_configure,
	.process = upcase_process,
	.destroy = upcase_destroy,
};

SLUICE_PLUGIN(upcase_plugin)
