/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reloading the configuration while packets flow: the file is checked as
 * completely as `sluice -t` does, the new graph is built beside the
 * running one, and the two are compared instance by instance.  Instances
 * found in both keep running untouched; the others are started (new) or
 * flushed and stopped (gone).  If anything new cannot start, everything
 * new is stopped again and the running graph is left as it was.
 */
#ifndef SLUICE_RELOAD_H
#define SLUICE_RELOAD_H

#include <stddef.h>

struct daemon;

struct config;
struct graph;

/*
 * At start: the graph and configuration main() loaded (main() frees them
 * unless a reload replaced them), and the file's contents as loaded (an
 * unchanged file only reopens).  0 or -1.
 */
int reload_init(struct daemon *d, struct graph *g, const struct config *cfg);
/*
 * daemon_reload()'s first half (it reopens every output's files after it,
 * whatever this returned).  0: reloaded, msg says "N kept, N added, N
 * removed"; 1: the file is unchanged, nothing done; -1: failed, the
 * reasons in msg, one per line.
 */
int reload_config(struct daemon *d, char *msg, size_t len);
/* At exit (after runtime_free()): free what reloads made and retired. */
void reload_free(struct daemon *d);

#endif
