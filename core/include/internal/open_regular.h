/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Opening a file read by name without blocking (docs/SECURITY.md), the
 * rule the core (infile.c: the configuration, a converter's input) and
 * the plugins (safefile.c: databases, certificates, captures) share.
 *
 * Not part of the plugin ABI and never installed: core/include is on the
 * include path of both floors, and this header is `static inline` so each
 * compiles its own copy; neither links the other.
 *
 * The open is O_NONBLOCK, so a FIFO or device planted at the name cannot
 * stop the thread; then fstat() must show a regular file (or one the
 * caller's also_ok() accepts); the descriptor is made blocking again.
 * Symbolic links are followed: these names are the admin's, and packaged
 * files are often links.
 */
#ifndef SLUICE_INTERNAL_OPEN_REGULAR_H
#define SLUICE_INTERNAL_OPEN_REGULAR_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not a regular one is, for a message. */
static inline const char *sl_file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

/*
 * A descriptor (O_CLOEXEC, blocking) on path, its stat in *sb, when it is
 * a regular file or also_ok(sb) (may be NULL) says yes; -1 with errno and
 * the reason (strerror, or "not a regular file (a FIFO)") in why.
 */
static inline int sl_open_regular(const char *path, struct stat *sb,
				  bool (*also_ok)(const struct stat *sb), char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	int fl;

	if (fd < 0 || fstat(fd, sb) < 0) {
		int e = errno;

		snprintf(why, len, "%s", strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(sb->st_mode) && !(also_ok && also_ok(sb))) {
		snprintf(why, len, "not a regular file (%s)", sl_file_kind(sb->st_mode));
		close(fd);
		errno = S_ISDIR(sb->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	/* Non-blocking was for the open; reads of a regular file never wait anyway. */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

#endif /* SLUICE_INTERNAL_OPEN_REGULAR_H */
