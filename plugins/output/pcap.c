/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcap output: packets to pcap files with nanosecond timestamps, link type
 * raw IP, Ethernet or NFLOG (the format `tcpdump -i nflog -w` writes, so the
 * prefix, hook, mark, interfaces, uid/gid and hardware header survive).
 *
 * `format: pcapng` writes the same frames as pcapng blocks (pcapng.h): an
 * interface per (link type, interface name) and a comment per packet
 * saying why it is there (prefix, rule, conntrack id, Community ID).
 *
 * The file header comes from libpcap (pcap_open_dead_with_tstamp_precision
 * + pcap_dump_fopen into memory) and starts every file; records are laid out
 * exactly as pcap_dump() writes them (host-order 16-byte header, then the
 * bytes), straight into the shared outfile buffer: no stdio, no syscall and
 * no malloc per packet, plus the outfile's rotation and error handling.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <pcap/pcap.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "outfile.h"
#include "pcapng.h"
#include "plugin_state.h"
#include "time_clamp.h"

#ifndef DLT_NFLOG
#define DLT_NFLOG 239
#endif

enum { LT_RAW, LT_ETHERNET, LT_NFLOG };
static const char *const linktype_names[] = { "raw", "ethernet", "nflog", NULL };
enum { FMT_PCAP, FMT_PCAPNG };
static const char *const format_names[] = { "pcap", "pcapng", NULL };

#define PREFIX_MAX 255	/* the kernel's is 128 with the NUL */
#define HWHDR_MAX 64
/* nfgenmsg + every metadata TLV at its largest + the payload TLV header */
#define NFLOG_META_MAX (4 + 8 + (4 + PREFIX_MAX + 1 + 3) + 4 * 8 + 8 + 16 + 8 + 8 + \
			(4 + HWHDR_MAX + 3) + 20 + 8 + 8 + 8 + 8 + 4)

struct pcap_cfg {
	const char *file;
	int format;
	int linktype;
	int64_t snaplen;
	struct sl_outfile_cfg out;
};

struct pcap_state {
	SL_OUTFILE_STATE_HEAD(struct pcap_cfg);
	uint32_t snaplen;
	int c_skipped;
	/* format: pcapng */
	uint16_t dlt;
	int f_cid, f_table, f_chain, f_handle, f_comment, f_verdict;	/* -1: no such field */
	uint8_t *frame;		/* the record being written: its first byte */
	size_t sect;		/* bytes of section before its EPB (a new interface) */
	size_t clen;		/* bytes of its comment */
	char comment[SL_PCAPNG_COMMENT_MAX];
	struct sl_pcapng ng;
};
/* What pcap_dump() writes before each packet (struct pcap_sf_pkthdr). */
struct sf_pkthdr {
	uint32_t ts_sec;
	uint32_t ts_frac;	/* nanoseconds: the file has the nanosecond magic */
	uint32_t caplen;
	uint32_t len;
};

/*
 * The records after the file header that are whole (outfile's whole_end):
 * walk the record headers; a caplen larger than any packet we write, or a
 * record running past the end, is where a crash cut the file.
 */
static size_t pcap_whole_end(const uint8_t *p, size_t len)
{
	size_t off = 0;

	while (len - off >= sizeof(struct sf_pkthdr)) {
		struct sf_pkthdr h;

		memcpy(&h, p + off, sizeof(h));
		if (h.caplen > 262144 + NFLOG_META_MAX || h.caplen > len - off - sizeof(h))
			break;
		off += sizeof(h) + h.caplen;
	}
	return off;
}

static const struct sl_option pcap_opts[] = {
	SL_OPT_STR("file", struct pcap_cfg, file, SL_PATH_REQUIRED(SL_OPT_OUT_FILE),
		   "pcap file; '-' is stdout; a '%' makes it a strftime pattern"),
	SL_OPT_ENUM("format", struct pcap_cfg, format, "pcap", format_names,
		    "pcap, or pcapng (interfaces by name, a comment per packet saying why)"),
	SL_OPT_ENUM("linktype", struct pcap_cfg, linktype, "raw", linktype_names,
		    "raw (IP packets), ethernet (rebuilt link header) or nflog (all metadata)"),
	SL_OPT_INT("snaplen", struct pcap_cfg, snaplen, "262144", 64, 262144,
		   "bytes kept of each frame"),
	SL_OUTFILE_OPTIONS(struct pcap_cfg, out, "1MiB", 65536),
	SL_OPT_END
};

