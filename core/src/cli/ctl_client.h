/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice stats`, `sluice reload`, `sluice reopen`: ask the running
 * daemon over its control socket (control.h).
 */
#ifndef SLUICE_CTL_CLIENT_H
#define SLUICE_CTL_CLIENT_H

/* True for the subcommands ctl_client_main() handles. */
int ctl_client_is_command(const char *arg);
/*
 * argv[0] is the subcommand.  Returns the exit status: 0 ok, 1 the
 * daemon refused (a failed reload), 64 usage, 69 no daemon answers,
 * 75 the daemon is busy (every connection slot taken), 77 no permission
 * on the socket, 78 no socket path configured.
 */
int ctl_client_main(int argc, char **argv, const char *default_config);

#endif
