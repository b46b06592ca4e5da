/* SPDX-License-Identifier: GPL-2.0-or-later */
/* File rules for outputs: see safefile.h and docs/SECURITY.md. */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal/open_regular.h"

int sl_dir_kind(const char *dir, char *why, size_t len)
{
	struct stat sb;

	if (stat(dir, &sb) < 0)
		return -1;
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	if ((sb.st_mode & S_IWOTH) && !(sb.st_mode & S_ISVTX)) {
		snprintf(why, len, "directory %s is writable by everyone (mode %04o) without the sticky bit: "
			 "anyone could replace the files in it (chmod o-w or +t)",
			 dir, (unsigned)(sb.st_mode & 07777));
		return SL_DIR_UNSAFE;
	}
	if (sb.st_mode & (S_IWOTH | S_IWGRP)) {
		snprintf(why, len, "directory %s is writable by %s (mode %04o)", dir,
			 sb.st_mode & S_IWOTH ? "everyone" : "its group", (unsigned)(sb.st_mode & 07777));
		return sb.st_mode & S_IWOTH ? SL_DIR_PUBLIC : SL_DIR_GROUP;
	}
	return SL_DIR_PRIVATE;
}

int sl_dir_kind_of(const char *path, char *why, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return sl_dir_kind(".", why, len);
	if (slash == path)
		return sl_dir_kind("/", why, len);
	if ((size_t)(slash - path) >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	return sl_dir_kind(dir, why, len);
}

int sl_open_out(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
	int fl;

	if (fd < 0)
		return -1;
	/* Non-blocking was for the open only (a FIFO without reader). */
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int sl_open_in(const char *path, struct stat *st, char *why, size_t len)
{
	struct stat sb;
	int fd = sl_open_regular(path, &sb, NULL, why, len);

	if (fd >= 0 && st)
		*st = sb;
	return fd;
}

char *sl_read_file(const char *path, size_t max, size_t *size, char *why, size_t len)
{
	struct stat st;
	int fd = sl_open_in(path, &st, why, len);
	size_t got = 0;
	char *buf;

	if (fd < 0)
		return NULL;
	if ((uint64_t)st.st_size > max) {
		snprintf(why, len, "larger than %zu bytes", max);
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		snprintf(why, len, "out of memory");
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	/* Up to the size fstat() saw: a file growing meanwhile is cut there. */
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			snprintf(why, len, "%s", strerror(e));
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*size = got;
	return buf;
}

bool sl_owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

int sl_random_hex(char out[17])
{
	uint64_t v;
	ssize_t n;

	do
		n = getrandom(&v, sizeof(v), 0);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(v)) {
		if (n >= 0)
			errno = EIO;
		return -1;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)v);
	return 0;
}
