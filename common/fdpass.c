/* SPDX-License-Identifier: ISC */
/* Descriptors passed over a unix socket (SCM_RIGHTS). */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fdpass.h"

ssize_t
fdpass_send(int sock, const void *buf, size_t len, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
		struct cmsghdr align;
	} control;
	struct iovec io = { (void *)(uintptr_t)buf, len };
	struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (n < 1 || n > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	memset(&control, 0, sizeof control);
	mh.msg_control = control.buf;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
	return sendmsg(sock, &mh, MSG_NOSIGNAL);
}
