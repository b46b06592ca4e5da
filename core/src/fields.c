/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "strset.h"

static const struct field_info well_known[] = {
#define SL_X_INFO(id, name, type, doc) {name, type, doc, NULL},
	SL_WELL_KNOWN_FIELDS(SL_X_INFO)
#undef SL_X_INFO
};

static struct field_info registered[SL_MAX_FIELDS];
static unsigned nregistered;
/*
 * name -> id + 1.  Every instance's needs and provides are looked up when
 * the graph is built: a scan of all fields per name was most of the time
 * spent checking a large configuration.  Built on first use.
 */
static struct strset by_name;

void fields_reset(void)
{
	strset_free(&by_name);
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

/* Index the fields not yet indexed (all of them after a reset).  0 or -1. */
static int index_fields(void)
{
	if (strset_reserve(&by_name, fields_count() - by_name.n))
		return -1;
	for (unsigned i = (unsigned)by_name.n; i < fields_count(); i++)
		strset_add(&by_name, fields_get(i)->name, (void *)(uintptr_t)(i + 1), NULL);
	return 0;
}

int fields_lookup(const char *name)
{
	uintptr_t id;

	if (by_name.n < fields_count() && index_fields()) {
		/* Out of memory: the slow way still answers. */
		for (unsigned i = 0; i < fields_count(); i++)
			if (strcmp(fields_get(i)->name, name) == 0)
				return (int)i;
		return -1;
	}
	id = (uintptr_t)strset_get(&by_name, name);
	return id ? (int)(id - 1) : -1;
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
