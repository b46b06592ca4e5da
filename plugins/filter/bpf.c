/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpf: keep the records whose packet matches a tcpdump expression.
 *
 * The expression is compiled once, in configure(), for DLT_RAW: the packet
 * is matched from its IP header on (SL_F_PACKET as netfilter delivers it),
 * so link-layer primitives (ether, vlan, arp...) are refused at `sluice -t`.
 * Each record then costs one run of the classic BPF interpreter.
 */
#include <stdlib.h>

#include <pcap/pcap.h>

#include <sluice/plugin.h>

#include "plugin_state.h"

struct bpf_cfg {
	const char *expr;
	bool optimize;
};

struct bpf_state {
	SL_STATE_HEAD(struct bpf_cfg);
	struct bpf_program prog;
	int c_no_packet;
};

static int bpf_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			 void **state)
{
	const struct bpf_cfg *cfg = config;
	struct bpf_state *st = sl_state_new(struct bpf_state, host, inst, config);
	pcap_t *p;

	if (!st)
		return -1;
	p = pcap_open_dead(DLT_RAW, 65535);
	if (!p) {
		host->config_error(inst, NULL, "out of memory");
		goto fail;
	}
	if (pcap_compile(p, &st->prog, cfg->expr, cfg->optimize, PCAP_NETMASK_UNKNOWN) < 0) {
		host->config_error(inst, "expr", "%s", pcap_geterr(p));
		goto fail;
	}
	pcap_close(p);
	st->c_no_packet = host->counter_new(inst, "no_packet");
	*state = st;
	return 0;
fail:
	if (p)
		pcap_close(p);
	free(st);
	return -1;
}

static int bpf_process(void *state, struct sl_batch *b)
{
	struct bpf_state *st = state;
	unsigned i, kept = 0, no_packet = 0;

	for (i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		struct pcap_pkthdr h;

		if (!sl_has(r, SL_F_PACKET)) {
			no_packet++;
			continue;
		}
		h.caplen = r->v[SL_F_PACKET].bytes.len;
		/* `len` / `greater` in an expression mean the length on the wire. */
		h.len = h.caplen;
		if (sl_has(r, SL_F_ORIG_LEN) && r->v[SL_F_ORIG_LEN].u64 > h.caplen &&
		    r->v[SL_F_ORIG_LEN].u64 <= UINT32_MAX)
			h.len = (bpf_u_int32)r->v[SL_F_ORIG_LEN].u64;
		h.ts.tv_sec = 0;
		h.ts.tv_usec = 0;
		if (pcap_offline_filter(&st->prog, &h, r->v[SL_F_PACKET].bytes.ptr))
			b->rec[kept++] = r;
	}
	b->count = kept;
	if (no_packet)
		st->host->counter_add(st->inst, st->c_no_packet, no_packet);
	return 0;
}

static void bpf_destroy(void *state)
{
	struct bpf_state *st = state;

	pcap_freecode(&st->prog);
	free(st);
}

static const struct sl_option bpf_options[] = {
	SL_OPT_STR("expr", struct bpf_cfg, expr, SL_REQUIRED,
		   "tcpdump filter expression, matched from the IP header on (DLT_RAW)"),
	SL_OPT_BOOL("optimize", struct bpf_cfg, optimize, "true", "let libpcap optimize the filter program"),
	SL_OPT_END
};

static const struct sl_field_decl bpf_needs[] = {
	SL_FIELD_DECL(SL_F_PACKET),
	SL_FIELD_END
};

static const struct sl_plugin bpf_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "bpf",
	.description = "keep records whose IP packet matches a tcpdump (pcap-filter) expression",
	.config_size = sizeof(struct bpf_cfg),
	.options = bpf_options,
	.needs = bpf_needs,
	.configure = bpf_configure,
	.process = bpf_process,
	.destroy = bpf_destroy,
};

SLUICE_PLUGIN(bpf_plugin)
