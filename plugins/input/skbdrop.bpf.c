// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * skbdrop's kernel half: a BTF raw tracepoint on skb:kfree_skb (the kernel
 * frees a packet it drops, with the reason, since 5.17) that reports the
 * drops whose reason is in `reasons` through a ring buffer.
 *
 * CO-RE without vmlinux.h: the few kernel structs read here are declared
 * below with preserve_access_index, so clang records each member access
 * by name and libbpf relocates it against the running kernel's BTF at
 * load.  The build therefore needs no BTF of its own machine (a Debian
 * buildd chroot has the build host's kernel, not the target's).
 *
 * A per-CPU token bucket (`rate` records per second per CPU, burst one
 * second's worth) bounds the work: a drop it leaves out is only counted,
 * so a flood of drops costs the host a map lookup each, never a ring
 * write.  The reader is woken once a batch of events waits, not for each.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>

#include "skbdrop_event.h"

struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct net {
	struct ns_common ns;
} __attribute__((preserve_access_index));

typedef struct {
	struct net *net;
} possible_net_t;

struct net_device {
	int ifindex;
	possible_net_t nd_net;
} __attribute__((preserve_access_index));

struct sock_common {
	possible_net_t skc_net;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct net_device *dev;
	struct sock *sk;
	unsigned int len;
	int skb_iif;
	__u16 protocol;
	__u16 network_header;
	unsigned int tail;	/* an offset from head on 64-bit kernels */
	unsigned char *head;
	unsigned char *data;
} __attribute__((preserve_access_index));

/* Set by the plugin before load (.rodata): bytes to copy, records/s per CPU (0: no limit). */
const volatile __u32 snaplen = 128;
const volatile __u64 rate = 0;
/* Set after load, before attach (.bss): the reasons to report, one bit each. */
__u64 reasons[SKBDROP_REASON_WORDS];

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct skbdrop_cpu);
} stats SEC(".maps");

/* Whether this CPU's bucket has a token (the caller is the only writer: per CPU, no preemption in BPF). */
static __always_inline int take_token(struct skbdrop_cpu *c)
{
	__u64 now, add;

	if (!rate)
		return 1;
	now = bpf_ktime_get_ns();
	if (!c->last_ns) {
		c->last_ns = now;
		c->tokens = rate;
	}
	add = (now - c->last_ns) * rate / 1000000000ull;
	if (add) {
		c->tokens = c->tokens + add > rate ? rate : c->tokens + add;
		c->last_ns += add * 1000000000ull / rate;
	}
	if (!c->tokens)
		return 0;
	c->tokens--;
	return 1;
}

static __always_inline unsigned int net_inum(struct sk_buff *skb)
{
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	struct net *net = 0;

	if (dev)
		net = BPF_CORE_READ(dev, nd_net.net);
	else if (BPF_CORE_READ(skb, sk))
		net = BPF_CORE_READ(skb, sk, __sk_common.skc_net.net);
	return net ? BPF_CORE_READ(net, ns.inum) : 0;
}

static __always_inline void fill(struct skbdrop_event *e, struct sk_buff *skb)
{
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	unsigned char *head = BPF_CORE_READ(skb, head);
	unsigned char *data = BPF_CORE_READ(skb, data);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u32 tail = BPF_CORE_READ(skb, tail);
	__u32 n = 0;

	e->ifindex = dev ? BPF_CORE_READ(dev, ifindex) : (__u32)BPF_CORE_READ(skb, skb_iif);
	e->netns = net_inum(skb);
	e->protocol = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	e->len = 0;
	e->caplen = 0;
	e->pad = 0;
	if (nh == (__u16)~0u || !head)	/* no network header set */
		return;
	/* skb->len counts from skb->data; the network header may lie before it */
	e->len = BPF_CORE_READ(skb, len) + (__u32)((long)data - (long)head) - nh;
	if (tail > nh)
		n = tail - nh;
	if (n > snaplen)
		n = snaplen;
	if (n > SKBDROP_SNAPLEN_MAX)
		n = SKBDROP_SNAPLEN_MAX;
	if (n && !bpf_probe_read_kernel(e->data, n, head + nh))
		e->caplen = n;
}

SEC("tp_btf/kfree_skb")
int BPF_PROG(skbdrop_kfree_skb, struct sk_buff *skb, void *location, __u64 reason)
{
	__u64 r = reason & 0xffffffffu;	/* the enum, in a 64-bit slot: one register for check and index */
	__u32 zero = 0;
	struct skbdrop_cpu *c;
	struct skbdrop_event *e;

	if (r >= SKBDROP_REASONS_MAX)
		return 0;
	if (!(reasons[r / 64] & (1ull << (r % 64))))
		return 0;
	c = bpf_map_lookup_elem(&stats, &zero);
	if (!c)
		return 0;
	if (!take_token(c)) {
		c->suppressed++;
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		c->lost++;
		return 0;
	}
	e->ktime = bpf_ktime_get_ns();
	e->location = (__u64)location;
	e->reason = (__u32)r;
	fill(e, skb);
	/*
	 * Wake the reader only once a batch is waiting: a wakeup per event
	 * (the default while the reader keeps up) costs more than the rest of
	 * the program.  The plugin also reads the ring every SKBDROP_POLL_MS.
	 */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= SKBDROP_WAKEUP_BYTES ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	c->records++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
