/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * logline: SL_F_TEXT = the line the kernel's LOG target (nft `log` without
 * `group`) would have printed for the record, field for field.  The text is
 * built by plugins/common/logline_fmt.c, which is checked against lines
 * printed by a live kernel.  Options mirror nft's `log flags`.
 *
 * Connection records (nfct events, flow records: a tuple and no packet) get
 * the line `conntrack -E` prints instead (plugins/common/ctline_fmt.c), so
 * one converter serves both kinds of stack.  That is decided per record, at
 * run time; the stack is checked before start through needs_one_of: a
 * packet stack must have decode (interface names) before logline, a
 * connection stack nfct or flow.  Trace records of nftrace (decoded like
 * packets) get the line `nft monitor trace` prints (traceline_fmt.c),
 * accounting records of nfacct the line `nfacct list` prints
 * (acctline_fmt.c).
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#include "acctline_fmt.h"
#include "ctline_fmt.h"
#include "fmt.h"
#include "logline_fmt.h"
#include "plugin_state.h"
#include "text_room.h"
#include "traceline_fmt.h"

struct logline_cfg {
	bool tcp_sequence;
	bool tcp_options;
	bool ip_options;
	bool uid;
	bool ether;
	bool mark;
	struct sl_strlist conntrack_output;
};

struct logline {
	SL_STATE_HEAD(struct logline_cfg);
	unsigned flags;
	unsigned ct_flags;
	struct sl_ctline_fields ct_fields;
	struct sl_traceline_fields trace_fields;
	struct sl_acctline_fields acct_fields;
	bool warned_ifname;
	int c_no_room;
	int c_no_packet;
	int c_connections;
	int c_no_ifname;
	int c_traces;
	int c_accounting;
};

static const struct sl_option logline_options[] = {
	SL_OPT_BOOL("tcp_sequence", struct logline_cfg, tcp_sequence, "false",
		    "print SEQ= ACK= (nft: log flags tcp sequence)"),
	SL_OPT_BOOL("tcp_options", struct logline_cfg, tcp_options, "false",
		    "print TCP OPT (...) (nft: log flags tcp options)"),
	SL_OPT_BOOL("ip_options", struct logline_cfg, ip_options, "false",
		    "print IP options / IPv6 extension headers (nft: log flags ip options)"),
	SL_OPT_BOOL("uid", struct logline_cfg, uid, "false",
		    "print UID= GID= when the record has them (nft: log flags skuid)"),
	SL_OPT_BOOL("ether", struct logline_cfg, ether, "false",
		    "MACSRC= MACDST= MACPROTO= instead of MAC= (nft: log flags ether)"),
	SL_OPT_BOOL("mark", struct logline_cfg, mark, "true",
		    "print MARK=0x.. when the mark is not zero, as the kernel always does"),
	SL_OPT_LIST("conntrack_output", struct logline_cfg, conntrack_output, "[timestamp]",
		    "connection records: conntrack -E's -o flags (timestamp, id, extended)"),
	SL_OPT_END
};

static const struct sl_field_decl logline_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_TEXT_SAFE),	/* the text never needs escaping */
	SL_FIELD_END
};

static int logline_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			     void **state)
{
	const struct logline_cfg *cfg = config;
	struct logline *st = sl_state_new(struct logline, host, inst, config);

	if (!st)
		return -1;
	st->flags = (cfg->tcp_sequence ? SL_LOGLINE_TCPSEQ : 0) | (cfg->tcp_options ? SL_LOGLINE_TCPOPT : 0) |
		    (cfg->ip_options ? SL_LOGLINE_IPOPT : 0) | (cfg->uid ? SL_LOGLINE_UID : 0) |
		    (cfg->ether ? SL_LOGLINE_MACDECODE : 0) | (cfg->mark ? 0 : SL_LOGLINE_NOMARK);
	for (unsigned i = 0; i < cfg->conntrack_output.n; i++) {
		const char *o = cfg->conntrack_output.v[i];

		if (!strcmp(o, "timestamp")) {
			st->ct_flags |= SL_CTLINE_TIMESTAMP;
		} else if (!strcmp(o, "id")) {
			st->ct_flags |= SL_CTLINE_ID;
		} else if (!strcmp(o, "extended")) {
			st->ct_flags |= SL_CTLINE_EXTENDED;
		} else if (strcmp(o, "none")) {
			host->config_error(inst, "conntrack_output",
					   "unknown '%s': expected timestamp, id, extended or none", o);
			free(st);
			return -1;
		}
	}
	/* registered by nfct; -1 when no nfct is configured */
	st->ct_fields.timeout = host->field_id(inst, "ct_timeout");
	st->ct_fields.portid = host->field_id(inst, "ct_portid");
	/* registered by nftrace */
	st->trace_fields = sl_traceline_fields_lookup(host, inst);
	/* registered by nfacct (and by our needs_one_of) */
	st->acct_fields = sl_acctline_fields_lookup(host, inst);
	*state = st;
	return 0;
}

