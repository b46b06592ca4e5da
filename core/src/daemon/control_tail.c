/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket's `tail` connections (control.h): a session's lines
 * sent from the main loop every CONTROL_TAIL_MS and whenever the socket has
 * room, never waiting for the client; its end on the client's word, a
 * reload or the daemon's stop.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "control.h"
#include "control_int.h"
#include "event_loop.h"
#include "log.h"
#include "tap.h"

/* A whole reply from text; the connection closes after it. */
static void reply_text(struct client *cl, const char *text)
{
	if (!(cl->reply = strdup(text))) {
		control_client_close(cl);
		return;
	}
	cl->replylen = strlen(text);
	cl->sent = 0;
	control_send_reply(cl);
}

/*
 * Send what tbuf holds, as far as the socket takes it; when it is full,
 * go on once it is writable (EPOLLOUT), the session buffering meanwhile.
 * 0, or -1: closed.
 */
static int tail_send(struct client *cl)
{
	while (cl->tsent < cl->tlen) {
		ssize_t n = send(cl->fd, cl->tbuf + cl->tsent, cl->tlen - cl->tsent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_loop_modify(cl->ctl->loop, cl->fd, EPOLLIN | EPOLLOUT);
			return 0;
		}
		if (n <= 0) {
			control_client_close(cl);
			return -1;
		}
		cl->tsent += (size_t)n;
	}
	event_loop_modify(cl->ctl->loop, cl->fd, EPOLLIN);
	return 0;
}

/*
 * The session is over (the client closed its side, or a reload ended it):
 * the rest of its lines, "l N" and the last line last, then close.
 */
void control_tail_finish(struct client *cl, const char *last)
{
	size_t rest = cl->tlen - cl->tsent, n;
	uint64_t lost;
	bool ended;
	char *r = malloc(rest + TAP_BUF + 64);

	if (!r) {
		control_client_close(cl);
		return;
	}
	memcpy(r, cl->tbuf + cl->tsent, rest);
	n = tap_take(cl->tap, r + rest, TAP_BUF, &lost, &ended);
	n += rest;
	n += (size_t)snprintf(r + n, 64, "l %llu\n%s", (unsigned long long)lost, last);
	tap_close(cl->tap);
	cl->tap = -1;
	free(cl->tbuf);
	cl->tbuf = NULL;
	cl->reply = r;
	cl->replylen = n;
	cl->sent = 0;
	event_loop_modify(cl->ctl->loop, cl->fd, 0);
	event_loop_timer_arm(cl->deadline, CONTROL_TIMEOUT_MS, 0);
	control_send_reply(cl);
}

/*
 * Every CONTROL_TAIL_MS, and when a full socket has room again: the
 * session's new lines, as long as the client takes them (a few buffers a
 * turn, so that one fast client cannot hold the loop).
 */
void control_tail_tick(struct client *cl)
{
	uint64_t lost;
	bool ended;

	for (int turn = 0; turn < 4; turn++) {
		if (tail_send(cl) || cl->tsent < cl->tlen)
			return;
		cl->tsent = 0;
		cl->tlen = tap_take(cl->tap, cl->tbuf, TAP_BUF, &lost, &ended);
		if (ended) {
			control_tail_finish(cl, "e reload\n");
			return;
		}
		if (lost != cl->lost_said) {
			cl->tlen += (size_t)snprintf(cl->tbuf + cl->tlen, 64, "l %llu\n",
						     (unsigned long long)lost);
			cl->lost_said = lost;
		}
		if (!cl->tlen)
			return;
	}
	tail_send(cl);
}

/* Room to send (EPOLLOUT); or the client said something, or closed its side: the end. */
void control_tail_input(struct client *cl, uint32_t events)
{
	char drain[256];
	ssize_t n;

	if (events & EPOLLOUT) {
		control_tail_tick(cl);
		if (cl->tap < 0 || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			return;
	}
	n = recv(cl->fd, drain, sizeof(drain), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	control_tail_finish(cl, "e\n");
}

/* `tail FORMAT INSTANCE [WHERE]`: open the session, answer "ok", stream. */
void control_tail_start(struct client *cl)
{
	char *fmt = cl->req + 5, *inst = strchr(fmt, ' '), *where = NULL, err[768], e[800];
	int json, id;

	if (inst) {
		*inst++ = 0;
		if ((where = strchr(inst, ' ')))
			*where++ = 0;
	}
	json = strcmp(fmt, "json") == 0 ? 1 : strcmp(fmt, "text") == 0 ? 0 : -1;
	if (json < 0 || !inst || !*inst) {
		reply_text(cl, "error\nusage: tail json|text INSTANCE|- [WHERE]\n");
		return;
	}
	id = cl->ctl->ops->tail(cl->ctl->ctx, strcmp(inst, "-") ? inst : NULL, json, where, err,
				sizeof(err));
	if (id < 0) {
		snprintf(e, sizeof(e), "error\n%s\n", err);
		reply_text(cl, e);
		return;
	}
	if (!(cl->tbuf = malloc(TAP_BUF + 64))) {
		tap_close(id);
		reply_text(cl, "error\nout of memory\n");
		return;
	}
	log_msg(SL_LOG_NOTICE, "control socket: tail session (asked by uid %u, pid %d)",
		(unsigned)cl->peer.uid, (int)cl->peer.pid);
	cl->tap = id;
	cl->lost_said = 0;
	memcpy(cl->tbuf, "ok\n", 3);
	cl->tlen = 3;
	cl->tsent = 0;
	event_loop_timer_arm(cl->deadline, CONTROL_TAIL_MS, CONTROL_TAIL_MS);
	tail_send(cl);
}
