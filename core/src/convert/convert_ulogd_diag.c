/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice convert ulogd`'s diagnostics ("FILE:LINE: warning: ...",
 * "FILE:LINE:COL: error: ..." and their counts) and the YAML body of the
 * instance being converted (comments, quoted scalars), which both the
 * stacks (convert_ulogd.c) and the plugins (convert_ulogd_plugins.c,
 * convert_ulogd_unit.c) write: in a file of their own, so neither calls
 * the other back.
 */
#include <stdarg.h>
#include <stdio.h>

#include "convert_ulogd.h"
#include "convert_ulogd_int.h"

void convert_ulogd_error_at(struct conv *c, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->diag, "%s:%u:%u: error: ", c->file, line, col);
	va_start(ap, fmt);
	vfprintf(c->diag, fmt, ap);
	va_end(ap);
	fputc('\n', c->diag);
	c->res->errors++;
}

static void vwarn(struct conv *c, struct uinst *u, unsigned line, const char *what,
		  const char *fmt, va_list ap)
{
	va_list ap2;

	fprintf(c->diag, "%s:%u: warning: ", c->file, line);
	if (u)
		fprintf(c->diag, "[%s] (%s): ", u->id, u->p->name);
	if (what)
		fprintf(c->diag, "%s", what);
	va_copy(ap2, ap);
	vfprintf(c->diag, fmt, ap2);
	va_end(ap2);
	fputc('\n', c->diag);
	if (c->o) {
		fprintf(c->o, "    # %s", what ? what : "note: ");
		vfprintf(c->o, fmt, ap);
		fputc('\n', c->o);
	}
}

/* Something the user relied on that sluice will not do: comment, warning, --check fails. */
void convert_ulogd_notconv(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(c, u, line, "not converted: ", fmt, ap);
	va_end(ap);
	c->res->not_converted++;
}

/* Converted, but it behaves differently: comment and warning. */
void convert_ulogd_note(struct conv *c, struct uinst *u, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(c, u, line, NULL, fmt, ap);
	va_end(ap);
	c->res->notes++;
}

/* A comment in the instance's YAML only. */
void convert_ulogd_comment(struct conv *c, const char *fmt, ...)
{
	va_list ap;

	fputs("    # ", c->o);
	va_start(ap, fmt);
	vfprintf(c->o, fmt, ap);
	va_end(ap);
	fputc('\n', c->o);
}

/* A YAML double-quoted scalar (the reader let through UTF-8 text and tabs only). */
const char *convert_ulogd_yq(struct conv *c, const char *s)
{
	char *d = c->q;

	*d++ = '"';
	for (; *s && d < c->q + sizeof(c->q) - 3; s++) {
		if (*s == '"' || *s == '\\')
			*d++ = '\\';
		if (*s == '\t') {
			*d++ = '\\';
			*d++ = 't';
			continue;
		}
		*d++ = *s;
	}
	*d++ = '"';
	*d = '\0';
	return c->q;
}
