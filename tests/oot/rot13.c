/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An out-of-tree sluice filter: applies ROT13 to each record's text line.
 * It is built against the installed headers only, found through
 * pkg-config (see Makefile), and doubles as the smallest complete example
 * of a filter plugin.
 */
#include <stdlib.h>

#include <sluice/plugin.h>

struct rot13_config {
	int64_t shift;
};

struct rot13 {
	const struct rot13_config *cfg;
};

static const struct sl_option rot13_options[] = {
	SL_OPT_INT("shift", struct rot13_config, shift, "13", 1, 25, "letters to rotate by"),
	SL_OPT_END,
};

static const struct sl_field_decl rot13_fields[] = {SL_FIELD_DECL(SL_F_TEXT), SL_FIELD_END};

static uint8_t rotate(uint8_t c, int shift)
{
	if (c >= 'a' && c <= 'z')
		return (uint8_t)('a' + (c - 'a' + shift) % 26);
	if (c >= 'A' && c <= 'Z')
		return (uint8_t)('A' + (c - 'A' + shift) % 26);
	return c;
}

static int rot13_process(void *state, struct sl_batch *b)
{
	struct rot13 *r = state;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *rec = b->rec[i];
		struct sl_bytes text;
		uint8_t *out;

		/* `needs` holds per stack: this record may still have no text. */
		if (!sl_has(rec, SL_F_TEXT))
			continue;
		text = rec->v[SL_F_TEXT].bytes;
		/* The text belongs to whoever made it: write a copy in the arena. */
		out = sl_batch_alloc(b, text.len);
		if (!out)
			return -1;
		for (uint32_t k = 0; k < text.len; k++)
			out[k] = rotate(text.ptr[k], (int)r->cfg->shift);
		sl_set_bytes(rec, SL_F_TEXT, out, text.len);
	}
	return 0;
}

static int rot13_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	struct rot13 *r = calloc(1, sizeof(*r));

	(void)host; /* a plugin that logs or counts keeps host and inst */
	(void)inst;
	if (!r)
		return -1;
	r->cfg = config;
	*state = r;
	return 0;
}

static void rot13_destroy(void *state)
{
	free(state);
}

static const struct sl_plugin rot13_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "rot13",
	.description = "example out-of-tree filter: ROT13 on the text line",
	.config_size = sizeof(struct rot13_config),
	.options = rot13_options,
	.needs = rot13_fields,
	.provides = rot13_fields,
	.configure = rot13_configure,
	.process = rot13_process,
	.destroy = rot13_destroy,
};

SLUICE_PLUGIN(rot13_plugin)