static int logline_start(void *state)
{
	struct logline *st = state;

	st->c_no_room = st->host->counter_new(st->inst, "no_room");
	st->c_no_packet = st->host->counter_new(st->inst, "no_packet");
	st->c_connections = st->host->counter_new(st->inst, "connections");
	st->c_no_ifname = st->host->counter_new(st->inst, "no_ifname");
	st->c_traces = st->host->counter_new(st->inst, "traces");
	st->c_accounting = st->host->counter_new(st->inst, "accounting");
	return 0;
}

/* Room that always holds a line (the kernel cuts at SL_LOGLINE_MAX). */
#define LINE_ROOM (SL_LOGLINE_MAX + 128)

static int logline_process(void *state, struct sl_batch *b)
{
	struct logline *st = state;
	uint64_t no_room = 0, no_packet = 0, conns = 0, no_ifname = 0, traces = 0, accts = 0;
	unsigned i;

	for (i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		struct sl_text_room t;
		struct sl_fmt_buf fb;
		bool scan = false;	/* names may hold any byte: not marked safe */

		/*
		 * One try (the counters below count each line once): a line's
		 * worth of arena, or what there is when less is left (most
		 * lines are short).
		 */
		sl_text_room_begin(&t, b, LINE_ROOM);
		sl_text_room_try(&t, b, &fb);
		if (sl_traceline_applies(r, &st->trace_fields)) {
			sl_traceline_format(&fb, r, &st->trace_fields);
			scan = true;
			traces++;
		} else if (sl_acctline_applies(r, &st->acct_fields)) {
			/* an object's name may hold any byte: scanned, like a trace line */
			sl_acctline_format(&fb, r, &st->acct_fields);
			scan = true;
			accts++;
		} else if (sl_ctline_applies(r)) {
			sl_ctline_format(&fb, r, &st->ct_fields, st->ct_flags);
			conns++;
		} else if (!sl_logline_format(&fb, r, st->flags)) {
			sl_batch_rewind(b, t.start);
			/* a filter's own line (ratelimit's, dedup's summaries): kept as it is */
			if (!sl_has(r, SL_F_PACKET) && sl_has(r, SL_F_TEXT))
				continue;
			no_packet++;
			sl_unset(r, SL_F_TEXT);
			continue;
		} else if ((sl_has(r, SL_F_IFINDEX_IN) && !sl_has(r, SL_F_IFNAME_IN)) ||
			   (sl_has(r, SL_F_IFINDEX_OUT) && !sl_has(r, SL_F_IFNAME_OUT))) {
			no_ifname++;	/* the line has IN= / OUT= empty */
		}
		if (!sl_text_room_keep(&t, b, &fb, r)) {
			no_room++;
			continue;
		}
		/* table, chain and object names may hold any byte: those lines are scanned */
		if (!scan)
			sl_set_text_safe(r);
	}
	if (no_room) {
		st->host->counter_add(st->inst, st->c_no_room, no_room);
		st->host->error_add(st->inst, no_room);
	}
	if (no_packet)
		st->host->counter_add(st->inst, st->c_no_packet, no_packet);
	if (conns)
		st->host->counter_add(st->inst, st->c_connections, conns);
	if (traces)
		st->host->counter_add(st->inst, st->c_traces, traces);
	if (accts)
		st->host->counter_add(st->inst, st->c_accounting, accts);
	if (no_ifname) {
		st->host->counter_add(st->inst, st->c_no_ifname, no_ifname);
		if (!st->warned_ifname) {
			st->host->log(st->inst, SL_LOG_WARNING,
				      "packets without interface names: put decode before logline "
				      "(IN=/OUT= stay empty; counted in no_ifname)");
			st->warned_ifname = true;
		}
	}
	return 0;
}

static void logline_destroy(void *state)
{
	free(state);
}

static const struct sl_field_decl logline_packet_fields[] = {
	SL_FIELD_DECL(SL_F_PACKET),
	SL_FIELD_DECL(SL_F_IFNAME_IN),
	SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_END,
};
static const struct sl_field_decl logline_ct_fields[] = {SL_FIELD_DECL(SL_F_CT_EVENT), SL_FIELD_END};
static const struct sl_field_decl logline_flow_fields[] = {
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_END,
};
static const struct sl_field_decl logline_acct_fields[] = {
	{SL_ACCT_NAME, SL_T_STRING},
	{SL_ACCT_PACKETS, SL_T_U64},
	{SL_ACCT_BYTES, SL_T_U64},
	SL_FIELD_END,
};
static const struct sl_field_decl *const logline_needs_one_of[] = {
	logline_packet_fields, logline_ct_fields, logline_flow_fields, logline_acct_fields, NULL,
};

static const struct sl_plugin logline_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "logline",
	.description = "text of the kernel LOG target (nft log); connections as conntrack -E prints them, accounting objects as nfacct list",
	.config_size = sizeof(struct logline_cfg),
	.options = logline_options,
	.provides = logline_provides,
	.configure = logline_configure,
	.start = logline_start,
	.process = logline_process,
	.destroy = logline_destroy,
	.needs_one_of = logline_needs_one_of,
};

SLUICE_PLUGIN(logline_plugin)
