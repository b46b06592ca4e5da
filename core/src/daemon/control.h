/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket (daemon.control_socket): a unix stream socket on the
 * main event loop.  One command per connection, one line of text:
 * `stats`, `stats json`, `reload`, `reopen`.  The reply starts with a
 * status line, `ok` or `error`, then the body; the daemon closes the
 * connection after it (docs/OPERATIONS.md).  `tail FORMAT INSTANCE
 * [WHERE]` (FORMAT json or text, INSTANCE a name or "-": the default
 * points) streams instead: after "ok", lines "r RECORD", and "l N" when
 * N records (in all) were lost because the client did not keep up; the
 * client ends it by closing its side (or sending anything), then gets
 * the rest, "l N" and "e"; "e reload" when a reload ended the session,
 * "e stop" when the daemon stops.
 * A tail connection has no deadline and never makes the daemon wait: its
 * records wait in a bounded buffer (tap.h) and are lost when it is full.  Nothing a client does can
 * stall the loop: sockets are non-blocking, a request line is bounded,
 * every connection has a deadline, and only a few are served at once.
 */
#ifndef SLUICE_CONTROL_H
#define SLUICE_CONTROL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

struct control;
struct drop_target;
struct event_loop;
struct stats_snap;

/* Whole connections at once; more are refused with "error: busy". */
#define CONTROL_MAX_CLIENTS 16
/* A request line, with its newline (a tail's `where` expression). */
#define CONTROL_MAX_REQUEST 4096
/* How often a tail connection is sent what its session gathered. */
#define CONTROL_TAIL_MS 50
/* From accept to the last byte of the reply, less the wait for a reload being read. */
#define CONTROL_TIMEOUT_MS 5000

/*
 * What the commands do, given by the daemon (daemon.c) so this file needs
 * nothing of it; called on the main thread with ctx.
 */
struct control_ops {
	/* `stats`: every counter now (stats_take()).  0, or -1: out of memory. */
	int (*stats)(void *ctx, struct stats_snap *s);
	/*
	 * `reload`: daemon_reload()'s contract; answer(asker, rc, msg) comes
	 * later, or never once reload_forget(ctx, asker) was called.
	 */
	int (*reload)(void *ctx, void (*answer)(void *asker, int rc, const char *msg),
		      void *asker);
	void (*reload_forget)(void *ctx, void *asker);
	/* `reopen`: daemon_reopen()'s contract. */
	int (*reopen)(void *ctx, char *msg, size_t len);
	/* `stats rules`: the per-rule table (metrics_text_rules()) to out.  0, or -1. */
	int (*rules)(void *ctx, FILE *out);
	/* `tail`: tail_session_open()'s contract (inst NULL: the default points). */
	int (*tail)(void *ctx, const char *inst, int json, const char *where, char *err,
		    size_t errlen);
};

/*
 * Bind path (replacing a stale socket of a dead daemon; a live one is an
 * error), mode 0660, owned by drop's user and group when given and we are
 * root, and serve it on loop, running ops with ctx.  NULL with a message
 * in err.
 */
struct control *control_open(struct event_loop *loop, const struct control_ops *ops, void *ctx,
			     const char *path, const struct drop_target *drop, char *err,
			     size_t errlen);
/*
 * A folder the socket may be in: one only root and the daemon's user
 * (uid, gid: who it runs as) can write to.  0, or -1 with a message.
 */
int control_dir_unsafe(const struct stat *st, uid_t uid, gid_t gid, const char *dir, char *err,
		       size_t errlen);
/* Drop every connection, close and remove the socket. */
void control_close(struct control *c);

#endif
