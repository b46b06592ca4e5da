/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * skbdrop's engines without a kernel: the drop reason table read from a
 * BTF built in memory (enum skb_drop_reason, the kfree_skb tracepoint's
 * typedef with and without its reason argument), close-match suggestions,
 * and kallsyms address -> symbol+offset from a written text and a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <bpf/btf.h>

#include "check.h"
#include "drop_reasons.h"
#include "kallsyms.h"

/* A BTF with enum skb_drop_reason and btf_trace_kfree_skb(ctx, skb, location, reason). */
static struct btf *make_btf(bool with_reason)
{
	struct btf *btf = btf__new_empty();
	int e, ptr, proto, tp;

	CHECK(btf != NULL);
	e = btf__add_enum(btf, "skb_drop_reason", 4);
	btf__add_enum_value(btf, "SKB_NOT_DROPPED_YET", 0);
	btf__add_enum_value(btf, "SKB_CONSUMED", 1);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NOT_SPECIFIED", 2);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NO_SOCKET", 3);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NETFILTER_DROP", 9);
	btf__add_enum_value(btf, "SKB_DROP_REASON_NEIGH_DEAD", 80);
	btf__add_enum_value(btf, "SKB_DROP_REASON_MAX", 81);
	btf__add_enum_value(btf, "SKB_DROP_REASON_SUBSYS_MASK", (int64_t)0xffff0000);
	ptr = btf__add_ptr(btf, 0);
	proto = btf__add_func_proto(btf, 0);
	btf__add_func_param(btf, "", ptr);
	btf__add_func_param(btf, "", ptr);
	btf__add_func_param(btf, "", ptr);
	if (with_reason)
		btf__add_func_param(btf, "", e);
	tp = btf__add_ptr(btf, proto);
	btf__add_typedef(btf, "btf_trace_kfree_skb", tp);
	return btf;
}

static void test_reasons(void)
{
	struct btf *btf = make_btf(true), *old = make_btf(false), *none = btf__new_empty();
	struct sl_drop_reasons t;
	char buf[256];

	CHECK_EQ_I(sl_drop_reasons_load(&t, btf), 0);
	CHECK_EQ_U(t.n, 82);	/* up to MAX (unnamed); the subsystem mask left out */
	CHECK_STREQ(sl_drop_reasons_name(&t, 9), "NETFILTER_DROP");
	CHECK_STREQ(sl_drop_reasons_name(&t, 3), "NO_SOCKET");
	CHECK_STREQ(sl_drop_reasons_name(&t, 0), "SKB_NOT_DROPPED_YET");	/* no prefix to take off */
	CHECK(sl_drop_reasons_name(&t, 4) == NULL);
	CHECK(sl_drop_reasons_name(&t, 81) == NULL);
	CHECK(sl_drop_reasons_name(&t, 1000) == NULL);
	CHECK_EQ_I(sl_drop_reasons_find(&t, "NETFILTER_DROP"), 9);
	CHECK_EQ_I(sl_drop_reasons_find(&t, "netfilter_drop"), 9);
	CHECK_EQ_I(sl_drop_reasons_find(&t, "SKB_DROP_REASON_NO_SOCKET"), 3);
	CHECK_EQ_I(sl_drop_reasons_find(&t, "MAX"), -1);
	CHECK_EQ_I(sl_drop_reasons_find(&t, "NETFILTER_DORP"), -1);
	CHECK_EQ_U(sl_drop_reasons_close(&t, "NETFILTER_DORP", 5, buf, sizeof(buf)), 1);
	CHECK_STREQ(buf, "NETFILTER_DROP");
	CHECK_EQ_U(sl_drop_reasons_close(&t, "SOCKET", 5, buf, sizeof(buf)), 1);
	CHECK_STREQ(buf, "NO_SOCKET");
	CHECK_EQ_U(sl_drop_reasons_close(&t, "zzzzzzzzzzzzzz", 5, buf, sizeof(buf)), 0);
	CHECK_STREQ(buf, "");
	CHECK_EQ_U(sl_drop_reasons_close(&t, "NETFILTER_DORP", 5, buf, 4), 0);	/* no room: nothing cut */

	CHECK_EQ_I(sl_drop_reasons_tracepoint_ok(btf), 0);
	errno = 0;
	CHECK_EQ_I(sl_drop_reasons_tracepoint_ok(old), -1);
	CHECK_EQ_I(errno, ENOTSUP);
	CHECK_EQ_I(sl_drop_reasons_tracepoint_ok(none), -1);
	CHECK_EQ_I(errno, ENOENT);
	{
		struct sl_drop_reasons u;

		CHECK_EQ_I(sl_drop_reasons_load(&u, none), -1);
	}
	CHECK_EQ_I(errno, ENOENT);
	sl_drop_reasons_free(&t);
	btf__free(btf);
	btf__free(old);
	btf__free(none);
}

