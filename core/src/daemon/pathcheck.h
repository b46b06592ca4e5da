/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The paths instances will use (options flagged SL_OPT_OUT_FILE,
 * SL_OPT_OUT_DIR, SL_OPT_OUT_MKDIR, SL_OPT_IN_FILE in their tables):
 * checked at `sluice -t` as the daemon's user, and what a failed start
 * created of them removed again.
 */
#ifndef SLUICE_PATHCHECK_H
#define SLUICE_PATHCHECK_H

#include <stddef.h>

struct config;
struct diag;
struct drop_target;
struct graph;

/*
 * As drop's user (a child process that becomes it, when we are root; the
 * current user otherwise): the configuration file readable, and every
 * flagged path of every configured instance usable.  Each problem is a
 * diag error at the option (file:line:column).  Run as someone else than
 * root or that user, only what does not depend on the user is checked
 * (a missing directory).  0, or -1 when something was reported.
 */
int pathcheck_config(const struct graph *g, const char *config_file, const struct drop_target *drop,
		     struct diag *d);

/* The files and directories a start may create, that are not there yet. */
struct pathcheck_marks {
	char **paths;
	size_t n;
};

/*
 * Note them before the instances start (reload.c, at start too), for
 * every instance but those a reload keeps (inst->twin).  0, or -1 (out of
 * memory, logged).
 */
int pathcheck_mark(struct pathcheck_marks *m, const struct graph *g);
/* The start failed: remove those that now exist (a directory with the files in it). */
void pathcheck_undo(struct pathcheck_marks *m);
void pathcheck_marks_free(struct pathcheck_marks *m);

#endif
