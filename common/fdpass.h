/* SPDX-License-Identifier: ISC */
/* Descriptors passed over a unix socket (SCM_RIGHTS). */
#ifndef MCPD_FDPASS_H
#define MCPD_FDPASS_H

#include <sys/types.h>

#define FDPASS_MAX 4 /* descriptors sent with one message at most */

/*
 * Sends len bytes of buf over sock with the n descriptors fds (which stay
 * open here) riding on its first byte: what sendmsg(2) returns (-1, errno
 * set; EINVAL for n outside 1..FDPASS_MAX).
 */
ssize_t fdpass_send(int sock, const void *buf, size_t len, const int *fds,
    int n);

#endif
