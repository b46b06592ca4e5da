/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Secrets in option values, and what is shown instead of them: in the
 * `sluice -t` tree, --describe defaults, and every log line and error
 * message an instance produces.  The rule (docs/SECURITY.md):
 *
 *  - an option marked SL_OPT_SECRET: a string (or each list item) is
 *    shown as SECRET_MASK whole; a mapping (SL_OPT_MAP) keeps its names
 *    and masks the values of secret names (secret_name());
 *  - in any option's value, a password held in a URI's user-info
 *    (scheme://user:PASSWORD@host) or in a password-like query parameter
 *    (?password=...), or in a key=value connection string (libpq's
 *    "host=db password=..."), is masked and the rest is kept.
 */
#ifndef SLUICE_SECRET_H
#define SLUICE_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <sluice/plugin.h>

#define SECRET_MASK "********"
/* What secret_name() looks for, as the docs say it. */
#define SECRET_WORDS "pass, secret, token, cred, key, pem or auth"

/*
 * A name whose value is a secret: it contains, in any case, "pass",
 * "secret", "token", "cred", "key", "pem" or "auth" (sasl.password,
 * ssl.key.pem, sasl.oauthbearer.client.secret, sslpassword...).
 */
bool secret_name(const char *name);

/* Room for the masks: a buffer of strlen(value) + this never truncates. */
#define SECRET_SHOW_EXTRA (16 * sizeof(SECRET_MASK))

/*
 * `value` as it may be shown, into buf (truncated to len): whole is true
 * for a value that is all secret (SL_OPT_SECRET), else only the passwords
 * embedded in it are masked.  Returns buf.
 */
const char *secret_show(const char *value, bool whole, char *buf, size_t len);

/*
 * The value of option `o` (entry `entry` of a mapping option; NULL
 * otherwise) as it may be shown.  o may be NULL (no such option): only
 * embedded passwords are masked.
 */
const char *secret_show_option(const struct sl_option *o, const char *entry, const char *value,
			       char *buf, size_t len);

/*
 * Replace in msg (a NUL-terminated string in a buffer of len bytes) every
 * secret that the option table `opts` put in `config`: values of
 * SL_OPT_SECRET options, secret entries of their mappings, and passwords
 * embedded in any string or list option (also percent-decoded).  Messages
 * of plugins and of the libraries they call may repeat a value; this is
 * the net under them.
 */
void secret_scrub(const struct sl_option *opts, const void *config, char *msg, size_t len);

#endif
