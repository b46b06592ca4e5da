/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The state of a plugin instance begins with who it is: the host, the
 * instance and its filled options.  SL_STATE_HEAD declares those three
 * members, first in the state struct; sl_state_new() allocates the zeroed
 * state with them set, and reports a failed allocation as the
 * configuration error configure() must return.
 */
#ifndef SLUICE_PLUGIN_STATE_H
#define SLUICE_PLUGIN_STATE_H

#include <stddef.h>

#include <sluice/plugin.h>

#define SL_STATE_HEAD(cfg_type)		\
	const struct sl_host *host;	\
	struct sl_instance *inst;	\
	const cfg_type *cfg

struct sl_state_head {
	SL_STATE_HEAD(void);
};

void *sl_state_alloc(size_t size, const struct sl_host *host, struct sl_instance *inst,
		     const void *config);

/* 0, and a compile error unless `type` starts with SL_STATE_HEAD. */
#define SL_STATE_CHECK(type) \
	(0 * sizeof(char[offsetof(type, cfg) == offsetof(struct sl_state_head, cfg) ? 1 : -1]))

/* A zeroed `type` with host, inst and cfg set; NULL after config_error(). */
#define sl_state_new(type, host, inst, config) \
	((type *)sl_state_alloc(sizeof(type) + SL_STATE_CHECK(type), (host), (inst), (config)))

/*
 * A state that begins with a longer head (`head`, a struct beginning with
 * SL_STATE_HEAD and ending with `member`, as struct sl_outfile_state_head
 * and struct sl_sink_state_head): 0, and a compile error unless `type`
 * has `member` where `head` has it.
 */
#define SL_STATE_HEAD_CHECK(type, head, member) \
	(0 * sizeof(char[offsetof(type, member) == offsetof(head, member) ? 1 : -1]))

/* sl_state_new() of a `type` that begins with such a head. */
#define sl_state_new_head(type, head, member, host, inst, config)                           \
	((type *)sl_state_alloc(sizeof(type) + SL_STATE_CHECK(type) +                          \
				SL_STATE_HEAD_CHECK(type, head, member), (host), (inst), (config)))

#endif
