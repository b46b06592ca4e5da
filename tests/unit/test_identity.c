/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Instance identity compares parsed values: the same plugin with options
 * written differently but meaning the same (0x5 and 5, 8MiB and 8192k, a
 * left-out option and its default) is one instance, in one graph (prefix
 * sharing) and across two graphs (what a reload compares).  Options
 * flagged SL_OPT_EXCLUSIVE (nflog's group, nfct's events) may not be held
 * by two instances.  Uses the built plugins and test plugins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "graph.h"

#include "check.h"

struct loaded {
	struct config cfg;
	struct diag diag;
	struct graph g;
	int rc;
};

static void load(struct loaded *l, const char *yaml)
{
	memset(l, 0, sizeof(*l));
	l->diag.file = "t.yaml";
	l->rc = config_load_string(&l->cfg, "t.yaml", yaml, &l->diag);
	if (l->cfg.root)
		l->rc |= graph_build(&l->g, &l->cfg, &l->diag);
}

static void unload(struct loaded *l)
{
	graph_free(&l->g);
	config_free(&l->cfg);
}

static const struct sl_instance *find(const struct graph *g, const char *name)
{
	for (size_t i = 0; i < g->nall; i++)
		if (strcmp(g->all[i]->name, name) == 0)
			return g->all[i];
	return NULL;
}

/* The key of instance `name` in the graph of a one-stack configuration. */
static char *key_of(const char *stack, const char *name)
{
	struct loaded l;
	const struct sl_instance *inst;
	char yaml[1024], *key = NULL;

	snprintf(yaml, sizeof(yaml), "stacks:\n  s: %s\n", stack);
	load(&l, yaml);
	inst = find(&l.g, name);
	if (l.rc == 0 && inst && inst->key) {
		/* binary-safe: it holds \x1f separators, never a NUL */
		key = strdup(inst->key);
	}
	unload(&l);
	return key;
}

/* Two one-stack configurations give instance `name` the same key (or not). */
static int same_key(const char *a, const char *b, const char *name)
{
	char *ka = key_of(a, name), *kb = key_of(b, name);
	int r = ka && kb ? strcmp(ka, kb) == 0 : -1;

	free(ka);
	free(kb);
	return r;
}

#define NFLOG_TAIL ", decode, logline, {plugin: file, file: /dev/null}]"
#define NFCT_TAIL ", logline, {plugin: file, file: /dev/null}]"

