/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rule texts and chain hooks of the ruleset (see nft_rules.h). */
#include "nft_rules.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

/* One rule or one base chain (handle UINT64_MAX, hook in `hook`). */
struct ent {
	uint64_t handle;
	uint8_t family;
	int hook;
	char *table, *chain, *text;
	uint32_t text_len;
};

struct ents {
	struct ent *v;
	size_t n, cap;
};

struct sl_nft_rules {
	struct ents e;	/* sorted by handle */
	size_t rules;
	uint32_t gen;	/* ruleset generation the contents are of */
	bool loaded;
	struct mnl_socket *nl;	/* for requests only: joins no group */
	char *buf;
};

#define BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 4)

#define CHAIN_HANDLE UINT64_MAX
/* The longest rule text kept (libnftnl's text of a big rule is long). */
#define TEXT_MAX 4096
#define DUMP_RETRIES 5

struct sl_nft_rules *sl_nft_rules_new(void)
{
	return calloc(1, sizeof(struct sl_nft_rules));
}

static void ents_clear(struct ents *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].table);
		free(e->v[i].chain);
		free(e->v[i].text);
	}
	free(e->v);
	memset(e, 0, sizeof(*e));
}

void sl_nft_rules_free(struct sl_nft_rules *rs)
{
	if (!rs)
		return;
	ents_clear(&rs->e);
	if (rs->nl)
		mnl_socket_close(rs->nl);
	free(rs->buf);
	free(rs);
}

size_t sl_nft_rules_count(const struct sl_nft_rules *rs)
{
	return rs->rules;
}

static struct ent *ents_add(struct ents *e)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		struct ent *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		e->v = v;
		e->cap = cap;
	}
	memset(&e->v[e->n], 0, sizeof(e->v[0]));
	return &e->v[e->n++];
}

/* A dump's state: where entries go, and whether one could not be stored. */
struct dump {
	struct ents *e;
	int err;
};

static int comment_cb(const struct nftnl_udata *attr, void *data)
{
	const char **comment = data;

	if (nftnl_udata_type(attr) == NFTNL_UDATA_RULE_COMMENT && nftnl_udata_len(attr) > 0) {
		const char *c = nftnl_udata_get(attr);

		if (c[nftnl_udata_len(attr) - 1] == '\0')
			*comment = c;
	}
	return MNL_CB_OK;
}

/* "[ expr ] [ expr ]": libnftnl's text without its "family table chain handle" prefix. */
static char *rule_text(const struct nftnl_rule *r, uint32_t *len)
{
	char *buf = malloc(TEXT_MAX), *at;
	const char *comment = NULL;
	int n;

	if (!buf)
		return NULL;
	n = nftnl_rule_snprintf(buf, TEXT_MAX, r, NFTNL_OUTPUT_DEFAULT, 0);
	if (n < 0)
		n = 0;
	if (n >= TEXT_MAX)
		n = TEXT_MAX - 1;
	buf[n] = '\0';
	at = strchr(buf, '[');
	at = at ? at : buf + n;
	memmove(buf, at, strlen(at) + 1);
	/* libnftnl puts spaces and newlines between expressions: one space, one line */
	n = 0;
	for (char *p = buf; *p; p++) {
		char c = *p == '\n' || *p == '\t' ? ' ' : *p;

		if (c != ' ' || (n && buf[n - 1] != ' '))
			buf[n++] = c;
	}
	buf[n] = '\0';
	while (n && buf[n - 1] == ' ')
		buf[--n] = '\0';
	if (nftnl_rule_is_set(r, NFTNL_RULE_USERDATA)) {
		uint32_t ulen;
		const void *u = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &ulen);

		if (nftnl_udata_parse(u, ulen, comment_cb, &comment) >= 0 && comment) {
			int m = snprintf(buf + n, (size_t)(TEXT_MAX - n), "%scomment \"%s\"",
					 n ? " " : "", comment);
			n = m < 0 ? n : n + m >= TEXT_MAX ? TEXT_MAX - 1 : n + m;
		}
	}
	*len = (uint32_t)n;
	return buf;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nftnl_rule *r = nftnl_rule_alloc();
	struct ent *e;

	if (!r || nftnl_rule_nlmsg_parse(nlh, r) < 0 || !(e = ents_add(d->e))) {
		d->err = -ENOMEM;
		goto out;
	}
	e->handle = nftnl_rule_get_u64(r, NFTNL_RULE_HANDLE);
	e->family = (uint8_t)nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	e->hook = -1;
	e->table = strdup(nftnl_rule_get_str(r, NFTNL_RULE_TABLE));
	e->chain = strdup(nftnl_rule_get_str(r, NFTNL_RULE_CHAIN));
	e->text = rule_text(r, &e->text_len);
	if (!e->table || !e->chain || !e->text)
		d->err = -ENOMEM;
