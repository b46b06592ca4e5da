/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * file output: each record's text field plus a newline, appended to a file
 * (or stdout) through a large buffer, with rotation and SIGHUP reopen.
 *
 * One record is one line whatever plugin made the text: control bytes
 * (but TAB), DEL and invalid UTF-8 are written as \xNN (text_escape.h).
 * logline's and json's text never needs it and comes marked so
 * (sl_set_text_safe): it is copied without the scan.
 *
 * line_header puts a syslog header before every line, whatever made the
 * text (packet lines, conntrack lines, JSON): the file then reads like
 * rsyslog's kern.log (line_header.h).  Its time is the record's
 * timestamp, else its flow_end, else the time the batch reached the
 * output (one clock read per such batch).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "line_header.h"
#include "outfile.h"
#include "text_escape.h"

struct file_cfg {
	const char *file;
	struct sl_outfile_cfg out;
	int line_header;
	const char *header_host;
	const char *header_tag;
	bool header_uptime;
};

static const char *const line_header_names[] = { "none", "syslog", "rfc3339", NULL };

struct file_state {
	SL_OUTFILE_STATE_HEAD(struct file_cfg);
	int c_no_text;
	int c_escaped;
	struct sl_line_header hdr;		/* style SL_LH_NONE: no header */
};
static const struct sl_option file_opts[] = {
	SL_OPT_STR("file", struct file_cfg, file, SL_PATH_REQUIRED(SL_OPT_OUT_FILE),
		   "path to append to; '-' is stdout; a '%' makes it a strftime pattern"),
	SL_OUTFILE_OPTIONS(struct file_cfg, out, "256KiB", 4096),
	SL_OPT_ENUM("line_header", struct file_cfg, line_header, "none", line_header_names,
		    "syslog header before each line, as rsyslog writes files: syslog "
		    "('Dec  1 05:53:27 host tag: '), rfc3339 "
		    "('2026-12-01T05:53:27.175145+01:00 host tag: '); local time of the record"),
	SL_OPT_STR("header_host", struct file_cfg, header_host, NULL,
		   "host name in the header (default: this machine's, up to the first '.')"),
	SL_OPT_STR("header_tag", struct file_cfg, header_tag, "kernel",
		   "syslog tag in the header, written with a ':' after it"),
	SL_OPT_BOOL("header_uptime", struct file_cfg, header_uptime, "false",
		    "the kernel's '[seconds.micro]' uptime stamp after the tag, as in kern.log"),
	SL_OPT_END
};

static const struct sl_field_decl file_needs[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_END
};

/* Read when present (a queue in front of it copies needs + these). */
static const struct sl_field_decl file_reads[] = {
	SL_FIELD_DECL(SL_F_TEXT_SAFE),
	SL_FIELD_DECL(SL_F_TIMESTAMP),	/* line_header's time */
	SL_FIELD_DECL(SL_F_FLOW_END),
	SL_FIELD_END
};

/* The header options: written only with a header, and valid in one. */
static int check_header(const struct sl_host *host, struct sl_instance *inst,
			const struct file_cfg *cfg)
{
	const char *why;

	if (cfg->line_header == SL_LH_NONE) {
		const char *set = cfg->header_host ? "header_host" :
				  strcmp(cfg->header_tag, "kernel") ? "header_tag" :
				  cfg->header_uptime ? "header_uptime" : NULL;

		if (set) {
			host->config_error(inst, set, "needs a line_header (syslog or rfc3339)");
			return -1;
		}
		return 0;
	}
	why = sl_line_header_check_host(cfg->header_host);
	if (why) {
		host->config_error(inst, "header_host", "the host name %s", why);
		return -1;
	}
	why = sl_line_header_check_tag(cfg->header_tag);
	if (why) {
		host->config_error(inst, "header_tag", "the tag %s (at most %d printable bytes)",
				   why, SL_LH_TAG_MAX);
		return -1;
	}
	return 0;
}

