/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as a capture file, read the two ways replay
 * reads one: in place (a classic pcap in this machine's byte order:
 * sl_cap_map_next) and through libpcap (pcapng, the other byte order, and
 * every classic file too: fmemopen + pcap_fopen_offline).  Every packet
 * becomes a record (sl_cap_fill), is decoded and made a text line.  The
 * framing must never read outside the file, nor sl_cap_fill outside the
 * packet: libpcap's packets are copied to exact-size buffers first, as
 * replay copies them into the batch arena.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "capture.h"
#include "logline_fmt.h"
#include "pkt_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Bounds the time one input can take (a file of many empty records). */
#define MAX_PACKETS 4096

static void use_record(struct sl_record *r, int dlt, const uint8_t *p, uint32_t caplen,
		       uint32_t len, const struct pcap_pkthdr *h)
{
	static const struct sl_pkt_decode_opts opts = {.checksums = true};
	static const char empty[1];
	static char line[4096];
	struct sl_time ts = {h->ts.tv_sec, (uint32_t)h->ts.tv_usec};
	struct sl_fmt_buf fb;

	memset(r->present, 0, sizeof(r->present));
	if (sl_cap_fill(dlt, r, p, caplen, len, &ts) < 0)
		return;
	sl_pkt_decode(r, &opts);
	sl_set_bytes(r, SL_F_IFNAME_IN, empty, 0);
	sl_set_bytes(r, SL_F_IFNAME_OUT, empty, 0);
	sl_fmt_init(&fb, line, sizeof(line));
	sl_logline_format(&fb, r, SL_LOGLINE_TCPSEQ | SL_LOGLINE_TCPOPT | SL_LOGLINE_IPOPT |
					 SL_LOGLINE_UID);
}

static void read_mapped(struct sl_record *r, const uint8_t *file, size_t size)
{
	struct sl_cap_map m;
	struct pcap_pkthdr *h;
	const u_char *p;

	if (sl_cap_map_open(&m, file, size) < 0)
		return;
	for (int n = 0; n < MAX_PACKETS && sl_cap_map_next(&m, &h, &p) == 1; n++)
		use_record(r, m.dlt, p, h->caplen, h->len, h);
}

static void read_libpcap(struct sl_record *r, const uint8_t *file, size_t size)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *p;
	pcap_t *pc;
	FILE *fp;
	int dlt;

	if (!size || !(fp = fmemopen((void *)file, size, "rb")))
		return;
	pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, err);
	if (!pc) {
		fclose(fp);
		return;
	}
	dlt = pcap_datalink(pc);
	for (int n = 0; n < MAX_PACKETS && sl_cap_dlt_supported(dlt) && pcap_next_ex(pc, &h, &p) == 1;
	     n++) {
		uint8_t *copy = malloc(h->caplen ? h->caplen : 1);

		if (!copy)
			break;
		memcpy(copy, p, h->caplen);
		use_record(r, dlt, copy, h->caplen, h->len, h);
		free(copy);
	}
	pcap_close(pc);	/* closes fp */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sl_record *r = calloc(1, sizeof(*r) + SL_MAX_FIELDS * sizeof(union sl_value));
	/* An exact-size copy, so reading past the end trips AddressSanitizer. */
	uint8_t *copy = malloc(size ? size : 1);

	if (r && copy) {
		memcpy(copy, data, size);
		read_mapped(r, copy, size);
		read_libpcap(r, copy, size);
	}
	free(copy);
	free(r);
	return 0;
}
