/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client side of the control socket: `sluice stats`, `sluice reload`,
 * `sluice reopen` (`sluice tail`: ctl_tail.c).  The socket is --socket PATH, else the configuration
 * file's daemon.control_socket.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl_client.h"
#include "event_loop.h"
#include "stats.h"

/* A reply bigger than this is not from sluice. */
#define CTL_MAX_REPLY (64u << 20)
/* A reload may load plugins and start instances: give it time. */
#define CTL_TIMEOUT_S 30

static void ctl_usage(FILE *out)
{
	fprintf(out,
		"usage: sluice stats [-c FILE | --socket PATH] [--json] [--watch]\n"
		"       sluice stats --rules [-c FILE | --socket PATH]\n"
		"       sluice reload [-c FILE | --socket PATH]\n"
		"       sluice reopen [-c FILE | --socket PATH]\n"
		"       sluice tail [-c FILE | --socket PATH] [INSTANCE] [--where EXPR] [--json | --text]\n"
		"                   [-n COUNT]\n");
}

/* The socket path: --socket, else daemon.control_socket of the file.  malloc'd. */
char *ctl_client_socket_path(const char *sock, const char *file, int *status)
{
	struct config cfg;
	struct diag diag = {0};
	char *path = NULL;

	if (sock)
		return strdup(sock);
	*status = EX_CONFIG;
	if (config_load(&cfg, file, &diag)) {
		fprintf(stderr, "sluice: cannot read the control socket's path from %s; give "
			"--socket PATH\n", file);
	} else if (!cfg.control_socket) {
		fprintf(stderr, "sluice: %s sets no daemon.control_socket; give --socket PATH\n",
			file);
	} else if (!(path = strdup(cfg.control_socket))) {
		*status = EX_OSERR;
	}
	config_free(&cfg);
	return path;
}

int ctl_client_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = CTL_TIMEOUT_S};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sluice: %s: path too long for a unix socket\n", path);
		return -EX_USAGE;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "sluice: socket: %s\n", strerror(errno));
		return -EX_OSERR;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (errno == EACCES || errno == EPERM) {
		fprintf(stderr, "sluice: %s: %s (the socket is for root and the daemon's "
			"group)\n", path, strerror(errno));
		close(fd);
		return -EX_NOPERM;
	}
	fprintf(stderr, "sluice: no daemon answers on %s: %s\n", path, strerror(errno));
	close(fd);
	return -EX_UNAVAILABLE;
}

/*
 * Send one command and read the whole reply.  0 with *body (malloc'd,
 * after the status line) and *ok, or an exit status.
 */
