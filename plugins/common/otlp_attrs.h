/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A record's fields as OpenTelemetry log attributes, for the otlp output:
 * the semantic conventions' names where one exists (source.address,
 * destination.port, network.transport, network.type,
 * network.interface.name) and netfilter.<the json filter's key> for the
 * rest, each typed (int, string, bytes) and with the value json prints
 * (addresses, MACs, the protocol's name), except hook, tcp_flags and
 * ct_state, which are numbers.  docs/PLUGINS.md's otlp section lists them;
 * keep it in step with OTLP_ATTRS in otlp_attrs.c.
 *
 * The rule an nflog record was attributed to (rule_fields.h) follows:
 * security_rule.ruleset.name (the table) and security_rule.name (the
 * comment) from the semantic conventions, netfilter.rule_family,
 * netfilter.rule_chain, netfilter.rule_handle (int) and
 * netfilter.rule_verdict for the rest, each when the record has it.
 */
#ifndef SLUICE_OTLP_ATTRS_H
#define SLUICE_OTLP_ATTRS_H

#include <sluice/plugin.h>

#include "otlp_pb.h"
#include "rule_fields.h"

#define SL_OTLP_ATTRS_MAX 96		/* attributes of one record, at most */
#define SL_OTLP_ATTRS_SCRATCH 1024		/* their text (addresses, MACs), at most */

/*
 * Every field the otlp output reads (the attributes', the body's text and
 * the time), SL_FIELD_END-terminated: its `reads`.
 */
extern const struct sl_field_decl sl_otlp_fields_read[];

/*
 * Record r's attributes into kv[0..SL_OTLP_ATTRS_MAX), in the table's
 * order, their text in scratch[0..SL_OTLP_ATTRS_SCRATCH): how many.  kv
 * points into r and scratch: valid while both are.
 */
unsigned sl_otlp_record_attrs(const struct sl_record *r, struct sl_otlp_kv *kv, char *scratch);

/* Attributes the rule part adds at most (after the table's, within SL_OTLP_ATTRS_MAX). */
#define SL_OTLP_RULE_ATTRS 6

/*
 * The rule's attributes of r (the fields f names) into kv[0..SL_OTLP_RULE_ATTRS),
 * after sl_otlp_record_attrs()'s: how many.  kv points into r.
 */
unsigned sl_otlp_rule_attrs(const struct sl_rule_fields *f, const struct sl_record *r,
			    struct sl_otlp_kv *kv);

#endif /* SLUICE_OTLP_ATTRS_H */
