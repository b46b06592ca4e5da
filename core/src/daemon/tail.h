/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's side of `sluice tail`: load the formatter module
 * (tail_module.h) once, pick the instances a session watches and open
 * it (tap.h).  Main thread only.
 */
#ifndef SLUICE_DAEMON_TAIL_H
#define SLUICE_DAEMON_TAIL_H

#include <stddef.h>

struct runtime;

/*
 * A tail session on rt's running graph: the instance named inst (its
 * output point), or with inst NULL every input, seen after the first
 * `decode` below it where there is one; records matching where (NULL:
 * all) as JSON (json) or LOG lines.  The session's id (tap_take(),
 * tap_close()), or -1 with the reason in err.
 */
int tail_session_open(struct runtime *rt, const char *inst, int json, const char *where,
		     char *err, size_t errlen);

#endif