static const struct sl_field_decl pcap_needs[] = {
	SL_FIELD_DECL(SL_F_PACKET),
	SL_FIELD_END
};

/*
 * Read when present (a queue in front of it copies needs + these, and the
 * input above may leave out what no one reads): the raw link type's; the
 * other link types ask for theirs in configure() (read_field()).
 */
static const struct sl_field_decl pcap_reads[] = {
	SL_FIELD_DECL(SL_F_ORIG_LEN),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	SL_FIELD_END
};

static const struct sl_field_decl pcap_reads_ethernet[] = {
	SL_FIELD_DECL(SL_F_HWADDR),
	SL_FIELD_DECL(SL_F_HWHDR),
	SL_FIELD_DECL(SL_F_HWTYPE),
	SL_FIELD_DECL(SL_F_HW_PROTOCOL),
	SL_FIELD_DECL(SL_F_MAC_DST),
	SL_FIELD_DECL(SL_F_MAC_SRC),
	SL_FIELD_DECL(SL_F_VLAN_ID),
	SL_FIELD_END
};

static const struct sl_field_decl pcap_reads_nflog[] = {
	SL_FIELD_DECL(SL_F_FAMILY),
	SL_FIELD_DECL(SL_F_GID),
	SL_FIELD_DECL(SL_F_HOOK),
	SL_FIELD_DECL(SL_F_HWADDR),
	SL_FIELD_DECL(SL_F_HWHDR),
	SL_FIELD_DECL(SL_F_HWTYPE),
	SL_FIELD_DECL(SL_F_HW_PROTOCOL),
	SL_FIELD_DECL(SL_F_IFINDEX_IN),
	SL_FIELD_DECL(SL_F_IFINDEX_OUT),
	SL_FIELD_DECL(SL_F_MARK),
	SL_FIELD_DECL(SL_F_NFLOG_GROUP),
	SL_FIELD_DECL(SL_F_PHYSINDEX_IN),
	SL_FIELD_DECL(SL_F_PHYSINDEX_OUT),
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_DECL(SL_F_SEQ_GLOBAL),
	SL_FIELD_DECL(SL_F_SEQ_LOCAL),
	SL_FIELD_DECL(SL_F_UID),
	SL_FIELD_END
};

/* What the pcapng comment and interface names read when present. */
static const struct sl_field_decl pcap_reads_pcapng[] = {
	SL_FIELD_DECL(SL_F_CT_ID),
	SL_FIELD_DECL(SL_F_IFINDEX_IN),
	SL_FIELD_DECL(SL_F_IFINDEX_OUT),
	SL_FIELD_DECL(SL_F_IFNAME_IN),
	SL_FIELD_DECL(SL_F_IFNAME_OUT),
	SL_FIELD_DECL(SL_F_NFLOG_GROUP),
	SL_FIELD_DECL(SL_F_PREFIX),
	SL_FIELD_END
};

static const struct sl_field_decl *const linktype_reads[] = {
	[LT_RAW] = NULL,
	[LT_ETHERNET] = pcap_reads_ethernet,
	[LT_NFLOG] = pcap_reads_nflog,
};

static int dlt_of(int linktype)
{
	switch (linktype) {
	case LT_ETHERNET:
		return DLT_EN10MB;
	case LT_NFLOG:
		return DLT_NFLOG;
	default:
		return DLT_RAW;
	}
}

/* The 24-byte file header, as libpcap writes it. */
static int make_header(struct pcap_state *st, uint8_t **hdr, size_t *len)
{
	pcap_t *p;
	pcap_dumper_t *d;
	FILE *f;
	char *mem = NULL;
	size_t memlen = 0;

	p = pcap_open_dead_with_tstamp_precision(dlt_of(st->cfg->linktype), (int)st->snaplen,
						 PCAP_TSTAMP_PRECISION_NANO);
	if (!p)
		return -1;
	f = open_memstream(&mem, &memlen);
	if (!f) {
		pcap_close(p);
		return -1;
	}
	d = pcap_dump_fopen(p, f);
	if (!d) {
		fclose(f);
		free(mem);
		pcap_close(p);
		return -1;
	}
	pcap_dump_close(d);	/* fclose(f): mem/memlen now hold the header */
	pcap_close(p);
	if (memlen == 0) {
		free(mem);
		return -1;
	}
	*hdr = (uint8_t *)mem;
	*len = memlen;
	return 0;
}

