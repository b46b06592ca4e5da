/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flow: aggregate decoded packets into unidirectional flows, as a NetFlow
 * exporter does, and emit one flow record per flow when it ends.
 *
 * Key: source and destination address, protocol, source and destination
 * port (ICMP: the echo id and type << 8 | code, like conntrack and
 * nfdump), input interface.  Each direction of a conversation is its own
 * flow (reply_* counters are 0), as in NetFlow v5/v9.
 *
 * A flow ends when
 *   - no packet came for idle_timeout (reason idle),
 *   - it has lasted active_timeout (reason active; a long connection is
 *     reported in pieces, so its bytes reach the files while it lasts),
 *   - the table is full and a new flow needs the slot of the flow seen
 *     least recently (reason evicted, counted in "evicted"),
 *   - the daemon stops (reason eof: every open flow is emitted at flush()).
 *
 * Time is the packets' own: the timestamp field (the kernel's, or the
 * capture's for replay), else the wall clock of the batch.  Between
 * packets a clock runs on from the newest packet time at the speed of the
 * monotonic clock, so a replayed capture expires its flows in capture time
 * (the same flows however fast it is read) and live traffic in real time.
 * Flows are checked after every batch and on a timer.
 *
 * Packets are consumed (the batch leaves with no record).  Flow records go
 * out in this filter's own batches, taken from the pool and emitted
 * synchronously.  The table is preallocated at start (max_flows entries,
 * open hashing with a seeded hash): nothing is allocated per packet, and
 * expiry costs O(1) per flow (two intrusive lists, by last packet and by
 * creation).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "flow_fields.h"
#include "plugin_state.h"
#include "time_clamp.h"

#define NIL UINT32_MAX

struct flow_cfg {
	uint64_t active_timeout;	/* ms */
	uint64_t idle_timeout;		/* ms */
	int64_t max_flows;
};

/* The key, compared with memcmp: every byte (padding too) is set. */
struct fkey {
	uint8_t src[16], dst[16];
	uint32_t ifin;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3];
};
_Static_assert(sizeof(struct fkey) == 44, "struct fkey has hidden padding");

/* an entry's place in one of the two lists: table indices, NIL at the ends */
struct link {
	uint32_t prev, next;
};

struct fent {
	struct fkey k;
	uint32_t hash;
	uint32_t hnext;			/* hash chain; free list when unused */
	struct link lru;		/* by last packet: idle expiry, eviction */
	struct link cre;		/* by creation: active expiry */
	uint32_t ifout;
	uint16_t tcp_flags;
	uint8_t tos;
	bool has_tcp;
	uint64_t packets, bytes;
	int64_t first, last;		/* ns since the epoch */
};

struct list {
	uint32_t head, tail;
};

struct flow_state {
	SL_STATE_HEAD(struct flow_cfg);
	int64_t idle_ns, active_ns;
	uint32_t cap;

	struct fent *tab;
	uint32_t *buckets;
	uint32_t bmask;
	uint32_t free_head;
	uint32_t used;
	struct list lru, cre;
	uint64_t seed;

	bool clk_set;
	int64_t clk_max;		/* newest packet time, ns */
	int64_t clk_mono;		/* monotonic time when it was seen, ns */

	struct sl_batch *out;		/* flow records waiting to be emitted */
	struct sl_timer *timer;
	bool started;

	int c_flows, c_evicted, c_not_ip, c_lost;
};

static const struct sl_option flow_options[] = {
	SL_OPT_DURATION("active_timeout", struct flow_cfg, active_timeout, "5m", 100, 7 * 86400000LL,
			"report a flow that has lasted this long, then start it anew"),
	SL_OPT_DURATION("idle_timeout", struct flow_cfg, idle_timeout, "15s", 10, 86400000,
			"a flow without packets for this long has ended"),
	SL_OPT_INT("max_flows", struct flow_cfg, max_flows, "65536", 1, 1 << 24,
		   "flows held at once (about 128 bytes each); when full the least recent is emitted"),
	SL_OPT_END
};

static const struct sl_field_decl flow_needs[] = {
	SL_FIELD_DECL(SL_F_SRC_ADDR),
	SL_FIELD_DECL(SL_F_DST_ADDR),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_END
};

