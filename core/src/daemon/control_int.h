/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What control.c shares with control_tail.c: the connections, and the
 * calls each makes of the other.  Main thread only.
 */
#ifndef SLUICE_CONTROL_INT_H
#define SLUICE_CONTROL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "control.h"

struct client {
	struct control *ctl;
	int fd;				/* -1: slot free */
	struct loop_timer *deadline;
	char req[CONTROL_MAX_REQUEST];
	size_t reqlen;
	char *reply;			/* NULL while reading the request */
	size_t replylen, sent;
	struct ucred peer;		/* who asked: logged with reload/reopen */
	bool reloading;			/* waiting for a reload's answer */
	/* tail: the session (-1: none) and what of its lines is not sent yet */
	int tap;
	char *tbuf;
	size_t tlen, tsent;
	uint64_t lost_said;		/* the last "l N" */
};

struct control {
	struct event_loop *loop;
	const struct control_ops *ops;
	void *ctx;			/* the ops' */
	int fd;
	char *path;
	dev_t dev;			/* the socket file we made, so that we */
	ino_t ino;			/* never remove another daemon's */
	struct client clients[CONTROL_MAX_CLIENTS];
};

/* control.c: close a connection (its tail session too) and free its slot. */
void control_client_close(struct client *cl);
/* control.c: send cl->reply from cl->sent on (EPOLLOUT when full), then close. */
void control_send_reply(struct client *cl);

/* control_tail.c: `tail FORMAT INSTANCE [WHERE]` is cl->req: open the session, stream. */
void control_tail_start(struct client *cl);
/* control_tail.c: the timer's tick, or EPOLLOUT: send what the session gathered. */
void control_tail_tick(struct client *cl);
/* control_tail.c: the connection is ready (room, or the client's end). */
void control_tail_input(struct client *cl, uint32_t events);
/* control_tail.c: end the session: the rest of its lines, "l N", last, then close. */
void control_tail_finish(struct client *cl, const char *last);

#endif
