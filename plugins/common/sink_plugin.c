/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin callbacks of an output on the sink engine: see sink.h. */
#include <stddef.h>

#include "sink.h"

static struct sl_sink *sink_of(void *state)
{
	return (struct sl_sink *)((char *)state + offsetof(struct sl_sink_state_head, sink));
}

int sl_sink_plugin_process(void *state, struct sl_batch *b)
{
	return sl_sink_process(sink_of(state), b);
}

int sl_sink_plugin_flush(void *state)
{
	sl_sink_flush(sink_of(state));
	return 0;
}
