/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fields.h"
#include "graph.h"
#include "host.h"
#include "log.h"
#include "tail.h"
#include "tail_module.h"
#include "tap.h"

/* Loaded on the first session and kept: sessions hold its functions. */
static const struct sl_tail_module *tail_mod;

static int load_module(const struct plugin_loader *l, char *err, size_t errlen)
{
	char path[4096];
	void *h = NULL;
	sl_tail_entry_fn entry;

	if (tail_mod)
		return 0;
	for (size_t i = 0; i < l->ndirs && !h; i++) {
		snprintf(path, sizeof(path), "%s/%s.so", l->dirs[i], SL_TAIL_MODULE_NAME);
		if (access(path, F_OK) != 0)
			continue;
		if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
			snprintf(err, errlen, "%s", dlerror());
			return -1;
		}
	}
	if (!h) {
		snprintf(err, errlen, "%s.so is not on the plugin search path", SL_TAIL_MODULE_NAME);
		return -1;
	}
	entry = (sl_tail_entry_fn)dlsym(h, SL_TAIL_ENTRY);
	tail_mod = entry ? entry() : NULL;
	if (!tail_mod || tail_mod->version != SL_TAIL_IFACE_VERSION ||
	    tail_mod->size < sizeof(*tail_mod)) {
		tail_mod = NULL;
		dlclose(h);
		snprintf(err, errlen, "%s is not a tail module of interface version %d", path,
			 SL_TAIL_IFACE_VERSION);
		return -1;
	}
	return 0;
}

/* Fields by a scan, not the registry's index: a reload's reader may be copying it. */
static int field_lookup(void *ctx, const char *name, enum sl_type *type)
{
	const struct runtime *rt = ctx;
	const struct field_registry *r = &rt->graph->loader.fields;

	for (unsigned id = 0; id < fields_count(r) && id < rt->nfields; id++) {
		const struct field_info *f = fields_get(r, id);

		if (f && strcmp(f->name, name) == 0) {
			*type = f->type;
			return (int)id;
		}
	}
	return -1;
}

static const char *field_name(void *ctx, unsigned id, enum sl_type *type)
{
	const struct runtime *rt = ctx;
	const struct field_info *f = fields_get(&rt->graph->loader.fields, id);

	if (!f || id >= rt->nfields)
		return NULL;
	*type = f->type;
	return f->name;
}

/* The first `decode` at or below inst, depth first; NULL: none. */
static struct sl_instance *first_decode(struct sl_instance *inst)
{
	struct sl_instance *d;

	if (strcmp(inst->desc->name, "decode") == 0)
		return inst;
	for (size_t c = 0; c < inst->nchildren; c++)
		if ((d = first_decode(inst->children[c])))
			return d;
	return NULL;
}

/* The instances a session watches, in pick[] (room for every instance).  Their number. */
static size_t pick(const struct graph *g, const char *name, struct sl_instance **pick)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nall; i++) {
		struct sl_instance *inst = g->all[i], *d;

		if (name && strcmp(inst->name, name) == 0)
			pick[n++] = inst;
		else if (!name && inst->desc->kind == SL_KIND_INPUT)
			pick[n++] = (d = first_decode(inst)) ? d : inst;
	}
	return n;
}

int tail_session_open(struct runtime *rt, const char *inst, int json, const char *where,
		     char *err, size_t errlen)
{
	struct sl_tail_fields f = {rt, field_lookup, field_name, rt->nfields};
	struct sl_instance **insts;
	struct sl_tail_fmt *fmt;
	size_t n;
	int id;

	if (load_module(&rt->graph->loader, err, errlen))
		return -1;
	insts = calloc(rt->graph->nall + 1, sizeof(*insts));
	if (!insts) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	n = pick(rt->graph, inst, insts);
	if (!n) {
		size_t used = 0;

		free(insts);
		if (!inst) {
			snprintf(err, errlen, "the running configuration has no input");
			return -1;
		}
		snprintf(err, errlen, "no instance is named '");
		used = strlen(err);
		host_put_escaped(err, errlen, &used, inst);
		host_put_escaped(err, errlen, &used, "'");
		return -1;
	}
	if (!(fmt = tail_mod->open(where, json, &f, err, errlen))) {
		free(insts);
		return -1;
	}
	id = tap_open(tail_mod, fmt, insts, n);
	free(insts);
	if (id < 0)
		snprintf(err, errlen, "%s", errno == EBUSY ? "busy: every tail session is taken"
							   : "out of memory");
	return id;
}
