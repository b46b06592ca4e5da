/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * RELP through librelp's client API.  One engine per session (librelp
 * keeps its state in the engine, and instances must not share state
 * across a reload).  librelp keeps the unacknowledged frames in the
 * session: a broken session is therefore reconnected with
 * relpCltReconnect (which resends them), and only a session that never
 * connected is built anew with relpCltConnect.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "relp_conn.h"
#include "safefile.h"
#include "tls_stream.h"

#ifdef SLUICE_RELP

#include <librelp.h>

struct held_file {
	int fd;
	char name[32];	/* /proc/self/fd/N */
};

struct sl_relp_conn {
	relpEngine_t *eng;
	relpClt_t *clt;
	bool have_session;	/* connected once: reconnect keeps the unacked */
	bool broken;		/* a send or reconnect failed since the last open */
	bool fresh;		/* no send yet since the last open */
	uint64_t sent, acked;	/* see sl_relp_conn_acked() */
	unsigned errs;		/* librelp errors reported (on_err, on_auth_err) */
	bool nak;		/* the receiver refused a message: nothing more is proven */
	bool auth_failed;	/* the TLS peer was refused (librelp's auth callback) */
	char host[256], port[16];
	char last_err[256];	/* from librelp's error callback */
	struct held_file tls_files[3];	/* see hold_tls_files() */
};

bool sl_relp_available(void)
{
	return true;
}

/* librelp calls its debug printer unconditionally: it must be set. */
static void no_dbg(char *fmt, ...)
{
	(void)fmt;
}

static void on_err(void *usr, char *objinfo, char *errmsg, relpRetVal code)
{
	struct sl_relp_conn *rc = usr;

	if (rc)
		rc->errs++;
	/* librelp drops a refused (non-200) message from its window like an acknowledged one */
	if (rc && code == RELP_RET_RSP_STATE_ERR)
		rc->nak = true;
	if (rc && !rc->auth_failed)	/* keep the more precise reason */
		snprintf(rc->last_err, sizeof(rc->last_err), "%s: %s (librelp %d)",
			 objinfo ? objinfo : "", errmsg ? errmsg : "", code);
}

static void on_auth_err(void *usr, char *authinfo, char *errmsg, relpRetVal code)
{
	struct sl_relp_conn *rc = usr;

	if (!rc)
		return;
	rc->errs++;
	rc->auth_failed = true;
	snprintf(rc->last_err, sizeof(rc->last_err), "TLS peer refused: %s%s%s (librelp %d)",
		 errmsg ? errmsg : "", authinfo && *authinfo ? ": " : "", authinfo ? authinfo : "",
		 code);
}

static void say(struct sl_relp_conn *rc, char *err, size_t errlen, const char *what, relpRetVal r)
{
	snprintf(err, errlen, "%s failed (librelp error %d)%s%s", what, r,
		 rc->last_err[0] ? ": " : "", rc->last_err);
	rc->last_err[0] = 0;
}

/* librelp's TLS: its own GnuTLS or OpenSSL session, set before connect. */
static relpRetVal set_tls(relpClt_t *clt, const struct sl_tls_conf *tls, const char *peer)
{
	relpRetVal r;

	/*
	 * The same versions as transport tls.  librelp checks the chain and
	 * the name, not the key purpose (it has no setting for it).
	 */
	if ((r = relpCltEnableTLS(clt)) != RELP_RET_OK ||
	    (r = relpCltSetGnuTLSPriString(clt, (char *)(uintptr_t)sl_tls_priority(tls->min_tls13))) !=
		    RELP_RET_OK ||
	    (r = relpCltSetCACert(clt, (char *)(uintptr_t)tls->ca_file)) != RELP_RET_OK ||
	    (r = relpCltSetAuthMode(clt, (char *)"name")) != RELP_RET_OK ||
	    (r = relpCltAddPermittedPeer(clt, (char *)(uintptr_t)peer)) != RELP_RET_OK)
		return r;
	if (tls->cert_file &&
	    ((r = relpCltSetOwnCert(clt, (char *)(uintptr_t)tls->cert_file)) != RELP_RET_OK ||
	     (r = relpCltSetPrivKey(clt, (char *)(uintptr_t)tls->key_file)) != RELP_RET_OK))
		return r;
	return RELP_RET_OK;
}