static const struct sl_field_decl flow_provides[] = {
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_DECL(SL_F_ORIG_SPORT),
	SL_FIELD_DECL(SL_F_ORIG_DPORT),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_IP_VERSION),
	SL_FIELD_DECL(SL_F_IP_TOS),
	SL_FLOW_COUNT_FIELDS,
	SL_FIELD_DECL(SL_F_FLOW_TCP_FLAGS),
	SL_FIELD_DECL(SL_F_IFINDEX_IN),
	SL_FIELD_DECL(SL_F_IFINDEX_OUT),
	SL_FIELD_DECL(SL_F_FLOW_END_REASON),
	SL_FIELD_END
};

/* ---- clocks ---- */

/* Now, on the packets' clock. */
static int64_t flow_now(const struct flow_state *st, int64_t mono)
{
	return st->clk_max + (mono - st->clk_mono);
}

/* ---- hash table ---- */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static uint32_t key_hash(const struct flow_state *st, const struct fkey *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = st->seed, v;
	uint32_t tail;

	for (int i = 0; i < 5; i++) {
		memcpy(&v, p + 8 * i, 8);
		h = mix(h, v);
	}
	memcpy(&tail, p + 40, 4);
	h = mix(h, tail);
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(h ^ (h >> 31));
}

static uint32_t lookup(const struct flow_state *st, const struct fkey *k, uint32_t h)
{
	for (uint32_t i = st->buckets[h & st->bmask]; i != NIL; i = st->tab[i].hnext)
		if (st->tab[i].hash == h && memcmp(&st->tab[i].k, k, sizeof(*k)) == 0)
			return i;
	return NIL;
}

/* entry i's links in the LRU list (lru) or the creation list */
static struct link *link_of(struct flow_state *st, uint32_t i, bool lru)
{
	return lru ? &st->tab[i].lru : &st->tab[i].cre;
}

static void list_unlink(struct flow_state *st, struct list *l, uint32_t i, bool lru)
{
	const struct link *e = link_of(st, i, lru);

	if (e->prev != NIL)
		link_of(st, e->prev, lru)->next = e->next;
	else
		l->head = e->next;
	if (e->next != NIL)
		link_of(st, e->next, lru)->prev = e->prev;
	else
		l->tail = e->prev;
}

static void list_append(struct flow_state *st, struct list *l, uint32_t i, bool lru)
{
	struct link *e = link_of(st, i, lru);

	e->prev = l->tail;
	e->next = NIL;
	if (l->tail != NIL)
		link_of(st, l->tail, lru)->next = i;
	else
		l->head = i;
	l->tail = i;
}

static void remove_entry(struct flow_state *st, uint32_t i)
{
	uint32_t *pp = &st->buckets[st->tab[i].hash & st->bmask];

	while (*pp != i)
		pp = &st->tab[*pp].hnext;
	*pp = st->tab[i].hnext;
	list_unlink(st, &st->lru, i, true);
	list_unlink(st, &st->cre, i, false);
	st->tab[i].hnext = st->free_head;
	st->free_head = i;
	st->used--;
}

/* ---- emitting flow records ---- */

static void out_flush(struct flow_state *st)
{
	struct sl_batch *b = st->out;

	if (!b)
		return;
	st->out = NULL;
	st->host->emit(st->inst, b);	/* empty or not */
}

static struct sl_record *out_record(struct flow_state *st)
{
	struct sl_record *r;

	if (st->out && (r = sl_batch_add(st->out)) != NULL)
		return r;
	out_flush(st);
	st->out = st->host->batch_get(st->inst);
	return st->out ? sl_batch_add(st->out) : NULL;
}

static void set_time(struct sl_record *r, sl_field f, int64_t ns)
{
	int64_t s = ns / 1000000000, n = ns % 1000000000;

	if (n < 0) {
		s--;
		n += 1000000000;
	}
	sl_set_time(r, f, s, (uint32_t)n);
}

