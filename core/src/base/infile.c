/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a file by name without blocking on a FIFO: see infile.h. */
#include "infile.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal/open_regular.h"

/* Our own standard input (sluice -t -c /dev/stdin): handed to us, not planted at a name. */
static bool is_stdin(const struct stat *st)
{
	struct stat in;

	return fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

int infile_open(const char *path, char *why, size_t len)
{
	struct stat st;

	return sl_open_regular(path, &st, is_stdin, why, len);
}

FILE *infile_fopen(const char *path, char *why, size_t len)
{
	int fd = infile_open(path, why, len);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(why, len, "%s", strerror(errno));
		close(fd);
	}
	return f;
}
