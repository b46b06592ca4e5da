/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bytes of one syslog message, and its framing on a byte stream: the
 * syslog output's formatter.  No I/O, no allocation, no syscall per
 * message (localtime_r once per new second, in fmt.c's caches); the
 * transport, queue and spool are the output's.
 *
 * RFC 5424 (SL_SYSLOG_RFC5424):
 *
 *   <PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG
 *
 *   PRI        facility * 8 + severity, in decimal between '<' and '>'
 *   TIMESTAMP  the record's time in RFC 3339 with microseconds and the
 *              local offset (sl_fmt_rfc3339, local mode: "+hh:mm", never "Z"),
 *              clamped to the calendar (time_clamp.h)
 *   HOSTNAME, APP-NAME, PROCID, MSGID
 *              fixed at init (below); "-" (NILVALUE) for an empty one
 *   SD         "-" without an SD-ID or when the record holds none of the
 *              fields below; else one element
 *                [SD-ID src="..." dst="..." proto="6" spt="..." dpt="..." in="..." out="..."]
 *              with the params the record has, in that order: addresses as
 *              sl_fmt_addr_in writes them, numbers in decimal, interface names
 *              as sl_syslog_fmt_sd_value() escapes them; then the rule an
 *              nflog record was attributed to (rule_fields.h), each part it
 *              has: rule_family, rule_table, rule_chain, rule_handle (decimal),
 *              rule_comment, rule_verdict, the strings escaped the same way
 *
 * RFC 3164 (SL_SYSLOG_RFC3164), as rsyslog and the BSD syslog() write it:
 *
 *   <PRI>Mmm dd HH:MM:SS HOSTNAME APP-NAME[PROCID]: MSG
 *
 *   the date in local time, day space-padded (sl_fmt_date3164, clamped the
 *   same way); without "HOSTNAME " when `local` (a unix socket: the local
 *   syslogd puts its own).
 *
 * MSG is the record's SL_F_TEXT, escaped unless the record vouches for it
 * (sl_text_is_safe()) or it needs nothing: control bytes but TAB, DEL and
 * invalid UTF-8 become \xNN (text_escape.h, SL_ESC_KEEP_TAB), so a newline
 * in a text cannot start a forged message.  It gets the room the header
 * leaves and is cut there, on a UTF-8 / escape boundary.
 *
 * Header fields: init copies each, cut to its RFC 5424 length
 * (SL_SYSLOG_*_MAX), every byte outside PRINTUSASCII (33..126) replaced by
 * '_' so the field stays one token, and an empty or NULL one becomes "-".
 * A configured value should be checked first with sl_syslog_fmt_name_ok()
 * (refused rather than rewritten); a machine's own name (gethostname)
 * goes through init as it is.
 *
 * Usage (one struct sl_syslog_fmt per instance, used by one thread):
 *
 *   configure:  sl_syslog_fmt_name_ok(app_name, SL_SYSLOG_APP_NAME_MAX, "") ...
 *   start:      sl_syslog_fmt_init(&f, &conf);
 *   per record: n = sl_syslog_fmt_message(&f, buf, message_size, r, ts, &escaped);
 *               0: the header alone is longer than message_size (drop, count)
 *               dlen = sl_syslog_fmt_frame(framing, n, pre, &lf);
 *               on the wire: pre[0..dlen) buf[0..n) and '\n' if lf
 */
#ifndef SLUICE_SYSLOG_FMT_H
#define SLUICE_SYSLOG_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/record.h>

#include "fmt.h"
#include "rule_fields.h"

/* RFC 5424 6: the longest of each header field, and of an SD-ID / SD-NAME. */
#define SL_SYSLOG_HOSTNAME_MAX 255
#define SL_SYSLOG_APP_NAME_MAX 48
#define SL_SYSLOG_PROCID_MAX 128
#define SL_SYSLOG_MSGID_MAX 32
#define SL_SYSLOG_SD_NAME_MAX 32
/* What an SD-NAME (SD-ID, PARAM-NAME) may not hold beyond PRINTUSASCII's rule. */
#define SL_SYSLOG_SD_NAME_FORBIDDEN "=]\""
/* Escaped interface names are cut to this many bytes before the SD escapes. */
#define SL_SYSLOG_SD_VALUE_MAX 256
/* The longest octet-counting prefix: 20 digits, a space, and scratch room. */
#define SL_SYSLOG_FRAME_MAX 24

/* As the output's `format` option counts them. */
enum sl_syslog_format { SL_SYSLOG_RFC3164, SL_SYSLOG_RFC5424 };

/* RFC 6587 3.4: octet counting ("LEN " before), or LF after; none for datagrams. */
enum sl_syslog_framing { SL_SYSLOG_FRAME_NONE, SL_SYSLOG_FRAME_OCTET, SL_SYSLOG_FRAME_LF };

struct sl_syslog_fmt_conf {
	enum sl_syslog_format format;
	bool local;		/* RFC 3164 to the local syslogd: no HOSTNAME */
	int facility;		/* 0..23 */
	int severity;		/* 0..7 */
	const char *hostname;	/* NULL or "": "-" */
	const char *app_name;
	const char *procid;	/* e.g. the pid in decimal */
	const char *msgid;	/* RFC 5424 only */
	const char *sd_id;	/* RFC 5424 structured data; NULL: none ("-") */
};

/* The caller's (one per instance); init fills it, then only the date caches change. */
struct sl_syslog_fmt {
	enum sl_syslog_format format;
	bool local;
	bool sd;
	uint8_t pri_len;
	char pri[8];				/* "<191>" */
	char hostname[SL_SYSLOG_HOSTNAME_MAX + 1];
	char app_name[SL_SYSLOG_APP_NAME_MAX + 1];
	char procid[SL_SYSLOG_PROCID_MAX + 1];
	char msgid[SL_SYSLOG_MSGID_MAX + 1];
	char sd_id[SL_SYSLOG_SD_NAME_MAX + 1];
	struct sl_rule_fields rule;		/* all -1 after init: set by the caller */
	struct sl_fmt_time_cache tc5424;		/* local time, with the offset */
	struct sl_fmt_date3164_cache tc3164;
};

/*
 * RFC 5424 PRINTUSASCII (33..126), 1..max characters, none of
 * also_forbidden (SL_SYSLOG_SD_NAME_FORBIDDEN for an SD-ID).
 */
bool sl_syslog_fmt_name_ok(const char *s, size_t max, const char *also_forbidden);

/*
 * Fill f from c (fields copied as described above: cut, '_' for bytes
 * outside PRINTUSASCII, "-" when empty; an SD-ID also loses its forbidden
 * bytes to '_').  0, or -1 with errno EINVAL when facility or severity is
 * out of range.
 */
int sl_syslog_fmt_init(struct sl_syslog_fmt *f, const struct sl_syslog_fmt_conf *c);

/*
 * One message for r (which must have SL_F_TEXT) at time ts into buf, cap
 * bytes (the output's message_size; buf is the caller's, not
 * NUL-terminated).  Returns its length, or 0 when the header alone does
 * not fit in cap (buf then holds nothing usable).  *escaped: the text had
 * to be escaped (the output counts those).
 */
size_t sl_syslog_fmt_message(struct sl_syslog_fmt *f, char *buf, size_t cap,
			     const struct sl_record *r, struct sl_time ts, bool *escaped);

/*
 * The SD field for r: "-", or the element described above, with the rule
 * fields `rule` names (NULL: none).  sd_id NULL is "-".  Appends to b
 * (overflow as fmt.h says).
 */
void sl_syslog_fmt_sd(struct sl_fmt_buf *b, const char *sd_id, const struct sl_rule_fields *rule,
		      const struct sl_record *r);

/*
 * An SD-PARAM value (without the quotes): control bytes, DEL and invalid
 * UTF-8 first become \xNN (text_escape.h), cut to SL_SYSLOG_SD_VALUE_MAX
 * bytes on a boundary; then each '"', '\' and ']' gets a '\' before it
 * (RFC 5424 6.3.3), so the value never ends its param or element early.
 */
void sl_syslog_fmt_sd_value(struct sl_fmt_buf *b, const void *raw, size_t n);

/*
 * What goes around a message of n bytes on the wire: the prefix is
 * written at pre (SL_SYSLOG_FRAME_MAX bytes of room: "LEN " with octet
 * counting, nothing else) and its length returned; *lf says whether a
 * '\n' follows the message (LF framing).
 */
size_t sl_syslog_fmt_frame(enum sl_syslog_framing fr, size_t n, char *pre, bool *lf);

#endif /* SLUICE_SYSLOG_FMT_H */
