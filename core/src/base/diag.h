/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Error reporting with positions, for every reader of the configuration
 * (config.c, the option parsers, daemon.metrics, the graph): the caller
 * owns a struct diag and counts its errors; nothing here knows the
 * configuration's shape, so those readers call down to it, never up.
 */
#ifndef SLUICE_DIAG_H
#define SLUICE_DIAG_H

#include "yaml_tree.h"

/* Error reporting with positions: "FILE:LINE:COL: error: ...". */
struct diag {
	const char *file;
	unsigned errors;
	/* NULL: stderr.  Otherwise each whole message, without the newline. */
	void (*sink)(void *ctx, const char *line);
	void *sink_ctx;
};
void diag_error(struct diag *d, const struct ymark *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "FILE:LINE:COL: warning: ...": not counted, nothing is refused. */
void diag_warning(struct diag *d, const struct ymark *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* SLUICE_DIAG_H */