/*
 * A field the comment reads when a record has it, by name: registered by
 * a plugin (community_id by decode, rule_* by nflog's rule attribution),
 * so -1 when no plugin loaded has it, or it has another type.
 */
static int optional_field(const struct sl_host *host, struct sl_instance *inst, const char *name,
			  enum sl_type type)
{
	int id = SL_HOST_HAS(host, read_field) ? host->read_field(inst, name)
					       : host->field_id(inst, name);

	if (id < 0 || host->field_type(inst, id) != type)
		return -1;
	return id;
}

/* The pcapng writer and the fields it reads beyond the frame's. */
static void pcapng_configure(const struct sl_host *host, struct sl_instance *inst,
			     struct pcap_state *st)
{
	for (const struct sl_field_decl *f = pcap_reads_pcapng;
	     f->name && SL_HOST_HAS(host, read_field); f++)
		host->read_field(inst, f->name);
	st->dlt = (uint16_t)dlt_of(st->cfg->linktype);
	st->f_cid = optional_field(host, inst, "community_id", SL_T_STRING);
	st->f_table = optional_field(host, inst, "rule_table", SL_T_STRING);
	st->f_chain = optional_field(host, inst, "rule_chain", SL_T_STRING);
	st->f_handle = optional_field(host, inst, "rule_handle", SL_T_U64);
	st->f_comment = optional_field(host, inst, "rule_comment", SL_T_STRING);
	st->f_verdict = optional_field(host, inst, "rule_verdict", SL_T_STRING);
	sl_pcapng_init(&st->ng, st->snaplen);
}

/* The bytes one packet record can take at most, and the buffer two need. */
static uint64_t record_max(const struct pcap_cfg *cfg)
{
	uint64_t n = (uint64_t)cfg->snaplen + sizeof(struct sf_pkthdr) + NFLOG_META_MAX;

	if (cfg->format == FMT_PCAPNG)	/* a new interface's section, the comment */
		n = (uint64_t)cfg->snaplen + NFLOG_META_MAX + SL_PCAPNG_SECTION_MAX +
		    sl_pcapng_epb_len(0, SL_PCAPNG_COMMENT_MAX);
	return n;
}

static int pcap_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct pcap_cfg *cfg = config;
	struct sl_outfile_opts o = sl_outfile_opts_of(cfg->file, &cfg->out);
	struct pcap_state *st;
	uint8_t *hdr;
	size_t hdr_len;

	o.whole_end = pcap_whole_end;
	if (cfg->format == FMT_PCAPNG) {
		o.whole_end = sl_pcapng_whole_end;
		o.header_key = SL_PCAPNG_SHB_LEN;
	}
	if (sl_outfile_check(host, inst, &o) < 0)
		return -1;
	if (cfg->out.buffer < 2 * record_max(cfg)) {
		host->config_error(inst, "buffer", "must be at least %llu bytes: two packets of snaplen %lld",
				   (unsigned long long)(2 * record_max(cfg)), (long long)cfg->snaplen);
		return -1;
	}
	/* read_field() is ABI 1.3: once SL_ABI_MINOR says so, every daemon loading this has it */
	for (const struct sl_field_decl *f = linktype_reads[cfg->linktype];
	     f && f->name && SL_HOST_HAS(host, read_field); f++)
		host->read_field(inst, f->name);
	st = sl_outfile_state_new(struct pcap_state, host, inst, config);
	if (!st)
		return -1;
	st->snaplen = (uint32_t)cfg->snaplen;
	if (cfg->format == FMT_PCAPNG) {
		/* the section: the SHB until packets name interfaces */
		pcapng_configure(host, inst, st);
		hdr = NULL;
	} else if (make_header(st, &hdr, &hdr_len) < 0) {
		host->config_error(inst, "linktype", "libpcap cannot write this link type");
		free(st);
		return -1;
	}
	st->of = sl_outfile_new(host, inst, &o);
	/* pcapng: room for the largest section now, so a new interface's costs no malloc */
	if (!st->of || (!hdr && sl_outfile_set_header(st->of, st->ng.section, sizeof(st->ng.section)) < 0) ||
	    (hdr ? sl_outfile_set_header(st->of, hdr, hdr_len)
		 : sl_outfile_set_header(st->of, sl_pcapng_section(&st->ng, &hdr_len), st->ng.section_len)) < 0) {
		free(hdr);
		sl_outfile_free(st->of);
		free(st);
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	free(hdr);
	st->c_skipped = host->counter_new(inst, "skipped");
	*state = st;
	return 0;
}

