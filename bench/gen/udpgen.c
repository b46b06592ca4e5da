/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * udpgen: UDP datagrams of one payload size to one destination, in batches
 * with sendmmsg(), paced to a rate or as fast as the CPU allows, pinned to
 * one CPU.  Prints what it sent: "sent N secs S pps R errors E".
 *
 *   udpgen -d 10.0.0.2 -p 9999 -s 64 [-r PPS] [-t SECONDS] [-c CPU]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXB 64

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *dst = "10.0.0.2";
	int port = 9999, size = 64, cpu = -1, opt;
	double rate = 0, secs = 2;
	static char payload[65536];
	struct mmsghdr msgs[MAXB];
	struct iovec iov[MAXB];

	while ((opt = getopt(argc, argv, "d:p:s:r:t:c:")) != -1) {
		switch (opt) {
		case 'd': dst = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 's': size = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'c': cpu = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DST -p PORT -s SIZE [-r PPS] [-t SECS] [-c CPU]\n", argv[0]);
			return 2;
		}
	}
	if (size < 0 || size > 65000) {
		fprintf(stderr, "udpgen: bad size\n");
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			perror("udpgen: sched_setaffinity");
			return 1;
		}
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (fd < 0 || inet_pton(AF_INET, dst, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("udpgen: socket");
		return 1;
	}
	int sndbuf = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	memset(payload, 'x', sizeof(payload));

	/* At low rates smaller batches keep the pacing smooth. */
	int batch = MAXB;
	if (rate > 0) {
		batch = (int)(rate / 20000);
		if (batch < 1)
			batch = 1;
		if (batch > MAXB)
			batch = MAXB;
	}
	for (int i = 0; i < MAXB; i++) {
		iov[i].iov_base = payload;
		iov[i].iov_len = (size_t)size;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	uint64_t sent = 0, errors = 0;
	double t0 = now(), end = t0 + secs, t = t0;
	while (t < end) {
		if (rate > 0) {
			/* Where we should be: send only what is due. */
			double due = t0 + (double)sent / rate;
			if (due > t) {
				double d = due - t;
				struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };
				nanosleep(&ts, NULL);
			}
		}
		int n = sendmmsg(fd, msgs, (unsigned)batch, 0);
		if (n > 0)
			sent += (uint64_t)n;
		else if (n < 0 && errno != EINTR)
			errors++;
		t = now();
	}
	double el = now() - t0;
	printf("sent %llu secs %.3f pps %.0f errors %llu\n", (unsigned long long)sent, el,
	       (double)sent / el, (unsigned long long)errors);
	return 0;
}
