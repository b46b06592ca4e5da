/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A buffered, rotating output file shared by the file and pcap outputs.
 *
 * Records are copied into one large user-space buffer that goes to the file
 * with write() when it is full, on the periodic flush timer, on flush() and
 * before rotating: never a syscall per record.
 *
 * Naming and rotation (what logrotate and tcpdump users expect):
 *   - "-" is stdout: never rotated or reopened.
 *   - A path without '%' is the live file, always at that name (tail -F and
 *     log shippers keep working).  Rotating renames it to
 *     PATH.YYYYMMDDTHHMMSS, the local time the file was started (like
 *     logrotate's dateext), with ".1", ".2"... added on a clash, then opens
 *     a fresh PATH.
 *   - A path with '%' is a strftime(3) pattern (like tcpdump -G -w):
 *     every file is named by the local time it was started; when that
 *     name is taken at rotation, ".1", ".2"... go before the extension
 *     (cap-%H%M.pcap -> cap-2215.1.pcap).
 *   rotate_size starts a new file before a record would make it larger than
 *   that; rotate_interval starts one at every multiple of the interval in
 *   local time (e.g. on the hour for 1h) when intervals divide a day.
 *   Files are opened O_APPEND (mode 0640 before umask); reopen() (SIGHUP)
 *   reopens the same name after logrotate moved the file away.  Every open
 *   follows the rules of safefile.h: never through a symbolic link, never
 *   in a directory everyone can write to without the sticky bit (refused
 *   and counted like an open error); rotation never replaces a name.
 *
 * Write errors (ENOSPC, EIO ...) are counted with host->error_add and logged
 * at most every 10 s; the data stays in the buffer and is retried by the
 * flush timer.  When the buffer is full, new records are dropped and counted
 * in the named counters dropped_records and dropped_bytes.  Nothing here
 * ever exits.
 *
 * Records are all-or-nothing: every commit() is one record, and the buffer
 * keeps where each ends (so it is also full at buffer_size/32 records).  A
 * write that fails after part of a record went out is cut back with
 * ftruncate to the last whole record, and that record is retried whole, in
 * the same file or, after a reopen, the next one: a file is its header
 * (written whole, or the file is cut back to empty) and whole records.
 * Only a pipe or device, which cannot be cut, gets the rest of a torn
 * record later on the same descriptor (and loses it if that closes).  Every
 * record lost, also at stop, is counted in dropped_records and reported
 * with host->dropped_add.  A file found at start (or reopen) that ends
 * inside a record is cut back to its last whole one first (whole_end).
 */
#ifndef SLUICE_OUTFILE_H
#define SLUICE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sluice/plugin.h>

#include "plugin_state.h"

struct sl_outfile_opts {
	const char *path;		/* "-": stdout; with '%': strftime pattern */
	uint64_t buffer_size;		/* bytes */
	uint64_t rotate_size;		/* bytes, 0: never */
	uint64_t rotate_interval;	/* ms, 0: never */
	uint64_t flush_interval;	/* ms, 0: only when full / on flush() */
	bool sync;			/* fdatasync() after each flush */
	/*
	 * An existing file appended to (after a restart) may end inside a
	 * record: kill -9 or a power cut can stop a write() part-way.
	 * whole_end(p, len) returns how many of the len bytes after the header
	 * are whole records; the rest is cut off before anything is appended,
	 * so a restart never glues a new record onto a torn one.  NULL: text,
	 * whole up to the last newline.
	 */
	size_t (*whole_end)(const uint8_t *p, size_t len);
	/*
	 * 0: the header (sl_outfile_set_header) starts every new file, and an
	 * existing file is ours when it starts with all of it.  Otherwise a
	 * file of sections (pcapng): the header is the current section, which
	 * may grow while running; it starts every opening of a file, also of
	 * one appended to (after its torn tail is cut), and an existing file
	 * is ours when it starts with the header's first header_key bytes,
	 * the part every section shares; whole_end reads from there.
	 */
	size_t header_key;
};

struct sl_outfile;

/*
 * The options every output writing an outfile has besides its path (file,
 * pcap): a struct sl_outfile_cfg member of its config, and the rows
 * SL_OUTFILE_OPTIONS(config type, member, buffer default, buffer minimum)
 * for its option table.
 */
struct sl_outfile_cfg {
	bool sync;
	uint64_t rotate_size;
	uint64_t rotate_interval;
	uint64_t buffer;
	uint64_t flush_interval;
};

#define SL_OUTFILE_OPTIONS(st, mem, buffer_def, buffer_min)                                       \
	SL_OPT_BOOL("sync", st, mem.sync, "false", "fdatasync() after every flush"),               \
	SL_OPT_SIZE("rotate_size", st, mem.rotate_size, "0", 0, 0,                                 \
		    "start a new file before this size is exceeded (0: never)"),                   \
	SL_OPT_DURATION("rotate_interval", st, mem.rotate_interval, "0", 0, 0,                     \
			"start a new file at every multiple of this (0: never)"),                  \
	SL_OPT_SIZE("buffer", st, mem.buffer, buffer_def, buffer_min, (int64_t)1 << 30,            \
		    "user-space buffer; written out when full"),                                    \
	SL_OPT_DURATION("flush_interval", st, mem.flush_interval, "1s", 0, 3600000,                \
			"write the buffer out at least this often (0: only when full)")

/* The outfile's options from the path and those options (whole_end left NULL). */
static inline struct sl_outfile_opts sl_outfile_opts_of(const char *path,
							 const struct sl_outfile_cfg *c)
{
	struct sl_outfile_opts o = {
		.path = path,
		.buffer_size = c->buffer,
		.rotate_size = c->rotate_size,
		.rotate_interval = c->rotate_interval,
		.flush_interval = c->flush_interval,
		.sync = c->sync,
	};

	return o;
}

/* For configure(): check the options (reports with config_error). */
int sl_outfile_check(const struct sl_host *host, struct sl_instance *inst,
		     const struct sl_outfile_opts *o);

/*
 * For configure(): no I/O.  Creates the counters; NULL on ENOMEM.
 * The outfile owns its timers (their context is the outfile itself), so
 * it can sit anywhere in the plugin's state.
 */
struct sl_outfile *sl_outfile_new(const struct sl_host *host, struct sl_instance *inst,
				  const struct sl_outfile_opts *o);

/*
 * Bytes every new (empty) file starts with, e.g. the pcap file header.
 * An existing file that does not start with them is moved aside.  Copied;
 * may be called again while running (header_key: the next opening writes
 * the new one), without allocating when no longer than a header set
 * before.
 */
int sl_outfile_set_header(struct sl_outfile *of, const void *hdr, size_t len);

/* For start(): allocate the buffer, open the file, arm the timers. */
int sl_outfile_start(struct sl_outfile *of);

/*
 * Room for one record of n bytes (rotating first if the size limit asks for
 * it); write the record there and call sl_outfile_commit(of, n) once, with
 * the whole record.  NULL when the record cannot be kept: it is then
 * already counted as dropped.
 */
void *sl_outfile_reserve(struct sl_outfile *of, size_t n);
void sl_outfile_commit(struct sl_outfile *of, size_t n);

/* Reserve + copy + commit.  0, or -1 (dropped and counted). */
int sl_outfile_write(struct sl_outfile *of, const void *p, size_t n);

/* Write the buffer out now.  0 when it is empty afterwards, else -1. */
int sl_outfile_flush(struct sl_outfile *of);

/* SIGHUP: flush, close and open the file by its name again. */
int sl_outfile_reopen(struct sl_outfile *of);

/* Flush what can be flushed, close, stop the timers. */
void sl_outfile_stop(struct sl_outfile *of);
void sl_outfile_free(struct sl_outfile *of);

/*
 * An output whose state begins with SL_OUTFILE_STATE_HEAD (SL_STATE_HEAD,
 * then its outfile) and is allocated by sl_outfile_state_new() (a zeroed
 * state, as sl_state_new(); the plugin sets `of`) can take the
 * sl_outfile_plugin_*() below as its start, flush, reopen, stop and
 * destroy: each is the sl_outfile_*() call on the state's outfile, and
 * destroy frees the outfile, then the state (a state holding more needs a
 * destroy of its own).
 */
#define SL_OUTFILE_STATE_HEAD(cfg_type) \
	SL_STATE_HEAD(cfg_type);        \
	struct sl_outfile *of

struct sl_outfile_state_head {
	SL_OUTFILE_STATE_HEAD(void);
};

/* A compile error unless `type` starts with SL_OUTFILE_STATE_HEAD. */
#define sl_outfile_state_new(type, host, inst, config) \
	sl_state_new_head(type, struct sl_outfile_state_head, of, host, inst, config)

int sl_outfile_plugin_start(void *state);
int sl_outfile_plugin_flush(void *state);
int sl_outfile_plugin_reopen(void *state);
void sl_outfile_plugin_stop(void *state);
void sl_outfile_plugin_destroy(void *state);

#endif /* SLUICE_OUTFILE_H */
