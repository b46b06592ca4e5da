/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * GnuTLS rather than OpenSSL: Debian's rsyslog speaks TLS through GnuTLS
 * (rsyslog-gnutls, the driver the tests use), GnuTLS verifies the peer's
 * name (DNS or IP subjectAltName) during the handshake with one call
 * (gnutls_session_set_verify_cert), explains a failed verification in
 * words (gnutls_certificate_verification_status_print), and its
 * non-blocking API is plain return codes with a record direction.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "safefile.h"
#include "tls_stream.h"

#ifdef SLUICE_TLS

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#define REC_MAX 16384	/* bytes gathered into one record */

struct sl_tls_creds {
	gnutls_certificate_credentials_t x509;
	gnutls_priority_t prio;
};

struct sl_tls_conn {
	gnutls_session_t s;
	int fd;
	bool verify_failed;
	bool alerted;		/* the server sent a fatal alert */
	uint32_t wire;		/* bytes written to the socket, mod 2^32 */
	gnutls_typed_vdata_st vd[2];	/* what the server's certificate is checked for */
	size_t plen;		/* bytes in pend, all unsent */
	char pend[REC_MAX];
};

bool sl_tls_available(void)
{
	return true;
}

const char *sl_tls_priority(bool min_tls13)
{
	return min_tls13 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3"
			 : "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
}

/*
 * gnutls's *_file() functions open by name, blocking: a FIFO there would
 * hang the daemon (and sluice -t).  Read them with sl_read_file() (regular
 * files only, never blocking) and load the memory instead.  A file that
 * cannot be read is GNUTLS_E_FILE_ERROR with the reason in why.
 */
#define TLS_FILE_MAX (16u << 20)

static int trust_file(gnutls_certificate_credentials_t x509, const char *file, char *why,
		      size_t wlen)
{
	size_t n = 0;
	char *pem = sl_read_file(file, TLS_FILE_MAX, &n, why, wlen);
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned)n };
	int rc;

	if (!pem)
		return GNUTLS_E_FILE_ERROR;
	rc = gnutls_certificate_set_x509_trust_mem(x509, &d, GNUTLS_X509_FMT_PEM);
	free(pem);
	return rc;
}

static int key_file(gnutls_certificate_credentials_t x509, const char *cert, const char *key,
		    char *why, size_t wlen)
{
	char r[128];
	size_t cn = 0, kn = 0;
	char *cp = sl_read_file(cert, TLS_FILE_MAX, &cn, r, sizeof(r));
	char *kp = NULL;
	gnutls_datum_t cd, kd;
	int rc = GNUTLS_E_FILE_ERROR;

	if (!cp)
		snprintf(why, wlen, "%s: %s", cert, r);
	else if (!(kp = sl_read_file(key, TLS_FILE_MAX, &kn, r, sizeof(r))))
		snprintf(why, wlen, "%s: %s", key, r);
	if (kp) {
		cd = (gnutls_datum_t){ (unsigned char *)cp, (unsigned)cn };
		kd = (gnutls_datum_t){ (unsigned char *)kp, (unsigned)kn };
		rc = gnutls_certificate_set_x509_key_mem(x509, &cd, &kd, GNUTLS_X509_FMT_PEM);
		explicit_bzero(kp, kn);	/* a private key: no copy left behind */
		free(kp);
	}
	free(cp);
	return rc;
}

