/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nflog's `rules: true`: each record attributed to the rule that logged it
 * (plugins/common/rule_index.h), through the ruleset's generations.
 *
 * The ruleset is listed at start and again after every change, which the
 * nftables notifications (NFNLGRP_NFTABLES, on a socket of its own) say.
 * The kernel keeps logged packets up to its flush timeout before sending
 * them, so after a change records of the generations before it still come:
 * until that timeout has passed and the socket was read empty, a record is
 * attributed only when every generation that may have logged it (the ones
 * with a statement of its key) names the same rule; otherwise it is counted
 * in rule_unattributed.
 *
 * All on the input's thread: the notifications are read before each batch
 * is attributed and when their socket is readable; an index is freed only
 * between wake-ups, when no record points into it any more.  Attributing a
 * batch costs one recv() (the notifications, usually none) and a hash probe
 * per run of records with the same key (the last key's answer is kept for
 * the batch).
 */
#ifndef SLUICE_NFLOG_RULES_H
#define SLUICE_NFLOG_RULES_H

#include <stdint.h>

#include <sluice/plugin.h>

struct nflog_rules;

/* Field and counter ids, in configure(): NULL if out of memory (logged). */
struct nflog_rules *nflog_rules_new(const struct sl_host *host, struct sl_instance *inst,
				    uint16_t group, uint64_t flush_timeout_ms);

/*
 * In start(), once the packets' socket nflog_fd is open: join the
 * notifications, list the ruleset, watch the notifications' socket.  -1
 * with the error logged (no permission, no nf_tables).  nsfd: the network
 * namespace whose ruleset is read (netns: the one nflog_fd was made in,
 * kept open by the caller until stop), -1: ours.
 */
int nflog_rules_start(struct nflog_rules *nr, int nflog_fd, int nsfd);

/* The rule fields of each record of b, after the ruleset changes read so far. */
void nflog_rules_attribute(struct nflog_rules *nr, struct sl_batch *b);

/* Between wake-ups, the socket read empty: old generations may be let go. */
void nflog_rules_idle(struct nflog_rules *nr);

void nflog_rules_stop(struct nflog_rules *nr);
void nflog_rules_free(struct nflog_rules *nr);

#endif
