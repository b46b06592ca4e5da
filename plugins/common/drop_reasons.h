/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kernel's packet drop reasons by name, read from its BTF: `enum
 * skb_drop_reason`'s values without the SKB_DROP_REASON_ prefix
 * (NETFILTER_DROP, NO_SOCKET...), so a kernel newer than sluice brings its
 * new reasons with it.  Linked only into skbdrop.so (libbpf's btf__ API).
 *
 * Every function takes a struct btf the caller owns: the running kernel's
 * (btf__load_vmlinux_btf()) or, in the unit test, one built in memory.
 */
#ifndef SLUICE_DROP_REASONS_H
#define SLUICE_DROP_REASONS_H

#include <stddef.h>
#include <stdint.h>

#include <bpf/btf.h>

struct sl_drop_reasons {
	char **name;		/* name[v]: the reason of value v, or NULL */
	uint32_t n;		/* values 0..n-1 */
};

/* 0, or -1 with errno ENOENT (no enum skb_drop_reason: kernel < 5.17) or ENOMEM. */
int sl_drop_reasons_load(struct sl_drop_reasons *t, const struct btf *btf);
/* The value of a name (without the prefix, any case), or -1. */
int64_t sl_drop_reasons_find(const struct sl_drop_reasons *t, const char *name);
/* The name of value v, or NULL. */
const char *sl_drop_reasons_name(const struct sl_drop_reasons *t, uint32_t v);
/*
 * Up to `max` known names close to `name` (edit distance <= 2, or one
 * containing the other), best first, joined by ", " into buf.  Returns
 * how many were written.
 */
unsigned sl_drop_reasons_close(const struct sl_drop_reasons *t, const char *name, unsigned max,
			       char *buf, size_t len);
void sl_drop_reasons_free(struct sl_drop_reasons *t);
/*
 * Whether btf's skb:kfree_skb tracepoint (typedef btf_trace_kfree_skb)
 * passes the reason: 0, or -1 with errno ENOENT (no such tracepoint) or
 * ENOTSUP (one without its `reason` argument, as before 5.17).
 */
int sl_drop_reasons_tracepoint_ok(const struct btf *btf);

#endif
