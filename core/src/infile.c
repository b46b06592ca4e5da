/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a file by name without blocking on a FIFO: see infile.h. */
#include "infile.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

/* Our own standard input (sluice -t -c /dev/stdin): handed to us, not planted at a name. */
static bool is_stdin(const struct stat *st)
{
	struct stat in;

	return fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st->st_dev && in.st_ino == st->st_ino;
}

int infile_open(const char *path, char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	int fl;

	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;

		snprintf(why, len, "%s", strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !is_stdin(&st)) {
		snprintf(why, len, "not a regular file (%s)", kind_of(st.st_mode));
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	/* Non-blocking was for the open; reads of a regular file never wait anyway. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
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
