/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A TLS client stream over an already connected non-blocking TCP socket
 * (syslog over TLS, RFC 5425), on GnuTLS.  Every call returns at once:
 * TLS_WANT_READ / TLS_WANT_WRITE say which epoll event to wait for before
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

enum { TLS_DONE = 0, TLS_WANT_READ = 1, TLS_WANT_WRITE = 2, TLS_FAILED = -1, TLS_CLOSED = -2 };

struct tls_conf {
	const char *ca_file;	/* NULL: the system's trust store */
	const char *cert_file;	/* client certificate (mutual TLS), with key_file */
	const char *key_file;
	bool verify;
	bool min_tls13;		/* TLS 1.3 only (default: 1.2 and 1.3) */
};

struct tls_creds;
struct tls_conn;

/* false when sluice was built with SLUICE_WITH_TLS=OFF */
bool tls_available(void);

/*
 * The GnuTLS priority string of every session (ours and librelp's): the
 * library's NORMAL cipher suites, but only TLS 1.2 and 1.3 (Debian 12's
 * default priority still offers 1.0 and 1.1), or only 1.3.
 */
const char *tls_priority(bool min_tls13);

/*
 * Load the credentials (at configure time, so an unreadable file is a
 * configuration error).  On failure *bad_option names the tls_* option at
 * fault and err says why.
 */
struct tls_creds *tls_creds_new(const struct tls_conf *c, const char **bad_option, char *err,
				size_t errlen);
void tls_creds_free(struct tls_creds *cr);

/*
 * A session on fd; with verify the server's certificate is checked
 * against the CA, name (a host or an IP) and the serverAuth key purpose.
 * name must stay valid until tls_conn_free() (GnuTLS keeps the pointer).
 */
struct tls_conn *tls_conn_new(struct tls_creds *cr, int fd, const char *name, bool verify,
			      char *err, size_t errlen);
void tls_conn_free(struct tls_conn *tc);

/* Advance the handshake: TLS_DONE, TLS_WANT_*, or TLS_FAILED with err set. */
int tls_conn_handshake(struct tls_conn *tc, char *err, size_t errlen);
/* The verification failed (as opposed to a protocol or network error). */
bool tls_conn_verify_failed(const struct tls_conn *tc);

/*
 * Take bytes from iov[0..n): the number taken (>0), 0 when the previous
 * record is still unsent (wait for EPOLLOUT), or TLS_FAILED.
 */
ssize_t tls_conn_writev(struct tls_conn *tc, const struct iovec *iov, unsigned n, char *err,
			size_t errlen);
/* Send what was taken: TLS_DONE, TLS_WANT_WRITE or TLS_FAILED. */
int tls_conn_flush(struct tls_conn *tc, char *err, size_t errlen);
bool tls_conn_pending(const struct tls_conn *tc);
/* The server asked for a client certificate in the handshake. */
bool tls_conn_cert_requested(const struct tls_conn *tc);
/*
 * Bytes written to the socket so far (handshake and records, mod 2^32).
 * Right after tls_conn_flush() returned TLS_DONE: where the last record
 * ends on the wire.
 */
uint32_t tls_conn_wire(const struct tls_conn *tc);
/* tls_conn_discard_input() failed on a fatal alert from the server. */
bool tls_conn_alerted(const struct tls_conn *tc);
/* Read and drop what the server sent: TLS_DONE, TLS_CLOSED or TLS_FAILED. */
int tls_conn_discard_input(struct tls_conn *tc, char *err, size_t errlen);

#endif