static void emit_flow(struct flow_state *st, const struct fent *e, unsigned reason)
{
	struct sl_record *r = out_record(st);
	bool v4 = sl_addr_is_v4(e->k.src) && sl_addr_is_v4(e->k.dst);

	if (!r) {
		st->host->counter_add(st->inst, st->c_lost, 1);
		st->host->error_add(st->inst, 1);
		return;
	}
	sl_set_ip6(r, SL_F_ORIG_SRC, e->k.src);
	sl_set_ip6(r, SL_F_ORIG_DST, e->k.dst);
	sl_set_u64(r, SL_F_ORIG_SPORT, e->k.sport);
	sl_set_u64(r, SL_F_ORIG_DPORT, e->k.dport);
	sl_set_u64(r, SL_F_IP_PROTO, e->k.proto);
	sl_set_u64(r, SL_F_IP_VERSION, v4 ? 4 : 6);
	sl_set_u64(r, SL_F_IP_TOS, e->tos);
	sl_set_u64(r, SL_F_ORIG_PACKETS, e->packets);
	sl_set_u64(r, SL_F_ORIG_BYTES, e->bytes);
	sl_set_u64(r, SL_F_REPLY_PACKETS, 0);
	sl_set_u64(r, SL_F_REPLY_BYTES, 0);
	set_time(r, SL_F_FLOW_START, e->first);
	set_time(r, SL_F_FLOW_END, e->last);
	if (e->has_tcp)
		sl_set_u64(r, SL_F_FLOW_TCP_FLAGS, e->tcp_flags);
	if (e->k.ifin)
		sl_set_u64(r, SL_F_IFINDEX_IN, e->k.ifin);
	if (e->ifout)
		sl_set_u64(r, SL_F_IFINDEX_OUT, e->ifout);
	sl_set_u64(r, SL_F_FLOW_END_REASON, reason);
}

static void expire(struct flow_state *st, uint32_t i, unsigned reason)
{
	emit_flow(st, &st->tab[i], reason);
	remove_entry(st, i);
}

/* End the flows that are over at `now` (packet clock). */
static void expire_due(struct flow_state *st, int64_t now)
{
	while (st->lru.head != NIL && now - st->tab[st->lru.head].last > st->idle_ns)
		expire(st, st->lru.head, SL_FLOW_END_IDLE);
	while (st->cre.head != NIL && now - st->tab[st->cre.head].first > st->active_ns)
		expire(st, st->cre.head, SL_FLOW_END_ACTIVE);
}

/* ---- packets ---- */

/* What a packet adds to its flow. */
struct pkt {
	int64_t t;
	uint64_t len;
	uint32_t ifout;
	uint16_t tcp_flags;
	uint8_t tos;
	bool has_tcp;
};

static void start_flow(struct fent *e, const struct pkt *p)
{
	e->packets = 1;
	e->bytes = p->len;
	e->first = e->last = p->t;
	e->ifout = p->ifout;
	e->tcp_flags = p->tcp_flags;
	e->has_tcp = p->has_tcp;
	e->tos = p->tos;
}

static bool make_key(const struct sl_record *r, struct fkey *k)
{
	uint64_t proto;

	if (!sl_has(r, SL_F_SRC_ADDR) || !sl_has(r, SL_F_DST_ADDR))
		return false;
	memset(k, 0, sizeof(*k));
	memcpy(k->src, r->v[SL_F_SRC_ADDR].addr, 16);
	memcpy(k->dst, r->v[SL_F_DST_ADDR].addr, 16);
	proto = sl_has(r, SL_F_IP_PROTO) ? r->v[SL_F_IP_PROTO].u64 : 0;
	k->proto = (uint8_t)proto;
	if (sl_has(r, SL_F_IFINDEX_IN))
		k->ifin = (uint32_t)r->v[SL_F_IFINDEX_IN].u64;
	if ((proto == 1 || proto == 58) && sl_has(r, SL_F_ICMP_TYPE)) {
		k->sport = sl_has(r, SL_F_ICMP_ID) ? (uint16_t)r->v[SL_F_ICMP_ID].u64 : 0;
		k->dport = (uint16_t)(r->v[SL_F_ICMP_TYPE].u64 << 8 |
				      (sl_has(r, SL_F_ICMP_CODE) ? r->v[SL_F_ICMP_CODE].u64 & 0xff : 0));
	} else {
		if (sl_has(r, SL_F_SPORT))
			k->sport = (uint16_t)r->v[SL_F_SPORT].u64;
		if (sl_has(r, SL_F_DPORT))
			k->dport = (uint16_t)r->v[SL_F_DPORT].u64;
	}
	return true;
}

