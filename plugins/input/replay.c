/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * replay: read packets from a pcap or pcapng file and hand them to the stack
 * as the live inputs would have.
 *
 * Link types: NFLOG (the records are what the nflog input makes of the same
 * events), RAW / IPV4 / IPV6, EN10MB (as the netdev family sees it: hwhdr is
 * the Ethernet header with its VLAN tags, packet starts at the network
 * header), LINUX_SLL and LINUX_SLL2.
 *
 * A classic pcap file in this machine's byte order is mapped and read in
 * place: its records point into the mapping, no byte is copied (the kernel
 * copying the file into a read buffer, libpcap copying it into its own and
 * replay into the batch arena cost more than the whole stack above them).
 * pcapng files and files of the other byte order go through libpcap, whose
 * buffer is reused for the next packet: those packets are copied into the
 * batch arena.  Reading records in place and making a record of a packet
 * are in plugins/common/capture.h (inline: they run once per packet).
 *
 * A regular file cannot be polled, so reading is driven by a timer armed at
 * 0 ms: each run reads a bounded number of batches and re-arms, so the loop
 * keeps serving signals and other inputs.  With pace "original" the timer is
 * armed for the time the next packet is due instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <sluice/plugin.h>

#include "capture.h"
#include "clock.h"
#include "nflog_attrs.h"
#include "plugin_state.h"
#include "safefile.h"

/* Batches per timer run: bounds the time between two turns of the loop. */
#define BATCHES_PER_RUN 16

/*
 * stdio buffer under libpcap: its default is the file system block (4 KiB),
 * one read() per ~20 small packets; 1 MiB makes reading ~5 % of the time
 * it was (bench/offline.sh).
 */
#define READ_BUFFER (1u << 20)

enum { PACE_NONE, PACE_ORIGINAL };

struct replay_cfg {
	const char *file;
	int pace;
	int64_t loop;
};

struct replay {
	SL_STATE_HEAD(struct replay_cfg);

	pcap_t *pc;
	char *iobuf;		/* READ_BUFFER bytes, the stdio buffer of the file */
	int dlt;

	/* a mapped classic pcap (pc is NULL then; map.p NULL when not mapped) */
	struct sl_cap_map map;
	struct sl_timer *timer;
	int c_malformed;
	uint32_t attrs;		/* NFLOG attributes the stacks below read (per replay_run) */
	int64_t passes;		/* passes finished */
	uint64_t pass_packets;	/* packets read in this pass */
	bool done;
	bool warned_big;

	/* pace original: a packet read but not due yet (libpcap's buffer) */
	struct pcap_pkthdr *pend_hdr;
	const u_char *pend_data;
	bool t0_set;
	int64_t t0_mono_ns, t0_file_ns;
};

static const char *const pace_choices[] = {"none", "original", NULL};

static const struct sl_option replay_options[] = {
	SL_OPT_STR("file", struct replay_cfg, file, SL_REQUIRED, "pcap or pcapng file to read"),
	SL_OPT_ENUM("pace", struct replay_cfg, pace, "none", pace_choices,
		    "none: as fast as the stack takes them; original: keep the gaps of the capture"),
	SL_OPT_INT("loop", struct replay_cfg, loop, "1", 0, 1000000000,
		   "passes over the file; 0: endless"),
	SL_OPT_END
};

static const struct sl_field_decl replay_provides[] = {
	SL_NFLOG_PROVIDES,
	SL_FIELD_END
};

static void count_malformed(struct replay *st)
{
	st->host->counter_add(st->inst, st->c_malformed, 1);
	st->host->error_add(st->inst, 1);
}

static bool batch_wants_flush(const struct sl_batch *b)
{
	/* Leave half of the arena to the converters further down. */
	return b->filled == b->capacity || sl_batch_room(b) < b->arena.size / 2;
}

/* Hand b downstream and take a fresh batch (NULL: out of memory). */
static struct sl_batch *emit_and_renew(struct replay *st, struct sl_batch *b)
{
	st->host->emit(st->inst, b);
	return st->host->batch_get(st->inst);
}

/*
 * Copy one packet into the batch and make its record.  *bp may be replaced
 * by a fresh batch, or set to NULL when none could be had (packet lost).
 */
