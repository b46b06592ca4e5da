/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfacct: extended accounting objects (nfnetlink_acct, the `nfacct` tool,
 * iptables' `-m nfacct --nfacct-name`), polled every `interval`: one record
 * per object with its name, packets, bytes and the poll's time, as
 * ulogd2's NFACCT input emits sum.name, sum.pkts, sum.bytes and oob.time
 * (and, which ulogd2 leaves out, an object's quota).
 *
 * A poll is one request on a non-blocking netlink socket watched by the
 * event loop: a dump of every object (NFNL_MSG_ACCT_GET, or _GET_CTRZERO
 * with `reset`, which reads and zeroes each object atomically), or, with
 * `names`, one get of each named object, acknowledged, so that a reset
 * never zeroes objects the user did not ask for.  Replies are read as
 * they come, never waited for; every message of a poll carries a sequence
 * number of that poll, so the rest of an abandoned one is skipped.
 * Messages are parsed by libnetfilter_acct into one object reused for
 * every reply; a record's name is copied into its batch's arena.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_acct/libnetfilter_acct.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include <sluice/plugin.h>

#include "acctline_fmt.h"
#include "clock.h"
#include "netns_open.h"
#include "netns_set.h"
#include "nlsock.h"
#include "plugin_state.h"

/* A dump's datagrams are at most 32 KiB (netlink_dump); room for the largest. */
#define RX_BUFSIZE (64 * 1024)
#define MAX_DGRAMS_PER_WAKEUP 64
/* Most objects `names` may list (their replies must fit the socket's buffer). */
#define MAX_NAMES 1024
/* One get request: header, nfgenmsg, the name attribute. */
#define REQ_ROOM MNL_ALIGN(NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct nfgenmsg)) + \
			   MNL_ATTR_HDRLEN + MNL_ALIGN(NFACCT_NAME_MAX))
#define RCVBUF (1024 * 1024)
/* A poll still unanswered after this many ticks is abandoned. */
#define LATE_TICKS 3

struct nfacct_cfg {
	uint64_t interval;
	bool reset;
	struct sl_strlist names;
	const char *netns;
};

struct nfacct_in {
	SL_STATE_HEAD(struct nfacct_cfg);

	struct sl_netns_one ns;	/* netns: where the socket is made */

	struct mnl_socket *nl;
	int fd;
	bool watching;
	struct sl_timer *timer;
	struct nfacct *obj;	/* libnetfilter_acct's parse target, reused */
	uint8_t *rx;
	uint8_t *req;		/* the poll's request messages, built once */
	size_t req_len;
	unsigned nreq;		/* messages in req: 1 (dump) or one per name */
	bool *warned;		/* per name: its absence was logged */

	/* the poll in flight */
	bool polling;
	unsigned late;		/* ticks it has been running */
	uint32_t seq;		/* its first message's sequence number */
	unsigned answered;	/* names mode: acknowledgements received */
	bool failed;		/* names mode: a get was refused (other than ENOENT) */
	struct sl_time when;	/* when it was sent: every record's timestamp */
	struct sl_batch *b;
	uint64_t objects;
	int last_errno;		/* the last failure logged, until a poll succeeds */

	struct sl_acctline_fields f;
	int c_polls, c_objects, c_skipped, c_missing, c_malformed;
};

static const struct sl_option nfacct_options[] = {
	SL_OPT_DURATION("interval", struct nfacct_cfg, interval, "60s", 100, 86400000,
			"time between polls (ulogd's pollinterval); the first comes one interval after start"),
	SL_OPT_BOOL("reset", struct nfacct_cfg, reset, "false",
		    "zero each object as it is read, atomically (ulogd's zerocounter): records hold the traffic since the last poll"),
	SL_OPT_LIST("names", struct nfacct_cfg, names, NULL,
		    "only these objects, each read by name (empty: every object of the network namespace)"),
	SL_OPT_STR("netns", struct nfacct_cfg, netns, NULL,
		   "the network namespace to poll instead of sluice's own: a name under /run/netns "
		   "or an absolute path (/proc/PID/ns/net); records carry `netns`"),
	SL_OPT_END
};

static const struct sl_field_decl nfacct_provides[] = {
	{SL_ACCT_NAME, SL_T_STRING},
	{SL_ACCT_PACKETS, SL_T_U64},
	{SL_ACCT_BYTES, SL_T_U64},
	{SL_ACCT_QUOTA, SL_T_U64},
	{SL_ACCT_QUOTA_MODE, SL_T_STRING},
	{SL_ACCT_OVERQUOTA, SL_T_U64},
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	{"netns", SL_T_STRING},	/* netns: the namespace's label */
	SL_FIELD_END
};

static void log_failure(struct nfacct_in *st, int err, const char *what)
{
	st->host->error_add(st->inst, 1);
	if (err == st->last_errno)
		return;
	st->last_errno = err;
	st->host->log(st->inst, SL_LOG_ERR, "%s: %s%s", what, strerror(err),
		      err == EPERM ? " (needs CAP_NET_ADMIN)" : "");
}

/* The poll is over (ok: answered in full): its records go downstream, counted. */
static void end_poll(struct nfacct_in *st, bool ok)
{
	if (st->b)
		st->host->emit(st->inst, st->b);
	st->b = NULL;
	st->polling = false;
	st->host->counter_add(st->inst, st->c_objects, st->objects);
	if (ok) {
		st->host->counter_add(st->inst, st->c_polls, 1);
		st->last_errno = 0;
	}
}

/* An object with a quota (nfacct add NAME byte|packet N): quota, its unit, whether it is exceeded. */
static void set_quota(struct nfacct_in *st, struct sl_record *r)
{
	const uint32_t *flags = nfacct_attr_get(st->obj, NFACCT_ATTR_FLAGS);
	const uint64_t *quota = nfacct_attr_get(st->obj, NFACCT_ATTR_QUOTA);

	if (!flags || !(*flags & (NFACCT_F_QUOTA_PKTS | NFACCT_F_QUOTA_BYTES)))
		return;
	sl_set_u64(r, (sl_field)st->f.quota, quota ? *quota : 0);
	if (*flags & NFACCT_F_QUOTA_PKTS)
		sl_set_bytes(r, (sl_field)st->f.quota_mode, "packet", 6);
	else
		sl_set_bytes(r, (sl_field)st->f.quota_mode, "byte", 4);
	sl_set_u64(r, (sl_field)st->f.overquota, !!(*flags & NFACCT_F_OVERQUOTA));
}

/* One object's record; false when no batch could be had. */
static bool add_record(struct nfacct_in *st, const char *name)
{
	size_t len = strnlen(name, NFACCT_NAME_MAX);
	struct sl_record *r;
	void *p;

	if (st->b && (st->b->filled == st->b->capacity || sl_batch_room(st->b) < len + 8)) {
		st->host->emit(st->inst, st->b);
		st->b = NULL;
	}
	if (!st->b && !(st->b = st->host->batch_get(st->inst)))
		return false;
	if (!(r = sl_batch_add(st->b)) || !(p = sl_batch_alloc(st->b, len ? len : 1))) {
		if (r)
			sl_batch_unadd(st->b);
		return false;
	}
	memcpy(p, name, len);
	sl_set_bytes(r, (sl_field)st->f.name, p, (uint32_t)len);
	sl_set_u64(r, (sl_field)st->f.packets, nfacct_attr_get_u64(st->obj, NFACCT_ATTR_PKTS));
	sl_set_u64(r, (sl_field)st->f.bytes, nfacct_attr_get_u64(st->obj, NFACCT_ATTR_BYTES));
	sl_set_time(r, SL_F_TIMESTAMP, st->when.sec, st->when.nsec);
	set_quota(st, r);
	sl_netns_one_tag(&st->ns, r);
	st->objects++;
	return true;
}

static void parse_object(struct nfacct_in *st, const struct nlmsghdr *nlh, unsigned idx)
{
	const char *name;

	for (int a = NFACCT_ATTR_NAME; a <= NFACCT_ATTR_QUOTA; a++)
		nfacct_attr_unset(st->obj, (enum nfacct_attr_type)a);
	if (nfacct_nlmsg_parse_payload(nlh, st->obj) < 0 ||
	    !(name = nfacct_attr_get_str(st->obj, NFACCT_ATTR_NAME)) ||
	    !nfacct_attr_get(st->obj, NFACCT_ATTR_PKTS) || !nfacct_attr_get(st->obj, NFACCT_ATTR_BYTES)) {
		st->host->counter_add(st->inst, st->c_malformed, 1);
		st->host->error_add(st->inst, 1);
		return;
	}
	if (st->cfg->names.n)
		st->warned[idx] = false;
	if (!add_record(st, name)) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory for a batch: object %s lost", name);
		st->host->error_add(st->inst, 1);
	}
}

