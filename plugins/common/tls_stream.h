/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A TLS client stream over an already connected non-blocking TCP socket
 * (syslog over TLS, RFC 5425), on GnuTLS.  Every call returns at once:
 * SL_TLS_WANT_READ / SL_TLS_WANT_WRITE say which epoll event to wait for before
 * calling again.  Written bytes are gathered into one TLS record (up to
 * 16 KiB) per send, so a batch of short messages costs one syscall.
 */
#ifndef SLUICE_TLS_STREAM_H
#define SLUICE_TLS_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

enum { SL_TLS_DONE = 0, SL_TLS_WANT_READ = 1, SL_TLS_WANT_WRITE = 2, SL_TLS_FAILED = -1, SL_TLS_CLOSED = -2 };

struct sl_tls_conf {
	const char *ca_file;	/* NULL: the system's trust store */
	const char *cert_file;	/* client certificate (mutual TLS), with key_file */
	const char *key_file;
	bool verify;
	bool min_tls13;		/* TLS 1.3 only (default: 1.2 and 1.3) */
};

struct sl_tls_creds;
struct sl_tls_conn;

/* false when sluice was built with SLUICE_WITH_TLS=OFF */
bool sl_tls_available(void);

/*
 * The GnuTLS priority string of every session (ours and librelp's): the
 * library's NORMAL cipher suites, but only TLS 1.2 and 1.3 (Debian 12's
 * default priority still offers 1.0 and 1.1), or only 1.3.
 */
const char *sl_tls_priority(bool min_tls13);

/*
 * Load the credentials (at configure time, so an unreadable file is a
 * configuration error).  On failure *bad_option names the tls_* option at
 * fault and err says why.
 */
struct sl_tls_creds *sl_tls_creds_new(const struct sl_tls_conf *c, const char **bad_option, char *err,
				size_t errlen);
void sl_tls_creds_free(struct sl_tls_creds *cr);

/*
 * A session on fd; with verify the server's certificate is checked
 * against the CA, name (a host or an IP) and the serverAuth key purpose.
 * name must stay valid until sl_tls_conn_free() (GnuTLS keeps the pointer).
 */
struct sl_tls_conn *sl_tls_conn_new(struct sl_tls_creds *cr, int fd, const char *name, bool verify,
			      char *err, size_t errlen);
void sl_tls_conn_free(struct sl_tls_conn *tc);

/* Advance the handshake: SL_TLS_DONE, SL_TLS_WANT_*, or SL_TLS_FAILED with err set. */
int sl_tls_conn_handshake(struct sl_tls_conn *tc, char *err, size_t errlen);
/* The verification failed (as opposed to a protocol or network error). */
bool sl_tls_conn_verify_failed(const struct sl_tls_conn *tc);

/*
 * Take bytes from iov[0..n): the number taken (>0), 0 when the previous
 * record is still unsent (wait for EPOLLOUT), or SL_TLS_FAILED.
 */
ssize_t sl_tls_conn_writev(struct sl_tls_conn *tc, const struct iovec *iov, unsigned n, char *err,
			size_t errlen);
/* Send what was taken: SL_TLS_DONE, SL_TLS_WANT_WRITE or SL_TLS_FAILED. */
int sl_tls_conn_flush(struct sl_tls_conn *tc, char *err, size_t errlen);
bool sl_tls_conn_pending(const struct sl_tls_conn *tc);
/* The server asked for a client certificate in the handshake. */
bool sl_tls_conn_cert_requested(const struct sl_tls_conn *tc);
/*
 * Bytes written to the socket so far (handshake and records, mod 2^32).
 * Right after sl_tls_conn_flush() returned SL_TLS_DONE: where the last record
 * ends on the wire.
 */
uint32_t sl_tls_conn_wire(const struct sl_tls_conn *tc);
/* sl_tls_conn_discard_input() failed on a fatal alert from the server. */
bool sl_tls_conn_alerted(const struct sl_tls_conn *tc);
/* Read and drop what the server sent: SL_TLS_DONE, SL_TLS_CLOSED or SL_TLS_FAILED. */
int sl_tls_conn_discard_input(struct sl_tls_conn *tc, char *err, size_t errlen);

#endif