struct sl_tls_creds *sl_tls_creds_new(const struct sl_tls_conf *c, const char **bad_option, char *err,
				size_t errlen)
{
	struct sl_tls_creds *cr = calloc(1, sizeof(*cr));
	char why[256];
	int rc;

	*bad_option = NULL;
	if (!cr || gnutls_certificate_allocate_credentials(&cr->x509) < 0) {
		free(cr);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = gnutls_priority_init(&cr->prio, sl_tls_priority(c->min_tls13), NULL);
	if (rc < 0) {
		cr->prio = NULL;
		*bad_option = "tls_min_version";
		snprintf(err, errlen, "GnuTLS priority %s: %s", sl_tls_priority(c->min_tls13),
			 gnutls_strerror(rc));
		goto fail;
	}
	if (c->ca_file) {
		why[0] = '\0';
		rc = trust_file(cr->x509, c->ca_file, why, sizeof(why));
		if (rc <= 0) {
			*bad_option = "tls_ca_file";
			snprintf(err, errlen, "cannot load CA certificates from %s: %s", c->ca_file,
				 why[0] ? why : rc < 0 ? gnutls_strerror(rc) : "no certificate in it");
			goto fail;
		}
	} else if (c->verify) {
		rc = gnutls_certificate_set_x509_system_trust(cr->x509);
		if (rc <= 0) {
			*bad_option = "tls_ca_file";
			snprintf(err, errlen, "no tls_ca_file and no system trust store (%s)",
				 rc < 0 ? gnutls_strerror(rc) : "empty");
			goto fail;
		}
	}
	if (!c->cert_file != !c->key_file) {
		*bad_option = c->cert_file ? "tls_key_file" : "tls_cert_file";
		snprintf(err, errlen, "tls_cert_file and tls_key_file go together");
		goto fail;
	}
	if (c->cert_file) {
		why[0] = '\0';
		rc = key_file(cr->x509, c->cert_file, c->key_file, why, sizeof(why));
		if (rc < 0) {
			*bad_option = "tls_cert_file";
			snprintf(err, errlen, "cannot load the client certificate %s with key %s: %s",
				 c->cert_file, c->key_file, why[0] ? why : gnutls_strerror(rc));
			goto fail;
		}
	}
	return cr;
fail:
	sl_tls_creds_free(cr);
	return NULL;
}

void sl_tls_creds_free(struct sl_tls_creds *cr)
{
	if (!cr)
		return;
	if (cr->prio)
		gnutls_priority_deinit(cr->prio);
	gnutls_certificate_free_credentials(cr->x509);
	free(cr);
}

static bool is_ip(const char *name)
{
	unsigned char b[16];

	return inet_pton(AF_INET, name, b) == 1 || inet_pton(AF_INET6, name, b) == 1;
}

/*
 * GnuTLS's writes to the socket, counted: the caller maps the kernel's
 * unacknowledged bytes (SIOCOUTQ) back to the TLS records holding them.
 */
static ssize_t push(gnutls_transport_ptr_t p, const giovec_t *iov, int n)
{
	struct sl_tls_conn *tc = p;
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)n };
	ssize_t rc = sendmsg(tc->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (rc > 0)
		tc->wire += (uint32_t)rc;
	else if (rc < 0)
		gnutls_transport_set_errno(tc->s, errno);
	return rc;
}

