/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The syslog header the file output can put before each line, as rsyslog
 * writes its files, so tools that read /var/log/kern.log (psad, fail2ban,
 * logwatch) read sluice's file the same way:
 *
 *   syslog   RSYSLOG_TraditionalFileFormat  "Dec  1 05:53:27 fw kernel: "
 *   rfc3339  RSYSLOG_FileFormat  "2026-12-01T05:53:27.175145+01:00 fw kernel: "
 *
 * both in the local time zone (TZ as tzset() read it at start, with the
 * offset of the record's own second, so DST changes are followed), from
 * the record's time, not the write time.  With `uptime` the kernel's
 * printk stamp follows the tag: "kernel: [ 1234.567890] ", "[%5lu.%06lu]"
 * as the kernel prints it.  It is the record's time minus the boot time,
 * CLOCK_REALTIME minus CLOCK_MONOTONIC read once at init: printk's clock
 * (local_clock) does not run during suspend, as CLOCK_MONOTONIC does not
 * (CLOCK_BOOTTIME does).  A record older than this boot (a replayed
 * capture) gets [    0.000000].
 *
 * The date is formatted once per second of record time (fmt.h caches);
 * host and tag are copied from a prefix built at init.  No syscall or
 * allocation per line.
 */
#ifndef SLUICE_LINE_HEADER_H
#define SLUICE_LINE_HEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#include "fmt.h"

enum sl_line_header_style { SL_LH_NONE, SL_LH_SYSLOG, SL_LH_RFC3339 };

#define SL_LH_HOST_MAX 255
#define SL_LH_TAG_MAX 32		/* rsyslog's limit for a tag */
/* date 32 + ' ' + host + ' ' + tag + ": " + "[" 5+ "." 6 "] " (seconds up to 20 digits) */
#define SL_LH_MAX (SL_FMT_RFC3339_MAX + 1 + SL_LH_HOST_MAX + 1 + SL_LH_TAG_MAX + 2 + 32)

struct sl_line_header {
	enum sl_line_header_style style;
	bool uptime;
	int64_t boot_ns;		/* CLOCK_REALTIME - CLOCK_MONOTONIC at init */
	size_t rest_len;
	char rest[1 + SL_LH_HOST_MAX + 1 + SL_LH_TAG_MAX + 2];	/* " host tag: " */
	struct sl_fmt_date3164_cache d3164;
	struct sl_fmt_time_cache d3339;
};

/*
 * Why host or tag cannot be written in a header (a space, a control byte,
 * too long), or NULL when they can.  host NULL: this machine's name.
 */
const char *sl_line_header_check_host(const char *host);
const char *sl_line_header_check_tag(const char *tag);

/*
 * host NULL: gethostname() up to the first '.', as rsyslog's %HOSTNAME%
 * shows local messages (without $PreserveFQDN).  Reads the clocks.
 * 0, or -1 when the host name cannot be read (errno set).
 */
int sl_line_header_init(struct sl_line_header *h, enum sl_line_header_style style, const char *host,
		     const char *tag, bool uptime);

/* Writes the header for time t at p (room for SL_LH_MAX bytes); its length. */
size_t sl_line_header_write(struct sl_line_header *h, char *p, struct sl_time t);

#endif /* SLUICE_LINE_HEADER_H */
