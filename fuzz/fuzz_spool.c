/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a spool segment file (plugins/common/
 * spool.h) left by an earlier run: the spool opens the directory, sends
 * (peeks and acknowledges) every record it accepts and deletes the segment.
 * Lengths, CRCs and the acked offset in the header are all attacker bytes:
 * nothing may be read outside the file, and the segment must be gone at
 * the end (no record left pending forever).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static volatile uint64_t sink;

static void cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/lock", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256], path[128];
	struct sl_spool *sp;
	struct iovec iov[8];
	unsigned n, rounds = 0;
	uint64_t sum = 0;
	int fd;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_spool.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(cleanup);
	}
	snprintf(path, sizeof(path), "%s/seg-0000000100000000.spl", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
	sp = sl_spool_open(dir, 1 << 30, NULL, NULL, err, sizeof(err));
	if (!sp)
		abort();
	while ((n = sl_spool_peekv(sp, iov, 1 + rounds % 8))) {
		for (unsigned i = 0; i < n; i++) {
			const uint8_t *p = iov[i].iov_base;

			if (iov[i].iov_len)	/* touch both ends: ASan checks them */
				sum += p[0] + p[iov[i].iov_len - 1];
		}
		sl_spool_ack(sp, n);
		if (++rounds > size)
			abort();	/* more records than bytes: a loop */
	}
	if (sl_spool_pending(sp) || access(path, F_OK) == 0)
		abort();	/* a segment left behind */
	sl_spool_close(sp);
	sink += sum;
	return 0;
}