int main(void)
{
	struct loaded l;

	setenv("SLUICE_PLUGIN_PATH", TEST_BUILD_DIR "/plugins:" TEST_BUILD_DIR "/tests/plugins", 1);

	/* integers: hex, octal, decimal */
	CHECK(same_key("[{plugin: nflog, group: 5}" NFLOG_TAIL, "[{plugin: nflog, group: 0x5}" NFLOG_TAIL,
		       "s.nflog") == 1);
	CHECK(same_key("[{plugin: nflog, group: 8}" NFLOG_TAIL, "[{plugin: nflog, group: 010}" NFLOG_TAIL,
		       "s.nflog") == 1);
	CHECK(same_key("[{plugin: nflog, group: 5}" NFLOG_TAIL, "[{plugin: nflog, group: 6}" NFLOG_TAIL,
		       "s.nflog") == 0);
	/* sizes, durations, bools, and a default written out */
	CHECK(same_key("[{plugin: nflog, group: 1, netlink_buffer: 8MiB}" NFLOG_TAIL,
		       "[{plugin: nflog, group: 1, netlink_buffer: 8192k}" NFLOG_TAIL, "s.nflog") == 1);
	CHECK(same_key("[{plugin: nflog, group: 1}" NFLOG_TAIL,
		       "[{plugin: nflog, group: 1, netlink_buffer: 8388608, seq: on}" NFLOG_TAIL,
		       "s.nflog") == 1);
	CHECK(same_key("[{plugin: nflog, group: 1, qtimeout: 1s}" NFLOG_TAIL,
		       "[{plugin: nflog, group: 1, qtimeout: 1000}" NFLOG_TAIL, "s.nflog") == 1);
	CHECK(same_key("[{plugin: nflog, group: 1, qtimeout: 1s}" NFLOG_TAIL,
		       "[{plugin: nflog, group: 1, qtimeout: 2s}" NFLOG_TAIL, "s.nflog") == 0);
	CHECK(same_key("[{plugin: nflog, group: 1}, {plugin: decode, ifnames: yes}, logline, "
		       "{plugin: file, file: /dev/null}]",
		       "[{plugin: nflog, group: 1}" NFLOG_TAIL, "s.decode") == 1);
	CHECK(same_key("[{plugin: nflog, group: 1}, {plugin: decode, ifnames: off}, logline, "
		       "{plugin: file, file: /dev/null}]",
		       "[{plugin: nflog, group: 1}" NFLOG_TAIL, "s.decode") == 0);
	/* enums and lists: one scalar is a list of one; order counts for sharing */
	CHECK(same_key("[{plugin: nfct, events: destroy, family: any}" NFCT_TAIL, "[nfct" NFCT_TAIL,
		       "s.nfct") == 1);
	CHECK(same_key("[{plugin: nfct, family: ipv4}" NFCT_TAIL, "[nfct" NFCT_TAIL, "s.nfct") == 0);
	CHECK(same_key("[{plugin: nfct, events: [new, destroy]}" NFCT_TAIL,
		       "[{plugin: nfct, events: [destroy, new]}" NFCT_TAIL, "s.nfct") == 0);
	/* strings are compared as strings (a quoted and a plain scalar are one) */
	CHECK(same_key("[gen, {plugin: file, file: \"/dev/null\"}]", "[gen, {plugin: file, file: /dev/null}]",
		       "s.file") == 1);
	/* the core's keys, as parsed: a network output is threaded by default */
	CHECK(same_key("[gen, {plugin: syslog, thread: yes, queue: 64, when_full: drop}]",
		       "[gen, syslog]", "s.syslog") == 1);
	CHECK(same_key("[gen, {plugin: syslog, queue: 32}]", "[gen, syslog]", "s.syslog") == 0);
	CHECK(same_key("[gen, {plugin: syslog, thread: no}]", "[gen, syslog]", "s.syslog") == 0);

	/*
	 * Prefix sharing by value: one instance of each for both stacks, the
	 * output too (buffer: 256KiB is its default).
	 */
	load(&l, "stacks:\n"
		 "  a: [{plugin: nflog, group: 5}" NFLOG_TAIL "\n"
		 "  b: [{plugin: nflog, group: 0x5}, {plugin: decode, ifnames: yes}, logline, "
		 "{plugin: file, file: /dev/null, buffer: 256KiB}]\n");
	CHECK(l.rc == 0);
	CHECK_EQ_U(l.g.nall, 4);
	CHECK_EQ_U(l.g.ninputs, 1);
	CHECK(find(&l.g, "a.nflog") && find(&l.g, "a.nflog")->nstacks == 2);
	CHECK(find(&l.g, "a.logline") && find(&l.g, "a.logline")->nchildren == 1);
	CHECK(find(&l.g, "a.file") && find(&l.g, "a.file")->nstacks == 2);
	CHECK(find(&l.g, "b.nflog") == NULL && find(&l.g, "b.decode") == NULL);
	unload(&l);

	/* Exclusive: two instances on one group (after parsing) is an error. */
	load(&l, "stacks:\n"
		 "  a: [{plugin: nflog, group: 5}" NFLOG_TAIL "\n"
		 "  b: [{plugin: nflog, group: 0x5, seq: false}" NFLOG_TAIL "\n"
		 "  c: [{plugin: nflog, group: 6, seq: false}" NFLOG_TAIL "\n");
	CHECK(l.rc != 0);
	CHECK_EQ_U(l.diag.errors, 1);
	unload(&l);
	/* nfct: the event set is the subscription, in any order */
	load(&l, "stacks:\n"
		 "  a: [{plugin: nfct, events: [new, destroy]}" NFCT_TAIL "\n"
		 "  b: [{plugin: nfct, events: [destroy, new], family: ipv6}" NFCT_TAIL "\n"
		 "  c: [{plugin: nfct, events: [new]}" NFCT_TAIL "\n");
	CHECK_EQ_U(l.diag.errors, 1);
	unload(&l);
	/* an instance whose options have errors has no identity and is never shared */
	load(&l, "stacks:\n"
		 "  a: [{plugin: gen, count: x}, {plugin: file, file: /dev/null}]\n"
		 "  b: [{plugin: gen, count: x}, {plugin: file, file: /dev/null}]\n");
	CHECK_EQ_U(l.diag.errors, 2);
	CHECK(find(&l.g, "a.gen") && find(&l.g, "a.gen")->key == NULL);
	CHECK(find(&l.g, "b.gen") != NULL);
	unload(&l);

	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
