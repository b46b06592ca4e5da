/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Opening a file sluice reads by name (the configuration, a file to
 * convert) without ever blocking: a FIFO or a device planted at the name
 * would stop the thread that opens it (docs/SECURITY.md).  The open is
 * non-blocking, then fstat() must show a regular file; anything else is
 * refused with a description of what it is, unless it is the process's own
 * standard input (`-c /dev/stdin` through a pipe: given, not planted).
 * Symbolic links are followed: these names are the admin's, and packaged
 * files are often links.
 * The rule itself is sl_open_regular() (core/include/internal/
 * open_regular.h), which plugins/common/safefile.h's sl_open_in() shares.
 */
#ifndef SLUICE_INFILE_H
#define SLUICE_INFILE_H

#include <stddef.h>
#include <stdio.h>

/*
 * A descriptor (O_CLOEXEC, blocking again) on the regular file path, or -1
 * with errno and the reason (strerror, or "not a regular file (a FIFO)")
 * in why.
 */
int infile_open(const char *path, char *why, size_t len);

/* The same as a FILE for reading ("rb"); NULL with errno and why. */
FILE *infile_fopen(const char *path, char *why, size_t len);

#endif /* SLUICE_INFILE_H */
