/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json `schema: ecs`, see json_ecs.h.  Packets and flows (flow, nfct:
 * the original direction is the source) map to the same paths.  Objects
 * are written only when a member is present, so a record without
 * interfaces has no "observer" ingress object and an ARP record no
 * "network.transport".  Everything goes through the bounded fmt_*
 * appenders into the batch arena: no allocation per record.
 */
#include "json_ecs.h"
#include "names.h"

/* A comma before every member but the first of its object. */
struct obj {
	struct sl_fmt_buf *b;
	bool first;
};

/* key is ",\"name\":": one copy, from its comma or from after it */
static inline void member(struct obj *o, const char *key, size_t n)
{
	sl_fmt_mem(o->b, key + o->first, n - o->first);
	o->first = false;
}
#define MEMBER(o, lit) member((o), "," lit, sizeof(lit))

static void open_obj(struct obj *parent, struct obj *child, const char *key, size_t n)
{
	member(parent, key, n);
	child->b = parent->b;
	child->first = true;
}
/* the key and the brace in one copy */
#define OPEN(parent, child, lit) open_obj((parent), (child), "," lit "{", sizeof(lit) + 1)

static void close_obj(struct obj *o)
{
	sl_fmt_chr(o->b, '}');
}

static void put_addr(struct sl_fmt_buf *b, const uint8_t a[16], bool v6)
{
	sl_fmt_chr(b, '"');
	sl_fmt_addr_in(b, a, v6);
	sl_fmt_chr(b, '"');
}

/* ECS writes MAC addresses as RFC 7042 says: AA-BB-CC-DD-EE-FF. */
static void put_mac(struct sl_fmt_buf *b, const uint8_t m[6])
{
	static const char hex[] = "0123456789ABCDEF";
	char s[19];
	unsigned i, n = 0;

	s[n++] = '"';
	for (i = 0; i < 6; i++) {
		if (i)
			s[n++] = '-';
		s[n++] = hex[m[i] >> 4];
		s[n++] = hex[m[i] & 15];
	}
	s[n++] = '"';
	sl_fmt_mem(b, s, n);
}

/* A number as an ECS keyword: a string. */
static void put_num_str(struct sl_fmt_buf *b, uint64_t v)
{
	sl_fmt_chr(b, '"');
	sl_fmt_u64(b, v);
	sl_fmt_chr(b, '"');
}

static void put_cstr(struct sl_fmt_buf *b, const char *s)
{
	sl_fmt_chr(b, '"');
	sl_fmt_str(b, s);
	sl_fmt_chr(b, '"');
}

/* Whether a flow's orig_sport/orig_dport are ports (ICMP's are id and type/code). */
static bool flow_has_ports(const struct sl_record *r)
{
	uint64_t p = sl_has(r, SL_F_IP_PROTO) ? r->v[SL_F_IP_PROTO].u64 : 0;

	return p == 6 || p == 17 || p == 132 || p == 136 || p == 33;
}

/* The first of two fields the record has, or a (absent) when it has neither. */
static sl_field either(const struct sl_record *r, sl_field a, sl_field b)
{
	return sl_has(r, a) || !sl_has(r, b) ? a : b;
}

/*
 * source / destination: a packet's addresses and ports, else a flow's
 * original direction (flow, nfct), with the bytes and packets sent from
 * that side (ECS: source.bytes are the bytes the source sent).
 */
