/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sinkcount: a syslog receiver that only counts messages: datagrams on UDP
 * (udp:PORT, any address of the namespace) or a unix datagram socket (unix:PATH), lines on TCP
 * (tcp:PORT, one connection at a time).  Large
 * receive buffer so the receiver is not what loses.  On SIGINT/SIGTERM
 * prints "datagrams N bytes B" (B: the payload bytes received; readers take
 * the second word).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* TCP with one message per line (framing: lf): count the newlines of every
 * connection until signalled. */
static int tcp_count(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1, ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 4) < 0) {
		perror("sinkcount: tcp");
		return 1;
	}
	struct sigaction sig = { .sa_handler = on_signal };
	sigaction(SIGINT, &sig, NULL);
	sigaction(SIGTERM, &sig, NULL);
	static char buf[1 << 20];
	unsigned long long n = 0, bytes = 0;
	while (!stop) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0)
			continue;
		for (;;) {
			ssize_t r = read(fd, buf, sizeof(buf));
			if (r <= 0) {
				if (r < 0 && errno == EINTR && !stop)
					continue;
				break;
			}
			bytes += (unsigned long long)r;
			for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + r - p))); p++)
				n++;
		}
		close(fd);
	}
	printf("datagrams %llu bytes %llu\n", n, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s udp:PORT|tcp:PORT|unix:PATH [CPU]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	int fd;
	if (!strncmp(argv[1], "udp:", 4)) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1] + 4)) };
		/* any address: the namespace's loopback or its veth (bench/run.sh) */
		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("sinkcount: bind");
			return 1;
		}
	} else if (!strncmp(argv[1], "tcp:", 4)) {
		return tcp_count((uint16_t)atoi(argv[1] + 4));
	} else if (!strncmp(argv[1], "unix:", 5)) {
		struct sockaddr_un su = { .sun_family = AF_UNIX };
		snprintf(su.sun_path, sizeof(su.sun_path), "%s", argv[1] + 5);
		unlink(su.sun_path);
		fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&su, sizeof(su)) < 0) {
			perror("sinkcount: bind");
			return 1;
		}
	} else {
		fprintf(stderr, "sinkcount: %s: want udp:PORT or unix:PATH\n", argv[1]);
		return 2;
	}
	int rcvbuf = 32 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	static char buf[65536];
	struct mmsghdr msgs[64];
	struct iovec iov[64];
	for (int i = 0; i < 64; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = sizeof(buf);
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	unsigned long long n = 0, bytes = 0;
	while (!stop) {
		int r = recvmmsg(fd, msgs, 64, MSG_WAITFORONE, NULL);
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < r; i++)
			bytes += msgs[i].msg_len;
		if (r > 0)
			n += (unsigned)r;
	}
	printf("datagrams %llu bytes %llu\n", n, bytes);
	return 0;
}
