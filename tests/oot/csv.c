/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An out-of-tree sluice output: one CSV row per record, with the columns
 * the configuration lists, printed by each field's type as the core
 * registered it.  The worked example of a generic output (see also
 * rot13.c for a filter):
 *
 *   - its needs come from an option, so it declares them per instance
 *     with host->need_field() in configure(): `sluice -t` then reports a
 *     listed field that nothing before it provides;
 *   - it prints fields it has never heard of by host->field_type();
 *   - it tests sl_has() before reading a field: `needs` holds per stack,
 *     a single record may still lack a field (no port on an ICMP packet);
 *   - it reports every record it fails to write with host->dropped_add();
 *   - it reads no field but those: `.reads` is an empty list, so with
 *     `thread: true` its queue copies only the listed columns.
 *
 *     stacks:
 *       s: [replay, decode, {plugin: csv, file: out.csv,
 *                            fields: [src_addr, dport, prefix]}]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sluice/plugin.h>

#define MAX_COLUMNS 64
#define OUT_SIZE (1u << 20)	/* one batch's rows, written with one write() */

struct csv_cfg {
	const char *file;
	struct sl_strlist fields;
	bool header;
};

struct column {
	sl_field id;
	enum sl_type type;
	const char *name;
};

struct csv {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct csv_cfg *cfg;
	struct column col[MAX_COLUMNS];
	unsigned ncol;
	int fd;
	char *out;		/* the rows of the batch being written */
	int c_failed;
};

static const struct sl_option csv_options[] = {
	SL_OPT_STR("file", struct csv_cfg, file, SL_REQUIRED, "file to write ('-': stdout)"),
	SL_OPT_LIST("fields", struct csv_cfg, fields, SL_REQUIRED, "the columns, by field name"),
	SL_OPT_BOOL("header", struct csv_cfg, header, "true", "write a header row of the names"),
	SL_OPT_END,
};

struct row {
	char *p;
	size_t len, cap;
};

static void put(struct row *w, const void *s, size_t n)
{
	if (w->len + n <= w->cap)
		memcpy(w->p + w->len, s, n);
	w->len += n;	/* past cap: the row does not fit and is dropped */
}

/* A text cell, quoted as RFC 4180 says: inside quotes, " is written "". */
static void put_text(struct row *w, const uint8_t *s, uint32_t n)
{
	put(w, "\"", 1);
	for (uint32_t i = 0; i < n; i++)
		put(w, s[i] == '"' ? "\"\"" : (const char *)&s[i], s[i] == '"' ? 2 : 1);
	put(w, "\"", 1);
}

static void put_cell(struct row *w, const struct column *c, const union sl_value *v)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[64];
	struct tm tm;
	time_t t;
	int n = 0;

	switch (c->type) {
	case SL_T_U64:
		n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v->u64);
		break;
	case SL_T_STRING:
		put_text(w, v->bytes.ptr, v->bytes.len);
		return;
	case SL_T_BYTES:
		for (uint32_t i = 0; i < v->bytes.len; i++) {
			put(w, &hex[v->bytes.ptr[i] >> 4], 1);
			put(w, &hex[v->bytes.ptr[i] & 15], 1);
		}
		return;
	case SL_T_ADDR:
		if (sl_addr_is_v4(v->addr))
			inet_ntop(AF_INET, v->addr + 12, tmp, sizeof(tmp));
		else
			inet_ntop(AF_INET6, v->addr, tmp, sizeof(tmp));
		n = (int)strlen(tmp);
		break;
	case SL_T_MAC:
		n = snprintf(tmp, sizeof(tmp), "%02x:%02x:%02x:%02x:%02x:%02x", v->addr[0],
			     v->addr[1], v->addr[2], v->addr[3], v->addr[4], v->addr[5]);
		break;
	case SL_T_TIME:
		t = (time_t)v->time.sec;
		gmtime_r(&t, &tm);
		n = (int)strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, ".%06uZ", v->time.nsec / 1000);
		break;
	}
	put(w, tmp, (size_t)n);
}

/* Write out[0..len); records whose row was not written are dropped. */
static void write_rows(struct csv *st, size_t len, unsigned rows, const size_t *ends)
{
	size_t done = 0;
	unsigned lost = 0;

	while (done < len) {
		ssize_t n = write(st->fd, st->out + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			st->host->log(st->inst, SL_LOG_ERR, "%s: %s", st->cfg->file,
				      n < 0 ? strerror(errno) : "short write");
			break;
		}
		done += (size_t)n;
	}
	for (unsigned i = 0; i < rows; i++)
		lost += ends ? ends[i] > done : done < len;
	if (lost) {
		st->host->counter_add(st->inst, st->c_failed, lost);
		st->host->dropped_add(st->inst, lost);
	}
}

