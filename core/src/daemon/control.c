/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "control_int.h"
#include "event_loop.h"
#include "log.h"
#include "privileges.h"
#include "stats.h"
#include "tap.h"

void control_client_close(struct client *cl)
{
	if (cl->fd < 0)
		return;
	if (cl->reloading)
		cl->ctl->ops->reload_forget(cl->ctl->ctx, cl);
	cl->reloading = false;
	tap_close(cl->tap);
	cl->tap = -1;
	free(cl->tbuf);
	cl->tbuf = NULL;
	event_loop_unwatch(cl->ctl->loop, cl->fd);
	close(cl->fd);
	cl->fd = -1;
	event_loop_timer_free(cl->deadline);
	cl->deadline = NULL;
	free(cl->reply);
	cl->reply = NULL;
}

static void on_deadline(void *ctx)
{
	struct client *cl = ctx;

	if (cl->tap >= 0) {
		control_tail_tick(cl);
		return;
	}
	log_msg(SL_LOG_DEBUG, "control: a client took more than %d ms; dropped", CONTROL_TIMEOUT_MS);
	control_client_close(cl);
}

/* reload/reopen: "ok", or "error" and the reasons; msg alone if it says more than ok. */
static void reply_op(FILE *out, int rc, const char *msg)
{
	fprintf(out, "%s\n", rc ? "error" : "ok");
	if (strcmp(msg, "ok") != 0)
		fprintf(out, "%s\n", msg);
}

static void run_command(struct control *ctl, const struct ucred *peer, const char *cmd,
			FILE *out)
{
	char msg[4096];
	struct stats_snap s;

	if (strcmp(cmd, "stats") == 0 || strcmp(cmd, "stats json") == 0) {
		if (ctl->ops->stats(ctl->ctx, &s)) {
			fprintf(out, "error\nout of memory\n");
			return;
		}
		fprintf(out, "ok\n");
		if (cmd[5])
			stats_write_json(&s, out);
		else
			stats_write_table(&s, NULL, 0, out);
		stats_free(&s);
	} else if (strcmp(cmd, "stats rules") == 0) {
		char *table = NULL;
		size_t len = 0;
		FILE *t = open_memstream(&table, &len);

		if (!t || ctl->ops->rules(ctl->ctx, t) || fflush(t)) {
			if (t)
				fclose(t);
			free(table);
			fprintf(out, "error\nout of memory\n");
			return;
		}
		fclose(t);
		fprintf(out, "ok\n%s", table);
		free(table);
	} else if (strcmp(cmd, "reopen") == 0) {
		log_msg(SL_LOG_NOTICE,
			"control socket: reopening output files (asked by uid %u, pid %d)",
			(unsigned)peer->uid, (int)peer->pid);
		reply_op(out, ctl->ops->reopen(ctl->ctx, msg, sizeof(msg)), msg);
	} else {
		fprintf(out, "error\nunknown command '%.64s' (expected stats, stats json, stats rules, "
			"reload, reopen or tail)\n", cmd);
	}
}

void control_send_reply(struct client *cl)
{
	while (cl->sent < cl->replylen) {
		ssize_t n = send(cl->fd, cl->reply + cl->sent, cl->replylen - cl->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* The rest when the client reads; the deadline still holds. */
			event_loop_modify(cl->ctl->loop, cl->fd, EPOLLOUT);
			return;
		}
		if (n <= 0)
			break;
		cl->sent += (size_t)n;
	}
	control_client_close(cl);
}

/* The reload's answer has come: send it within the deadline. */
static void on_reloaded(void *ctx, int rc, const char *msg)
{
	struct client *cl = ctx;
	FILE *out = open_memstream(&cl->reply, &cl->replylen);

	cl->reloading = false;
	if (!out) {
		control_client_close(cl);
		return;
	}
	reply_op(out, rc, msg);
	if (fclose(out) || !cl->reply) {
		control_client_close(cl);
		return;
	}
	event_loop_timer_arm(cl->deadline, CONTROL_TIMEOUT_MS, 0);
	control_send_reply(cl);
}