/*
 * librelp opens the TLS files by name at every connect, blocking: a FIFO
 * put there later would hang the output's thread.  Hold each open (a
 * regular file, opened without blocking: sl_open_in) for the life of the
 * connection and give librelp its /proc/self/fd name, which reopens that
 * very file.  held gets tls with the names replaced.
 */
static int hold_tls_files(struct sl_relp_conn *rc, const struct sl_tls_conf *tls,
			  struct sl_tls_conf *held, char *err, size_t errlen)
{
	const char **names[3] = { &held->ca_file, &held->cert_file, &held->key_file };
	char why[128];

	*held = *tls;
	for (int i = 0; i < 3; i++) {
		struct held_file *h = &rc->tls_files[i];

		if (!*names[i])
			continue;
		h->fd = sl_open_in(*names[i], NULL, why, sizeof(why));
		if (h->fd < 0) {
			snprintf(err, errlen, "%s: %s", *names[i], why);
			return -1;
		}
		snprintf(h->name, sizeof(h->name), "/proc/self/fd/%d", h->fd);
		*names[i] = h->name;
	}
	return 0;
}

static void release_tls_files(struct sl_relp_conn *rc)
{
	for (int i = 0; i < 3; i++)
		if (rc->tls_files[i].fd >= 0)
			close(rc->tls_files[i].fd);
}

