/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A deliberately wrong out-of-tree filter, for the strict-mode tests
 * (sluice-plugin(3), "Strict mode"):
 *  - it keeps a pointer to the last record of each batch after process()
 *    returned, and at stop() writes that record's first bytes in hex.  A
 *    batch belongs to the core once process() returns; strict mode
 *    overwrites a batch returned to its pool with 0xa5 bytes, so the kept
 *    record reads "a5a5..." there instead of a plausible record;
 *  - it writes, for each record, the names of the fields it is shown.  It
 *    reads only `prefix` (`.reads`): strict mode shows a filter only what
 *    it needs and reads, as an output always is.
 * A correct filter copies what it wants to keep (into its own state, in
 * memory it allocated at configure()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/plugin.h>

struct hold_config {
	const char *file;
};

struct hold {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct hold_config *cfg;
	int fd;
	const struct sl_record *kept;	/* the mistake: a record of a batch already given back */
	char line[8192];
};

static const struct sl_option hold_options[] = {
	SL_OPT_STR("file", struct hold_config, file, SL_REQUIRED, "where the lines go"),
	SL_OPT_END,
};

static const struct sl_field_decl hold_reads[] = {SL_FIELD_DECL(SL_F_PREFIX), SL_FIELD_END};
static const struct sl_field_decl hold_none[] = {SL_FIELD_END};

static void hold_write(struct hold *h, size_t n)
{
	if (write(h->fd, h->line, n) != (ssize_t)n)
		h->host->log(h->inst, SL_LOG_ERR, "%s: %s", h->cfg->file, strerror(errno));
}

static int hold_process(void *state, struct sl_batch *b)
{
	struct hold *h = state;

	for (unsigned i = 0; i < b->count; i++) {
		size_t n = 0;

		for (int id = 0; id < SL_MAX_FIELDS; id++) {
			const char *name;
			size_t len;

			if (!sl_has(b->rec[i], (sl_field)id) || !(name = h->host->field_name(h->inst, id)))
				continue;
			len = strlen(name);
			if (n + len + 2 > sizeof(h->line))
				break;
			if (n)
				h->line[n++] = ' ';
			memcpy(h->line + n, name, len);
			n += len;
		}
		h->line[n++] = '\n';
		hold_write(h, n);
	}
	if (b->count)
		h->kept = b->rec[b->count - 1];
	return 0;
}

static int hold_configure(const struct sl_host *host, struct sl_instance *inst,
			  const void *config, void **state)
{
	struct hold *h = calloc(1, sizeof(*h));

	if (!h)
		return -1;
	h->host = host;
	h->inst = inst;
	h->cfg = config;
	h->fd = -1;
	*state = h;
	return 0;
}

static int hold_start(void *state)
{
	struct hold *h = state;

	h->fd = open(h->cfg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (h->fd < 0) {
		h->host->log(h->inst, SL_LOG_ERR, "%s: %s", h->cfg->file, strerror(errno));
		return -1;
	}
	return 0;
}

static void hold_stop(void *state)
{
	struct hold *h = state;
	static const char hex[] = "0123456789abcdef";

	if (h->fd < 0)
		return;
	/* the batches are still in their pools at stop(): reading is wrong, but not a crash */
	if (h->kept) {
		const unsigned char *p = (const unsigned char *)h->kept;
		size_t n = 0;

		memcpy(h->line, "kept record: ", 13);
		n = 13;
		for (size_t i = 0; i < 16; i++) {
			h->line[n++] = hex[p[i] >> 4];
			h->line[n++] = hex[p[i] & 15];
		}
		h->line[n++] = '\n';
		hold_write(h, n);
	}
	close(h->fd);
	h->fd = -1;
}

static const struct sl_plugin hold_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "hold",
	.description = "deliberately wrong test filter: keeps a record after process(); lists "
		       "the fields it is shown",
	.config_size = sizeof(struct hold_config),
	.options = hold_options,
	.provides = hold_none,
	.reads = hold_reads,
	.configure = hold_configure,
	.start = hold_start,
	.process = hold_process,
	.stop = hold_stop,
	.destroy = free,
};

SLUICE_PLUGIN(hold_plugin)
