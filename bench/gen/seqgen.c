/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seqgen: numbered UDP datagrams for the fault tests and the soak.  Packet
 * number S (from -f FIRST on) goes from source port 1024 + S % 64000 to
 * destination port 20000 + S / 64000 and carries "sluice-seq %010u" as the
 * start of its payload, so a pcap (payload) and a kernel-format text line
 * (SPT=, DPT=) both say which packet it was: losses, duplicates and order
 * can be checked across files.  Raw socket: the kernel adds the IP header,
 * the UDP header is ours (checksum 0, "none", valid for IPv4).
 *
 *   seqgen -d DST [-n COUNT] [-r PPS] [-t SECONDS] [-f FIRST] [-s SIZE]
 *
 * Bounded: stops after COUNT packets (default 10000) or SECONDS (default
 * 10), whichever comes first, or on SIGTERM/SIGINT.  Prints
 * "sent N first F next L secs S pps R errors E".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXB 64
#define SPORT_BASE 1024
#define SPORT_SPAN 64000
#define DPORT_BASE 20000

static volatile sig_atomic_t stop;

static void on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* UDP header and payload of packet number seq into p (size bytes). */
static void fill(uint8_t *p, size_t size, uint32_t seq)
{
	uint16_t h[4];
	char tag[32];
	int n;

	h[0] = htons((uint16_t)(SPORT_BASE + seq % SPORT_SPAN));
	h[1] = htons((uint16_t)(DPORT_BASE + seq / SPORT_SPAN));
	h[2] = htons((uint16_t)size);
	h[3] = 0;
	memcpy(p, h, 8);
	n = snprintf(tag, sizeof(tag), "sluice-seq %010u", seq);
	memset(p + 8, 'x', size - 8);
	memcpy(p + 8, tag, (size_t)n < size - 8 ? (size_t)n : size - 8);
}

int main(int argc, char **argv)
{
	const char *dst = NULL;
	double rate = 0, secs = 10;
	unsigned long long count = 10000, first = 0;
	size_t size = 64;
	static uint8_t bufs[MAXB][2048];
	struct mmsghdr msgs[MAXB];
	struct iovec iov[MAXB];
	int opt;

	while ((opt = getopt(argc, argv, "d:n:r:t:f:s:")) != -1) {
		switch (opt) {
		case 'd': dst = optarg; break;
		case 'n': count = strtoull(optarg, NULL, 10); break;
		case 'r': rate = atof(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'f': first = strtoull(optarg, NULL, 10); break;
		case 's': size = (size_t)atoi(optarg); break;
		default:
			goto usage;
		}
	}
	if (!dst || size < 8 + 21 || size > sizeof(bufs[0]) || secs <= 0 ||
	    first + count > (unsigned long long)SPORT_SPAN * (65535 - DPORT_BASE)) {
usage:
		fprintf(stderr, "usage: %s -d DST [-n COUNT] [-r PPS] [-t SECS] [-f FIRST] "
			"[-s SIZE 29..2048]\n", argv[0]);
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
	struct sockaddr_in sa = { .sin_family = AF_INET };
	if (fd < 0 || inet_pton(AF_INET, dst, &sa.sin_addr) != 1 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("seqgen: socket");
		return 1;
	}
	int sndbuf = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));

	/* At low rates smaller batches keep the pacing smooth. */
	int batch = MAXB;
	if (rate > 0) {
		batch = (int)(rate / 20000);
		if (batch < 1)
			batch = 1;
		if (batch > MAXB)
			batch = MAXB;
	}
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < MAXB; i++) {
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = size;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}

	unsigned long long sent = 0, errors = 0;
	double t0 = now(), end = t0 + secs, t = t0;
	while (!stop && sent < count && t < end) {
		if (rate > 0) {
			/* Where we should be: send only what is due. */
			double due = t0 + (double)sent / rate;

			if (due > t) {
				double d = due - t;
				struct timespec ts = { (time_t)d, (long)((d - (time_t)d) * 1e9) };

				nanosleep(&ts, NULL);
			}
		}
		int nb = batch;
		if ((unsigned long long)nb > count - sent)
			nb = (int)(count - sent);
		for (int i = 0; i < nb; i++)
			fill(bufs[i], size, (uint32_t)(first + sent + (unsigned)i));
		int n = sendmmsg(fd, msgs, (unsigned)nb, 0);
		if (n > 0)
			sent += (unsigned long long)n;
		else if (n < 0 && errno != EINTR)
			errors++;	/* ENOBUFS: that batch again */
		t = now();
	}
	double el = now() - t0;
	printf("sent %llu first %llu next %llu secs %.3f pps %.0f errors %llu\n", sent, first,
	       first + sent, el, el > 0 ? (double)sent / el : 0.0, errors);
	return 0;
}
