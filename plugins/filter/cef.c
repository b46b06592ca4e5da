/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cef: SL_F_TEXT = the record as one ArcSight CEF:0 line, or one IBM
 * QRadar LEEF:2.0 line (`format: leef`), for any text output (file,
 * syslog over TLS or RELP, kafka) to send to a SIEM.  The line is built by
 * plugins/common/cef_fmt.c, which holds the escaping and the key mapping
 * (docs/PLUGINS.md, "cef").
 *
 * Packets need decode before cef (addresses, ports, interface names);
 * connection records (nfct) and flow records (flow) carry their original
 * direction's tuple and are mapped from it.  The stack is checked before
 * start through needs_one_of, as logline's.
 */
#include <stdlib.h>
#include <string.h>

#include <sluice/plugin.h>

#include "cef_fmt.h"
#include "plugin_state.h"
#include "text_room.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0"
#endif

static const char *const format_choices[] = { "cef", "leef", NULL };

struct cef_cfg {
	int format;
	const char *vendor, *product, *version;
	const char *signature, *name;
	int64_t severity;
	const char *action;
	const char *delimiter;
};

struct cef {
	SL_STATE_HEAD(struct cef_cfg);
	struct sl_cef fmt;
	bool safe;		/* the line holds no TAB: marked safe for the outputs */
	int c_no_room;
};

static const struct sl_option cef_options[] = {
	SL_OPT_ENUM("format", struct cef_cfg, format, "cef", format_choices,
		    "cef: ArcSight CEF:0 lines; leef: IBM QRadar LEEF:2.0 lines"),
	SL_OPT_STR("vendor", struct cef_cfg, vendor, "sluice", "the header's Device Vendor"),
	SL_OPT_STR("product", struct cef_cfg, product, "sluice", "the header's Device Product"),
	SL_OPT_STR("version", struct cef_cfg, version, NULL,
		   "the header's Device Version; unset: this sluice's version"),
	SL_OPT_STR("signature", struct cef_cfg, signature, "{prefix}",
		   "the header's Signature ID (LEEF: EventID); {prefix} is the record's log prefix"),
	SL_OPT_STR("name", struct cef_cfg, name, "{prefix}",
		   "the header's Name (CEF only); {prefix} is the record's log prefix"),
	SL_OPT_INT("severity", struct cef_cfg, severity, "5", 0, 10,
		   "the header's Severity (LEEF: sev=), 0 to 10"),
	SL_OPT_STR("action", struct cef_cfg, action, NULL,
		   "act= (LEEF: action=) on records without a verdict of their own (nftrace's, or their rule's with nflog's rules: true): the verdict of the rules logging here, e.g. drop"),
	SL_OPT_STR("delimiter", struct cef_cfg, delimiter, "tab",
		   "LEEF's attribute delimiter: tab, or one printable character such as ^ (not a letter, digit, space or one of \\ = | : . , - _)"),
	SL_OPT_END
};

static const struct sl_field_decl cef_provides[] = {
	SL_FIELD_DECL(SL_F_TEXT),
	SL_FIELD_DECL(SL_F_TEXT_SAFE),	/* no control byte, valid UTF-8 (but LEEF's TAB) */
	SL_FIELD_END
};

/* Every field cef_fmt.c reads (docs/PLUGINS.md's table). */
static const struct sl_field_decl cef_reads[] = {
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_NFLOG_GROUP),
	SL_FIELD_DECL(SL_F_FAMILY),
	SL_FIELD_DECL(SL_F_MARK),
	SL_FIELD_DECL(SL_F_UID),
	SL_FIELD_DECL(SL_F_IFNAME_IN),
	SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_DECL(SL_F_MAC_SRC),
	SL_FIELD_DECL(SL_F_MAC_DST),
	SL_FIELD_DECL(SL_F_IP_VERSION),
	SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_IP_LEN),
	SL_FIELD_DECL(SL_F_SPORT),
	SL_FIELD_DECL(SL_F_DPORT),
	SL_FIELD_DECL(SL_F_CT_ID),
	SL_FIELD_DECL(SL_F_CT_EVENT),
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_DECL(SL_F_ORIG_SPORT),
	SL_FIELD_DECL(SL_F_ORIG_DPORT),
	SL_FIELD_DECL(SL_F_ORIG_BYTES),
	SL_FIELD_DECL(SL_F_REPLY_BYTES),
	SL_FIELD_DECL(SL_F_FLOW_START),
	SL_FIELD_DECL(SL_F_FLOW_END),
	SL_FIELD_END
};

