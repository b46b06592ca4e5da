/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The field registry: the well-known fields of <sluice/record.h> plus the
 * fields plugins register by name when they are loaded.  Ids are fixed
 * once the configuration is loaded; nothing looks a name up per record.
 */
#ifndef SLUICE_FIELDS_H
#define SLUICE_FIELDS_H

#include <sluice/record.h>

struct field_info {
	const char *name;
	enum sl_type type;
	const char *doc;
	const char *owner;	/* plugin that registered it; NULL: well-known */
};

void fields_reset(void);
/* Id of a field, or -1. */
int fields_lookup(const char *name);
/*
 * Find or register a field.  Returns its id, or -1 with a message in err
 * (the name is known with another type, or the table is full).
 */
int fields_declare(const char *name, enum sl_type type, const char *owner, char *err,
		   size_t errlen);
unsigned fields_count(void);
const struct field_info *fields_get(unsigned id);
const char *fields_type_name(enum sl_type type);

#endif
