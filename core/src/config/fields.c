/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "options.h"

static const struct field_info well_known[] = {
#define SL_X_INFO(id, name, type, doc) {name, type, doc, NULL},
	SL_WELL_KNOWN_FIELDS(SL_X_INFO)
#undef SL_X_INFO
};

/*
 * Names of registered fields (and their owners), interned for the life of
 * the process: a plugin may keep what field_name() returned, and an
 * instance kept by a reload outlives the registry it was configured with.
 * Bounded by the distinct names ever configured.  Reachable from here, so
 * not a leak for LeakSanitizer.
 */
struct interned {
	struct interned *next;
	char s[];
};
static struct interned *interned;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *field_intern(const char *s)
{
	struct interned *i;
	size_t len = strlen(s);

	pthread_mutex_lock(&intern_lock);
	for (i = interned; i; i = i->next)
		if (strcmp(i->s, s) == 0)
			break;
	if (!i && (i = malloc(sizeof(*i) + len + 1))) {
		memcpy(i->s, s, len + 1);
		i->next = interned;
		interned = i;
	}
	pthread_mutex_unlock(&intern_lock);
	return i ? i->s : NULL;
}

void fields_free(struct field_registry *r)
{
	/* The names are interned, never freed. */
	strset_free(&r->by_name);
	r->nregistered = 0;
}

unsigned fields_count(const struct field_registry *r)
{
	return SL_F_WELL_KNOWN_COUNT + r->nregistered;
}

const struct field_info *fields_get(const struct field_registry *r, unsigned id)
{
	if (id < SL_F_WELL_KNOWN_COUNT)
		return &well_known[id];
	if (id < fields_count(r))
		return &r->registered[id - SL_F_WELL_KNOWN_COUNT];
	return NULL;
}

/* Index the fields not yet indexed (all of them after a reset).  0 or -1. */
static int index_fields(struct field_registry *r)
{
	if (strset_reserve(&r->by_name, fields_count(r) - r->by_name.n))
		return -1;
	for (unsigned i = (unsigned)r->by_name.n; i < fields_count(r); i++)
		strset_add(&r->by_name, fields_get(r, i)->name, (void *)(uintptr_t)(i + 1), NULL);
	return 0;
}

int fields_lookup(struct field_registry *r, const char *name)
{
	uintptr_t id;

	if (r->by_name.n < fields_count(r) && index_fields(r)) {
		/* Out of memory: the slow way still answers. */
		for (unsigned i = 0; i < fields_count(r); i++)
			if (strcmp(fields_get(r, i)->name, name) == 0)
				return (int)i;
		return -1;
	}
	id = (uintptr_t)strset_get(&r->by_name, name);
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

const char *fields_suggest(const struct field_registry *r, const char *name)
{
	const char *names[SL_MAX_FIELDS + 1];
	unsigned n = fields_count(r);

	for (unsigned i = 0; i < n; i++)
		names[i] = fields_get(r, i)->name;
	names[n] = NULL;
	return options_suggest(name, names);
}

int fields_declare(struct field_registry *r, const char *name, enum sl_type type,
		   const char *owner, char *err, size_t errlen)
{
	int id = fields_lookup(r, name);
	struct field_info *f;

	if (id >= 0) {
		const struct field_info *known = fields_get(r, (unsigned)id);

		if (known->type != type) {
			snprintf(err, errlen, "field '%s' is declared as %s, but %s%s%s has it as %s",
				 name, fields_type_name(type), known->owner ? "plugin '" : "the core",
				 known->owner ? known->owner : "", known->owner ? "'" : "",
				 fields_type_name(known->type));
			return -1;
		}
		return id;
	}
	/* The last id is SL_FIELD_REFUSED, the mark of a refused write. */
	if (fields_count(r) >= SL_FIELD_REFUSED) {
		snprintf(err, errlen, "too many fields (at most %d)", SL_FIELD_REFUSED);
		return -1;
	}
	f = &r->registered[r->nregistered];
	f->name = field_intern(name);
	f->owner = field_intern(owner ? owner : "?");
	f->type = type;
	f->doc = "registered by a plugin";
	if (!f->name || !f->owner) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->nregistered++;
	return (int)fields_count(r) - 1;
}

int fields_copy(struct field_registry *dst, const struct field_registry *src)
{
	char err[256];

	for (unsigned i = 0; i < src->nregistered; i++) {
		const struct field_info *f = &src->registered[i];

		if (fields_declare(dst, f->name, f->type, f->owner, err, sizeof(err)) !=
		    (int)(SL_F_WELL_KNOWN_COUNT + i))
			return -1;
	}
	return 0;
}