static uint16_t ethertype_of(const struct sl_record *r, const struct sl_bytes *pkt)
{
	if (sl_has(r, SL_F_HW_PROTOCOL) && r->v[SL_F_HW_PROTOCOL].u64)
		return (uint16_t)r->v[SL_F_HW_PROTOCOL].u64;
	if (pkt->len && (pkt->ptr[0] >> 4) == 6)
		return 0x86dd;
	return 0x0800;
}

static bool is_ip(const struct sl_bytes *pkt)
{
	return pkt->len && ((pkt->ptr[0] >> 4) == 4 || (pkt->ptr[0] >> 4) == 6);
}

/* An Ethernet header as captured (14, or 18 with a VLAN tag)? */
static bool eth_hwhdr(const struct sl_record *r)
{
	uint32_t len;

	if (!sl_has(r, SL_F_HWHDR))
		return false;
	if (sl_has(r, SL_F_HWTYPE) && r->v[SL_F_HWTYPE].u64 != 1 /* ARPHRD_ETHER */ &&
	    r->v[SL_F_HWTYPE].u64 != 772 /* ARPHRD_LOOPBACK */)
		return false;
	len = r->v[SL_F_HWHDR].bytes.len;
	return len == 14 || len == 18;
}

static bool is_vlan_ethertype(const uint8_t *p)
{
	uint16_t t = (uint16_t)(p[0] << 8 | p[1]);

	return t == 0x8100 || t == 0x88a8 || t == 0x9100;
}

/*
 * Is the record's vlan_id the frame's own first tag (decode read it from
 * the frame) rather than one the kernel reported apart?  With a 14-byte
 * header a tag in the frame starts the packet.  A double-tagged frame
 * whose outer tag went to metadata has a different inner id, unless both
 * ids are equal: then the outer tag is not written.
 */
static bool tag_in_frame(const struct sl_record *r, const uint8_t *l2, const struct sl_bytes *pkt)
{
	if (!is_vlan_ethertype(l2 + 12))
		return false;
	if (pkt->len < 2)
		return true;
	return ((pkt->ptr[0] << 8 | pkt->ptr[1]) & 0x0fff) == r->v[SL_F_VLAN_ID].u64;
}

static void put_rec_hdr(uint8_t *dst, const struct sl_time *ts, uint32_t caplen, uint32_t len)
{
	/* the file's seconds are unsigned 32-bit: clamped to them (time_clamp.h) */
	struct sl_time t = sl_time_clamp(*ts, 0, SL_TIME_SEC_U32_MAX);
	struct sf_pkthdr h = {
		.ts_sec = (uint32_t)t.sec,
		.ts_frac = t.nsec,
		.caplen = caplen,
		.len = len,
	};

	memcpy(dst, &h, sizeof(h));
}

/* A string field of the record, or NULL. */
static const struct sl_bytes *str_of(const struct sl_record *r, int f)
{
	return f >= 0 && sl_has(r, (sl_field)f) ? &r->v[f].bytes : NULL;
}

/* Why the packet is there, as pcapng.h's comment: into st->comment. */
static void make_comment(struct pcap_state *st, const struct sl_record *r)
{
	struct sl_pcapng_why why = {
		.prefix = str_of(r, SL_F_PREFIX),
		.table = str_of(r, st->f_table),
		.chain = str_of(r, st->f_chain),
		.comment = str_of(r, st->f_comment),
		.verdict = str_of(r, st->f_verdict),
		.has_handle = st->f_handle >= 0 && sl_has(r, (sl_field)st->f_handle),
		.has_ct_id = sl_has(r, SL_F_CT_ID),
		.community_id = str_of(r, st->f_cid),
	};
	struct sl_fmt_buf b;

	if (why.has_handle)
		why.handle = r->v[st->f_handle].u64;
	if (why.has_ct_id)
		why.ct_id = r->v[SL_F_CT_ID].u64;
	sl_fmt_init(&b, st->comment, sizeof(st->comment));
	st->clen = sl_pcapng_comment(&b, &why);
}

