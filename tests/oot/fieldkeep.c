/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An out-of-tree filter that does what the ABI lets a plugin do with field
 * ids and names, built against the installed headers only:
 *  - it keeps the pointer field_name() returned in configure() and uses
 *    it in every process(), also after a reload kept the instance (the
 *    name must live as long as the process: ABI 1.3);
 *  - with `write_unknown: NAME` it also writes the id field_id() answered
 *    for a name nobody registered (-1): the record refuses the write, the
 *    core counts it (ABI 1.3), no other record changes;
 *  - with `mark_id: N` it marks id N present without writing a value:
 *    an id past the configuration's fields, which the core finds after
 *    process() and counts the same way.
 * Each record's text becomes "NAME=TEXT", NAME being its own registered
 * field's name as field_name() gave it.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

struct fieldkeep_config {
	const char *write_unknown;
	int64_t mark_id;
};

struct fieldkeep {
	const char *name;	/* from field_name(), kept as is */
	int tag;		/* our own registered field */
	int unknown;		/* field_id() of write_unknown: -1 */
	bool write_unknown;
	int64_t mark_id;
};

static const struct sl_option fieldkeep_options[] = {
	SL_OPT_STR("write_unknown", struct fieldkeep_config, write_unknown, NULL,
		   "also write this field, which nobody registers (an id of -1)"),
	SL_OPT_INT("mark_id", struct fieldkeep_config, mark_id, "-1", -1, SL_MAX_FIELDS - 1,
		   "also mark this field id present, without a value (-1: none)"),
	SL_OPT_END,
};

static const struct sl_field_decl fieldkeep_needs[] = {SL_FIELD_DECL(SL_F_TEXT), SL_FIELD_END};
static const struct sl_field_decl fieldkeep_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	{"fieldkeep_tag", SL_T_STRING},
	SL_FIELD_END,
};

static int fieldkeep_process(void *state, struct sl_batch *b)
{
	struct fieldkeep *k = state;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *rec = b->rec[i];
		struct sl_bytes text;
		uint8_t *out;

		if (!sl_has(rec, SL_F_TEXT))
			continue;
		text = rec->v[SL_F_TEXT].bytes;
		/* the bytes behind the kept pointer, as they are now */
		size_t n = strlen(k->name);

		out = sl_batch_alloc(b, n + 1 + text.len);
		if (!out)
			return -1;
		memcpy(out, k->name, n);
		out[n] = '=';
		memcpy(out + n + 1, text.ptr, text.len);
		sl_set_bytes(rec, SL_F_TEXT, out, (uint32_t)(n + 1 + text.len));
		sl_set_bytes(rec, (sl_field)k->tag, k->name, (uint32_t)n);
		if (k->write_unknown)
			sl_set_u64(rec, (sl_field)k->unknown, 0xdeadbeefdeadbeefull);
		if (k->mark_id >= 0)
			sl_mark(rec, (sl_field)k->mark_id);
	}
	return 0;
}

static int fieldkeep_configure(const struct sl_host *host, struct sl_instance *inst,
			       const void *config, void **state)
{
	const struct fieldkeep_config *cfg = config;
	struct fieldkeep *k = calloc(1, sizeof(*k));

	if (!k)
		return -1;
	k->tag = host->field_id(inst, "fieldkeep_tag");
	k->name = host->field_name(inst, k->tag);
	if (k->tag < 0 || !k->name) {
		host->config_error(inst, NULL, "field 'fieldkeep_tag' is not registered");
		free(k);
		return -1;
	}
	if (cfg->write_unknown) {
		k->write_unknown = true;
		k->unknown = host->field_id(inst, cfg->write_unknown);
		if (k->unknown >= 0) {
			host->config_error(inst, "write_unknown", "'%s' is a registered field",
					   cfg->write_unknown);
			free(k);
			return -1;
		}
	}
	k->mark_id = cfg->mark_id;
	*state = k;
	return 0;
}

static void fieldkeep_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin fieldkeep_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "fieldkeep",
	.description = "test filter: keeps field_name()'s pointer, may write an unknown id",
	.config_size = sizeof(struct fieldkeep_config),
	.options = fieldkeep_options,
	.needs = fieldkeep_needs,
	.provides = fieldkeep_provides,
	.configure = fieldkeep_configure,
	.process = fieldkeep_process,
	.destroy = fieldkeep_destroy,
};

SLUICE_PLUGIN(fieldkeep_plugin)
