/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The reader of ulogd2's configuration file (ulogd.conf): `[section]`
 * lines, `key=value` lines (value bare or in double quotes, then an
 * optional `# comment`), `#` comment lines.  Every section and key keeps
 * its line and column so the converter can name them.  Syntax only: what
 * a key means is convert_ulogd.c's business.
 */
#ifndef SLUICE_ULOGD_INI_H
#define SLUICE_ULOGD_INI_H

#include <stddef.h>
#include <stdio.h>

#include "strset.h"

struct ini_entry {
	char *key;
	char *value;
	unsigned line, col;	/* of the key */
	unsigned vcol;		/* of the value */
};

struct ini_section {
	char *name;
	unsigned line;
	struct ini_entry *e;
	size_t n, cap;
};

struct ulogd_ini {
	struct ini_section *s;
	size_t n, cap;
	struct strset names;	/* section name -> its index + 1 */
	/* The first syntax error: its position and what was expected. */
	unsigned err_line, err_col;
	char err[160];
};

/* Limits: a longer line or more entries is an error, not a bigger allocation. */
#define ULOGD_INI_MAX_LINE 4096
#define ULOGD_INI_MAX_ENTRIES 65536

/* 0, or -1 with ini->err set (and whatever was read before it kept). */
int ulogd_ini_read(struct ulogd_ini *ini, FILE *f);
/* The same over a buffer (unit tests, fuzzing). */
int ulogd_ini_read_mem(struct ulogd_ini *ini, const char *buf, size_t len);
void ulogd_ini_free(struct ulogd_ini *ini);

/* The first section of that name, NULL when there is none. */
const struct ini_section *ulogd_ini_section(const struct ulogd_ini *ini, const char *name);
/* The first entry of that key in a section, NULL when there is none. */
const struct ini_entry *ulogd_ini_get(const struct ini_section *s, const char *key);

#endif