/*
 * The interface a packet is written on: its input interface's name, else
 * its output's, else the index ("ifindex:N"), else its NFLOG group
 * ("nflog:N", as tcpdump names the device), else "any".  The index of
 * that interface; *added when the section grew for it.
 */
static int interface_of(struct pcap_state *st, const struct sl_record *r, bool *added)
{
	char tmp[32];
	const char *name = tmp;
	size_t len;
	int id;

	*added = false;
	if (sl_has(r, SL_F_IFNAME_IN) && r->v[SL_F_IFNAME_IN].bytes.len) {
		name = (const char *)r->v[SL_F_IFNAME_IN].bytes.ptr;
		len = r->v[SL_F_IFNAME_IN].bytes.len;
	} else if (sl_has(r, SL_F_IFNAME_OUT) && r->v[SL_F_IFNAME_OUT].bytes.len) {
		name = (const char *)r->v[SL_F_IFNAME_OUT].bytes.ptr;
		len = r->v[SL_F_IFNAME_OUT].bytes.len;
	} else if (sl_has(r, SL_F_IFINDEX_IN) || sl_has(r, SL_F_IFINDEX_OUT)) {
		len = (size_t)snprintf(tmp, sizeof(tmp), "ifindex:%llu",
				       (unsigned long long)r->v[sl_has(r, SL_F_IFINDEX_IN) ? SL_F_IFINDEX_IN
											: SL_F_IFINDEX_OUT].u64);
	} else if (sl_has(r, SL_F_NFLOG_GROUP)) {
		len = (size_t)snprintf(tmp, sizeof(tmp), "nflog:%llu",
				       (unsigned long long)r->v[SL_F_NFLOG_GROUP].u64);
	} else {
		len = (size_t)snprintf(tmp, sizeof(tmp), "any");
	}
	if (memchr(name, 0, len))
		len = strlen(name);	/* a name stored with its C terminator */
	id = sl_pcapng_if_find(&st->ng, st->dlt, name, len);
	if (id < 0)
		id = sl_pcapng_if_add(&st->ng, st->dlt, name, len, added);
	return id;
}

/*
 * Room for a frame of caplen bytes (of a len-byte packet) in its record:
 * the place to copy the frame to, with the record's header written, or
 * NULL (dropped and counted by the outfile).  frame_commit() finishes it.
 * pcapng: the EPB, after the grown section when the interface is new (a
 * packet dropped takes its interface back: the next one adds it again).
 */
static uint8_t *frame_reserve(struct pcap_state *st, const struct sl_record *r,
			      const struct sl_time *ts, uint32_t caplen, uint32_t len)
{
	uint8_t *dst;
	bool added;
	int id;

	if (st->cfg->format == FMT_PCAP) {
		dst = sl_outfile_reserve(st->of, sizeof(struct sf_pkthdr) + caplen);
		if (!dst)
			return NULL;
		put_rec_hdr(dst, ts, caplen, len);
		return dst + sizeof(struct sf_pkthdr);
	}
	make_comment(st, r);
	id = interface_of(st, r, &added);
	st->sect = added ? st->ng.section_len : 0;
	dst = sl_outfile_reserve(st->of, st->sect + sl_pcapng_epb_len(caplen, st->clen));
	if (!dst) {
		if (added)
			sl_pcapng_if_undo(&st->ng);
		return NULL;
	}
	memcpy(dst, st->ng.section, st->sect);
	st->frame = dst;
	sl_pcapng_epb_begin(dst + st->sect, (uint32_t)id, ts, caplen, len, st->clen);
	return dst + st->sect + SL_PCAPNG_EPB_HDR;
}

static void frame_commit(struct pcap_state *st, uint32_t caplen)
{
	if (st->cfg->format == FMT_PCAP) {
		sl_outfile_commit(st->of, sizeof(struct sf_pkthdr) + caplen);
		return;
	}
	sl_pcapng_epb_end(st->frame + st->sect, caplen, st->comment, st->clen);
	sl_outfile_commit(st->of, st->sect + sl_pcapng_epb_len(caplen, st->clen));
	/* every file opened from now on starts with the grown section */
	if (st->sect)
		sl_outfile_set_header(st->of, st->ng.section, st->ng.section_len);	/* fits: no malloc */
}