static void add_packet(struct flow_state *st, const struct fkey *k, uint32_t h, const struct pkt *p)
{
	uint32_t i = lookup(st, k, h);
	struct fent *e;

	if (i != NIL) {
		e = &st->tab[i];
		if (p->t - e->last > st->idle_ns || p->t - e->first > st->active_ns) {
			/* This packet comes after the flow ended: report it, start anew. */
			emit_flow(st, e, p->t - e->last > st->idle_ns ? SL_FLOW_END_IDLE : SL_FLOW_END_ACTIVE);
			start_flow(e, p);
			list_unlink(st, &st->cre, i, false);
			list_append(st, &st->cre, i, false);
			st->host->counter_add(st->inst, st->c_flows, 1);
		} else {
			e->packets++;
			e->bytes += p->len;
			if (p->t > e->last)
				e->last = p->t;
			if (p->t < e->first)
				e->first = p->t;
			e->tcp_flags |= p->tcp_flags;
			e->has_tcp |= p->has_tcp;
			if (p->ifout)
				e->ifout = p->ifout;
		}
		list_unlink(st, &st->lru, i, true);
		list_append(st, &st->lru, i, true);
		return;
	}
	if (st->used == st->cap) {
		/* Full: the flow seen least recently makes room. */
		expire(st, st->lru.head, SL_FLOW_END_EVICTED);
		st->host->counter_add(st->inst, st->c_evicted, 1);
	}
	i = st->free_head;
	e = &st->tab[i];
	st->free_head = e->hnext;
	st->used++;
	e->k = *k;
	e->hash = h;
	e->hnext = st->buckets[h & st->bmask];
	st->buckets[h & st->bmask] = i;
	start_flow(e, p);
	list_append(st, &st->lru, i, true);
	list_append(st, &st->cre, i, false);
	st->host->counter_add(st->inst, st->c_flows, 1);
}

/*
 * Packets are taken in groups: keys and hashes first, then the bucket,
 * entry and list neighbours of each are prefetched one level per pass, so
 * the cache misses of a group overlap instead of being paid one after the
 * other (a table of many flows does not fit in the cache).  The
 * prefetches are only hints: the packets are then added in order, exactly
 * as one at a time.
 */
#define GROUP 32

static void prefetch_entry(const struct flow_state *st, uint32_t i)
{
	if (i != NIL) {
		__builtin_prefetch(&st->tab[i]);
		__builtin_prefetch((const char *)&st->tab[i] + sizeof(struct fent) - 1);
	}
}

static int flow_process(void *state, struct sl_batch *b)
{
	struct flow_state *st = state;
	int64_t mono = sl_clock_ns(CLOCK_MONOTONIC), wall = sl_clock_ns(CLOCK_REALTIME);
	uint64_t not_ip = 0;

	for (unsigned g = 0; g < b->count; g += GROUP) {
		struct fkey k[GROUP];
		struct pkt p[GROUP];
		uint32_t h[GROUP], first[GROUP];
		unsigned n = 0, end = b->count - g < GROUP ? b->count - g : GROUP;

		for (unsigned j = 0; j < end; j++) {
			const struct sl_record *r = b->rec[g + j];

			if (!make_key(r, &k[n])) {
				not_ip++;
				continue;
			}
			if (sl_has(r, SL_F_TIMESTAMP))
				p[n].t = sl_time_ns_clamped(r->v[SL_F_TIMESTAMP].time);
			else
				p[n].t = wall;
			/* Layer-3 bytes, as NetFlow counts them. */
			p[n].len = sl_has(r, SL_F_IP_LEN) ? r->v[SL_F_IP_LEN].u64
				   : sl_has(r, SL_F_ORIG_LEN) ? r->v[SL_F_ORIG_LEN].u64
				   : sl_has(r, SL_F_PACKET) ? r->v[SL_F_PACKET].bytes.len : 0;
			p[n].ifout = sl_has(r, SL_F_IFINDEX_OUT) ? (uint32_t)r->v[SL_F_IFINDEX_OUT].u64 : 0;
			p[n].has_tcp = k[n].proto == 6 && sl_has(r, SL_F_TCP_FLAGS);
			p[n].tcp_flags = p[n].has_tcp ? (uint16_t)r->v[SL_F_TCP_FLAGS].u64 : 0;
			p[n].tos = sl_has(r, SL_F_IP_TOS) ? (uint8_t)r->v[SL_F_IP_TOS].u64 : 0;
			n++;
		}
		for (unsigned j = 0; j < n; j++) {
			h[j] = key_hash(st, &k[j]);
			__builtin_prefetch(&st->buckets[h[j] & st->bmask]);
		}
		for (unsigned j = 0; j < n; j++) {
			first[j] = st->buckets[h[j] & st->bmask];
			prefetch_entry(st, first[j]);
		}
		/* a known flow moves to the tail of the LRU list: its neighbours */
		for (unsigned j = 0; j < n; j++) {
			if (first[j] != NIL && st->tab[first[j]].hash == h[j]) {
				prefetch_entry(st, st->tab[first[j]].lru.prev);
				prefetch_entry(st, st->tab[first[j]].lru.next);
			}
		}
		for (unsigned j = 0; j < n; j++) {
			if (!st->clk_set || p[j].t > st->clk_max) {
				st->clk_max = p[j].t;
				st->clk_mono = mono;
				st->clk_set = true;
			}
			add_packet(st, &k[j], h[j], &p[j]);
		}
	}
	b->count = 0;	/* packets are consumed; flows leave in our own batches */
	if (not_ip)
		st->host->counter_add(st->inst, st->c_not_ip, not_ip);
	if (st->clk_set)
		expire_due(st, flow_now(st, mono));
	out_flush(st);
	return 0;
}

