/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctgen: many short TCP connections, for the conntrack benchmark
 * (bench/conntrack.sh).
 *
 *   ctgen -l PORT -n NPORTS            server: accept on PORT..PORT+NPORTS-1, close
 *   ctgen -c ADDR -p PORT -n NPORTS -r RATE -t SECONDS
 *                                      client: connect at RATE/s (0: as fast as
 *                                      possible), close with a RST at once
 *
 * The client closes with SO_LINGER 0: the connection leaves no TIME_WAIT
 * socket (its port is free again at once) and conntrack moves it to CLOSE,
 * whose timeout the script shortens, so the destroy events follow soon.
 * Every connection has its own tuple (for the first NPORTS * 64000): the
 * destination port rotates over NPORTS, the source port (bound) moves on
 * after each round, so a logger's lines can be matched to connections.  The client prints "connections N" (those
 * that completed their handshake) and "failed N".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int server(int port, int nports)
{
	struct pollfd *pf = calloc((size_t)nports, sizeof(*pf));

	if (!pf)
		return 1;
	for (int i = 0; i < nports; i++) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)(port + i))};
		int one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 4096) < 0) {
			perror("ctgen: listen");
			return 1;
		}
		pf[i].fd = s;
		pf[i].events = POLLIN;
	}
	fprintf(stderr, "ctgen: listening\n");
	for (;;) {
		if (poll(pf, (nfds_t)nports, -1) < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < nports; i++) {
			int c;

			if (!(pf[i].revents & POLLIN))
				continue;
			while ((c = accept(pf[i].fd, NULL, NULL)) >= 0)
				close(c);
		}
	}
}

static int client(const char *addr, int port, int nports, double rate, double secs)
{
	struct sockaddr_in a = {.sin_family = AF_INET}, src = {.sin_family = AF_INET};
	struct linger lg = {1, 0};
	int one = 1;
	long long ok = 0, failed = 0, k = 0;
	double t0 = now(), t;

	if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
		return 64;
	while ((t = now()) - t0 < secs) {
		int s;

		if (rate > 0) {
			double due = t0 + (double)k / rate;

			if (due > t) {
				struct timespec w = {0, (long)((due - t) * 1e9)};
				if (w.tv_nsec > 20000)
					nanosleep(&w, NULL);
				continue;
			}
		}
		a.sin_port = htons((uint16_t)(port + (int)(k % nports)));
		src.sin_port = htons((uint16_t)(1024 + (k / nports) % 64000));
		k++;
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0) {
			failed++;
			continue;
		}
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (struct sockaddr *)&src, sizeof(src)) < 0) {
			failed++;
			close(s);
			continue;
		}
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0)
			ok++;
		else
			failed++;
		setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(s);
	}
	t = now() - t0;
	printf("connections %lld\nfailed %lld\nseconds %.3f\n", ok, failed, t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int port = 0, lport = 0, nports = 1, opt;
	double rate = 0, secs = 1;

	while ((opt = getopt(argc, argv, "l:c:p:n:r:t:")) != -1) {
		switch (opt) {
		case 'l': lport = atoi(optarg); break;
		case 'c': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'n': nports = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 't': secs = atof(optarg); break;
		default: goto usage;
		}
	}
	if (nports < 1 || nports > 1000)
		goto usage;
	if (lport)
		return server(lport, nports);
	if (addr && port)
		return client(addr, port, nports, rate, secs);
usage:
	fprintf(stderr, "usage: ctgen -l PORT [-n NPORTS] | -c ADDR -p PORT [-n NPORTS] [-r RATE] [-t SECONDS]\n");
	return 64;
}