static int file_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct file_cfg *cfg = config;
	struct sl_outfile_opts o = sl_outfile_opts_of(cfg->file, &cfg->out);
	struct file_state *st;

	if (sl_outfile_check(host, inst, &o) < 0 || check_header(host, inst, cfg) < 0)
		return -1;
	st = sl_outfile_state_new(struct file_state, host, inst, config);
	if (!st)
		return -1;
	if (cfg->line_header != SL_LH_NONE &&
	    sl_line_header_init(&st->hdr, cfg->line_header, cfg->header_host, cfg->header_tag,
			     cfg->header_uptime) < 0) {
		host->config_error(inst, "line_header", "cannot read this machine's host name "
				   "(%s); set header_host", strerror(errno));
		free(st);
		return -1;
	}
	st->of = sl_outfile_new(host, inst, &o);
	if (!st->of) {
		free(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->c_no_text = host->counter_new(inst, "no_text");
	st->c_escaped = host->counter_new(inst, "escaped");
	*state = st;
	return 0;
}

/* The time a line's header shows; now is read once per batch that needs it. */
static struct sl_time header_time(const struct sl_record *r, struct sl_time *now)
{
	if (sl_has(r, SL_F_TIMESTAMP))
		return r->v[SL_F_TIMESTAMP].time;
	if (sl_has(r, SL_F_FLOW_END))
		return r->v[SL_F_FLOW_END].time;
	if (!now->sec)
		*now = sl_clock_time(CLOCK_REALTIME);
	return *now;
}

static int file_process(void *state, struct sl_batch *b)
{
	struct file_state *st = state;
	struct sl_time now = { 0, 0 };
	unsigned i, no_text = 0, escaped = 0;
	char hdr[SL_LH_MAX];
	size_t hlen = 0;

	for (i = 0; i < b->count; i++) {
		const struct sl_record *r = b->rec[i];
		const struct sl_bytes *t = &r->v[SL_F_TEXT].bytes;
		size_t n = t->len;
		bool esc;
		uint8_t *dst;

		if (!sl_has(r, SL_F_TEXT)) {
			no_text++;
			continue;
		}
		esc = !sl_text_is_safe(r) && sl_esc_scan(t->ptr, n, SL_ESC_KEEP_TAB) < n;
		if (esc)
			n = sl_esc_len(t->ptr, n, SL_ESC_KEEP_TAB);
		if (st->hdr.style != SL_LH_NONE)
			hlen = sl_line_header_write(&st->hdr, hdr, header_time(r, &now));
		dst = sl_outfile_reserve(st->of, hlen + n + 1);
		if (!dst)
			continue;	/* counted in dropped_records */
		memcpy(dst, hdr, hlen);
		dst += hlen;
		if (esc) {
			sl_esc_write((char *)dst, n, t->ptr, t->len, SL_ESC_KEEP_TAB, NULL);
			escaped++;
		} else {
			memcpy(dst, t->ptr, n);
		}
		dst[n] = '\n';
		sl_outfile_commit(st->of, hlen + n + 1);
	}
	if (no_text) {
		st->host->counter_add(st->inst, st->c_no_text, no_text);
		st->host->dropped_add(st->inst, no_text);
	}
	if (escaped)
		st->host->counter_add(st->inst, st->c_escaped, escaped);
	return 0;
}

static const struct sl_plugin file_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "file",
	.description = "append each record's text as a line to a file, with rotation",
	.config_size = sizeof(struct file_cfg),
	.options = file_opts,
	.needs = file_needs,
	.reads = file_reads,
	.configure = file_configure,
	.start = sl_outfile_plugin_start,
	.process = file_process,
	.flush = sl_outfile_plugin_flush,
	.reopen = sl_outfile_plugin_reopen,
	.stop = sl_outfile_plugin_stop,
	.destroy = sl_outfile_plugin_destroy,
};

SLUICE_PLUGIN(file_plugin)
