/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decode and bpf plugins, loaded with dlopen from the build tree and
 * driven through a fake host:
 *  - bpf: compile errors reach config_error() on option "expr"; records that
 *    do not match are dropped, the others keep their order.
 *  - decode: interface names from the rtnetlink cache, in a private network
 *    namespace (root only): lo at start, a dummy interface created later is
 *    found on the first cache miss, a rename and a delete are followed
 *    through link events.
 */
#include <dlfcn.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sluice/plugin.h>

#include "check.h"

/* ---- fake host ---- */

static char last_error[512], last_error_opt[64];
static uint64_t counters[16];
static const char *counter_names[16];
static int ncounters;
static sl_fd_cb watched_cb;
static void *watched_ctx;
static int watched_fd = -1;

static void h_log(struct sl_instance *inst, enum sl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "[plugin log %d] ", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void h_config_error(struct sl_instance *inst, const char *option, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	snprintf(last_error_opt, sizeof(last_error_opt), "%s", option ? option : "");
}

static int h_counter_new(struct sl_instance *inst, const char *name)
{
	counter_names[ncounters] = name;
	return ncounters++;
}

static void h_counter_add(struct sl_instance *inst, int c, uint64_t n)
{
	counters[c] += n;
}

static uint64_t counter(const char *name)
{
	int i;

	for (i = 0; i < ncounters; i++)
		if (strcmp(counter_names[i], name) == 0)
			return counters[i];
	return UINT64_MAX;
}

static int h_watch_fd(struct sl_instance *inst, int fd, uint32_t ev, sl_fd_cb cb, void *ctx)
{
	watched_fd = fd;
	watched_cb = cb;
	watched_ctx = ctx;
	return 0;
}

static void h_unwatch_fd(struct sl_instance *inst, int fd)
{
	watched_fd = -1;
}

static void h_error_add(struct sl_instance *inst, uint64_t n)
{
}

static const struct sl_host host = {
	.size = sizeof(struct sl_host),
	.log = h_log,
	.config_error = h_config_error,
	.watch_fd = h_watch_fd,
	.unwatch_fd = h_unwatch_fd,
	.counter_new = h_counter_new,
	.counter_add = h_counter_add,
	.error_add = h_error_add,
};

static struct sl_instance *const INST = (struct sl_instance *)&host;

static const struct sl_plugin *load(const char *name)
{
	char path[1024];
	void *h;
	const struct sl_plugin *(*entry)(void);

	snprintf(path, sizeof(path), "%s/plugins/%s.so", TEST_BUILD_DIR, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "SKIP: cannot load %s: %s\n", path, dlerror());
		exit(77);
	}
	*(void **)&entry = dlsym(h, SL_PLUGIN_ENTRY_SYMBOL);
	if (!entry) {
		fprintf(stderr, "%s: no entry symbol\n", path);
		exit(1);
	}
	return entry();
}

/* Fill a config struct from the option defaults, then one override. */
static void *make_config(const struct sl_plugin *p, const char *opt, const char *val)
{
	void *cfg = calloc(1, p->config_size);
	const struct sl_option *o;

	for (o = p->options; o->name; o++) {
		const char *v = opt && strcmp(o->name, opt) == 0 ? val : o->def;

		if (!v)
			continue;
		if (o->type == SL_OPT_BOOL)
			*(bool *)((char *)cfg + o->offset) = strcmp(v, "true") == 0;
		else if (o->type == SL_OPT_STRING)
			*(const char **)((char *)cfg + o->offset) = v;
	}
	return cfg;
}

/* ---- batches ---- */

#define CAP 8
#define STRIDE (sizeof(struct sl_record) + SL_MAX_FIELDS * sizeof(union sl_value))

static struct sl_batch *new_batch(void)
{
	struct sl_batch *b = calloc(1, sizeof(*b));

	b->capacity = CAP;
	b->stride = STRIDE;
	b->rec = calloc(CAP, sizeof(*b->rec));
	b->storage = calloc(CAP, STRIDE);
	b->arena.size = 4096;
	b->arena.base = calloc(1, b->arena.size);
	return b;
}

static void reset_batch(struct sl_batch *b)
{
	b->count = b->filled = 0;
	b->arena.used = 0;
}

static void free_batch(struct sl_batch *b)
{
	free(b->rec);
	free(b->storage);
	free(b->arena.base);
	free(b);
}

static const uint8_t UDP4[28] = {
	0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
	0x04, 0xd2, 0x00, 0x35, 0, 8, 0, 0,
};
static const uint8_t TCP4[40] = {
	0x45, 0, 0, 40, 0, 1, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 3,
	0x30, 0x39, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x20, 0, 0, 0, 0, 0,
};