out:
	nftnl_rule_free(r);
	return MNL_CB_OK;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct ent *e;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		d->err = -ENOMEM;
		goto out;
	}
	if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		goto out;	/* a regular chain: nothing to say about it */
	if (!(e = ents_add(d->e))) {
		d->err = -ENOMEM;
		goto out;
	}
	e->handle = CHAIN_HANDLE;
	e->family = (uint8_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	e->hook = (int)nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
	e->table = strdup(nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE));
	e->chain = strdup(nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (!e->table || !e->chain)
		d->err = -ENOMEM;
out:
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* One dump of `type` (NFT_MSG_GETRULE / GETCHAIN) into d: 0, -EINTR (ruleset changed), -errno. */
static int dump_one(struct mnl_socket *nl, uint16_t type, mnl_cb_t cb, struct dump *d, char *buf,
		    size_t size)
{
	uint32_t portid = mnl_socket_get_portid(nl), seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_UNSPEC, NLM_F_DUMP, seq);
	bool intr = false;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((n = mnl_socket_recvfrom(nl, buf, size)) > 0) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)buf;

		if (n >= (ssize_t)sizeof(*m) && (m->nlmsg_flags & NLM_F_DUMP_INTR))
			intr = true;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, d);
		if (ret < 0)
			return errno == EINTR ? -EINTR : -errno;
		if (ret == MNL_CB_STOP)
			break;
	}
	if (n < 0)
		return -errno;
	if (d->err)
		return d->err;
	return intr ? -EINTR : 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *g = nftnl_gen_alloc();
	uint32_t *gen = data;

	if (g && nftnl_gen_nlmsg_parse(nlh, g) >= 0 && nftnl_gen_is_set(g, NFTNL_GEN_ID))
		*gen = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
	nftnl_gen_free(g);
	return MNL_CB_OK;
}

/* The ruleset's generation id (NFT_MSG_GETGEN): 0, or -errno. */
static int get_gen(struct sl_nft_rules *rs, uint32_t *gen)
{
	uint32_t portid = mnl_socket_get_portid(rs->nl), seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(rs->buf, NFT_MSG_GETGEN, NFPROTO_UNSPEC, 0, seq);
	ssize_t n;

	*gen = 0;
	if (mnl_socket_sendto(rs->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(rs->nl, rs->buf, BUF_SIZE);
	if (n < 0 || mnl_cb_run(rs->buf, (size_t)n, seq, portid, gen_cb, gen) < 0)
		return -errno;
	return 0;
}

static int open_socket(struct sl_nft_rules *rs)
{
	if (rs->nl)
		return 0;
	if (!rs->buf && !(rs->buf = malloc(BUF_SIZE)))
		return -ENOMEM;
	rs->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!rs->nl)
		return -errno;
	if (mnl_socket_bind(rs->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(rs->nl);
		rs->nl = NULL;
		return err;
	}
	return 0;
}

int sl_nft_rules_changed(struct sl_nft_rules *rs)
{
	uint32_t gen;
	int err;

	if (!rs->loaded)
		return 1;
	if ((err = open_socket(rs)) < 0 || (err = get_gen(rs, &gen)) < 0)
		return err;
	return gen != rs->gen;
}

int sl_nft_rules_load(struct sl_nft_rules *rs)
{
	int err;

	if ((err = open_socket(rs)) < 0)
		return err;
	for (int i = 0; i < DUMP_RETRIES; i++) {
		struct ents e = {0};
		struct dump d = {.e = &e};
		uint32_t gen, gen_after;
		size_t rules;

		err = get_gen(rs, &gen);
		if (!err)
			err = dump_one(rs->nl, NFT_MSG_GETRULE, rule_cb, &d, rs->buf, BUF_SIZE);
		rules = e.n;
		if (!err)
			err = dump_one(rs->nl, NFT_MSG_GETCHAIN, chain_cb, &d, rs->buf, BUF_SIZE);
		if (!err)
			err = get_gen(rs, &gen_after);
		if (!err && gen_after != gen)
			err = -EINTR;
		if (err) {
			ents_clear(&e);
			if (err == -EINTR)
				continue;	/* the ruleset changed meanwhile: again */
			break;
		}
		qsort(e.v, e.n, sizeof(e.v[0]), ent_cmp);
		ents_clear(&rs->e);
		rs->e = e;
		rs->rules = rules;
		rs->gen = gen;
		rs->loaded = true;
		break;
	}
	return err;
}

static bool ent_is(const struct ent *e, uint8_t family, const char *table, uint32_t tlen,
		   const char *chain, uint32_t clen)
{
	return e->family == family && strlen(e->table) == tlen && !memcmp(e->table, table, tlen) &&
	       strlen(e->chain) == clen && !memcmp(e->chain, chain, clen);
}

/* The entry of handle h matching the rest, by binary search; NULL if none. */
static const struct ent *find(const struct sl_nft_rules *rs, uint64_t h, uint8_t family,
			      const char *table, uint32_t tlen, const char *chain, uint32_t clen)
{
	size_t lo = 0, hi = rs->e.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->e.v[mid].handle < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* handles are unique per table, not across tables: check each equal one */
	for (; lo < rs->e.n && rs->e.v[lo].handle == h; lo++)
		if (ent_is(&rs->e.v[lo], family, table, tlen, chain, clen))
			return &rs->e.v[lo];
	return NULL;
}

const char *sl_nft_rules_text(const struct sl_nft_rules *rs, uint8_t family, const char *table,
			      uint32_t table_len, const char *chain, uint32_t chain_len,
			      uint64_t handle, uint32_t *len)
{
	const struct ent *e;

	if (handle == CHAIN_HANDLE)
		return NULL;
	e = find(rs, handle, family, table, table_len, chain, chain_len);
	if (!e)
		return NULL;
	*len = e->text_len;
	return e->text;
}

int sl_nft_rules_hook(const struct sl_nft_rules *rs, uint8_t family, const char *table,
		      uint32_t table_len, const char *chain, uint32_t chain_len)
{
	const struct ent *e = find(rs, CHAIN_HANDLE, family, table, table_len, chain, chain_len);

	return e ? e->hook : -1;
}
