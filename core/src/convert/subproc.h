/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Running a helper program (nft, sluice -t) for the converters, without a
 * shell: posix_spawnp, its stdout captured or passed through, its stderr
 * shared with ours.
 */
#ifndef SLUICE_SUBPROC_H
#define SLUICE_SUBPROC_H

#include <stddef.h>

/*
 * Run argv[0] (searched in PATH) with argv and wait for it.  With `out`,
 * its stdout is read into a NUL-terminated malloc'd buffer (*out, *outlen);
 * with `quiet`, its stdout goes to /dev/null.  Returns its exit status,
 * 128+N when killed by signal N, or -1 (with a message in err) when it
 * could not run.
 */
int subproc_run(char *const argv[], char **out, size_t *outlen, int quiet, char *err,
	      size_t errlen);

#endif