/*
 * A reload is read on a thread of its own and may take longer than the
 * deadline (a large file): the client waits for the answer without one,
 * and the main loop serves everything else meanwhile.
 */
static void ask_reload(struct client *cl)
{
	static const char e[] = "error\nout of memory\n";

	log_msg(SL_LOG_NOTICE, "control socket: reload (asked by uid %u, pid %d)",
		(unsigned)cl->peer.uid, (int)cl->peer.pid);
	event_loop_timer_disarm(cl->deadline);
	cl->reloading = true;
	if (cl->ctl->ops->reload(cl->ctl->ctx, on_reloaded, cl) == 0)
		return;
	cl->reloading = false;
	send(cl->fd, e, sizeof(e) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	control_client_close(cl);
}

/* The request is complete: run it and start sending the reply. */
static void answer(struct client *cl)
{
	FILE *out;
	size_t len = cl->reqlen;

	while (len && (cl->req[len - 1] == '\r' || cl->req[len - 1] == ' '))
		len--;
	cl->req[len] = 0;
	if (strcmp(cl->req, "reload") == 0) {
		ask_reload(cl);
		return;
	}
	if (strncmp(cl->req, "tail ", 5) == 0) {
		control_tail_start(cl);
		return;
	}
	out = open_memstream(&cl->reply, &cl->replylen);
	if (!out) {
		control_client_close(cl);
		return;
	}
	run_command(cl->ctl, &cl->peer, cl->req, out);
	if (fclose(out) || !cl->reply) {
		control_client_close(cl);
		return;
	}
	control_send_reply(cl);
}

static void on_client(void *ctx, int fd, uint32_t events)
{
	struct client *cl = ctx;
	char *nl;
	ssize_t n;

	if (cl->reloading) {
		/* Nothing to read; a client gone (HUP) no longer waits. */
		if (events & (EPOLLHUP | EPOLLERR))
			control_client_close(cl);
		return;
	}
	if (cl->tap >= 0) {
		control_tail_input(cl, events);
		return;
	}
	if (cl->reply) {
		control_send_reply(cl);
		return;
	}
	n = recv(fd, cl->req + cl->reqlen, sizeof(cl->req) - 1 - cl->reqlen, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n < 0 || (n == 0 && !cl->reqlen)) {
		control_client_close(cl);
		return;
	}
	cl->reqlen += (size_t)n;
	cl->req[cl->reqlen] = 0;
	if ((nl = memchr(cl->req, '\n', cl->reqlen))) {
		cl->reqlen = (size_t)(nl - cl->req);
	} else if (n && cl->reqlen == sizeof(cl->req) - 1) {
		char e[64];

		snprintf(e, sizeof(e), "error\nrequest longer than %d bytes\n",
			 CONTROL_MAX_REQUEST - 1);
		send(fd, e, strlen(e), MSG_NOSIGNAL | MSG_DONTWAIT);
		control_client_close(cl);
		return;
	} else if (n) {
		return;	/* more to come; an end of file ends the line too */
	}
	event_loop_modify(cl->ctl->loop, fd, 0);
	answer(cl);
}

/*
 * Every slot taken (by clients that may never finish): say so at once
 * rather than keep this one waiting.  What it sent is read first: closing
 * a unix socket with unread data makes the client's read fail.
 */
static void refuse(int fd)
{
	static const char e[] = "error\nbusy: too many control connections\n";
	static uint64_t logged;
	char drain[CONTROL_MAX_REQUEST];

	if (recv(fd, drain, sizeof(drain), MSG_DONTWAIT) < 0) {
	}
	send(fd, e, sizeof(e) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	if (!logged || event_loop_now_ms() - logged > 10000) {
		logged = event_loop_now_ms();
		log_msg(SL_LOG_WARNING, "control: %d connections already open; refusing more",
			CONTROL_MAX_CLIENTS);
	}
}

static void on_accept(void *ctx, int fd, uint32_t events)
{
	struct control *ctl = ctx;
	struct client *cl = NULL;
	int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (cfd < 0)
		return;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS && !cl; i++)
		if (ctl->clients[i].fd < 0)
			cl = &ctl->clients[i];
	if (!cl) {
		refuse(cfd);
		return;
	}
	/* A service: answered also while the inputs wait for room (daemon.c). */
	cl->deadline = event_loop_timer_new(ctl->loop, on_deadline, cl);
	if (cl->deadline)
		event_loop_timer_service(cl->deadline);
	if (!cl->deadline || event_loop_watch_service(ctl->loop, cfd, EPOLLIN, on_client, cl)) {
		event_loop_timer_free(cl->deadline);
		cl->deadline = NULL;
		close(cfd);
		return;
	}
	cl->fd = cfd;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cl->peer, &(socklen_t){sizeof(cl->peer)}))
		cl->peer = (struct ucred){.pid = -1, .uid = (uid_t)-1};
	cl->reqlen = 0;
	cl->sent = 0;
	cl->replylen = 0;
	event_loop_timer_arm(cl->deadline, CONTROL_TIMEOUT_MS, 0);
}

