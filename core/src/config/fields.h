/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The field registry: the well-known fields of <sluice/record.h> plus the
 * fields plugins register by name when they are loaded.  Ids are fixed
 * once the configuration is loaded; nothing looks a name up per record.
 * There is one registry per graph (inside its plugin loader), so two
 * configurations can be loaded at once, as a reload needs.
 */
#ifndef SLUICE_FIELDS_H
#define SLUICE_FIELDS_H

#include <sluice/record.h>

#include "strset.h"

struct field_info {
	const char *name;
	enum sl_type type;
	const char *doc;
	const char *owner;	/* plugin that registered it; NULL: well-known */
};

struct field_registry {
	struct field_info registered[SL_MAX_FIELDS - SL_F_WELL_KNOWN_COUNT];
	unsigned nregistered;
	/*
	 * name -> id + 1.  Every instance's needs and provides are looked up
	 * when the graph is built: a scan of all fields per name was most of
	 * the time spent checking a large configuration.  Built on first use.
	 */
	struct strset by_name;
};

/* A zeroed registry holds the well-known fields; free it with fields_free(). */
void fields_free(struct field_registry *r);
/* Id of a field, or -1. */
int fields_lookup(struct field_registry *r, const char *name);
/*
 * Find or register a field.  Returns its id, or -1 with a message in err
 * (the name is known with another type, or the table is full).
 */
int fields_declare(struct field_registry *r, const char *name, enum sl_type type,
		   const char *owner, char *err, size_t errlen);
unsigned fields_count(const struct field_registry *r);
/*
 * dst (holding only the well-known fields) takes src's registered fields
 * with the same ids: a reload's graph starts from the running one's, so
 * an id a running instance holds never changes.  0 or -1.
 */
int fields_copy(struct field_registry *dst, const struct field_registry *src);
const struct field_info *fields_get(const struct field_registry *r, unsigned id);
const char *fields_type_name(enum sl_type type);
/* The known field closest to an unknown name (a likely typo), or NULL. */
const char *fields_suggest(const struct field_registry *r, const char *name);

#endif
