/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The rule_* fields' ids by name: see rule_fields.h. */
#include "rule_fields.h"

/* Field `name` of type `type` for inst, marked read; -1 when there is none such. */
static int find_one(const struct sl_host *host, struct sl_instance *inst, const char *name,
		    enum sl_type type)
{
	int id;

	if (!SL_HOST_HAS(host, field_id) || !SL_HOST_HAS(host, field_type))
		return -1;
	id = host->field_id(inst, name);
	if (id < 0 || host->field_type(inst, id) != type)
		return -1;
	if (SL_HOST_HAS(host, read_field))
		host->read_field(inst, name);
	return id;
}

void sl_rule_fields_find(struct sl_rule_fields *f, const struct sl_host *host, struct sl_instance *inst)
{
	f->family = find_one(host, inst, "rule_family", SL_T_STRING);
	f->table = find_one(host, inst, "rule_table", SL_T_STRING);
	f->chain = find_one(host, inst, "rule_chain", SL_T_STRING);
	f->handle = find_one(host, inst, "rule_handle", SL_T_U64);
	f->comment = find_one(host, inst, "rule_comment", SL_T_STRING);
	f->verdict = find_one(host, inst, "rule_verdict", SL_T_STRING);
}
