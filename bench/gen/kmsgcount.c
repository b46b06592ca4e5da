/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kmsgcount: reads /dev/kmsg from its end (as a syslog daemon reading the
 * kernel log would) and counts the records containing a prefix, plus the
 * records lost when the ring buffer overran the reader (sequence gaps).
 * On SIGINT/SIGTERM prints "records N lost L".
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PREFIX [CPU]\n", argv[0]);
		return 2;
	}
	if (argc > 2) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(atoi(argv[2]), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	int fd = open("/dev/kmsg", O_RDONLY);
	if (fd < 0) {
		perror("kmsgcount: /dev/kmsg");
		return 1;
	}
	lseek(fd, 0, SEEK_END);
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "kmsgcount: reading\n");

	static char buf[8192];
	unsigned long long n = 0, lost = 0, last = 0;
	while (!stop) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		if (r < 0) {
			if (errno == EPIPE || errno == EINTR)
				continue; /* overrun: the next read gives the oldest record left */
			break;
		}
		buf[r] = 0;
		/* "pri,seq,ts,flags;text" */
		char *comma = strchr(buf, ',');
		unsigned long long seq = comma ? strtoull(comma + 1, NULL, 10) : 0;
		if (last && seq > last + 1)
			lost += seq - last - 1;
		last = seq;
		if (strstr(buf, argv[1]))
			n++;
	}
	printf("records %llu lost %llu\n", n, lost);
	return 0;
}