/*
 * A socket file already there: a daemon answering on it is an error, a
 * dead one's is removed.  Anything that is not a socket is left alone.
 */
static int clear_stale(const char *path, const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (snprintf(err, errlen, "control socket %s: %s", path,
						       strerror(errno)), -1);
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s: exists and is not a socket", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (rc == 0) {
		snprintf(err, errlen, "control socket %s: another sluice is running (it answers there)",
			 path);
		return -1;
	}
	log_msg(SL_LOG_INFO, "control socket %s: removing the stale socket of a dead daemon", path);
	if (unlink(path) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "control socket %s: cannot remove the stale socket: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int control_dir_unsafe(const struct stat *st, uid_t uid, gid_t gid, const char *dir, char *err,
		       size_t errlen)
{
	if (!(st->st_mode & S_IWOTH) && (st->st_uid == 0 || st->st_uid == uid) &&
	    (!(st->st_mode & S_IWGRP) || st->st_gid == 0 || st->st_gid == gid))
		return 0;
	snprintf(err, errlen,
		 "control socket: directory %s (owner uid %u, gid %u, mode %04o) can be written "
		 "by others than root and the daemon's user: they could replace the socket; "
		 "use a directory only those two can write to", dir, (unsigned)st->st_uid,
		 (unsigned)st->st_gid, (unsigned)(st->st_mode & 07777));
	return -1;
}

/*
 * The socket's folder: created (one level, like systemd's RuntimeDirectory)
 * for the daemon's user when missing, and refused when anyone but root and
 * that user could replace what is in it.  An open descriptor, or -1.
 */