struct sl_relp_conn *sl_relp_conn_new(const char *host, const char *port, unsigned timeout_s,
				const struct sl_tls_conf *tls, const char *peer, char *err, size_t errlen)
{
	struct sl_relp_conn *rc = calloc(1, sizeof(*rc));
	struct sl_tls_conf held;
	relpRetVal r;

	if (!rc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (int i = 0; i < 3; i++)
		rc->tls_files[i].fd = -1;
	snprintf(rc->host, sizeof(rc->host), "%s", host);
	snprintf(rc->port, sizeof(rc->port), "%s", port);
	if ((r = relpEngineConstruct(&rc->eng)) != RELP_RET_OK) {
		free(rc);
		snprintf(err, errlen, "relpEngineConstruct failed (librelp error %d)", r);
		return NULL;
	}
	relpEngineSetDbgprint(rc->eng, no_dbg);
	relpEngineSetDnsLookupMode(rc->eng, 0);
	relpEngineSetOnErr(rc->eng, on_err);
	relpEngineSetOnAuthErr(rc->eng, on_auth_err);
	if (tls && hold_tls_files(rc, tls, &held, err, errlen)) {
		sl_relp_conn_free(rc);
		return NULL;
	}
	if ((r = relpEngineSetEnableCmd(rc->eng, (unsigned char *)"syslog",
					eRelpCmdState_Required)) != RELP_RET_OK ||
	    (r = relpEngineCltConstruct(rc->eng, &rc->clt)) != RELP_RET_OK ||
	    (r = relpCltSetUsrPtr(rc->clt, rc)) != RELP_RET_OK ||
	    (r = relpCltSetTimeout(rc->clt, timeout_s)) != RELP_RET_OK ||
	    (r = relpCltSetWindowSize(rc->clt, SL_RELP_WINDOW)) != RELP_RET_OK ||
	    (r = relpCltSetConnTimeout(rc->clt, (int)timeout_s)) != RELP_RET_OK ||
	    (tls && (r = set_tls(rc->clt, &held, peer)) != RELP_RET_OK)) {
		say(rc, err, errlen, "RELP client setup", r);
		sl_relp_conn_free(rc);
		return NULL;
	}
	return rc;
}

int sl_relp_conn_open(struct sl_relp_conn *rc, char *err, size_t errlen)
{
	relpRetVal r;

	rc->auth_failed = false;
	if (rc->have_session) {
		r = relpCltReconnect(rc->clt);
		if (r != RELP_RET_OK) {
			say(rc, err, errlen, "RELP reconnect", r);
			rc->broken = true;
			return rc->auth_failed ? -2 : -1;
		}
		rc->broken = false;
		rc->fresh = true;
		return 0;
	}
	r = relpCltConnect(rc->clt, AF_UNSPEC, (unsigned char *)rc->port, (unsigned char *)rc->host);
	if (r != RELP_RET_OK) {
		say(rc, err, errlen, "RELP connect", r);
		return rc->auth_failed ? -2 : -1;
	}
	rc->have_session = true;
	rc->broken = false;
	rc->fresh = true;
	return 0;
}

int sl_relp_conn_send(struct sl_relp_conn *rc, const void *msg, size_t len, char *err, size_t errlen)
{
	/* librelp copies the message into its frame: the cast is safe */
	relpRetVal r = relpCltSendSyslog(rc->clt, (unsigned char *)(uintptr_t)msg, len);

	if (r != RELP_RET_OK) {
		say(rc, err, errlen, "RELP send", r);
		rc->broken = true;
		return -1;
	}
	/* it waited for fewer than SL_RELP_WINDOW unacknowledged (relp_conn.h) */
	rc->sent++;
	if (!rc->fresh && !rc->nak && rc->sent > SL_RELP_WINDOW && rc->sent - SL_RELP_WINDOW > rc->acked)
		rc->acked = rc->sent - SL_RELP_WINDOW;
	rc->fresh = false;
	return 0;
}

uint64_t sl_relp_conn_sent(const struct sl_relp_conn *rc)
{
	return rc->sent;
}

uint64_t sl_relp_conn_acked(const struct sl_relp_conn *rc)
{
	return rc->acked;
}

bool sl_relp_conn_close(struct sl_relp_conn *rc)
{
	bool ok;
	unsigned errs;

	if (!rc)
		return false;
	/* librelp skips the close of a broken session: nothing is proven then */
	ok = rc->have_session && !rc->broken && !rc->nak;
	errs = rc->errs;
	if (rc->clt)
		relpEngineCltDestruct(rc->eng, &rc->clt);
	ok = ok && rc->errs == errs;
	relpEngineDestruct(&rc->eng);
	release_tls_files(rc);
	free(rc);
	return ok;
}

void sl_relp_conn_free(struct sl_relp_conn *rc)
{
	if (!rc)
		return;
	if (rc->clt)
		relpEngineCltDestruct(rc->eng, &rc->clt);
	relpEngineDestruct(&rc->eng);
	release_tls_files(rc);
	free(rc);
}

#else /* built with SLUICE_WITH_RELP=OFF */

bool sl_relp_available(void)
{
	return false;
}

struct sl_relp_conn *sl_relp_conn_new(const char *host, const char *port, unsigned timeout_s,
				const struct sl_tls_conf *tls, const char *peer, char *err, size_t errlen)
{
	(void)host, (void)port, (void)timeout_s, (void)tls, (void)peer;
	snprintf(err, errlen, "sluice was built without RELP (SLUICE_WITH_RELP=OFF)");
	return NULL;
}

int sl_relp_conn_open(struct sl_relp_conn *rc, char *err, size_t errlen)
{
	(void)rc;
	snprintf(err, errlen, "no RELP");
	return -1;
}

int sl_relp_conn_send(struct sl_relp_conn *rc, const void *msg, size_t len, char *err, size_t errlen)
{
	(void)rc, (void)msg, (void)len;
	snprintf(err, errlen, "no RELP");
	return -1;
}

void sl_relp_conn_free(struct sl_relp_conn *rc)
{
	(void)rc;
}

uint64_t sl_relp_conn_sent(const struct sl_relp_conn *rc)
{
	(void)rc;
	return 0;
}

uint64_t sl_relp_conn_acked(const struct sl_relp_conn *rc)
{
	(void)rc;
	return 0;
}

bool sl_relp_conn_close(struct sl_relp_conn *rc)
{
	(void)rc;
	return false;
}

#endif
