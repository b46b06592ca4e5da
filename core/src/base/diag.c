/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "diag.h"

void diag_error(struct diag *d, const struct ymark *at, const char *fmt, ...)
{
	char line[4096];
	size_t used;
	va_list ap;

	if (at && at->line)
		used = (size_t)snprintf(line, sizeof(line), "%s:%u:%u: error: ", d->file, at->line,
					at->col);
	else
		used = (size_t)snprintf(line, sizeof(line), "%s: error: ", d->file);
	if (used < sizeof(line)) {
		va_start(ap, fmt);
		vsnprintf(line + used, sizeof(line) - used, fmt, ap);
		va_end(ap);
	}
	if (d->sink)
		d->sink(d->sink_ctx, line);
	else
		fprintf(stderr, "%s\n", line);
	d->errors++;
}

void diag_warning(struct diag *d, const struct ymark *at, const char *fmt, ...)
{
	va_list ap;

	if (at && at->line)
		fprintf(stderr, "%s:%u:%u: warning: ", d->file, at->line, at->col);
	else
		fprintf(stderr, "%s: warning: ", d->file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