struct sl_tls_conn *sl_tls_conn_new(struct sl_tls_creds *cr, int fd, const char *name, bool verify,
			      char *err, size_t errlen)
{
	struct sl_tls_conn *tc = calloc(1, sizeof(*tc));
	int rc;

	if (!tc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	rc = gnutls_init(&tc->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
	if (rc < 0) {
		free(tc);
		snprintf(err, errlen, "gnutls_init: %s", gnutls_strerror(rc));
		return NULL;
	}
	if ((rc = gnutls_priority_set(tc->s, cr->prio)) < 0 ||
	    (rc = gnutls_credentials_set(tc->s, GNUTLS_CRD_CERTIFICATE, cr->x509)) < 0 ||
	    /* SNI carries host names only (RFC 6066 3) */
	    (!is_ip(name) &&
	     (rc = gnutls_server_name_set(tc->s, GNUTLS_NAME_DNS, name, strlen(name))) < 0)) {
		snprintf(err, errlen, "TLS session setup: %s", gnutls_strerror(rc));
		sl_tls_conn_free(tc);
		return NULL;
	}
	/*
	 * Checks the chain against the CA, the name (DNS or IP SAN: GnuTLS
	 * tells an address from a host name) and the key purpose: without
	 * it GnuTLS takes a certificate issued for clients only (clientAuth)
	 * as a server's.  GnuTLS keeps the pointers: vd lives in tc, name
	 * outlives the session (header).
	 */
	if (verify) {
		tc->vd[0].type = GNUTLS_DT_DNS_HOSTNAME;
		tc->vd[0].data = (unsigned char *)(uintptr_t)name;
		tc->vd[1].type = GNUTLS_DT_KEY_PURPOSE_OID;
		tc->vd[1].data = (unsigned char *)(uintptr_t)GNUTLS_KP_TLS_WWW_SERVER;
		gnutls_session_set_verify_cert2(tc->s, tc->vd, 2, 0);
	}
	/* reads as usual from fd; writes through push(), which counts them */
	tc->fd = fd;
	gnutls_transport_set_ptr2(tc->s, (gnutls_transport_ptr_t)(intptr_t)fd, tc);
	gnutls_transport_set_vec_push_function(tc->s, push);
	gnutls_handshake_set_timeout(tc->s, 0);	/* the caller's timer limits it */
	return tc;
}

void sl_tls_conn_free(struct sl_tls_conn *tc)
{
	if (!tc)
		return;
	gnutls_deinit(tc->s);
	free(tc);
}

static int want(const struct sl_tls_conn *tc)
{
	return gnutls_record_get_direction(tc->s) ? SL_TLS_WANT_WRITE : SL_TLS_WANT_READ;
}

int sl_tls_conn_handshake(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	int rc = gnutls_handshake(tc->s);

	if (rc == GNUTLS_E_SUCCESS)
		return SL_TLS_DONE;
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED || !gnutls_error_is_fatal(rc))
		return want(tc);
	if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
		unsigned status = gnutls_session_get_verify_cert_status(tc->s);
		gnutls_datum_t out = { NULL, 0 };

		tc->verify_failed = true;
		if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) == 0) {
			size_t n = strlen((const char *)out.data);

			while (n && out.data[n - 1] == ' ')
				n--;
			snprintf(err, errlen, "server certificate verification failed: %.*s", (int)n,
				 (const char *)out.data);
			gnutls_free(out.data);
		} else {
			snprintf(err, errlen, "server certificate verification failed (status 0x%x)",
				 status);
		}
		return SL_TLS_FAILED;
	}
	snprintf(err, errlen, "TLS handshake failed: %s", gnutls_strerror(rc));
	if (rc == GNUTLS_E_WARNING_ALERT_RECEIVED || rc == GNUTLS_E_FATAL_ALERT_RECEIVED)
		snprintf(err + strlen(err), errlen - strlen(err), " (%s)",
			 gnutls_alert_get_name(gnutls_alert_get(tc->s)));
	return SL_TLS_FAILED;
}

bool sl_tls_conn_verify_failed(const struct sl_tls_conn *tc)
{
	return tc->verify_failed;
}

int sl_tls_conn_flush(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	ssize_t rc;

	if (!tc->plen)
		return SL_TLS_DONE;
	/* after GNUTLS_E_AGAIN the same bytes are passed again, as GnuTLS asks */
	rc = gnutls_record_send(tc->s, tc->pend, tc->plen);
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
		return SL_TLS_WANT_WRITE;
	if (rc < 0) {
		snprintf(err, errlen, "TLS send failed: %s", gnutls_strerror((int)rc));
		return SL_TLS_FAILED;
	}
	if ((size_t)rc < tc->plen)
		memmove(tc->pend, tc->pend + rc, tc->plen - (size_t)rc);
	tc->plen -= (size_t)rc;
	return tc->plen ? SL_TLS_WANT_WRITE : SL_TLS_DONE;
}

bool sl_tls_conn_pending(const struct sl_tls_conn *tc)
{
	return tc->plen != 0;
}

bool sl_tls_conn_cert_requested(const struct sl_tls_conn *tc)
{
	return gnutls_certificate_client_get_request_status(tc->s) != 0;
}

uint32_t sl_tls_conn_wire(const struct sl_tls_conn *tc)
{
	return tc->wire;
}

bool sl_tls_conn_alerted(const struct sl_tls_conn *tc)
{
	return tc->alerted;
}

