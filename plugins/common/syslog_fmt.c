/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The bytes of one syslog message (see syslog_fmt.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "syslog_fmt.h"
#include "text_escape.h"

bool sl_syslog_fmt_name_ok(const char *s, size_t max, const char *also_forbidden)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s < 33 || (unsigned char)*s > 126 || strchr(also_forbidden, *s))
			return false;
	return true;
}

/* s as one header token of at most max bytes in dst (max + 1 bytes). */
static void token(char *dst, size_t max, const char *s, const char *also_forbidden)
{
	size_t i;

	for (i = 0; s && s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		dst[i] = c < 33 || c > 126 || strchr(also_forbidden, c) ? '_' : (char)c;
	}
	if (!i)
		dst[i++] = '-';	/* NILVALUE */
	dst[i] = 0;
}

int sl_syslog_fmt_init(struct sl_syslog_fmt *f, const struct sl_syslog_fmt_conf *c)
{
	if (c->facility < 0 || c->facility > 23 || c->severity < 0 || c->severity > 7) {
		errno = EINVAL;
		return -1;
	}
	memset(f, 0, sizeof(*f));
	f->format = c->format;
	f->local = c->local;
	f->sd = c->sd_id != NULL;
	f->rule = (struct sl_rule_fields)SL_RULE_FIELDS_NONE;
	f->pri_len = (uint8_t)snprintf(f->pri, sizeof(f->pri), "<%d>", c->facility * 8 + c->severity);
	token(f->hostname, SL_SYSLOG_HOSTNAME_MAX, c->hostname, "");
	token(f->app_name, SL_SYSLOG_APP_NAME_MAX, c->app_name, "");
	token(f->procid, SL_SYSLOG_PROCID_MAX, c->procid, "");
	token(f->msgid, SL_SYSLOG_MSGID_MAX, c->msgid, "");
	token(f->sd_id, SL_SYSLOG_SD_NAME_MAX, c->sd_id, SL_SYSLOG_SD_NAME_FORBIDDEN);
	sl_fmt_time_cache_init(&f->tc5424, true);
	return 0;
}

void sl_syslog_fmt_sd_value(struct sl_fmt_buf *b, const void *raw, size_t rn)
{
	char s[SL_SYSLOG_SD_VALUE_MAX];
	size_t i, n = sl_esc_write(s, sizeof(s), raw, rn, 0, NULL);

	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\' || s[i] == ']')
			sl_fmt_chr(b, '\\');
		sl_fmt_chr(b, s[i]);
	}
}

static void sd_param(struct sl_fmt_buf *b, bool *open, const char *sd_id, const char *name)
{
	if (!*open) {
		sl_fmt_chr(b, '[');
		sl_fmt_str(b, sd_id);
		*open = true;
	}
	sl_fmt_chr(b, ' ');
	sl_fmt_str(b, name);
	sl_fmt_lit(b, "=\"");
}

/* The rule's params (sl_syslog_fmt_sd's element is open or not yet). */
static void sd_rule(struct sl_fmt_buf *b, bool *open, const char *sd_id,
		    const struct sl_rule_fields *rf, const struct sl_record *r)
{
	static const char *const names[] = {
		"rule_family", "rule_table", "rule_chain", "rule_handle", "rule_comment", "rule_verdict",
	};
	const int ids[] = { rf->family, rf->table, rf->chain, rf->handle, rf->comment, rf->verdict };
	const unsigned handle = 3;	/* the one number */

	for (unsigned i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (ids[i] < 0 || !sl_has(r, (sl_field)ids[i]))
			continue;
		sd_param(b, open, sd_id, names[i]);
		if (i == handle)
			sl_fmt_u64(b, r->v[ids[i]].u64);
		else
			sl_syslog_fmt_sd_value(b, r->v[ids[i]].bytes.ptr, r->v[ids[i]].bytes.len);
		sl_fmt_chr(b, '"');
	}
}

