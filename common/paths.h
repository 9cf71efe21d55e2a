/* SPDX-License-Identifier: ISC */
/* Default locations of the control socket and the state directory. */
#ifndef MCPD_PATHS_H
#define MCPD_PATHS_H

/*
 * The control socket: $MCPD_SOCKET, else $RUNTIME_DIRECTORY/mcpd.sock,
 * else $XDG_RUNTIME_DIR/mcpd/mcpd.sock, else /tmp/mcpd-<uid>/mcpd.sock.
 * Returns a new string.
 */
char *paths_socket_default(void);
/*
 * The state directory: $MCPD_STATE_DIR, else $STATE_DIRECTORY, else
 * $XDG_STATE_HOME/mcpd, else $HOME/.local/state/mcpd. New string or NULL.
 */
char *paths_state_default(void);
/* Creates dir and its missing parents; the last one gets mode. 0 or -errno. */
int paths_mkdir_p(const char *dir, unsigned int mode);
/*
 * The program process pid runs, as /proc/<pid>/exe names it: a new
 * string, or NULL when the kernel does not say (gone, not ours to see).
 */
char *paths_proc_exe(int pid);
/*
 * The program that runs, as /proc/self/exe names it, without the
 * " (deleted)" of a binary replaced on disk since: a new string, or NULL.
 */
char *paths_self_exe(void);

#endif