static int request(const char *path, const char *cmd, char **body, bool *ok)
{
	size_t cap = 65536, len = 0;
	char *buf, *nl, line[64];
	int fd = ctl_client_connect(path);
	ssize_t n;

	if (fd < 0)
		return -fd;
	if (!(buf = malloc(cap)))
		goto oom;
	snprintf(line, sizeof(line), "%s\n", cmd);
	/* A refusing daemon may close first: read its reason, do not die of SIGPIPE. */
	if ((send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 && errno != EPIPE) ||
	    (shutdown(fd, SHUT_WR) < 0 && errno != ENOTCONN)) {
		fprintf(stderr, "sluice: %s: cannot send the command: %s\n", path, strerror(errno));
		goto unavailable;
	}
	while ((n = read(fd, buf + len, cap - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "sluice: %s: %s\n", path, errno == EAGAIN ?
				"the daemon did not answer in time" : strerror(errno));
			goto unavailable;
		}
		len += (size_t)n;
		if (len == cap - 1) {
			char *more = cap < CTL_MAX_REPLY ? realloc(buf, cap * 2) : NULL;

			if (!more)
				goto oom;
			buf = more;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	if (!(nl = strchr(buf, '\n'))) {
		fprintf(stderr, "sluice: %s: the daemon closed the connection without a reply\n",
			path);
		free(buf);
		return EX_UNAVAILABLE;
	}
	*nl = 0;
	*ok = strcmp(buf, "ok") == 0;
	memmove(buf, nl + 1, len - (size_t)(nl + 1 - buf) + 1);
	*body = buf;
	return 0;
oom:
	fprintf(stderr, "sluice: out of memory (or a reply over %u bytes)\n", CTL_MAX_REPLY);
	close(fd);
	free(buf);
	return EX_OSERR;
unavailable:
	close(fd);
	free(buf);
	return EX_UNAVAILABLE;
}

/* reload, reopen: "ok" on stdout, or the reasons on stderr and 1. */
static int run_op(const char *path, const char *cmd)
{
	char *body;
	bool ok;
	int st = request(path, cmd, &body, &ok);

	if (st)
		return st;
	if (ok)
		printf("%s", *body ? body : "ok\n");
	else
		fprintf(stderr, "sluice: %s failed:\n%s", cmd, body);
	st = ok ? 0 : strncmp(body, "busy:", 5) == 0 ? EX_TEMPFAIL : 1;
	free(body);
	return st;
}

/* One stats block: the JSON as the daemon sent it, or the table. */
static int show_stats(const char *path, bool json, struct stats_snap *prev, double secs,
		      struct stats_snap *cur)
{
	char *body, err[256];
	bool ok;
	int st = request(path, "stats json", &body, &ok);

	if (st)
		return st;
	if (!ok) {
		fprintf(stderr, "sluice: stats failed: %s", body);
		st = strncmp(body, "busy:", 5) == 0 ? EX_TEMPFAIL : 1;
		free(body);
		return st;
	}
	if (stats_parse_json(cur, body, err, sizeof(err))) {
		fprintf(stderr, "sluice: %s: unreadable stats: %s\n", path, err);
		free(body);
		return EX_PROTOCOL;
	}
	if (json)
		fputs(body, stdout);
	else
		stats_write_table(cur, prev, secs, stdout);
	free(body);
	return fflush(stdout) ? EX_IOERR : 0;
}

/*
 * --watch: a block a second with rates since the one before; on a
 * terminal each block replaces the last, else blocks follow each other.
 */
static int watch_stats(const char *path, bool json)
{
	struct stats_snap prev = {0}, cur;
	bool tty = isatty(STDOUT_FILENO);
	uint64_t t_prev = 0;

	for (;;) {
		uint64_t t = event_loop_now_ms();
		int st;

		if (tty)
			fputs("\033[H\033[2J", stdout);
		else if (t_prev)
			fputc('\n', stdout);
		st = show_stats(path, json, &prev, t_prev ? (double)(t - t_prev) / 1000 : 0, &cur);
		if (st) {
			stats_free(&prev);
			return st;
		}
		stats_free(&prev);
		prev = cur;
		t_prev = t;
		t = event_loop_now_ms() - t;
		usleep(t < 1000 ? (useconds_t)(1000 - t) * 1000 : 0);
	}
}

int ctl_client_main(int argc, char **argv, const char *default_config)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"socket", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"watch", no_argument, NULL, 'w'},
		{"rules", no_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *cmd = argv[0], *file = default_config, *sock = NULL;
	bool json = false, watch = false, rules = false, stats = strcmp(cmd, "stats") == 0;
	int c, status = 0;
	char *path;

	if (strcmp(cmd, "tail") == 0)
		return ctl_tail_main(argc, argv, default_config);
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': file = optarg; break;
		case 'S': sock = optarg; break;
		case 'j': json = true; break;
		case 'w': watch = true; break;
		case 'r': rules = true; break;
		case 'h': ctl_usage(stdout); return 0;
		default: ctl_usage(stderr); return EX_USAGE;
		}
	}
	if (optind < argc || (!stats && (json || watch || rules)) || (rules && (json || watch))) {
		fprintf(stderr, "sluice %s: %s\n", cmd, optind < argc ? "unexpected argument" :
			!stats ? "--json, --watch and --rules are for stats" :
			"--rules goes with neither --json nor --watch");
		ctl_usage(stderr);
		return EX_USAGE;
	}
	if (!(path = ctl_client_socket_path(sock, file, &status)))
		return status ? status : EX_OSERR;
	if (!stats) {
		status = run_op(path, cmd);
	} else if (rules) {
		status = run_op(path, "stats rules");
	} else if (watch) {
		status = watch_stats(path, json);
	} else {
		struct stats_snap s;

		status = show_stats(path, json, NULL, 0, &s);
		if (!status)
			stats_free(&s);
	}
	free(path);
	return status;
}

int ctl_client_is_command(const char *arg)
{
	return strcmp(arg, "stats") == 0 || strcmp(arg, "reload") == 0 ||
	       strcmp(arg, "reopen") == 0 || strcmp(arg, "tail") == 0;
}
