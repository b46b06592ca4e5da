/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What skbdrop.bpf.c hands skbdrop.c: one struct skbdrop_event per dropped
 * packet in the ring buffer, the per-CPU counters, and the limits both
 * sides agree on.  Compiled by clang -target bpf and by the C compiler of
 * the plugin: fixed-size types only, no padding left to either.
 */
#ifndef SLUICE_SKBDROP_EVENT_H
#define SLUICE_SKBDROP_EVENT_H

#include <linux/types.h>

/* Most bytes copied from the network header on (snaplen's maximum). */
#define SKBDROP_SNAPLEN_MAX 512
/* Reasons the bitmap covers: enum skb_drop_reason's core values (< 256 in 6.x). */
#define SKBDROP_REASONS_MAX 1024
#define SKBDROP_REASON_WORDS (SKBDROP_REASONS_MAX / 64)

/* The program wakes the reader once this much waits in the ring ... */
#define SKBDROP_WAKEUP_BYTES (64 * sizeof(struct skbdrop_event))
/* ... and the reader reads it at least this often (ms) anyway. */
#define SKBDROP_POLL_MS 100

struct skbdrop_event {
	__u64 ktime;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 location;		/* the kernel address that freed the packet */
	__u32 reason;		/* enum skb_drop_reason */
	__u32 ifindex;		/* skb->dev's, else skb->skb_iif; 0: none */
	__u32 netns;		/* inode of the packet's network namespace; 0: unknown */
	__u32 len;		/* bytes from the network header to the end */
	__u16 protocol;		/* skb->protocol, host order (ETH_P_IP...) */
	__u16 caplen;		/* bytes of data[] that hold the packet */
	__u32 pad;
	__u8 data[SKBDROP_SNAPLEN_MAX];
};

/* One per CPU (the `stats` per-CPU array): the CPU's token bucket and counters. */
struct skbdrop_cpu {
	__u64 last_ns;		/* when the bucket was last refilled */
	__u64 tokens;
	__u64 records;		/* events written to the ring */
	__u64 suppressed;	/* drops of a listed reason the rate limit left out */
	__u64 lost;		/* drops of a listed reason with the ring full */
};

#endif
