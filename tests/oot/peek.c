/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An out-of-tree output that writes, for each record, the names of the
 * fields it sees, one line per record.  It declares that it reads `prefix`
 * and nothing else (`.reads`), so that is all it may see, whether it runs
 * on its own thread (its queue copies only that) or not (the core hides
 * the rest): sluice-plugin(3), "What a plugin may write and see".  A
 * correct plugin in strict mode: no allocation in process().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/plugin.h>

struct peek_config {
	const char *file;
};

struct peek {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct peek_config *cfg;
	int fd;
	char line[8192];
};

static const struct sl_option peek_options[] = {
	SL_OPT_STR("file", struct peek_config, file, SL_REQUIRED, "where the lines go"),
	SL_OPT_END,
};

static const struct sl_field_decl peek_reads[] = {SL_FIELD_DECL(SL_F_PREFIX), SL_FIELD_END};

static int peek_process(void *state, struct sl_batch *b)
{
	struct peek *p = state;

	for (unsigned i = 0; i < b->count; i++) {
		size_t n = 0;

		for (int id = 0; id < SL_MAX_FIELDS; id++) {
			const char *name;
			size_t len;

			if (!sl_has(b->rec[i], (sl_field)id) || !(name = p->host->field_name(p->inst, id)))
				continue;
			len = strlen(name);
			if (n + len + 2 > sizeof(p->line))
				break;
			if (n)
				p->line[n++] = ' ';
			memcpy(p->line + n, name, len);
			n += len;
		}
		p->line[n++] = '\n';
		if (write(p->fd, p->line, n) != (ssize_t)n) {
			p->host->dropped_add(p->inst, 1);
		}
	}
	return 0;
}

static int peek_configure(const struct sl_host *host, struct sl_instance *inst,
			  const void *config, void **state)
{
	struct peek *p = calloc(1, sizeof(*p));

	if (!p)
		return -1;
	p->host = host;
	p->inst = inst;
	p->cfg = config;
	p->fd = -1;
	*state = p;
	return 0;
}

static int peek_start(void *state)
{
	struct peek *p = state;

	p->fd = open(p->cfg->file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (p->fd < 0) {
		p->host->log(p->inst, SL_LOG_ERR, "%s: %s", p->cfg->file, strerror(errno));
		return -1;
	}
	return 0;
}

static void peek_stop(void *state)
{
	struct peek *p = state;

	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

static const struct sl_plugin peek_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "peek",
	.description = "example out-of-tree output: the names of the fields each record shows it",
	.config_size = sizeof(struct peek_config),
	.options = peek_options,
	.reads = peek_reads,
	.configure = peek_configure,
	.start = peek_start,
	.process = peek_process,
	.stop = peek_stop,
	.destroy = free,
};

SLUICE_PLUGIN(peek_plugin)