static void add_packet(struct replay *st, struct sl_batch **bp, const struct pcap_pkthdr *h,
		       const u_char *data)
{
	struct sl_batch *b = *bp;
	struct sl_time ts = {h->ts.tv_sec, (uint32_t)h->ts.tv_usec}; /* nanoseconds: see open */
	struct sl_record *r;
	size_t saved_used;
	uint8_t *copy;

	if (batch_wants_flush(b) && b->count) {
		*bp = b = emit_and_renew(st, b);
		if (!b)
			goto lost;
	}
	if (st->map.p) {
		/* the mapping outlives the batch: no copy */
		r = sl_batch_add(b);
		if (sl_cap_fill_some(st->dlt, r, data, h->caplen, h->len, &ts, st->attrs) < 0) {
			sl_batch_unadd(b);
			count_malformed(st);
		}
		return;
	}
	saved_used = sl_batch_mark(b);
	copy = sl_batch_alloc(b, h->caplen);
	if (!copy && b->count) {
		*bp = b = emit_and_renew(st, b);
		if (!b)
			goto lost;
		saved_used = sl_batch_mark(b);
		copy = sl_batch_alloc(b, h->caplen);
	}
	if (!copy) {
		if (!st->warned_big)
			st->host->log(st->inst, SL_LOG_WARNING,
				      "%s: a %u-byte packet does not fit in a batch (%zu bytes): skipped",
				      st->cfg->file, h->caplen, b->arena.size);
		st->warned_big = true;
		st->host->error_add(st->inst, 1);
		return;
	}
	memcpy(copy, data, h->caplen);
	r = sl_batch_add(b);	/* not full: flushed above when it was */
	if (sl_cap_fill_some(st->dlt, r, copy, h->caplen, h->len, &ts, st->attrs) < 0) {
		sl_batch_unadd(b);
		sl_batch_rewind(b, saved_used);
		count_malformed(st);
	}
	return;
lost:
	st->host->log(st->inst, SL_LOG_ERR, "out of memory for a batch: packet lost");
	st->host->error_add(st->inst, 1);
}

/*
 * Map the file when it is a classic pcap in our byte order with a link
 * type we read.  1: mapped; 0: not such a file, use libpcap (which also
 * reports any error).
 */
static int map_file(struct replay *st, int fd, const struct stat *sb)
{
	uint8_t fh[SL_CAP_FILE_HDR];
	void *m;

	if (sb->st_size < SL_CAP_FILE_HDR || pread(fd, fh, sizeof(fh), 0) != sizeof(fh) ||
	    !sl_cap_map_ok(fh))
		return 0;
	m = mmap(NULL, (size_t)sb->st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 0;
	madvise(m, (size_t)sb->st_size, MADV_SEQUENTIAL);
	sl_cap_map_open(&st->map, m, (size_t)sb->st_size);	/* cannot fail: checked above */
	st->dlt = st->map.dlt;
	st->pass_packets = 0;
	st->t0_set = false;
	return 1;
}

static void close_file(struct replay *st)
{
	if (st->pc) {
		pcap_close(st->pc);
		st->pc = NULL;
	}
	if (st->map.p) {
		munmap((void *)st->map.p, st->map.len);
		st->map.p = NULL;
	}
}

static int open_file(struct replay *st)
{
	char err[PCAP_ERRBUF_SIZE];
	struct stat sb;
	FILE *fp;
	int dlt, fd;

	/* Never blocking on a FIFO at the name: a regular file or an error. */
	fd = sl_open_in(st->cfg->file, &sb, err, sizeof(err));
	if (fd < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: cannot open: %s", st->cfg->file, err);
		return -1;
	}
	if (map_file(st, fd, &sb) == 1) {
		close(fd);
		return 0;
	}
	fp = fdopen(fd, "rb");
	if (!fp) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", st->cfg->file, strerror(errno));
		close(fd);
		return -1;
	}
	setvbuf(fp, st->iobuf, _IOFBF, READ_BUFFER);
	/* Nanosecond timestamps whatever the file holds (pcap or pcapng). */
	st->pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, err);
	if (!st->pc) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", st->cfg->file, err);
		fclose(fp);
		return -1;
	}
	dlt = pcap_datalink(st->pc);
	if (!sl_cap_dlt_supported(dlt)) {
		st->host->log(st->inst, SL_LOG_ERR,
			      "%s: link type %s (%d) is not supported "
			      "(NFLOG, RAW, IPV4, IPV6, EN10MB, LINUX_SLL, LINUX_SLL2 are)",
			      st->cfg->file, pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?",
			      dlt);
		pcap_close(st->pc);
		st->pc = NULL;
		return -1;
	}
	st->dlt = dlt;
	st->pass_packets = 0;
	st->t0_set = false;
	return 0;
}

/* The file is read to its end: start the next pass, or finish.  false: finished. */
static bool next_pass(struct replay *st)
{
	bool empty = st->pass_packets == 0;

	st->passes++;
	close_file(st);
	if (st->cfg->loop != 0 && st->passes >= st->cfg->loop)
		return false;
	if (empty) {
		st->host->log(st->inst, SL_LOG_WARNING, "%s: no packets: not looping over it",
			      st->cfg->file);
		return false;
	}
	return open_file(st) == 0;
}

static void finish(struct replay *st)
{
	st->done = true;
	st->host->log(st->inst, SL_LOG_INFO, "%s: done after %lld pass%s", st->cfg->file,
		      (long long)st->passes, st->passes == 1 ? "" : "es");
	st->host->input_done(st->inst);
}

/*
 * pace original: is the packet due?  If not, return the milliseconds to wait.
 * The first packet of a pass sets the origin of both clocks.
 */