void sl_syslog_fmt_sd(struct sl_fmt_buf *b, const char *sd_id, const struct sl_rule_fields *rule,
		      const struct sl_record *r)
{
	static const struct {
		sl_field f;
		const char *name;
		bool str;
	} params[] = {
		{ SL_F_SRC_ADDR, "src", false },	{ SL_F_DST_ADDR, "dst", false },
		{ SL_F_IP_PROTO, "proto", false },	{ SL_F_SPORT, "spt", false },
		{ SL_F_DPORT, "dpt", false },		{ SL_F_IFNAME_IN, "in", true },
		{ SL_F_IFNAME_OUT, "out", true },
	};
	bool open = false;
	unsigned i;

	for (i = 0; sd_id && i < sizeof(params) / sizeof(params[0]); i++) {
		sl_field f = params[i].f;

		if (!sl_has(r, f))
			continue;
		sd_param(b, &open, sd_id, params[i].name);
		if (params[i].str)
			sl_syslog_fmt_sd_value(b, r->v[f].bytes.ptr, r->v[f].bytes.len);
		else if (f == SL_F_SRC_ADDR || f == SL_F_DST_ADDR)
			sl_fmt_addr_in(b, r->v[f].addr, sl_fmt_rec_v6(r));
		else
			sl_fmt_u64(b, r->v[f].u64);
		sl_fmt_chr(b, '"');
	}
	if (sd_id && rule)
		sd_rule(b, &open, sd_id, rule, r);
	if (open)
		sl_fmt_chr(b, ']');
	else
		sl_fmt_chr(b, '-');
}

static void header(struct sl_syslog_fmt *f, struct sl_fmt_buf *b, const struct sl_record *r,
		   struct sl_time ts)
{
	sl_fmt_mem(b, f->pri, f->pri_len);
	if (f->format == SL_SYSLOG_RFC5424) {
		sl_fmt_lit(b, "1 ");
		sl_fmt_rfc3339(b, &f->tc5424, ts);
		sl_fmt_chr(b, ' ');
		sl_fmt_str(b, f->hostname);
		sl_fmt_chr(b, ' ');
		sl_fmt_str(b, f->app_name);
		sl_fmt_chr(b, ' ');
		sl_fmt_str(b, f->procid);
		sl_fmt_chr(b, ' ');
		sl_fmt_str(b, f->msgid);
		sl_fmt_chr(b, ' ');
		sl_syslog_fmt_sd(b, f->sd ? f->sd_id : NULL, &f->rule, r);
		sl_fmt_chr(b, ' ');
	} else {
		sl_fmt_date3164(b, &f->tc3164, ts.sec);
		sl_fmt_chr(b, ' ');
		if (!f->local) {	/* local syslogd adds its own */
			sl_fmt_str(b, f->hostname);
			sl_fmt_chr(b, ' ');
		}
		sl_fmt_str(b, f->app_name);
		sl_fmt_chr(b, '[');
		sl_fmt_str(b, f->procid);
		sl_fmt_lit(b, "]: ");
	}
}

size_t sl_syslog_fmt_message(struct sl_syslog_fmt *f, char *buf, size_t cap,
			     const struct sl_record *r, struct sl_time ts, bool *escaped)
{
	const struct sl_bytes *text = &r->v[SL_F_TEXT].bytes;
	struct sl_fmt_buf b;
	size_t room, n;
	bool clean;

	*escaped = false;
	sl_fmt_init(&b, buf, cap);
	header(f, &b, r, ts);
	if (b.overflow)
		return 0;
	/*
	 * The text gets what is left, escaped: whatever plugin made it, a
	 * newline must not start a forged message (LF framing, receivers
	 * writing lines) nor ESC reach a terminal.  Text logline or json
	 * vouched for (sl_set_text_safe) is copied without the scan.
	 */
	room = b.cap - b.len;
	clean = sl_text_is_safe(r) || sl_esc_scan(text->ptr, text->len, SL_ESC_KEEP_TAB) == text->len;
	if (clean && text->len <= room) {
		n = text->len;
		memcpy(b.p + b.len, text->ptr, n);
	} else {	/* escaped, or cut but not inside a UTF-8 sequence */
		n = sl_esc_write(b.p + b.len, room, text->ptr, text->len, SL_ESC_KEEP_TAB, NULL);
		*escaped = !clean;
	}
	return b.len + n;
}

size_t sl_syslog_fmt_frame(enum sl_syslog_framing fr, size_t n, char *pre, bool *lf)
{
	size_t len = 0;

	*lf = fr == SL_SYSLOG_FRAME_LF;
	if (fr == SL_SYSLOG_FRAME_OCTET) {
		len = (size_t)(sl_fmt_u64_raw(pre, n) - pre);
		pre[len++] = ' ';
	}
	return len;
}