static void endpoint(struct obj *top, const struct sl_record *r, const char *key, size_t n, bool src)
{
	sl_field addr = src ? either(r, SL_F_SRC_ADDR, SL_F_ORIG_SRC) : either(r, SL_F_DST_ADDR, SL_F_ORIG_DST);
	sl_field port = src ? SL_F_SPORT : SL_F_DPORT, mac = src ? SL_F_MAC_SRC : SL_F_MAC_DST;
	sl_field bytes = src ? SL_F_ORIG_BYTES : SL_F_REPLY_BYTES;
	sl_field pkts = src ? SL_F_ORIG_PACKETS : SL_F_REPLY_PACKETS;
	struct obj o;

	if (!sl_has(r, port) && flow_has_ports(r))
		port = src ? SL_F_ORIG_SPORT : SL_F_ORIG_DPORT;
	if (!sl_has(r, addr) && !sl_has(r, port) && !sl_has(r, mac) && !sl_has(r, bytes) && !sl_has(r, pkts))
		return;
	open_obj(top, &o, key, n);
	if (sl_has(r, addr)) {
		MEMBER(&o, "\"ip\":");
		put_addr(o.b, r->v[addr].addr, sl_fmt_rec_v6(r));
	}
	if (sl_has(r, port)) {
		MEMBER(&o, "\"port\":");
		sl_fmt_u64(o.b, r->v[port].u64);
	}
	if (sl_has(r, mac)) {
		MEMBER(&o, "\"mac\":");
		put_mac(o.b, r->v[mac].addr);
	}
	if (sl_has(r, bytes)) {
		MEMBER(&o, "\"bytes\":");
		sl_fmt_u64(o.b, r->v[bytes].u64);
	}
	if (sl_has(r, pkts)) {
		MEMBER(&o, "\"packets\":");
		sl_fmt_u64(o.b, r->v[pkts].u64);
	}
	close_obj(&o);
}

/* observer.ingress/egress.interface: the name, else the index as id (as the default schema). */
static void interface(struct obj *obs, const struct sl_record *r, const char *key, size_t n, sl_field name,
		      sl_field index)
{
	struct obj dir, itf;
	bool has_index = sl_has(r, index) && r->v[index].u64;

	if (!sl_has(r, name) && !has_index)
		return;
	open_obj(obs, &dir, key, n);
	OPEN(&dir, &itf, "\"interface\":");
	if (sl_has(r, name)) {
		MEMBER(&itf, "\"name\":");
		sl_fmt_json_str(itf.b, r->v[name].bytes.ptr, r->v[name].bytes.len);
	} else if (has_index) {
		MEMBER(&itf, "\"id\":");
		put_num_str(itf.b, r->v[index].u64);
	}
	close_obj(&itf);
	close_obj(&dir);
}

static void observer(const struct json_ecs *e, struct obj *top, const struct sl_record *r)
{
	struct obj o;

	if (!e->host && !sl_has(r, SL_F_IFNAME_IN) && !sl_has(r, SL_F_IFNAME_OUT) &&
	    !(sl_has(r, SL_F_IFINDEX_IN) && r->v[SL_F_IFINDEX_IN].u64) &&
	    !(sl_has(r, SL_F_IFINDEX_OUT) && r->v[SL_F_IFINDEX_OUT].u64))
		return;
	OPEN(top, &o, "\"observer\":");
	if (e->host) {
		MEMBER(&o, "\"hostname\":");
		sl_fmt_mem(o.b, e->host, e->host_len);
	}
	interface(&o, r, ",\"ingress\":{", 12, SL_F_IFNAME_IN, SL_F_IFINDEX_IN);
	interface(&o, r, ",\"egress\":{", 11, SL_F_IFNAME_OUT, SL_F_IFINDEX_OUT);
	close_obj(&o);
}

/* The string of registered field f of r, or NULL. */
static const struct sl_bytes *str_of(const struct sl_record *r, int f)
{
	return f >= 0 && sl_has(r, (sl_field)f) ? &r->v[f].bytes : NULL;
}

/* labels.netns: the namespace an input with netns read the record in (ECS has no field for it). */
static void labels(const struct json_ecs *e, struct obj *top, const struct sl_record *r)
{
	const struct sl_bytes *ns = str_of(r, e->netns);
	struct obj o;

	if (!ns)
		return;
	OPEN(top, &o, "\"labels\":");
	MEMBER(&o, "\"netns\":");
	sl_fmt_json_str(o.b, ns->ptr, ns->len);
	close_obj(&o);
}

/*
 * event.action: the verdict of the rule that logged the packet (nflog's
 * rules: true), else the log prefix without the blanks that end most
 * prefixes.
 */
static void event(const struct json_ecs *e, struct obj *top, const struct sl_record *r,
		  struct sl_fmt_time_cache *tc)
{
	const struct sl_bytes *verdict = str_of(r, e->rule_verdict);
	struct obj o;

