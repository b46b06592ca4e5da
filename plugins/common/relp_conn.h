/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A RELP client session (rsyslog's Reliable Event Logging Protocol) on
 * librelp: every message is acknowledged by the receiver; after a broken
 * session, sl_relp_conn_open() reconnects and librelp first resends what
 * was not acknowledged.  librelp's calls block (up to the timeout), so
 * this runs on the output's own thread.
 */
#ifndef SLUICE_RELP_CONN_H
#define SLUICE_RELP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sl_relp_conn;

/* false when sluice was built with SLUICE_WITH_RELP=OFF */
bool sl_relp_available(void);

struct sl_tls_conf;

/*
 * tls: NULL for plain RELP, else TLS through librelp with the server's
 * certificate checked against tls->ca_file and its name against peer.
 */
struct sl_relp_conn *sl_relp_conn_new(const char *host, const char *port, unsigned timeout_s,
				const struct sl_tls_conf *tls, const char *peer, char *err, size_t errlen);
/*
 * Connect, or reconnect and resend the unacknowledged: 0, or -1 with err
 * (-2: the TLS peer's certificate was refused).
 */
int sl_relp_conn_open(struct sl_relp_conn *rc, char *err, size_t errlen);
/* Hand one message to librelp: 0, or -1 (session broken, msg not taken). */
int sl_relp_conn_send(struct sl_relp_conn *rc, const void *msg, size_t len, char *err, size_t errlen);
/* Close (waiting up to the timeout for the last acknowledgements) and free. */
void sl_relp_conn_free(struct sl_relp_conn *rc);

/*
 * What the receiver provably acknowledged.  librelp's public API does not
 * say which frames are acknowledged, but RELP requires responses in the
 * order of the commands, and librelp sends a command only while fewer
 * than SL_RELP_WINDOW are unacknowledged.  So when send number k (counted
 * from 1 over the life of rc, across reconnects: librelp resends the
 * unacknowledged in order first) returns, messages 1..k-SL_RELP_WINDOW are
 * acknowledged.  Not for the first send after a (re)connect: librelp lets
 * it pass without waiting for window room.  Once the receiver refused a
 * message (a non-200 answer, which librelp drops from its window like an
 * acknowledgement) nothing more is proven on rc, and sl_relp_conn_close()
 * says false: the caller sends the unproven again on a new rc.
 */
#define SL_RELP_WINDOW 128
uint64_t sl_relp_conn_sent(const struct sl_relp_conn *rc);	/* messages taken */
uint64_t sl_relp_conn_acked(const struct sl_relp_conn *rc);	/* 1..acked are acknowledged */
/*
 * Close and free like sl_relp_conn_free; true when the receiver answered the
 * close without librelp reporting an error: responses come in order, so
 * every message sent before was acknowledged.
 */
bool sl_relp_conn_close(struct sl_relp_conn *rc);

#endif