/*
 * LEEF's delimiter from the option: TAB, or a printable character that no
 * unescaped value holds (addresses, MACs, numbers, names, event lists: letters,
 * digits, ':', '.', ',', '-', '_') and that is not an escape or header
 * character.  0: refused.
 */
static char parse_delimiter(const char *s)
{
	char c = s[0];

	if (!strcmp(s, "tab"))
		return '\t';
	if (!c || s[1] || c <= ' ' || c >= 0x7f || strchr("\\=|:.,-_", c) ||
	    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return 0;
	return c;
}

static int cef_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			 void **state)
{
	const struct cef_cfg *cfg = config;
	struct cef *st = sl_state_new(struct cef, host, inst, config);
	int verdict;
	struct sl_cef_conf c = {
		cfg->format == 1 ? SL_CEF_LEEF : SL_CEF_CEF, cfg->vendor, cfg->product,
		cfg->version ? cfg->version : SLUICE_VERSION,
		cfg->signature, cfg->name, (unsigned)cfg->severity, cfg->action, '\t',
	};

	if (!st)
		return -1;
	/* LEEF's header has no Name: a name set for it would be silently lost */
	if (c.format == SL_CEF_LEEF && strcmp(cfg->name, "{prefix}")) {
		host->config_error(inst, "name", "not written with format: leef (LEEF's header has no Name)");
		free(st);
		return -1;
	}
	c.delimiter = parse_delimiter(cfg->delimiter);
	if (!c.delimiter) {
		host->config_error(inst, "delimiter",
				   "expected tab or one printable character such as ^ (not a letter, "
				   "digit, space or one of \\ = | : . , - _)");
		free(st);
		return -1;
	}
	if (sl_cef_init(&st->fmt, &c) < 0) {
		host->config_error(inst, NULL, "out of memory");
		free(st);
		return -1;
	}
	/* nftrace's verdict (a string it registers), when one is configured */
	verdict = host->field_id(inst, "verdict");
	if (verdict >= 0 && host->field_type(inst, verdict) == SL_T_STRING)
		st->fmt.verdict_field = host->read_field(inst, "verdict");
	sl_rule_fields_find(&st->fmt.rule, host, inst);	/* nflog's attribution (rules: true) */
	st->safe = c.format == SL_CEF_CEF || c.delimiter != '\t';
	*state = st;
	return 0;
}

static int cef_start(void *state)
{
	struct cef *st = state;

	st->c_no_room = st->host->counter_new(st->inst, "no_room");
	return 0;
}

/* Most lines are well under this; a bigger one retries with all the room left. */
#define FIRST_TRY 2048

static int cef_process(void *state, struct sl_batch *b)
{
	struct cef *st = state;
	uint64_t no_room = 0;

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		struct sl_text_room t;
		struct sl_fmt_buf fb;

		sl_text_room_begin(&t, b, FIRST_TRY);
		while (sl_text_room_try(&t, b, &fb))
			sl_cef_format(&st->fmt, &fb, r);
		if (!sl_text_room_keep(&t, b, &fb, r)) {
			no_room++;
			continue;
		}
		if (st->safe)
			sl_set_text_safe(r);
	}
	if (no_room) {
		st->host->counter_add(st->inst, st->c_no_room, no_room);
		st->host->error_add(st->inst, no_room);
	}
	return 0;
}

static void cef_destroy(void *state)
{
	struct cef *st = state;

	sl_cef_free(&st->fmt);
	free(st);
}

/* Decoded packets, connections (nfct) or flows (flow): as logline's. */
static const struct sl_field_decl cef_packet_fields[] = { SL_FIELD_DECL(SL_F_IP_VERSION), SL_FIELD_END };
static const struct sl_field_decl cef_ct_fields[] = { SL_FIELD_DECL(SL_F_CT_EVENT), SL_FIELD_END };
static const struct sl_field_decl cef_flow_fields[] = {
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_END,
};
static const struct sl_field_decl *const cef_needs_one_of[] = {
	cef_packet_fields, cef_ct_fields, cef_flow_fields, NULL,
};

static const struct sl_plugin cef_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "cef",
	.description = "one ArcSight CEF (or QRadar LEEF) line per record, for SIEMs, see docs/PLUGINS.md",
	.config_size = sizeof(struct cef_cfg),
	.options = cef_options,
	.provides = cef_provides,
	.configure = cef_configure,
	.start = cef_start,
	.process = cef_process,
	.destroy = cef_destroy,
	.needs_one_of = cef_needs_one_of,
	.reads = cef_reads,
};

SLUICE_PLUGIN(cef_plugin)
