/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ABI 1.3 subtree_reads(): an input learns the fields its subtree reads
 * (the union of every filter's and output's needs, reads and the fields
 * their configure() asked for), so nflog can leave out what nobody reads.
 * A plugin below that declares no `reads` (json) means every field.  Uses
 * the built plugins; nothing is started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fields.h"
#include "graph.h"
#include "host.h"

#include "check.h"

struct loaded {
	struct config cfg;
	struct diag diag;
	struct graph g;
};

static int load(struct loaded *l, const char *yaml)
{
	memset(l, 0, sizeof(*l));
	l->diag.file = "t.yaml";
	if (config_load_string(&l->cfg, "t.yaml", yaml, &l->diag))
		return -1;
	return graph_build(&l->g, &l->cfg, &l->diag);
}

static void unload(struct loaded *l)
{
	graph_free(&l->g);
	config_free(&l->cfg);
}

/* The reads of the (only) input of the configuration, in *out. */
static const uint64_t *input_reads(struct loaded *l, const char *yaml)
{
	if (load(l, yaml) != 0)
		return NULL;
	for (size_t i = 0; i < l->g.nall; i++)
		if (l->g.all[i]->desc->kind == SL_KIND_INPUT)
			return host_table.subtree_reads(l->g.all[i]);
	return NULL;
}

static int has(const uint64_t *m, int id)
{
	return (int)(m[id >> 6] >> (id & 63) & 1);
}

static int all_set(const uint64_t *m)
{
	for (int w = 0; w < SL_PRESENCE_WORDS; w++)
		if (m[w] != ~(uint64_t)0)
			return 0;
	return 1;
}

int main(void)
{
	struct loaded l;
	const uint64_t *m;

	setenv("SLUICE_PLUGIN_PATH", TEST_BUILD_DIR "/plugins", 1);
	CHECK(SL_HOST_HAS(&host_table, subtree_reads));

	/* pcap, raw link type: the packet, its time and length, nothing else */
	m = input_reads(&l, "stacks:\n  a: [{plugin: nflog, group: 5}, "
			    "{plugin: pcap, file: /dev/null}]\n");
	CHECK(m != NULL);
	if (m) {
		CHECK(has(m, SL_F_PACKET) && has(m, SL_F_TIMESTAMP) && has(m, SL_F_ORIG_LEN));
		CHECK(!has(m, SL_F_PREFIX) && !has(m, SL_F_UID) && !has(m, SL_F_MARK));
		CHECK(!has(m, SL_F_IFINDEX_IN) && !has(m, SL_F_HWHDR) && !all_set(m));
	}
	unload(&l);

	/* pcap, nflog link type: every attribute it writes back */
	m = input_reads(&l, "stacks:\n  a: [{plugin: nflog, group: 5}, "
			    "{plugin: pcap, file: /dev/null, linktype: nflog}]\n");
	CHECK(m && has(m, SL_F_PREFIX) && has(m, SL_F_UID) && has(m, SL_F_MARK) &&
	      has(m, SL_F_HWHDR) && has(m, SL_F_SEQ_GLOBAL) && has(m, SL_F_PACKET));
	unload(&l);

	/* a filter's need_field() and the output below it */
	m = input_reads(&l, "stacks:\n  a: [{plugin: nflog, group: 5}, "
			    "{plugin: where, expr: 'prefix == \"x\" and mark == 3'}, "
			    "{plugin: pcap, file: /dev/null}]\n");
	CHECK(m && has(m, SL_F_PREFIX) && has(m, SL_F_MARK) && has(m, SL_F_PACKET));
	CHECK(m && !has(m, SL_F_UID) && !all_set(m));
	unload(&l);

	/* a fan-out: json (no `reads`: everything) beside pcap */
	m = input_reads(&l, "instances:\n  in: {plugin: nflog, group: 5}\n"
			    "stacks:\n  a: [in, {plugin: pcap, file: /dev/null}]\n"
			    "  b: [in, json, {plugin: file, file: /dev/null}]\n");
	CHECK(m && all_set(m));
	unload(&l);
	return check_summary("test_subtree_reads");
}
