/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test filter "rulestub": sets the rule attribution fields nflog's
 * `rules: true` (issue 22) gives a record (rule_table, rule_chain,
 * rule_handle, rule_comment, rule_verdict), with the values of its
 * options, on every record; an option left empty leaves its field out.
 * It lets pcap's pcapng comment be tested by the fields' names before an
 * input that attributes rules is there (test_pcapng_rule_comment.sh).
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

struct stub_config {
	const char *table, *chain, *comment, *verdict;
	int64_t handle;
};

struct stub {
	const struct stub_config *cfg;
	int f_table, f_chain, f_handle, f_comment, f_verdict;
};

static const struct sl_option stub_options[] = {
	SL_OPT_STR("table", struct stub_config, table, "", "rule_table ('': none)"),
	SL_OPT_STR("chain", struct stub_config, chain, "", "rule_chain ('': none)"),
	SL_OPT_INT("handle", struct stub_config, handle, "-1", -1, 1000000000, "rule_handle (-1: none)"),
	SL_OPT_STR("comment", struct stub_config, comment, "", "rule_comment ('': none)"),
	SL_OPT_STR("verdict", struct stub_config, verdict, "", "rule_verdict ('': none)"),
	SL_OPT_END,
};

static const struct sl_field_decl stub_provides[] = {
	{"rule_table", SL_T_STRING},
	{"rule_chain", SL_T_STRING},
	{"rule_handle", SL_T_U64},
	{"rule_comment", SL_T_STRING},
	{"rule_verdict", SL_T_STRING},
	SL_FIELD_END,
};

static void set_str(struct sl_record *r, int f, const char *v)
{
	if (*v)
		sl_set_bytes(r, (sl_field)f, v, (uint32_t)strlen(v));
}

static int stub_process(void *state, struct sl_batch *b)
{
	struct stub *s = state;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];

		set_str(r, s->f_table, s->cfg->table);
		set_str(r, s->f_chain, s->cfg->chain);
		if (s->cfg->handle >= 0)
			sl_set_u64(r, (sl_field)s->f_handle, (uint64_t)s->cfg->handle);
		set_str(r, s->f_comment, s->cfg->comment);
		set_str(r, s->f_verdict, s->cfg->verdict);
	}
	return 0;
}

static int stub_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	struct stub *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	s->cfg = config;
	s->f_table = host->field_id(inst, "rule_table");
	s->f_chain = host->field_id(inst, "rule_chain");
	s->f_handle = host->field_id(inst, "rule_handle");
	s->f_comment = host->field_id(inst, "rule_comment");
	s->f_verdict = host->field_id(inst, "rule_verdict");
	*state = s;
	return 0;
}

static void stub_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin stub_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "rulestub",
	.description = "test filter: sets the rule_* fields from its options",
	.config_size = sizeof(struct stub_config),
	.options = stub_options,
	.provides = stub_provides,
	.configure = stub_configure,
	.process = stub_process,
	.destroy = stub_destroy,
};

SLUICE_PLUGIN(stub_plugin)