/* An acknowledgement (names mode) or an error. */
static void parse_error(struct nfacct_in *st, const struct nlmsghdr *nlh, unsigned idx)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	int err = nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*e)) ? -e->error : EBADMSG;

	if (st->cfg->names.n && err == ENOENT) {
		st->host->counter_add(st->inst, st->c_missing, 1);
		if (!st->warned[idx])
			st->host->log(st->inst, SL_LOG_WARNING, "no accounting object %s (nfacct add %s?)",
				      st->cfg->names.v[idx], st->cfg->names.v[idx]);
		st->warned[idx] = true;
	} else if (err) {
		log_failure(st, err, "nfacct request");
		if (!st->cfg->names.n) {
			end_poll(st, false);
			return;
		}
		st->failed = true;
	}
	if (st->cfg->names.n && ++st->answered == st->nreq)
		end_poll(st, !st->failed);
}

static void parse_msg(struct nfacct_in *st, const struct nlmsghdr *nlh)
{
	unsigned idx = nlh->nlmsg_seq - st->seq;

	if (!st->polling || idx >= st->nreq)
		return;	/* the rest of an abandoned poll */
	if (nlh->nlmsg_type == NLMSG_DONE)
		end_poll(st, true);
	else if (nlh->nlmsg_type == NLMSG_ERROR)
		parse_error(st, nlh, idx);
	else if (NFNL_SUBSYS_ID(nlh->nlmsg_type) == NFNL_SUBSYS_ACCT &&
		 NFNL_MSG_TYPE(nlh->nlmsg_type) == NFNL_MSG_ACCT_NEW)
		parse_object(st, nlh, idx);
}

