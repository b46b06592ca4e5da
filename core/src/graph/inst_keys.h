/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Keys the core itself reads on any instance, next to the plugin's own
 * options: `thread` (inputs and outputs), and for an output on its own
 * thread `when_full` (drop|block) and `queue` (its bound, in batches).
 * Their names, which the option parsers need before there is a graph,
 * are core_keys.h's.
 */
#ifndef SLUICE_INST_KEYS_H
#define SLUICE_INST_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include <sluice/record.h>

#include "config.h"

struct sl_instance;
struct sl_plugin;
struct graph;

#define INST_QUEUE_DEFAULT 64
#define INST_QUEUE_MAX 65536

/*
 * The fields a queue in front of output `inst` copies: every field it
 * reads (its needs, needs_one_of, need_field() and read_field() fields and `reads`), or all
 * of them when the plugin does not declare `reads`.  An output is a leaf,
 * so this is the whole subtree the queue feeds.
 */
void inst_keys_copy_mask(const struct sl_instance *inst, uint64_t mask[SL_PRESENCE_WORDS]);
/*
 * After every configure(): set each input's subtree_reads to the union of
 * inst_keys_copy_mask() over the filters and outputs below it (host
 * subtree_reads(), ABI 1.3).
 */
void inst_keys_subtree_reads(struct graph *g);
/*
 * Read and check the core keys of inst->opts; set the defaults: network
 * outputs (SL_PLUGIN_NETWORK) on their own thread with `when_full: drop`.
 * Errors go to d with the key's position.
 */
void inst_keys_parse(struct sl_instance *inst, struct diag *d);
/*
 * Once the graph is built: spread the inputs over daemon.threads, and put
 * an output where stacks of inputs on different threads meet on a thread
 * of its own (a queue is the only way in from several threads), so that
 * sluice -t shows what will run where.
 */
void inst_keys_place(struct graph *g, unsigned nthreads);

#endif
