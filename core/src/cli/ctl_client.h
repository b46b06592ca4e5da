/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `sluice stats`, `sluice reload`, `sluice reopen`, `sluice tail`: ask the
 * running daemon over its control socket (control.h).
 */
#ifndef SLUICE_CTL_CLIENT_H
#define SLUICE_CTL_CLIENT_H

/* True for the subcommands ctl_client_main() handles. */
int ctl_client_is_command(const char *arg);
/*
 * argv[0] is the subcommand.  Returns the exit status: 0 ok, 1 the
 * daemon refused (a failed reload, a tail it cannot serve), 64 usage,
 * 69 no daemon answers, 75 the daemon is busy (every connection slot
 * taken), 77 no permission on the socket, 78 no socket path configured.
 */
int ctl_client_main(int argc, char **argv, const char *default_config);

/* The socket: sock, else daemon.control_socket of file.  malloc'd, or NULL and *status. */
char *ctl_client_socket_path(const char *sock, const char *file, int *status);
/* Connected to path (30 s send and receive timeouts), or minus an exit status. */
int ctl_client_connect(const char *path);
/* `sluice tail` (ctl_tail.c): ctl_client_main()'s contract. */
int ctl_tail_main(int argc, char **argv, const char *default_config);

#endif