static void nfacct_readable(void *state, int fd, uint32_t events)
{
	struct nfacct_in *st = state;

	(void)events;
	for (unsigned d = 0; d < MAX_DGRAMS_PER_WAKEUP; d++) {
		const struct nlmsghdr *nlh;
		int n = sl_nl_recv_reply(fd, st->rx, RX_BUFSIZE);

		if (n == 0)
			return;
		if (n < 0 && errno == EMSGSIZE) {
			st->host->counter_add(st->inst, st->c_malformed, 1);
			log_failure(st, EMSGSIZE, "a netlink datagram was cut");
			if (st->polling)
				end_poll(st, false);
			continue;
		}
		if (n < 0) {
			/* ENOBUFS: replies were lost, the poll cannot complete */
			log_failure(st, errno, "nfacct receive");
			if (st->polling)
				end_poll(st, false);
			return;
		}
		for (nlh = (const struct nlmsghdr *)st->rx; sl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n))
			parse_msg(st, nlh);
		if (n != 0) {
			st->host->counter_add(st->inst, st->c_malformed, 1);
			st->host->error_add(st->inst, 1);
		}
	}
}

/*
 * Each request in a datagram of its own: nfnetlink refuses a datagram
 * from a sender without CAP_NET_ADMIN with one error for its first
 * message, so gets sent together would leave the others unanswered.
 */
static void send_poll(struct nfacct_in *st)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)st->req;

	st->when = sl_clock_time(CLOCK_REALTIME);
	st->seq += st->nreq;	/* a new range: replies to an abandoned poll do not match */
	st->polling = true;
	st->late = 0;
	st->answered = 0;
	st->failed = false;
	st->objects = 0;
	for (unsigned i = 0; i < st->nreq; i++) {
		nlh->nlmsg_seq = st->seq + i;
		if (mnl_socket_sendto(st->nl, nlh, nlh->nlmsg_len) < 0) {
			log_failure(st, errno, "nfacct request");
			if (!i) {
				st->polling = false;
				return;
			}
			/* the gets not sent are never answered */
			st->failed = true;
			st->answered += st->nreq - i;
			return;
		}
		nlh = (struct nlmsghdr *)((uint8_t *)nlh + MNL_ALIGN(nlh->nlmsg_len));
	}
}

static void tick(void *state)
{
	struct nfacct_in *st = state;

	if (st->polling && ++st->late < LATE_TICKS) {
		st->host->counter_add(st->inst, st->c_skipped, 1);
		return;
	}
	if (st->polling) {
		st->host->log(st->inst, SL_LOG_WARNING, "a poll unanswered for %u intervals: abandoned",
			      st->late);
		end_poll(st, false);
		st->host->error_add(st->inst, 1);
	}
	send_poll(st);
}

/*
 * The requests, built once: a dump, or one acknowledged get per name, back
 * to back (the i-th carries the poll's sequence number + i, so a reply's
 * sequence number gives its name).
 */
static int build_requests(struct nfacct_in *st)
{
	uint8_t cmd = st->cfg->reset ? NFNL_MSG_ACCT_GET_CTRZERO : NFNL_MSG_ACCT_GET;
	unsigned n = st->cfg->names.n;

	st->nreq = n ? n : 1;
	st->req = calloc(st->nreq, REQ_ROOM);
	if (!st->req)
		return -1;
	if (!n) {
		struct nlmsghdr *nlh = nfacct_nlmsg_build_hdr((char *)st->req, cmd, NLM_F_DUMP, 0);

		st->req_len = nlh->nlmsg_len;
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		struct nlmsghdr *nlh = nfacct_nlmsg_build_hdr((char *)st->req + st->req_len, cmd,
							      NLM_F_ACK, 0);

		mnl_attr_put_strz(nlh, NFACCT_NAME, st->cfg->names.v[i]);
		st->req_len += MNL_ALIGN(nlh->nlmsg_len);
	}
	return 0;
}