static int open_dir(const char *dir, const struct drop_target *drop, char *err, size_t errlen)
{
	uid_t uid = drop && geteuid() == 0 ? drop->uid : geteuid();
	gid_t gid = drop && geteuid() == 0 ? drop->gid : getegid();
	bool made = false;
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		snprintf(err, errlen, "control socket: cannot create its directory %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "control socket: directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	/* Made by us as root: the user's, group-readable (clients need search). */
	if (made && ((geteuid() == 0 && fchown(fd, uid, gid) < 0) || fchmod(fd, 0750) < 0 ||
		     fstat(fd, &st) < 0)) {
		snprintf(err, errlen, "control socket: directory %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (made)
		log_msg(SL_LOG_INFO, "control socket: created its directory %s (owner uid %u)", dir,
			(unsigned)st.st_uid);
	if (control_dir_unsafe(&st, uid, gid, dir, err, errlen))
		goto fail;
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * Mode 0660 from the start: the socket inode's mode (fchmod before bind)
 * under a umask is what bind(2) gives the file.  Bound through the folder's
 * descriptor when /proc allows, then owned without following links: no
 * moment where a name is looked up twice.
 */
static int bind_socket(struct control *ctl, int dirfd, const char *base,
		       const struct sockaddr_un *sa, const struct drop_target *drop, char *err,
		       size_t errlen)
{
	struct sockaddr_un via = {.sun_family = AF_UNIX};
	const struct sockaddr_un *to = sa;
	struct stat st;
	mode_t old;
	int rc, n;

	n = snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d/%s", dirfd, base);
	if (n > 0 && (size_t)n < sizeof(via.sun_path) && access("/proc/self/fd", X_OK) == 0)
		to = &via;
	if (fchmod(ctl->fd, 0660) < 0) {
		snprintf(err, errlen, "control socket %s: cannot set its mode: %s", ctl->path,
			 strerror(errno));
		return -1;
	}
	old = umask(0117);
	rc = bind(ctl->fd, (const struct sockaddr *)to, sizeof(*to));
	umask(old);
	if (rc < 0) {
		snprintf(err, errlen, "control socket %s: cannot bind: %s", ctl->path, strerror(errno));
		return -1;
	}
	if (fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control socket %s: gone after bind", ctl->path);
		return -1;
	}
	ctl->dev = st.st_dev;
	ctl->ino = st.st_ino;
	if (drop && geteuid() == 0 &&
	    fchownat(dirfd, base, drop->uid, drop->gid, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(err, errlen, "control socket %s: cannot chown to %s: %s", ctl->path,
			 drop->name, strerror(errno));
		return -1;
	}
	return 0;
}

/* "dir" and the name in it; a bare name is in ".".  -1: too long. */
static int split_path(const char *path, char *dir, size_t len, const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, len, ".");
		*base = path;
		return 0;
	}
	if ((size_t)(slash - path) >= len)
		return -1;
	if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	*base = slash + 1;
	return 0;
}

struct control *control_open(struct event_loop *loop, const struct control_ops *ops, void *ctx,
			     const char *path, const struct drop_target *drop, char *err,
			     size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)];
	const char *base;
	struct control *ctl;
	int dirfd = -1;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket %s: path too long", path);
		return NULL;
	}
	strcpy(sa.sun_path, path);
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl || !(ctl->path = strdup(path))) {
		free(ctl);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ctl->loop = loop;
	ctl->ops = ops;
	ctl->ctx = ctx;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		ctl->clients[i].ctl = ctl;
		ctl->clients[i].fd = -1;
		ctl->clients[i].tap = -1;
	}
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		free(ctl->path);
		free(ctl);
		return NULL;
	}
	if (split_path(path, dir, sizeof(dir), &base)) {
		snprintf(err, errlen, "control socket %s: path too long", path);
		goto fail;
	}
	if ((dirfd = open_dir(dir, drop, err, errlen)) < 0)
		goto fail;
	if (clear_stale(path, &sa, err, errlen) ||
	    bind_socket(ctl, dirfd, base, &sa, drop, err, errlen))
		goto fail;
	close(dirfd);
	dirfd = -1;
	if (listen(ctl->fd, CONTROL_MAX_CLIENTS) < 0 ||
	    event_loop_watch_service(loop, ctl->fd, EPOLLIN, on_accept, ctl) < 0) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	log_msg(SL_LOG_INFO, "control socket %s: listening", path);
	return ctl;
fail:
	if (dirfd >= 0)
		close(dirfd);
	if (ctl->ino)
		unlink(path);
	ctl->ino = 0;
	control_close(ctl);
	return NULL;
}

void control_close(struct control *ctl)
{
	struct stat st;

	if (!ctl)
		return;
	for (size_t i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		/* a tail client is told, as far as its socket takes it at once */
		if (ctl->clients[i].tap >= 0)
			control_tail_finish(&ctl->clients[i], "e stop\n");
		control_client_close(&ctl->clients[i]);
	}
	event_loop_unwatch(ctl->loop, ctl->fd);
	close(ctl->fd);
	/* After the drop this needs write access to the folder; if not, the next start clears it. */
	if (ctl->ino && lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino && unlink(ctl->path) < 0)
		log_msg(SL_LOG_DEBUG, "control socket %s: not removed: %s", ctl->path,
			strerror(errno));
	free(ctl->path);
	free(ctl);
}