static void test_bpf(void)
{
	const struct sl_plugin *p = load("bpf");
	struct sl_batch *b = new_batch();
	void *cfg, *st = NULL;
	struct sl_record *r;
	int i;

	CHECK(p->kind == SL_KIND_FILTER && strcmp(p->name, "bpf") == 0);

	/* A bad expression is a configuration error on "expr". */
	cfg = make_config(p, "expr", "tcp port 99999");
	last_error[0] = 0;
	CHECK(p->configure(&host, INST, cfg, &st) == -1);
	CHECK(strcmp(last_error_opt, "expr") == 0 && strstr(last_error, "99999") != NULL);
	free(cfg);
	/* Link-layer primitives are refused: the packet starts at the IP header. */
	cfg = make_config(p, "expr", "ether host 1:2:3:4:5:6");
	CHECK(p->configure(&host, INST, cfg, &st) == -1 && strcmp(last_error_opt, "expr") == 0);
	free(cfg);

	cfg = make_config(p, "expr", "udp or dst host 10.0.0.9");
	CHECK(p->configure(&host, INST, cfg, &st) == 0 && st);
	/* udp, tcp, (no packet), udp, tcp to .9 -> keeps 0, 3, 4 */
	for (i = 0; i < 5; i++) {
		r = sl_batch_add(b);
		sl_set_u64(r, SL_F_MARK, (uint64_t)i);
		if (i == 2)
			continue;
		sl_set_bytes(r, SL_F_PACKET, i % 3 == 0 ? UDP4 : TCP4, i % 3 == 0 ? sizeof(UDP4) : sizeof(TCP4));
	}
	{
		static uint8_t tcp9[sizeof(TCP4)];

		memcpy(tcp9, TCP4, sizeof(TCP4));
		tcp9[19] = 9;
		b->rec[4]->v[SL_F_PACKET].bytes.ptr = tcp9;
		CHECK(p->process(st, b) == 0);
	}
	CHECK(b->count == 3);
	if (b->count == 3) {
		CHECK(b->rec[0]->v[SL_F_MARK].u64 == 0);
		CHECK(b->rec[1]->v[SL_F_MARK].u64 == 3);
		CHECK(b->rec[2]->v[SL_F_MARK].u64 == 4);
	}
	CHECK(counter("no_packet") == 1);
	p->destroy(st);
	free(cfg);

	/* A cut packet cannot match past its end. */
	cfg = make_config(p, "expr", "udp dst port 53");
	CHECK(p->configure(&host, INST, cfg, &st) == 0);
	reset_batch(b);
	r = sl_batch_add(b);
	sl_set_bytes(r, SL_F_PACKET, UDP4, 22);
	r = sl_batch_add(b);
	sl_set_bytes(r, SL_F_PACKET, UDP4, sizeof(UDP4));
	CHECK(p->process(st, b) == 0 && b->count == 1 && b->rec[0]->v[SL_F_PACKET].bytes.len == sizeof(UDP4));
	p->destroy(st);
	free(cfg);
	free_batch(b);
}

static bool name_is(const struct sl_record *r, sl_field f, const char *want)
{
	return sl_has(r, f) && r->v[f].bytes.len == strlen(want) && memcmp(r->v[f].bytes.ptr, want, strlen(want)) == 0;
}

/* One record with the given ifindexes, decoded. */
static struct sl_record *decode_one(const struct sl_plugin *p, void *st, struct sl_batch *b, unsigned in,
				    unsigned out)
{
	struct sl_record *r;

	reset_batch(b);
	r = sl_batch_add(b);
	sl_set_bytes(r, SL_F_PACKET, UDP4, sizeof(UDP4));
	sl_set_u64(r, SL_F_FAMILY, 2);
	if (in)
		sl_set_u64(r, SL_F_IFINDEX_IN, in);
	if (out)
		sl_set_u64(r, SL_F_IFINDEX_OUT, out);
	CHECK(p->process(st, b) == 0 && b->count == 1);
	return r;
}