static int write_raw(struct pcap_state *st, const struct sl_record *r, const struct sl_time *ts)
{
	const struct sl_bytes *pkt = &r->v[SL_F_PACKET].bytes;
	uint32_t len = pkt->len, caplen = len < st->snaplen ? len : st->snaplen;
	uint8_t *dst;

	if (!is_ip(pkt))
		return 1;	/* DLT_RAW holds only IPv4/IPv6 */
	if (sl_has(r, SL_F_ORIG_LEN) && r->v[SL_F_ORIG_LEN].u64 > len)
		len = (uint32_t)r->v[SL_F_ORIG_LEN].u64;
	dst = frame_reserve(st, r, ts, caplen, len);
	if (!dst)
		return -1;
	memcpy(dst, pkt->ptr, caplen);
	frame_commit(st, caplen);
	return 0;
}

static int write_eth(struct pcap_state *st, const struct sl_record *r, const struct sl_time *ts)
{
	const struct sl_bytes *pkt = &r->v[SL_F_PACKET].bytes;
	uint8_t l2[18];
	uint32_t l2len, len, caplen;
	uint8_t *dst;

	if (eth_hwhdr(r)) {
		l2len = r->v[SL_F_HWHDR].bytes.len;
		memcpy(l2, r->v[SL_F_HWHDR].bytes.ptr, l2len);
	} else {
		/* No usable header: zero MACs unless we know them. */
		uint16_t et = htons(ethertype_of(r, pkt));

		memset(l2, 0, sizeof(l2));
		if (sl_has(r, SL_F_MAC_DST))
			memcpy(l2, r->v[SL_F_MAC_DST].addr, 6);
		if (sl_has(r, SL_F_MAC_SRC))
			memcpy(l2 + 6, r->v[SL_F_MAC_SRC].addr, 6);
		else if (sl_has(r, SL_F_HWADDR) && r->v[SL_F_HWADDR].bytes.len >= 6)
			memcpy(l2 + 6, r->v[SL_F_HWADDR].bytes.ptr, 6);
		memcpy(l2 + 12, &et, 2);
		l2len = 14;
	}
	if (l2len == 14 && sl_has(r, SL_F_VLAN_ID) && !tag_in_frame(r, l2, pkt)) {
		/*
		 * The receive path moved the tag out of the frame (NFULA_VLAN):
		 * put it back where it was on the wire.  Only the id is known;
		 * priority and DEI are written as 0.
		 */
		uint16_t tag[2] = { htons(0x8100), htons((uint16_t)(r->v[SL_F_VLAN_ID].u64 & 0x0fff)) };

		memmove(l2 + 16, l2 + 12, 2);
		memcpy(l2 + 12, tag, 4);
		l2len = 18;
	}
	len = l2len + pkt->len;
	if (sl_has(r, SL_F_ORIG_LEN) && r->v[SL_F_ORIG_LEN].u64 > pkt->len)
		len = l2len + (uint32_t)r->v[SL_F_ORIG_LEN].u64;
	caplen = l2len + pkt->len;
	if (caplen > st->snaplen)
		caplen = st->snaplen;
	dst = frame_reserve(st, r, ts, caplen, len);
	if (!dst)
		return -1;
	memcpy(dst, l2, l2len);	/* snaplen >= 64 > l2len */
	memcpy(dst + l2len, pkt->ptr, caplen - l2len);
	frame_commit(st, caplen);
	return 0;
}

/* One NFLOG TLV: length and type in host order, value padded to 4. */
static uint8_t *tlv(uint8_t *p, uint16_t type, const void *val, uint32_t len)
{
	uint16_t hdr[2] = { (uint16_t)(4 + len), type };
	uint32_t pad = (4 - (len & 3)) & 3;

	memcpy(p, hdr, 4);
	memcpy(p + 4, val, len);
	memset(p + 4 + len, 0, pad);
	return p + 4 + len + pad;
}

static uint8_t *tlv_be32(uint8_t *p, uint16_t type, uint64_t v)
{
	uint32_t be = htonl((uint32_t)v);

	return tlv(p, type, &be, 4);
}

static uint8_t *tlv_be16(uint8_t *p, uint16_t type, uint64_t v)
{
	uint16_t be = htons((uint16_t)v);

	return tlv(p, type, &be, 2);
}