static uint64_t wait_ms(struct replay *st, const struct pcap_pkthdr *h)
{
	int64_t file_ns = (int64_t)h->ts.tv_sec * 1000000000 + h->ts.tv_usec;
	int64_t late;

	if (!st->t0_set) {
		st->t0_set = true;
		st->t0_mono_ns = sl_clock_ns(CLOCK_MONOTONIC);
		st->t0_file_ns = file_ns;
		return 0;
	}
	late = sl_clock_ns(CLOCK_MONOTONIC) - st->t0_mono_ns - (file_ns - st->t0_file_ns);
	if (late >= -500000)	/* within half a millisecond: now */
		return 0;
	return (uint64_t)(-late + 999999) / 1000000;
}

static void replay_run(void *state)
{
	struct replay *st = state;
	struct sl_batch *b;
	unsigned batches = 0;

	if (st->done || (!st->pc && !st->map.p))
		return;
	/* rewritten by a reload, which runs between two calls */
	st->attrs = SL_HOST_HAS(st->host, subtree_reads)
			    ? sl_nflog_attrs_for(st->host->subtree_reads(st->inst))
			    : SL_NFLOG_ATTRS_ALL;
	b = st->host->batch_get(st->inst);
	for (;;) {
		struct pcap_pkthdr *h;
		const u_char *data;
		int rc;

		if (!b) {
			/* out of memory: try again a little later */
			st->host->timer_arm(st->timer, 100, 0);
			return;
		}
		if (batch_wants_flush(b) && b->count) {
			b = emit_and_renew(st, b);
			if (++batches >= BATCHES_PER_RUN) {
				st->host->timer_arm(st->timer, 0, 0);
				break;
			}
			continue;
		}
		if (st->pend_hdr) {
			h = st->pend_hdr;
			data = st->pend_data;
			st->pend_hdr = NULL;
			rc = 1;
		} else {
			rc = st->map.p ? sl_cap_map_next(&st->map, &h, &data)
				       : pcap_next_ex(st->pc, &h, &data);
		}
		if (rc == 1) {
			uint64_t ms;

			if (st->cfg->pace == PACE_ORIGINAL && (ms = wait_ms(st, h)) != 0) {
				/* libpcap keeps h and data until the next pcap_next_ex */
				st->pend_hdr = h;
				st->pend_data = data;
				st->host->timer_arm(st->timer, ms, 0);
				break;
			}
			st->pass_packets++;
			add_packet(st, &b, h, data);
			continue;
		}
		if (rc == PCAP_ERROR) {
			/* e.g. a capture cut in the middle of a packet */
			st->host->log(st->inst, SL_LOG_WARNING, "%s: %s", st->cfg->file,
				      st->map.p ? st->map.err : pcap_geterr(st->pc));
			st->host->error_add(st->inst, 1);
		}
		/* PCAP_ERROR_BREAK: end of file */
		if (b->count)
			b = emit_and_renew(st, b);
		if (!next_pass(st)) {
			st->host->batch_put(st->inst, b);
			finish(st);
			return;
		}
		/*
		 * A pass counts as a batch even when it filled none: looping over
		 * a small file must still give the loop a turn (signals!).
		 */
		if (++batches >= BATCHES_PER_RUN) {
			st->host->timer_arm(st->timer, 0, 0);
			break;
		}
	}
	if (!b)
		return;
	st->host->emit(st->inst, b);	/* empty or not */
}

static int replay_configure(const struct sl_host *host, struct sl_instance *inst,
			    const void *config, void **state)
{
	const struct replay_cfg *cfg = config;
	struct replay *st;

	if (!cfg->file || !cfg->file[0]) {
		host->config_error(inst, "file", "must name a pcap or pcapng file");
		return -1;
	}
	st = sl_state_new(struct replay, host, inst, config);
	if (!st)
		return -1;
	st->c_malformed = host->counter_new(inst, "malformed");
	*state = st;
	return 0;
}

static int replay_start(void *state)
{
	struct replay *st = state;

	if (!st->iobuf && !(st->iobuf = malloc(READ_BUFFER))) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	if (open_file(st) < 0)
		return -1;
	st->timer = st->host->timer_new(st->inst, replay_run, st);
	if (!st->timer) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a timer");
		return -1;
	}
	st->host->timer_arm(st->timer, 0, 0);
	return 0;
}

static void replay_stop(void *state)
{
	struct replay *st = state;

	if (st->timer)
		st->host->timer_disarm(st->timer);
	close_file(st);
	st->pend_hdr = NULL;
	st->done = true;
}

static void replay_destroy(void *state)
{
	struct replay *st = state;

	free(st->iobuf);
	free(st);
}

static const struct sl_plugin replay_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "replay",
	.description = "read packets from a pcap or pcapng file (NFLOG, raw IP, Ethernet, Linux cooked)",
	.config_size = sizeof(struct replay_cfg),
	.options = replay_options,
	.provides = replay_provides,
	.configure = replay_configure,
	.start = replay_start,
	.stop = replay_stop,
	.destroy = replay_destroy,
	.flags = SL_PLUGIN_FINITE,
};

SLUICE_PLUGIN(replay_plugin)