static void on_timer(void *state)
{
	struct flow_state *st = state;

	if (!st->clk_set || !st->used)
		return;
	expire_due(st, flow_now(st, sl_clock_ns(CLOCK_MONOTONIC)));
	out_flush(st);
}

/* Shutdown: every open flow, oldest first. */
static int flow_flush(void *state)
{
	struct flow_state *st = state;

	if (!st->started)
		return 0;
	while (st->cre.head != NIL)
		expire(st, st->cre.head, SL_FLOW_END_EOF);
	out_flush(st);
	return 0;
}

/* ---- lifecycle ---- */

static int flow_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct flow_cfg *cfg = config;
	struct flow_state *st;

	if (cfg->idle_timeout > cfg->active_timeout) {
		host->config_error(inst, "idle_timeout", "longer than active_timeout (%llu ms)",
				   (unsigned long long)cfg->active_timeout);
		return -1;
	}
	st = sl_state_new(struct flow_state, host, inst, config);
	if (!st)
		return -1;
	st->idle_ns = (int64_t)cfg->idle_timeout * 1000000;
	st->active_ns = (int64_t)cfg->active_timeout * 1000000;
	st->cap = (uint32_t)cfg->max_flows;
	st->c_flows = host->counter_new(inst, "flows");
	st->c_evicted = host->counter_new(inst, "evicted");
	st->c_not_ip = host->counter_new(inst, "not_ip");
	st->c_lost = host->counter_new(inst, "lost");
	*state = st;
	return 0;
}

static int flow_start(void *state)
{
	struct flow_state *st = state;
	uint32_t nb = 16;
	uint64_t period;

	while (nb < st->cap && nb < (1u << 30))
		nb <<= 1;
	st->tab = calloc(st->cap, sizeof(*st->tab));
	st->buckets = malloc((size_t)nb * sizeof(*st->buckets));
	if (!st->tab || !st->buckets) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot allocate a table of %u flows", st->cap);
		return -1;
	}
	memset(st->buckets, 0xff, (size_t)nb * sizeof(*st->buckets));	/* all NIL */
	st->bmask = nb - 1;
	for (uint32_t i = 0; i < st->cap; i++)
		st->tab[i].hnext = i + 1 < st->cap ? i + 1 : NIL;
	st->free_head = 0;
	st->lru.head = st->lru.tail = st->cre.head = st->cre.tail = NIL;
	/* A secret seed: crafted packets cannot pile into one chain. */
	if (getrandom(&st->seed, sizeof(st->seed), GRND_NONBLOCK) != sizeof(st->seed))
		st->seed = (uint64_t)sl_clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)st;
	st->timer = st->host->timer_new(st->inst, on_timer, st);
	if (!st->timer) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot create a timer");
		return -1;
	}
	/* Check often enough that a flow ends within ~half an idle timeout. */
	period = (uint64_t)st->idle_ns / 2000000;
	period = period < 10 ? 10 : period > 1000 ? 1000 : period;
	st->host->timer_arm(st->timer, period, period);
	st->started = true;
	return 0;
}

static void flow_stop(void *state)
{
	struct flow_state *st = state;

	if (st->timer)
		st->host->timer_disarm(st->timer);
	if (st->out) {
		st->host->batch_put(st->inst, st->out);
		st->out = NULL;
	}
	st->started = false;
}

static void flow_destroy(void *state)
{
	struct flow_state *st = state;

	free(st->tab);
	free(st->buckets);
	free(st);
}

static const struct sl_plugin flow_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_FILTER,
	.name = "flow",
	.description = "aggregate decoded packets into unidirectional flows (NetFlow-style timeouts)",
	.config_size = sizeof(struct flow_cfg),
	.options = flow_options,
	.needs = flow_needs,
	.provides = flow_provides,
	.configure = flow_configure,
	.start = flow_start,
	.process = flow_process,
	.flush = flow_flush,
	.stop = flow_stop,
	.destroy = flow_destroy,
};

SLUICE_PLUGIN(flow_plugin)
