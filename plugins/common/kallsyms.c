/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Kernel address -> symbol+offset from /proc/kallsyms (kallsyms.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"

struct sl_ksym {
	uint64_t addr;
	size_t name;	/* offset in names */
};

static int by_addr(const void *a, const void *b)
{
	const struct sl_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* One line "ADDR TYPE NAME[\tMODULE]": its address, the name's start and length. */
static bool parse_line(const char *p, const char *end, uint64_t *addr, const char **name,
		       size_t *nlen)
{
	uint64_t a = 0;
	unsigned digits = 0;

	for (; p < end && *p != ' '; p++, digits++) {
		char c = *p;
		unsigned v = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
			     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
			     c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
		if (v == 16 || digits == 16)
			return false;
		a = a << 4 | v;
	}
	if (!digits || end - p < 4 || p[2] != ' ' || !is_text(p[1]))
		return false;
	p += 3;
	*name = p;
	while (p < end && *p != ' ' && *p != '\t') {
		if ((unsigned char)*p < 0x21 || *p == 0x7f)
			return false;	/* a NUL or control byte: not the kernel's */
		p++;
	}
	*nlen = (size_t)(p - *name);
	*addr = a;
	return *nlen > 0 && *nlen <= 256;
}

int sl_kallsyms_parse(struct sl_kallsyms *k, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, ncap = 0, nused = 0;
	bool nonzero = false;

	memset(k, 0, sizeof(*k));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *name;
		uint64_t addr;
		size_t nlen;

		if (!eol)
			eol = end;
		if (parse_line(p, eol, &addr, &name, &nlen)) {
			if (k->n == cap) {
				void *s = realloc(k->sym, (cap = cap ? cap * 2 : 4096) * sizeof(*k->sym));
				if (!s)
					goto oom;
				k->sym = s;
			}
			if (nused + nlen + 1 > ncap) {
				void *s = realloc(k->names, ncap = (ncap + nlen + 1) * 2);
				if (!s)
					goto oom;
				k->names = s;
			}
			memcpy(k->names + nused, name, nlen);
			k->names[nused + nlen] = 0;
			k->sym[k->n].addr = addr;
			k->sym[k->n++].name = nused;
			nused += nlen + 1;
			nonzero |= addr != 0;
		}
		p = eol + 1;
	}
	if (!nonzero) {
		bool any = k->n != 0;

		sl_kallsyms_free(k);
		errno = any ? EPERM : ENOENT;
		return -1;
	}
	qsort(k->sym, k->n, sizeof(*k->sym), by_addr);
	return 0;
oom:
	sl_kallsyms_free(k);
	errno = ENOMEM;
	return -1;
}

/* /proc/kallsyms has no size: read until the end, doubling the buffer. */
int sl_kallsyms_load(struct sl_kallsyms *k, const char *path)
{
	/* O_NONBLOCK: a FIFO planted at path must not hold the start (checked below) */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	size_t cap = 1 << 20, used = 0;
	char *buf = NULL;
	struct stat sb;
	int ret, err;

	memset(k, 0, sizeof(*k));
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		err = errno;	/* fstat()'s, or 0 when it is not a regular file */
		close(fd);
		errno = err ? err : EINVAL;
		return -1;
	}
	for (;;) {
		ssize_t n;

		if (!buf || used == cap) {
			char *nb = realloc(buf, buf ? (cap *= 2) : cap);
			if (!nb) {
				free(buf);
				close(fd);
				errno = ENOMEM;
				return -1;
			}
			buf = nb;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = errno;
			if (n < 0) {
				free(buf);
				close(fd);
				errno = err;
				return -1;
			}
			break;
		}
		used += (size_t)n;
	}
	close(fd);
	ret = sl_kallsyms_parse(k, buf, used);
	err = errno;
	free(buf);
	errno = err;
	return ret;
}

int sl_kallsyms_format(const struct sl_kallsyms *k, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi = k->n;

	/* the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return snprintf(buf, len, "0x%" PRIx64, addr);
	return snprintf(buf, len, "%s+0x%" PRIx64, k->names + k->sym[lo - 1].name,
			addr - k->sym[lo - 1].addr);
}

void sl_kallsyms_free(struct sl_kallsyms *k)
{
	free(k->sym);
	free(k->names);
	k->sym = NULL;
	k->names = NULL;
	k->n = 0;
}