static void test_decode_ifnames(void)
{
	const struct sl_plugin *p = load("decode");
	struct sl_batch *b = new_batch();
	struct sl_record *r;
	void *cfg, *st = NULL;
	unsigned idx;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		printf("SKIP: decode interface names: needs root for a private network namespace\n");
		free_batch(b);
		return;
	}
	/* veth: every test kernel has it (dummy may be a missing module). */
	if (system("ip link add sltst0 type veth peer name sltst0p 2>/dev/null") != 0) {
		printf("SKIP: decode interface names: cannot create a veth pair\n");
		free_batch(b);
		return;
	}
	CHECK(system("ip link del sltst0") == 0);

	ncounters = 0;
	memset(counters, 0, sizeof(counters));
	cfg = make_config(p, NULL, NULL);
	CHECK(p->configure(&host, INST, cfg, &st) == 0);
	CHECK(p->start(st) == 0);
	CHECK(watched_fd >= 0 && watched_cb);

	/* lo is index 1 in every namespace; the dump at start() found it. */
	r = decode_one(p, st, b, 1, 0);
	CHECK(name_is(r, SL_F_IFNAME_IN, "lo") && !sl_has(r, SL_F_IFNAME_OUT));
	CHECK(sl_has(r, SL_F_DPORT) && r->v[SL_F_DPORT].u64 == 53);
	CHECK(counter("ifname_unknown") == 0);

	/*
	 * A new interface, its link event not yet read by the loop: the miss
	 * makes process() read the socket once.
	 */
	CHECK(system("ip link add sltst1 type veth peer name sltst1p") == 0);
	idx = if_nametoindex("sltst1");
	r = decode_one(p, st, b, idx, 1);
	CHECK(name_is(r, SL_F_IFNAME_IN, "sltst1") && name_is(r, SL_F_IFNAME_OUT, "lo"));
	CHECK(counter("ifname_unknown") == 0);

	/* A rename, delivered through the watched descriptor. */
	CHECK(system("ip link set sltst1 name sltst2") == 0);
	usleep(100000);
	watched_cb(watched_ctx, watched_fd, 1);
	r = decode_one(p, st, b, idx, 0);
	CHECK(name_is(r, SL_F_IFNAME_IN, "sltst2"));

	/* Deleted: no name, and counted. */
	CHECK(system("ip link del sltst2") == 0);
	usleep(100000);
	watched_cb(watched_ctx, watched_fd, 1);
	r = decode_one(p, st, b, idx, 0);
	CHECK(!sl_has(r, SL_F_IFNAME_IN));
	CHECK(counter("ifname_unknown") == 1);
	/* A second miss right after does not read the socket again, still counted. */
	r = decode_one(p, st, b, idx, 0);
	CHECK(!sl_has(r, SL_F_IFNAME_IN) && counter("ifname_unknown") == 2);

	/* A burst: 300 veth pairs, then half of them gone. */
	{
		char batch[64], cmd[96], name[IFNAMSIZ];
		FILE *f;
		unsigned i, bad = 0, idxs[300];

		snprintf(batch, sizeof(batch), "/tmp/sluice-test-links.%d", (int)getpid());
		snprintf(cmd, sizeof(cmd), "ip -batch %s", batch);
		f = fopen(batch, "w");
		for (i = 0; i < 300; i++)
			fprintf(f, "link add slb%u type veth peer name slc%u\n", i, i);
		fclose(f);
		CHECK(system(cmd) == 0);
		for (i = 0; i < 300; i++)
			watched_cb(watched_ctx, watched_fd, 1);
		for (i = 0; i < 300; i++) {
			snprintf(name, sizeof(name), "slb%u", i);
			idxs[i] = if_nametoindex(name);
			r = decode_one(p, st, b, idxs[i], 0);
			bad += !name_is(r, SL_F_IFNAME_IN, name);
		}
		CHECK(bad == 0);
		f = fopen(batch, "w");
		for (i = 0; i < 300; i += 2)
			fprintf(f, "link del slb%u\n", i);
		fclose(f);
		CHECK(system(cmd) == 0);
		unlink(batch);
		for (i = 0; i < 300; i++)
			watched_cb(watched_ctx, watched_fd, 1);
		for (i = 0; i < 300; i++) {
			snprintf(name, sizeof(name), "slb%u", i);
			r = decode_one(p, st, b, idxs[i], 0);
			bad += i % 2 ? !name_is(r, SL_F_IFNAME_IN, name) : sl_has(r, SL_F_IFNAME_IN);
			/* the peers are still there */
			snprintf(name, sizeof(name), "slc%u", i);
			if (i % 2) {
				r = decode_one(p, st, b, if_nametoindex(name), 0);
				bad += !name_is(r, SL_F_IFNAME_IN, name);
			}
		}
		CHECK(bad == 0);
	}

	p->stop(st);
	CHECK(watched_fd == -1);
	p->destroy(st);
	free(cfg);

	/* ifnames off: no socket, no names. */
	cfg = make_config(p, "ifnames", "false");
	CHECK(p->configure(&host, INST, cfg, &st) == 0 && p->start(st) == 0);
	r = decode_one(p, st, b, 1, 0);
	CHECK(!sl_has(r, SL_F_IFNAME_IN) && sl_has(r, SL_F_DPORT));
	p->stop(st);
	p->destroy(st);
	free(cfg);
	free_batch(b);
}

int main(void)
{
	test_bpf();
	test_decode_ifnames();
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("test_decode_bpf_plugins: all checks passed\n");
	return 0;
}