static void test_kallsyms(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81200000 D some_data\n"
		"ffffffff81100000 t nf_hook_slow\n"
		"ffffffff81100400 T kfree_skb_reason\n"
		"garbage line\n"
		"ffffffffc0001000 t udp_mod_fn\t[udp_mod]\n"
		"ffffffffc0002000 W weak_fn";
	struct sl_kallsyms k;
	char buf[64], path[] = "/tmp/sluice-kallsyms.XXXXXX";
	int fd;

	CHECK_EQ_I(sl_kallsyms_parse(&k, text, sizeof(text) - 1), 0);
	CHECK_EQ_U(k.n, 5);	/* D and the garbage line left out */
	sl_kallsyms_format(&k, 0xffffffff811001a4ull, buf, sizeof(buf));
	CHECK_STREQ(buf, "nf_hook_slow+0x1a4");
	sl_kallsyms_format(&k, 0xffffffff81100400ull, buf, sizeof(buf));
	CHECK_STREQ(buf, "kfree_skb_reason+0x0");
	sl_kallsyms_format(&k, 0xffffffffc0001010ull, buf, sizeof(buf));
	CHECK_STREQ(buf, "udp_mod_fn+0x10");
	sl_kallsyms_format(&k, 0xffffffffc0003000ull, buf, sizeof(buf));
	CHECK_STREQ(buf, "weak_fn+0x1000");
	sl_kallsyms_format(&k, 0x1000, buf, sizeof(buf));
	CHECK_STREQ(buf, "0x1000");
	CHECK_EQ_I(sl_kallsyms_format(&k, 0xffffffff811001a4ull, buf, 5), 18);
	CHECK_STREQ(buf, "nf_h");
	sl_kallsyms_free(&k);

	/* what an unprivileged reader sees: zeros only */
	errno = 0;
	CHECK_EQ_I(sl_kallsyms_parse(&k, "0000000000000000 T _stext\n", 26), -1);
	CHECK_EQ_I(errno, EPERM);
	CHECK_EQ_I(sl_kallsyms_parse(&k, "", 0), -1);
	CHECK_EQ_I(errno, ENOENT);
	CHECK_EQ_I(sl_kallsyms_parse(&k, "12345678901234567 T toolong\n", 28), -1);

	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1);
	close(fd);
	CHECK_EQ_I(sl_kallsyms_load(&k, path), 0);
	CHECK_EQ_U(k.n, 5);
	sl_kallsyms_format(&k, 0xffffffff81000010ull, buf, sizeof(buf));
	CHECK_STREQ(buf, "_stext+0x10");
	sl_kallsyms_free(&k);
	unlink(path);
	CHECK_EQ_I(sl_kallsyms_load(&k, path), -1);
	CHECK_EQ_I(errno, ENOENT);

	/* planted at the name: a FIFO neither blocks nor is read, a link is not followed */
	CHECK_EQ_I(mkfifo(path, 0600), 0);
	errno = 0;
	CHECK_EQ_I(sl_kallsyms_load(&k, path), -1);
	CHECK_EQ_I(errno, EINVAL);
	unlink(path);
	CHECK_EQ_I(symlink("/proc/kallsyms", path), 0);
	CHECK_EQ_I(sl_kallsyms_load(&k, path), -1);
	CHECK_EQ_I(errno, ELOOP);
	unlink(path);
}

int main(void)
{
	test_reasons();
	test_kallsyms();
	return check_summary("skbdrop_engines");
}