static int csv_process(void *state, struct sl_batch *b)
{
	struct csv *st = state;
	struct row w = {st->out, 0, OUT_SIZE};
	unsigned rows = 0, too_long = 0;

	/*
	 * Where each row ends, in the batch's arena: no malloc() in process()
	 * (strict mode counts it).  Without room there, a short write loses
	 * the whole batch's rows in the count.
	 */
	size_t *ends = sl_batch_alloc(b, b->count * sizeof(*ends));

	for (unsigned i = 0; i < b->count; i++) {
		const struct sl_record *r = b->rec[i];
		size_t start = w.len;

		for (unsigned k = 0; k < st->ncol; k++) {
			if (k)
				put(&w, ",", 1);
			if (sl_has(r, st->col[k].id))
				put_cell(&w, &st->col[k], &r->v[st->col[k].id]);
		}
		put(&w, "\n", 1);
		if (w.len > w.cap) {
			w.len = start;	/* longer than the whole buffer: skip it */
			too_long++;
			continue;
		}
		if (ends)
			ends[rows] = w.len;
		rows++;
	}
	if (too_long) {
		st->host->counter_add(st->inst, st->c_failed, too_long);
		st->host->dropped_add(st->inst, too_long);
	}
	if (w.len)
		write_rows(st, w.len, rows, ends);
	return 0;
}

static int csv_configure(const struct sl_host *host, struct sl_instance *inst,
			 const void *config, void **state)
{
	const struct csv_cfg *cfg = config;
	struct csv *st;
	bool ok = true;

	if (cfg->fields.n == 0 || cfg->fields.n > MAX_COLUMNS) {
		host->config_error(inst, "fields", "list 1 to %d fields", MAX_COLUMNS);
		return -1;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -1;
	st->host = host;
	st->inst = inst;
	st->cfg = cfg;
	st->fd = -1;
	for (unsigned i = 0; i < cfg->fields.n; i++) {
		/* The core checks each against the stack, and reports what is missing. */
		int id = host->need_field(inst, "fields", cfg->fields.v[i]);

		if (id < 0) {
			ok = false;
			continue;
		}
		st->col[st->ncol].id = (sl_field)id;
		st->col[st->ncol].type = host->field_type(inst, id);
		st->col[st->ncol].name = host->field_name(inst, id);
		st->ncol++;
	}
	st->c_failed = host->counter_new(inst, "write_failed");
	if (!ok) {
		free(st);
		return -1;
	}
	*state = st;
	return 0;
}

static int csv_start(void *state)
{
	struct csv *st = state;

	st->out = malloc(OUT_SIZE);
	if (!st->out)
		return -1;
	if (strcmp(st->cfg->file, "-") == 0)
		st->fd = STDOUT_FILENO;
	else
		st->fd = open(st->cfg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (st->fd < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", st->cfg->file, strerror(errno));
		return -1;	/* the core calls stop(), which frees out */
	}
	if (st->cfg->header) {
		struct row w = {st->out, 0, OUT_SIZE};

		for (unsigned k = 0; k < st->ncol; k++) {
			if (k)
				put(&w, ",", 1);
			put(&w, st->col[k].name, strlen(st->col[k].name));
		}
		put(&w, "\n", 1);
		if (write(st->fd, st->out, w.len) != (ssize_t)w.len) {
			st->host->log(st->inst, SL_LOG_ERR, "%s: cannot write the header",
				      st->cfg->file);
			return -1;
		}
	}
	return 0;
}

static void csv_stop(void *state)
{
	struct csv *st = state;

	if (st->fd >= 0 && st->fd != STDOUT_FILENO)
		close(st->fd);
	st->fd = -1;
	free(st->out);
	st->out = NULL;
}

static void csv_destroy(void *state)
{
	struct csv *st = state;

	free(st);
}

/* Nothing beyond the columns configure() asked for with need_field(). */
static const struct sl_field_decl csv_reads[] = {
	SL_FIELD_END
};

static const struct sl_plugin csv_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "csv",
	.description = "example out-of-tree output: CSV rows of the configured fields",
	.config_size = sizeof(struct csv_cfg),
	.options = csv_options,
	.reads = csv_reads,
	.configure = csv_configure,
	.start = csv_start,
	.process = csv_process,
	.stop = csv_stop,
	.destroy = csv_destroy,
};

SLUICE_PLUGIN(csv_plugin)
