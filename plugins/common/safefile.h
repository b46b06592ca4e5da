/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The file rules of every output that writes files (docs/SECURITY.md):
 *
 *   - Never write through a symbolic link: every open adds O_NOFOLLOW (a
 *     link at the name fails with ELOOP) and O_CLOEXEC.  O_NONBLOCK is set
 *     for the open only, so a FIFO planted at the name fails with ENXIO
 *     instead of blocking the daemon.
 *   - A directory that others (S_IWOTH) can write to must have the sticky
 *     bit (like /tmp), or the output is refused.  A group-writable
 *     directory is allowed: the admin trusted that group with it.
 *   - In a directory everyone can write to (sticky) an existing file is
 *     used only when it belongs to the daemon's user or to root: never
 *     append to a file someone else planted for us.
 *   - Temporary files are created with O_EXCL under random names.
 */
#ifndef SLUICE_SAFEFILE_H
#define SLUICE_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum sl_dir_kind {
	SL_DIR_PRIVATE,		/* only its owner can write to it */
	SL_DIR_GROUP,		/* its group can write to it too */
	SL_DIR_PUBLIC,		/* everyone can, and it is sticky (/tmp) */
	SL_DIR_UNSAFE,		/* everyone can, not sticky: refused */
};

/*
 * What kind of directory dir is; except for SL_DIR_PRIVATE a description
 * naming the directory goes to why.  -1 with errno when it cannot be
 * looked at.
 */
int sl_dir_kind(const char *dir, char *why, size_t len);

/* The same for the directory the file path is (or would be) in. */
int sl_dir_kind_of(const char *path, char *why, size_t len);

/* open(2) with the rules above added to flags.  -1 with errno. */
int sl_open_out(const char *path, int flags, mode_t mode);

/*
 * Files read by name (databases, certificates, keys, captures) are opened
 * without blocking too: O_NONBLOCK for the open, then fstat() must show a
 * regular file, so a FIFO or device planted at the name is refused instead
 * of stopping the thread that opens it.  Symbolic links are followed (the
 * admin names these files; packaged ones are often links).
 *
 * The rule is sl_open_regular() (core/include/internal/open_regular.h),
 * which the core's infile.c shares.
 *
 * sl_open_in: a descriptor (O_CLOEXEC, blocking again) on the regular file
 * path, its stat in st if not NULL; -1 with errno and the reason in why
 * (strerror, or "not a regular file (a FIFO)").
 */
int sl_open_in(const char *path, struct stat *st, char *why, size_t len);

/*
 * sl_read_file: the whole regular file path (at most max bytes) in a
 * malloc'd buffer with a NUL after its *size bytes; NULL with errno and why.
 */
char *sl_read_file(const char *path, size_t max, size_t *size, char *why, size_t len);

/* Is this existing file one we may use in an SL_DIR_PUBLIC directory? */
bool sl_owner_ok(const struct stat *st);

/* 16 random hex digits and a NUL into out (17 bytes).  -1 with errno. */
int sl_random_hex(char out[17]);

#endif /* SLUICE_SAFEFILE_H */