static int check_names(const struct sl_host *host, struct sl_instance *inst, const struct sl_strlist *l)
{
	if (l->n > MAX_NAMES) {
		host->config_error(inst, "names", "%u objects: at most %d", l->n, MAX_NAMES);
		return -1;
	}
	for (unsigned i = 0; i < l->n; i++) {
		size_t len = strlen(l->v[i]);

		if (!len || len >= NFACCT_NAME_MAX) {
			host->config_error(inst, "names", "'%s': an object's name has 1 to %d bytes",
					   l->v[i], NFACCT_NAME_MAX - 1);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(l->v[i], l->v[j])) {
				host->config_error(inst, "names", "'%s' is listed twice", l->v[i]);
				return -1;
			}
	}
	return 0;
}

static int nfacct_configure(const struct sl_host *host, struct sl_instance *inst,
			    const void *config, void **state)
{
	const struct nfacct_cfg *cfg = config;
	struct nfacct_in *st;

	if (check_names(host, inst, &cfg->names) < 0)
		return -1;
	if (!(st = sl_state_new(struct nfacct_in, host, inst, config)))
		return -1;
	st->fd = -1;
	if (sl_netns_one_configure(&st->ns, host, inst, cfg->netns) < 0) {
		free(st);
		return -1;
	}
	st->f = sl_acctline_fields_lookup(host, inst);
	st->obj = nfacct_alloc();
	st->rx = malloc(RX_BUFSIZE);
	st->warned = calloc(cfg->names.n ? cfg->names.n : 1, sizeof(*st->warned));
	if (!st->obj || !st->rx || !st->warned || build_requests(st) < 0) {
		host->config_error(inst, NULL, "out of memory");
		nfacct_free(st->obj);
		free(st->rx);
		free(st->warned);
		free(st->req);
		sl_netns_one_free(&st->ns);
		free(st);
		return -1;
	}
	st->c_polls = host->counter_new(inst, "polls");
	st->c_objects = host->counter_new(inst, "objects");
	st->c_skipped = host->counter_new(inst, "skipped");
	st->c_missing = host->counter_new(inst, "missing");
	st->c_malformed = host->counter_new(inst, "malformed");
	*state = st;
	return 0;
}

static int nfacct_start(void *state)
{
	struct nfacct_in *st = state;

	if (sl_netns_one_open(&st->ns, st->host, st->inst) < 0)
		return -1;
	st->nl = sl_netns_mnl_socket(st->ns.fd, NETLINK_NETFILTER);
	sl_netns_one_close(&st->ns);	/* one socket, made now: the file is not needed again */
	if (!st->nl || fcntl(mnl_socket_get_fd(st->nl), F_SETFL, O_NONBLOCK) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "netlink socket: %s", strerror(errno));
		return -1;
	}
	st->fd = mnl_socket_get_fd(st->nl);
	sl_nl_set_rcvbuf(st->host, st->inst, st->fd, RCVBUF);
	if (st->host->watch_fd(st->inst, st->fd, EPOLLIN, nfacct_readable, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the netlink socket: %s", strerror(errno));
		return -1;
	}
	st->watching = true;
	if (!(st->timer = st->host->timer_new(st->inst, tick, st)))
		return -1;
	st->host->timer_arm(st->timer, st->cfg->interval, st->cfg->interval);
	st->host->log(st->inst, SL_LOG_INFO, "polling %s%s every %llu ms%s%s",
		      st->cfg->names.n ? "named accounting objects" : "every accounting object",
		      st->cfg->reset ? " (reading and zeroing)" : "",
		      (unsigned long long)st->cfg->interval, st->ns.path ? ", netns " : "",
		      st->ns.path ? st->ns.path : "");
	return 0;
}

static void nfacct_stop(void *state)
{
	struct nfacct_in *st = state;

	if (st->timer)
		st->host->timer_free(st->timer);
	st->timer = NULL;
	sl_nl_sock_close(st->host, st->inst, &st->nl, &st->fd, &st->watching);
	if (st->b)
		st->host->batch_put(st->inst, st->b);
	st->b = NULL;
	st->polling = false;
}

static void nfacct_destroy(void *state)
{
	struct nfacct_in *st = state;

	nfacct_free(st->obj);
	free(st->rx);
	free(st->req);
	free(st->warned);
	sl_netns_one_free(&st->ns);
	free(st);
}

static const struct sl_plugin nfacct_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "nfacct",
	.description = "extended accounting objects (nfacct, -m nfacct) polled every interval, one record per object",
	.config_size = sizeof(struct nfacct_cfg),
	.options = nfacct_options,
	.provides = nfacct_provides,
	.configure = nfacct_configure,
	.start = nfacct_start,
	.stop = nfacct_stop,
	.destroy = nfacct_destroy,
};

SLUICE_PLUGIN(nfacct_plugin)
