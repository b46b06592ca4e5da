/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"

static const struct field_info well_known[] = {
#define SL_X_INFO(id, name, type, doc) {name, type, doc, NULL},
	SL_WELL_KNOWN_FIELDS(SL_X_INFO)
#undef SL_X_INFO
};

static struct field_info registered[SL_MAX_FIELDS];
static unsigned nregistered;

void fields_reset(void)
{
	for (unsigned i = 0; i < nregistered; i++) {
		free((char *)registered[i].name);
		free((char *)registered[i].owner);
	}
	nregistered = 0;
}

unsigned fields_count(void)
{
	return SL_F_WELL_KNOWN_COUNT + nregistered;
}

const struct field_info *fields_get(unsigned id)
{
	if (id < SL_F_WELL_KNOWN_COUNT)
		return &well_known[id];
	if (id < fields_count())
		return &registered[id - SL_F_WELL_KNOWN_COUNT];
	return NULL;
}

int fields_lookup(const char *name)
{
	for (unsigned i = 0; i < fields_count(); i++)
		if (strcmp(fields_get(i)->name, name) == 0)
			return (int)i;
	return -1;
}

const char *fields_type_name(enum sl_type type)
{
	switch (type) {
	case SL_T_U64: return "u64";
	case SL_T_BYTES: return "bytes";
	case SL_T_STRING: return "string";
	case SL_T_ADDR: return "addr";
	case SL_T_MAC: return "mac";
	case SL_T_TIME: return "time";
	}
	return "?";
}

int fields_declare(const char *name, enum sl_type type, const char *owner, char *err,
		   size_t errlen)
{
	int id = fields_lookup(name);
	struct field_info *f;

	if (id >= 0) {
		const struct field_info *known = fields_get((unsigned)id);

		if (known->type != type) {
			snprintf(err, errlen, "field '%s' is declared as %s, but %s%s%s has it as %s",
				 name, fields_type_name(type), known->owner ? "plugin '" : "the core",
				 known->owner ? known->owner : "", known->owner ? "'" : "",
				 fields_type_name(known->type));
			return -1;
		}
		return id;
	}
	if (fields_count() >= SL_MAX_FIELDS) {
		snprintf(err, errlen, "too many fields (at most %d)", SL_MAX_FIELDS);
		return -1;
	}
	f = &registered[nregistered];
	f->name = strdup(name);
	f->owner = strdup(owner ? owner : "?");
	f->type = type;
	f->doc = "registered by a plugin";
	if (!f->name || !f->owner) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	nregistered++;
	return (int)fields_count() - 1;
}