/* nfgenmsg and the metadata TLVs, in the kernel's order; returns the end. */
static uint8_t *nflog_meta(uint8_t *p, const struct sl_record *r, const struct sl_time *ts)
{
	const struct sl_bytes *pkt = &r->v[SL_F_PACKET].bytes;
	struct nfgenmsg nfg = { .version = NFNETLINK_V0, .res_id = 0 };
	struct nfulnl_msg_packet_hdr ph = { 0 };
	static const struct {
		sl_field f;
		uint16_t type;
	} be32s[] = {
		{ SL_F_IFINDEX_IN, NFULA_IFINDEX_INDEV },
		{ SL_F_IFINDEX_OUT, NFULA_IFINDEX_OUTDEV },
		{ SL_F_PHYSINDEX_IN, NFULA_IFINDEX_PHYSINDEV },
		{ SL_F_PHYSINDEX_OUT, NFULA_IFINDEX_PHYSOUTDEV },
		{ SL_F_MARK, NFULA_MARK },
	};
	unsigned i;

	if (sl_has(r, SL_F_NFLOG_GROUP))
		nfg.res_id = htons((uint16_t)r->v[SL_F_NFLOG_GROUP].u64);
	if (sl_has(r, SL_F_FAMILY))
		nfg.nfgen_family = (uint8_t)r->v[SL_F_FAMILY].u64;
	else
		nfg.nfgen_family = pkt->len && (pkt->ptr[0] >> 4) == 6 ? 10 /* NFPROTO_IPV6 */
									: 2 /* NFPROTO_IPV4 */;
	memcpy(p, &nfg, sizeof(nfg));
	p += sizeof(nfg);

	ph.hw_protocol = htons(ethertype_of(r, pkt));
	ph.hook = sl_has(r, SL_F_HOOK) ? (uint8_t)r->v[SL_F_HOOK].u64 : 0;
	p = tlv(p, NFULA_PACKET_HDR, &ph, sizeof(ph));

	if (sl_has(r, SL_F_PREFIX)) {
		const struct sl_bytes *pf = &r->v[SL_F_PREFIX].bytes;
		uint32_t n = pf->len < PREFIX_MAX ? pf->len : PREFIX_MAX;
		const uint8_t *nul = memchr(pf->ptr, 0, n);
		uint16_t hdr[2];

		if (nul)
			n = (uint32_t)(nul - pf->ptr);
		/* The kernel sends the prefix with its NUL. */
		hdr[0] = (uint16_t)(4 + n + 1);
		hdr[1] = NFULA_PREFIX;
		memcpy(p, hdr, 4);
		memcpy(p + 4, pf->ptr, n);
		memset(p + 4 + n, 0, 1 + ((4 - ((n + 1) & 3)) & 3));
		p += 4 + ((n + 1 + 3) & ~3u);
	}
	for (i = 0; i < sizeof(be32s) / sizeof(be32s[0]); i++)
		if (sl_has(r, be32s[i].f))
			p = tlv_be32(p, be32s[i].type, r->v[be32s[i].f].u64);
	if (sl_has(r, SL_F_HWADDR)) {
		struct nfulnl_msg_packet_hw hw = { 0 };
		uint32_t n = r->v[SL_F_HWADDR].bytes.len;

		if (n > sizeof(hw.hw_addr))
			n = sizeof(hw.hw_addr);
		hw.hw_addrlen = htons((uint16_t)n);
		memcpy(hw.hw_addr, r->v[SL_F_HWADDR].bytes.ptr, n);
		p = tlv(p, NFULA_HWADDR, &hw, sizeof(hw));
	}
	if (sl_has(r, SL_F_HWHDR)) {
		uint32_t n = r->v[SL_F_HWHDR].bytes.len;

		if (n > HWHDR_MAX)
			n = HWHDR_MAX;
		if (sl_has(r, SL_F_HWTYPE))
			p = tlv_be16(p, NFULA_HWTYPE, r->v[SL_F_HWTYPE].u64);
		p = tlv_be16(p, NFULA_HWLEN, n);
		p = tlv(p, NFULA_HWHEADER, r->v[SL_F_HWHDR].bytes.ptr, n);
	}
	{
		/* unsigned seconds: 1970 .. the calendar's end (time_clamp.h) */
		struct sl_time c = sl_time_clamp(*ts, 0, SL_TIME_SEC_MAX);
		struct nfulnl_msg_packet_timestamp t = {
			.sec = htobe64((uint64_t)c.sec),
			.usec = htobe64(c.nsec / 1000),
		};

		p = tlv(p, NFULA_TIMESTAMP, &t, sizeof(t));
	}
	if (sl_has(r, SL_F_UID))
		p = tlv_be32(p, NFULA_UID, r->v[SL_F_UID].u64);
	if (sl_has(r, SL_F_GID))
		p = tlv_be32(p, NFULA_GID, r->v[SL_F_GID].u64);
	if (sl_has(r, SL_F_SEQ_LOCAL))
		p = tlv_be32(p, NFULA_SEQ, r->v[SL_F_SEQ_LOCAL].u64);
	if (sl_has(r, SL_F_SEQ_GLOBAL))
		p = tlv_be32(p, NFULA_SEQ_GLOBAL, r->v[SL_F_SEQ_GLOBAL].u64);
	return p;
}

