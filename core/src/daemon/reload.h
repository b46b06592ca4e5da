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

#include "daemon.h"

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
 * The start, after the privilege drop: the configured graph (reload_init's)
 * applied to the runtime's empty one as a reload applies a new graph, so
 * that placement, start (outputs first) and rollback are one path: if an
 * instance cannot start, those started are stopped (the failing one too),
 * their workers freed and the files and directories the start created
 * removed.  The threads are not started (host_run_threads()).  0 or -1
 * (logged).
 */
int reload_start(struct daemon *d);
/*
 * daemon_reload(): ask for a reload.  The file is read, parsed, checked
 * and configured on a thread of its own (reload_read.c) while the main
 * loop runs on; then the main loop applies it (reload.c), reopens every
 * output's files (daemon_reload_ends()) and calls cb(ctx, rc, answer)
 * when cb is not NULL.  Asked while a reload is being read, another
 * follows it (the file may have changed since it was read) and this
 * asker gets that one's answer.  cb may run before this returns (no
 * thread to be had: read on the main thread).  0, or -1 (out of memory;
 * nothing asked, cb never called).
 */
int reload_ask(struct daemon *d, daemon_reload_cb cb, void *ctx);
/* The asker with ctx went away: no answer for it. */
void reload_forget(struct daemon *d, void *ctx);
/* At shutdown: a reload being read is abandoned (waits for the reader to stop). */
void reload_cancel(struct daemon *d);
/* At exit (after host_free()): free what reloads made and retired. */
void reload_free(struct daemon *d);

#endif