ssize_t sl_tls_conn_writev(struct sl_tls_conn *tc, const struct iovec *iov, unsigned n, char *err,
			size_t errlen)
{
	size_t taken = 0;
	unsigned i;
	int rc;

	if (tc->plen) {
		rc = sl_tls_conn_flush(tc, err, errlen);
		if (rc != SL_TLS_DONE)
			return rc == SL_TLS_FAILED ? SL_TLS_FAILED : 0;
	}
	for (i = 0; i < n && taken < REC_MAX; i++) {
		size_t k = iov[i].iov_len < REC_MAX - taken ? iov[i].iov_len : REC_MAX - taken;

		memcpy(tc->pend + taken, iov[i].iov_base, k);
		taken += k;
	}
	tc->plen = taken;
	if (sl_tls_conn_flush(tc, err, errlen) == SL_TLS_FAILED)
		return SL_TLS_FAILED;
	return (ssize_t)taken;
}

int sl_tls_conn_discard_input(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	char sink[512];

	for (;;) {
		ssize_t rc = gnutls_record_recv(tc->s, sink, sizeof(sink));

		if (rc > 0)
			continue;
		if (rc == 0)
			return SL_TLS_CLOSED;
		if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
			return SL_TLS_DONE;
		if (!gnutls_error_is_fatal((int)rc))	/* e.g. a TLS 1.3 ticket */
			continue;
		snprintf(err, errlen, "TLS receive failed: %s", gnutls_strerror((int)rc));
		if (rc == GNUTLS_E_FATAL_ALERT_RECEIVED) {
			tc->alerted = true;
			snprintf(err + strlen(err), errlen - strlen(err), " (%s)",
				 gnutls_alert_get_name(gnutls_alert_get(tc->s)));
		}
		return SL_TLS_FAILED;
	}
}

#else /* built with SLUICE_WITH_TLS=OFF */

bool sl_tls_available(void)
{
	return false;
}

const char *sl_tls_priority(bool min_tls13)
{
	(void)min_tls13;
	return "";
}

struct sl_tls_creds *sl_tls_creds_new(const struct sl_tls_conf *c, const char **bad_option, char *err,
				size_t errlen)
{
	(void)c;
	*bad_option = NULL;
	snprintf(err, errlen, "sluice was built without TLS (SLUICE_WITH_TLS=OFF)");
	return NULL;
}

void sl_tls_creds_free(struct sl_tls_creds *cr)
{
	(void)cr;
}

struct sl_tls_conn *sl_tls_conn_new(struct sl_tls_creds *cr, int fd, const char *name, bool verify,
			      char *err, size_t errlen)
{
	(void)cr, (void)fd, (void)name, (void)verify;
	snprintf(err, errlen, "no TLS");
	return NULL;
}

void sl_tls_conn_free(struct sl_tls_conn *tc)
{
	(void)tc;
}

int sl_tls_conn_handshake(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	(void)tc, (void)err, (void)errlen;
	return SL_TLS_FAILED;
}

bool sl_tls_conn_verify_failed(const struct sl_tls_conn *tc)
{
	(void)tc;
	return false;
}

ssize_t sl_tls_conn_writev(struct sl_tls_conn *tc, const struct iovec *iov, unsigned n, char *err,
			size_t errlen)
{
	(void)tc, (void)iov, (void)n, (void)err, (void)errlen;
	return SL_TLS_FAILED;
}

int sl_tls_conn_flush(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	(void)tc, (void)err, (void)errlen;
	return SL_TLS_FAILED;
}

bool sl_tls_conn_pending(const struct sl_tls_conn *tc)
{
	(void)tc;
	return false;
}

bool sl_tls_conn_cert_requested(const struct sl_tls_conn *tc)
{
	(void)tc;
	return false;
}

uint32_t sl_tls_conn_wire(const struct sl_tls_conn *tc)
{
	(void)tc;
	return 0;
}

bool sl_tls_conn_alerted(const struct sl_tls_conn *tc)
{
	(void)tc;
	return false;
}

int sl_tls_conn_discard_input(struct sl_tls_conn *tc, char *err, size_t errlen)
{
	(void)tc, (void)err, (void)errlen;
	return SL_TLS_FAILED;
}

#endif
