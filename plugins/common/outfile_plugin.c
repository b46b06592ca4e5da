/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin callbacks of an output that is one outfile: see outfile.h. */
#include <stdlib.h>
#include <string.h>

#include "outfile.h"

/* by memcpy: the member is read through the plugin's own struct type */
static struct sl_outfile *outfile_of(void *state)
{
	struct sl_outfile *of;

	memcpy(&of, (char *)state + offsetof(struct sl_outfile_state_head, of), sizeof(of));
	return of;
}

int sl_outfile_plugin_start(void *state)
{
	return sl_outfile_start(outfile_of(state));
}

int sl_outfile_plugin_flush(void *state)
{
	return sl_outfile_flush(outfile_of(state));
}

int sl_outfile_plugin_reopen(void *state)
{
	return sl_outfile_reopen(outfile_of(state));
}

void sl_outfile_plugin_stop(void *state)
{
	sl_outfile_stop(outfile_of(state));
}

void sl_outfile_plugin_destroy(void *state)
{
	if (!state)
		return;
	sl_outfile_free(outfile_of(state));
	free(state);
}