	OPEN(top, &o, "\"event\":");
	MEMBER(&o, "\"kind\":\"event\",\"category\":[\"network\"]");
	if (verdict) {
		MEMBER(&o, "\"action\":");
		sl_fmt_json_str(o.b, verdict->ptr, verdict->len);
	} else if (sl_has(r, SL_F_PREFIX)) {
		const struct sl_bytes *p = &r->v[SL_F_PREFIX].bytes;
		uint32_t n = p->len;

		while (n && (p->ptr[n - 1] == ' ' || p->ptr[n - 1] == ':'))
			n--;
		MEMBER(&o, "\"action\":");
		sl_fmt_json_str(o.b, p->ptr, n);
	}
	if (sl_has(r, SL_F_FLOW_START)) {
		MEMBER(&o, "\"start\":\"");
		sl_fmt_rfc3339(o.b, tc, r->v[SL_F_FLOW_START].time);
		sl_fmt_chr(o.b, '"');
	}
	if (sl_has(r, SL_F_FLOW_END)) {
		MEMBER(&o, "\"end\":\"");
		sl_fmt_rfc3339(o.b, tc, r->v[SL_F_FLOW_END].time);
		sl_fmt_chr(o.b, '"');
	}
	close_obj(&o);
}

static void network(const struct json_ecs *e, struct obj *top, const struct sl_record *r)
{
	bool cid = e->cid_field >= 0 && sl_has(r, (sl_field)e->cid_field);
	uint64_t ver = sl_has(r, SL_F_IP_VERSION) ? r->v[SL_F_IP_VERSION].u64 : 0;
	struct obj o, vlan;

	bool bytes = sl_has(r, SL_F_ORIG_BYTES) || sl_has(r, SL_F_REPLY_BYTES);
	bool pkts = sl_has(r, SL_F_ORIG_PACKETS) || sl_has(r, SL_F_REPLY_PACKETS);

	if (ver != 4 && ver != 6 && !sl_has(r, SL_F_IP_PROTO) && !cid && !sl_has(r, SL_F_VLAN_ID) && !bytes &&
	    !pkts)
		return;
	OPEN(top, &o, "\"network\":");
	if (ver == 4 || ver == 6) {
		MEMBER(&o, "\"type\":");
		sl_fmt_str(o.b, ver == 4 ? "\"ipv4\"" : "\"ipv6\"");
	}
	if (sl_has(r, SL_F_IP_PROTO)) {
		uint64_t p = r->v[SL_F_IP_PROTO].u64;
		/* ECS wants the IANA keyword: ipv4 for 4, ipv6-icmp for 58 */
		const char *name = sl_proto_iana(p);

		if (name) {
			MEMBER(&o, "\"transport\":");
			put_cstr(o.b, name);
		}
		MEMBER(&o, "\"iana_number\":");
		put_num_str(o.b, p);
	}
	if (cid) {
		const struct sl_bytes *c = &r->v[e->cid_field].bytes;

		MEMBER(&o, "\"community_id\":");
		sl_fmt_json_str(o.b, c->ptr, c->len);
	}
	/* a flow's both directions together */
	if (bytes) {
		MEMBER(&o, "\"bytes\":");
		sl_fmt_u64(o.b, (sl_has(r, SL_F_ORIG_BYTES) ? r->v[SL_F_ORIG_BYTES].u64 : 0) +
				     (sl_has(r, SL_F_REPLY_BYTES) ? r->v[SL_F_REPLY_BYTES].u64 : 0));
	}
	if (pkts) {
		MEMBER(&o, "\"packets\":");
		sl_fmt_u64(o.b, (sl_has(r, SL_F_ORIG_PACKETS) ? r->v[SL_F_ORIG_PACKETS].u64 : 0) +
				     (sl_has(r, SL_F_REPLY_PACKETS) ? r->v[SL_F_REPLY_PACKETS].u64 : 0));
	}
	if (sl_has(r, SL_F_VLAN_ID)) {
		OPEN(&o, &vlan, "\"vlan\":");
		MEMBER(&vlan, "\"id\":");
		put_num_str(o.b, r->v[SL_F_VLAN_ID].u64);
		close_obj(&vlan);
	}
	close_obj(&o);
}

