/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * file output: each record's text field plus a newline, appended to a file
 * (or stdout) through a large buffer, with rotation and SIGHUP reopen.
 *
 * One record is one line whatever plugin made the text: control bytes
 * (but TAB), DEL and invalid UTF-8 are written as \xNN (text_escape.h).
 * logline's and json's text never needs it and comes marked so
 * (sl_set_text_safe): it is copied without the scan.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#include "outfile.h"
#include "text_escape.h"

struct file_cfg {
	const char *file;
	bool sync;
	uint64_t rotate_size;
	uint64_t rotate_interval;
	uint64_t buffer;
	uint64_t flush_interval;
};

struct file_state {
	struct sl_outfile *of;
	const struct sl_host *host;
	struct sl_instance *inst;
	int c_no_text;
	int c_escaped;
};
static const struct sl_option file_opts[] = {
	SL_OPT_STR("file", struct file_cfg, file, SL_REQUIRED,
		   "path to append to; '-' is stdout; a '%' makes it a strftime pattern"),
	SL_OPT_BOOL("sync", struct file_cfg, sync, "false", "fdatasync() after every flush"),
	SL_OPT_SIZE("rotate_size", struct file_cfg, rotate_size, "0", 0, 0,
		    "start a new file before this size is exceeded (0: never)"),
	SL_OPT_DURATION("rotate_interval", struct file_cfg, rotate_interval, "0", 0, 0,
			"start a new file at every multiple of this (0: never)"),
	SL_OPT_SIZE("buffer", struct file_cfg, buffer, "256KiB", 4096, (int64_t)1 << 30,
		    "user-space buffer; written out when full"),
	SL_OPT_DURATION("flush_interval", struct file_cfg, flush_interval, "1s", 0, 3600000,
			"write the buffer out at least this often (0: only when full)"),
	SL_OPT_END
};

static const struct sl_field_decl file_needs[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_END
};

/* Read when present (a queue in front of it copies needs + these). */
static const struct sl_field_decl file_reads[] = {
	SL_FIELD_DECL(SL_F_TEXT_SAFE),
	SL_FIELD_END
};

static int file_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct file_cfg *cfg = config;
	struct sl_outfile_opts o = {
		.path = cfg->file,
		.buffer_size = cfg->buffer,
		.rotate_size = cfg->rotate_size,
		.rotate_interval = cfg->rotate_interval,
		.flush_interval = cfg->flush_interval,
		.sync = cfg->sync,
	};
	struct file_state *st;

	if (sl_outfile_check(host, inst, &o) < 0)
		return -1;
	st = calloc(1, sizeof(*st));
	if (!st) {
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->host = host;
	st->inst = inst;
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

static int file_start(void *state)
{
	struct file_state *st = state;

	return sl_outfile_start(st->of);
}

static int file_process(void *state, struct sl_batch *b)
{
	struct file_state *st = state;
	unsigned i, no_text = 0, escaped = 0;

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
		dst = sl_outfile_reserve(st->of, n + 1);
		if (!dst)
			continue;	/* counted in dropped_records */
		if (esc) {
			sl_esc_write((char *)dst, n, t->ptr, t->len, SL_ESC_KEEP_TAB, NULL);
			escaped++;
		} else {
			memcpy(dst, t->ptr, n);
		}
		dst[n] = '\n';
		sl_outfile_commit(st->of, n + 1);
	}
	if (no_text) {
		st->host->counter_add(st->inst, st->c_no_text, no_text);
		st->host->dropped_add(st->inst, no_text);
	}
	if (escaped)
		st->host->counter_add(st->inst, st->c_escaped, escaped);
	return 0;
}

static int file_flush(void *state)
{
	struct file_state *st = state;

	return sl_outfile_flush(st->of);
}

static int file_reopen(void *state)
{
	struct file_state *st = state;

	return sl_outfile_reopen(st->of);
}

static void file_stop(void *state)
{
	struct file_state *st = state;

	sl_outfile_stop(st->of);
}

static void file_destroy(void *state)
{
	struct file_state *st = state;

	if (!st)
		return;
	sl_outfile_free(st->of);
	free(st);
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
	.start = file_start,
	.process = file_process,
	.flush = file_flush,
	.reopen = file_reopen,
	.stop = file_stop,
	.destroy = file_destroy,
};

SLUICE_PLUGIN(file_plugin)
