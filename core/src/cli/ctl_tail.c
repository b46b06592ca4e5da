/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice tail`: stream a running daemon's records (control.h, `tail`).
 * -n COUNT, SIGINT or SIGTERM end the session: the client closes its
 * side, reads the rest up to the daemon's "e", and says on stderr how many
 * records were lost because it did not keep up.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sysexits.h>
#include <unistd.h>

#include "control.h"
#include "ctl_client.h"

static volatile sig_atomic_t tail_fd = -1;

/* Closing our side is the end of the session: async-signal-safe, no race with read(). */
static void on_stop(int sig)
{
	if (tail_fd >= 0)
		shutdown(tail_fd, SHUT_WR);
}

static void tail_usage(FILE *out)
{
	fprintf(out, "usage: sluice tail [-c FILE | --socket PATH] [INSTANCE] [--where EXPR] "
		"[--json | --text] [-n COUNT]\n");
}

struct tail_run {
	unsigned long long want, got, lost;
	bool ok_seen, ending, done, reload, stop;
};

/* One line of the stream (without its newline).  0, or an exit status. */
static int tail_line(struct tail_run *t, int fd, char *line, size_t len)
{
	if (!t->ok_seen) {
		if (len == 2 && memcmp(line, "ok", 2) == 0) {
			t->ok_seen = true;
			return 0;
		}
		t->done = true;
		return 1;
	}
	if (len >= 2 && line[0] == 'r' && line[1] == ' ') {
		if (t->want && t->got >= t->want)
			return 0;
		line[len] = '\n';
		if (fwrite(line + 2, 1, len - 1, stdout) != len - 1)
			return EX_IOERR;
		if (++t->got == t->want && !t->ending) {
			t->ending = true;
			shutdown(fd, SHUT_WR);
		}
	} else if (len > 2 && line[0] == 'l' && line[1] == ' ') {
		t->lost = strtoull(line + 2, NULL, 10);
	} else if (line[0] == 'e') {
		t->done = true;
		t->reload = len == 8 && memcmp(line, "e reload", 8) == 0;
		t->stop = len == 6 && memcmp(line, "e stop", 6) == 0;
	}
	return 0;
}

/* The reply is an error: all of it (the daemon closes after it) to stderr. */
static int tail_refused(int fd, char *buf, size_t len, size_t cap)
{
	ssize_t n;

	while (len < cap - 1 && ((n = read(fd, buf + len, cap - 1 - len)) > 0 ||
				 (n < 0 && errno == EINTR)))
		len += n > 0 ? (size_t)n : 0;
	buf[len] = 0;
	fprintf(stderr, "sluice: tail refused: %s", strncmp(buf, "error\n", 6) == 0 ? buf + 6 : buf);
	return strncmp(buf, "error\nbusy:", 11) == 0 ? EX_TEMPFAIL : 1;
}

/* Read lines until "e"; an error reply goes to stderr.  The exit status. */
static int tail_stream(int fd, const char *path, unsigned long long count)
{
	struct tail_run t = {.want = count};
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	int st = 0;

	if (!buf)
		return EX_OSERR;
	while (!t.done) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		char *p = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			fprintf(stderr, "sluice: %s: %s\n", path, n < 0 ? strerror(errno) :
				t.ok_seen ? "the stream ended before its last line (did the daemon stop?)"
					  : "the daemon closed the connection");
			if (t.lost)
				fprintf(stderr, "%llu records lost (at least)\n", t.lost);
			free(buf);
			fflush(stdout);
			return EX_UNAVAILABLE;
		}
		len += (size_t)n;
		while (!t.done && (nl = memchr(p, '\n', len - (size_t)(p - buf)))) {
			if (!t.ok_seen && strncmp(p, "ok\n", 3) != 0) {
				st = tail_refused(fd, buf, len, cap);
				free(buf);
				return st;
			}
			if ((st = tail_line(&t, fd, p, (size_t)(nl - p))))
				break;
			p = nl + 1;
		}
		if (st)
			break;
		len -= (size_t)(p - buf);
		memmove(buf, p, len);
		if (len == cap - 1) {
			fprintf(stderr, "sluice: %s: a line over %zu bytes\n", path, cap);
			st = EX_PROTOCOL;
			break;
		}
	}
	free(buf);
	if (fflush(stdout))
		st = EX_IOERR;
	if (t.lost)
		fprintf(stderr, "%llu records lost\n", t.lost);
	if (t.stop && !st)
		fprintf(stderr, "sluice: the daemon stopped\n");
	if (t.reload && !st) {
		fprintf(stderr, "sluice: the daemon reloaded its configuration; the session ended\n");
		st = 1;
	}
	return st;
}

/* The request line, or NULL (too long). */
static char *tail_request(const char *inst, bool json, const char *where)
{
	char *req = NULL;

	if (asprintf(&req, "tail %s %s%s%s\n", json ? "json" : "text", inst ? inst : "-",
		     where ? " " : "", where ? where : "") < 0)
		return NULL;
	if (strlen(req) > CONTROL_MAX_REQUEST || strchr(req, '\n') != req + strlen(req) - 1 ||
	    (inst && strchr(inst, ' '))) {
		fprintf(stderr, "sluice tail: the instance and --where must fit in one line of "
			"%d bytes, with no newline (and the instance no space)\n",
			CONTROL_MAX_REQUEST - 1);
		free(req);
		return NULL;
	}
	return req;
}

static int tail_run(const char *path, const char *req, unsigned long long count)
{
	struct sigaction sa = {.sa_handler = on_stop};
	struct timeval none = {0};
	int fd = ctl_client_connect(path), st;

	if (fd < 0)
		return -fd;
	/* records may be rare: no receive timeout */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 && errno != EPIPE) {
		fprintf(stderr, "sluice: %s: cannot send the command: %s\n", path, strerror(errno));
		close(fd);
		return EX_UNAVAILABLE;
	}
	tail_fd = fd;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	st = tail_stream(fd, path, count);
	tail_fd = -1;
	close(fd);
	return st;
}

int ctl_tail_main(int argc, char **argv, const char *default_config)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"socket", required_argument, NULL, 'S'},
		{"where", required_argument, NULL, 'w'},
		{"json", no_argument, NULL, 'j'},
		{"text", no_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *file = default_config, *sock = NULL, *where = NULL, *inst = NULL;
	unsigned long long count = 0;
	bool json = false;
	char *path, *req, *end;
	int c, status = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': file = optarg; break;
		case 'S': sock = optarg; break;
		case 'w': where = optarg; break;
		case 'j': json = true; break;
		case 't': json = false; break;
		case 'n':
			errno = 0;
			count = strtoull(optarg, &end, 10);
			if (errno || *end || !*optarg || *optarg == '-' || !count) {
				fprintf(stderr, "sluice tail: -n wants a count of 1 or more\n");
				return EX_USAGE;
			}
			break;
		case 'h': tail_usage(stdout); return 0;
		default: tail_usage(stderr); return EX_USAGE;
		}
	}
	if (optind < argc)
		inst = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "sluice tail: unexpected argument '%s'\n", argv[optind]);
		tail_usage(stderr);
		return EX_USAGE;
	}
	if (!(req = tail_request(inst, json, where)))
		return EX_USAGE;
	if (!(path = ctl_client_socket_path(sock, file, &status))) {
		free(req);
		return status ? status : EX_OSERR;
	}
	/* the count is the client's: the daemon streams until we close our side */
	status = tail_run(path, req, count);
	free(path);
	free(req);
	return status;
}