/* rule.id, rule.name, rule.ruleset: the rule that logged the packet (nflog's rules: true). */
static void rule(const struct json_ecs *e, struct obj *top, const struct sl_record *r)
{
	const struct sl_bytes *name = str_of(r, e->rule_comment), *set = str_of(r, e->rule_table);
	bool id = e->rule_handle >= 0 && sl_has(r, (sl_field)e->rule_handle);
	struct obj o;

	if (!set)
		return;	/* only nflog's attribution sets rule_table (nftrace has rule_handle too) */
	OPEN(top, &o, "\"rule\":");
	if (id) {
		MEMBER(&o, "\"id\":");
		put_num_str(o.b, r->v[e->rule_handle].u64);
	}
	if (name) {
		MEMBER(&o, "\"name\":");
		sl_fmt_json_str(o.b, name->ptr, name->len);
	}
	if (set) {
		MEMBER(&o, "\"ruleset\":");
		sl_fmt_json_str(o.b, set->ptr, set->len);
	}
	close_obj(&o);
}

/*
 * What ECS has no field for, under "iptables" as Elastic's own iptables
 * integration (Filebeat's iptables module) names it: iptables.tcp.flags as
 * an array of flag names, iptables.icmp.type and .code.
 */
static void iptables(struct obj *top, const struct sl_record *r)
{
	static const uint64_t bits[] = {0x100, 0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01};
	static const char *const names[] = {"AE", "CWR", "ECE", "URG", "ACK", "PSH", "RST", "SYN", "FIN"};
	bool icmp = sl_has(r, SL_F_ICMP_TYPE);
	struct obj o, sub;

	if (!sl_has(r, SL_F_TCP_FLAGS) && !icmp)
		return;
	OPEN(top, &o, "\"iptables\":");
	if (sl_has(r, SL_F_TCP_FLAGS)) {
		uint64_t v = r->v[SL_F_TCP_FLAGS].u64;
		bool first = true;

		OPEN(&o, &sub, "\"tcp\":");
		MEMBER(&sub, "\"flags\":[");
		for (unsigned i = 0; i < 9; i++) {
			if (!(v & bits[i]))
				continue;
			if (!first)
				sl_fmt_chr(sub.b, ',');
			first = false;
			put_cstr(sub.b, names[i]);
		}
		sl_fmt_chr(sub.b, ']');
		close_obj(&sub);
	}
	if (icmp) {
		OPEN(&o, &sub, "\"icmp\":");
		MEMBER(&sub, "\"type\":");
		sl_fmt_u64(sub.b, r->v[SL_F_ICMP_TYPE].u64);
		if (sl_has(r, SL_F_ICMP_CODE)) {
			MEMBER(&sub, "\"code\":");
			sl_fmt_u64(sub.b, r->v[SL_F_ICMP_CODE].u64);
		}
		close_obj(&sub);
	}
	close_obj(&o);
}

void json_ecs_record(const struct json_ecs *e, struct sl_fmt_buf *b, const struct sl_record *r)
{
	struct obj top = {b, true}, ecs;
	sl_field ts;

	sl_fmt_chr(b, '{');
	/* a flow record's time is when it ended */
	ts = either(r, SL_F_TIMESTAMP, SL_F_FLOW_END);
	if (sl_has(r, ts)) {
		MEMBER(&top, "\"@timestamp\":\"");
		sl_fmt_rfc3339(b, e->tc, r->v[ts].time);
		sl_fmt_chr(b, '"');
	}
	OPEN(&top, &ecs, "\"ecs\":");
	MEMBER(&ecs, "\"version\":\"" SLUICE_ECS_VERSION "\"");
	close_obj(&ecs);
	event(e, &top, r, e->tc);
	observer(e, &top, r);
	endpoint(&top, r, ",\"source\":{", 11, true);
	endpoint(&top, r, ",\"destination\":{", 16, false);
	network(e, &top, r);
	rule(e, &top, r);
	iptables(&top, r);
	labels(e, &top, r);
	sl_fmt_chr(b, '}');
}
