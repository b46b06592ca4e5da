/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The syslog header of the file output's lines (see line_header.h). */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "line_header.h"

/* Printable ASCII but space: what a syslog header field may hold. */
static const char *check_word(const char *s, size_t max, const char *extra_bad)
{
	size_t n = strlen(s);

	if (!n)
		return "is empty";
	if (n > max)
		return "is too long";
	for (; *s; s++) {
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return "holds a space, a control byte or a non-ASCII byte";
		if (strchr(extra_bad, *s))
			return "holds a ':' (the header ends the tag with one)";
	}
	return NULL;
}

const char *sl_line_header_check_host(const char *host)
{
	return host ? check_word(host, SL_LH_HOST_MAX, "") : NULL;
}

/* An empty tag is no tag: "host line", as ulogd's LOGEMU writes. */
const char *sl_line_header_check_tag(const char *tag)
{
	return *tag ? check_word(tag, SL_LH_TAG_MAX, ":") : NULL;
}

int sl_line_header_init(struct sl_line_header *h, enum sl_line_header_style style, const char *host,
		     const char *tag, bool uptime)
{
	char name[SL_LH_HOST_MAX + 1];
	char *p;

	memset(h, 0, sizeof(*h));
	h->style = style;
	h->uptime = uptime;
	if (!host) {
		if (gethostname(name, sizeof(name)) < 0)
			return -1;
		name[sizeof(name) - 1] = 0;
		p = strchr(name, '.');
		if (p)
			*p = 0;
		if (sl_line_header_check_host(name)) {
			errno = EINVAL;
			return -1;
		}
		host = name;
	}
	p = h->rest;
	*p++ = ' ';
	memcpy(p, host, strlen(host));
	p += strlen(host);
	*p++ = ' ';
	if (*tag) {
		memcpy(p, tag, strlen(tag));
		p += strlen(tag);
		*p++ = ':';
		*p++ = ' ';
	}
	h->rest_len = (size_t)(p - h->rest);
	/* Both read together; the pair's skew is far below a microsecond. */
	h->boot_ns = sl_clock_ns(CLOCK_REALTIME) - sl_clock_ns(CLOCK_MONOTONIC);
	tzset();
	sl_fmt_time_cache_init(&h->d3339, true);
	return 0;
}

/* "[%5lu.%06lu] " of ns nanoseconds, as the kernel's print_time(). */
static char *uptime_stamp(char *p, int64_t ns)
{
	uint64_t sec, us;
	char digits[20];
	int n = 0;

	if (ns < 0)
		ns = 0;
	sec = (uint64_t)ns / 1000000000;
	us = (uint64_t)ns % 1000000000 / 1000;
	do {
		digits[n++] = (char)('0' + sec % 10);
		sec /= 10;
	} while (sec);
	*p++ = '[';
	for (int pad = n; pad < 5; pad++)
		*p++ = ' ';
	while (n)
		*p++ = digits[--n];
	*p++ = '.';
	for (int i = 5; i >= 0; i--) {
		p[i] = (char)('0' + us % 10);
		us /= 10;
	}
	p += 6;
	*p++ = ']';
	*p++ = ' ';
	return p;
}

size_t sl_line_header_write(struct sl_line_header *h, char *p, struct sl_time t)
{
	char *start = p;

	if (h->style == SL_LH_SYSLOG)
		p = sl_fmt_date3164_raw(p, &h->d3164, t.sec);
	else
		p = sl_fmt_rfc3339_raw(p, &h->d3339, t);
	memcpy(p, h->rest, h->rest_len);
	p += h->rest_len;
	if (h->uptime) {
		/* 0..9e9 s: no overflow in ns (a corrupt capture's time) */
		int64_t sec = t.sec < 0 ? 0 : t.sec > 9000000000LL ? 9000000000LL : t.sec;

		p = uptime_stamp(p, sec * 1000000000 + (int64_t)t.nsec - h->boot_ns);
	}
	return (size_t)(p - start);
}