static int write_nflog(struct pcap_state *st, const struct sl_record *r, const struct sl_time *ts)
{
	const struct sl_bytes *pkt = &r->v[SL_F_PACKET].bytes;
	uint8_t meta[NFLOG_META_MAX];
	uint32_t meta_len, pay, pad, full_len, caplen;
	uint16_t hdr[2];
	uint8_t *dst, *p;

	meta_len = (uint32_t)(nflog_meta(meta, r, ts) - meta);
	pad = (4 - (pkt->len & 3)) & 3;
	full_len = meta_len + 4 + pkt->len + pad;
	/* Cut the payload, not the TLV chain, so the record stays parseable. */
	pay = pkt->len;
	if (full_len > st->snaplen) {
		pay = st->snaplen > meta_len + 4 ? (st->snaplen - meta_len - 4) & ~3u : 0;
		pad = 0;
	}
	caplen = meta_len + 4 + pay + pad;
	if (caplen > st->snaplen) {
		/* Even the metadata does not fit: cut it, as tcpdump would. */
		caplen = st->snaplen;
		dst = frame_reserve(st, r, ts, caplen, full_len);
		if (!dst)
			return -1;
		memcpy(dst, meta, caplen);
		frame_commit(st, caplen);
		return 0;
	}
	dst = frame_reserve(st, r, ts, caplen, full_len);
	if (!dst)
		return -1;
	p = dst;
	memcpy(p, meta, meta_len);
	p += meta_len;
	hdr[0] = (uint16_t)(4 + pay);
	hdr[1] = NFULA_PAYLOAD;
	memcpy(p, hdr, 4);
	memcpy(p + 4, pkt->ptr, pay);
	memset(p + 4 + pay, 0, pad);
	frame_commit(st, caplen);
	return 0;
}

static int pcap_process(void *state, struct sl_batch *b)
{
	struct pcap_state *st = state;
	struct sl_time now = { 0, 0 };
	unsigned i, skipped = 0;

	for (i = 0; i < b->count; i++) {
		const struct sl_record *r = b->rec[i];
		const struct sl_time *ts;
		int rc;

		if (!sl_has(r, SL_F_PACKET)) {
			skipped++;
			continue;
		}
		if (sl_has(r, SL_F_TIMESTAMP)) {
			ts = &r->v[SL_F_TIMESTAMP].time;
		} else {
			if (!now.sec)	/* once per batch: the input gave none */
				now = sl_clock_time(CLOCK_REALTIME);
			ts = &now;
		}
		switch (st->cfg->linktype) {
		case LT_ETHERNET:
			rc = write_eth(st, r, ts);
			break;
		case LT_NFLOG:
			rc = write_nflog(st, r, ts);
			break;
		default:
			rc = write_raw(st, r, ts);
			break;
		}
		if (rc > 0)
			skipped++;
	}
	if (skipped) {
		st->host->counter_add(st->inst, st->c_skipped, skipped);
		st->host->dropped_add(st->inst, skipped);
	}
	return 0;
}

static const struct sl_plugin pcap_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_OUTPUT,
	.name = "pcap",
	.description = "write packets to pcap files (raw IP, Ethernet or NFLOG link type), with rotation",
	.config_size = sizeof(struct pcap_cfg),
	.options = pcap_opts,
	.needs = pcap_needs,
	.reads = pcap_reads,
	.configure = pcap_configure,
	.start = sl_outfile_plugin_start,
	.process = pcap_process,
	.flush = sl_outfile_plugin_flush,
	.reopen = sl_outfile_plugin_reopen,
	.stop = sl_outfile_plugin_stop,
	.destroy = sl_outfile_plugin_destroy,
};

SLUICE_PLUGIN(pcap_plugin)
