/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Strict mode's allocation count: the daemon's executable defines
 * malloc(), calloc() and realloc(), which every library and plugin then
 * calls (the executable comes first in symbol lookup), and hands each to
 * glibc's own.  Outside strict mode's process() calls the cost is one
 * thread-local test.  Linked into the daemon only, never into sanitizer
 * builds (whose runtimes own these symbols).
 */
#include <stddef.h>
#include <stdlib.h>

#include "strict.h"

/* strict.c tells whether allocations are counted in this build. */
extern const bool strict_malloc_linked;
const bool strict_malloc_linked = true;

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);

void *malloc(size_t n)
{
	if (__builtin_expect(strict_counting, 0))
		strict_mallocs++;
	return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
	if (__builtin_expect(strict_counting, 0))
		strict_mallocs++;
	return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
	if (__builtin_expect(strict_counting, 0))
		strict_mallocs++;
	return __libc_realloc(p, n);
}
