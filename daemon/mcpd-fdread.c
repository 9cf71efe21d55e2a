/* SPDX-License-Identifier: ISC */
/*
 * Reading a descriptor straight into buffer space. libevent's own reads
 * ask the kernel how much is waiting (ioctl FIONREAD) before every read;
 * here a read(2) goes into the buffer's free space at once, and a short
 * read says the descriptor is drained: one system call for a message.
 */
#include <sys/socket.h>
#include <sys/uio.h>

#include <errno.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "log.h"
#include "mcpd.h"

#define FDREAD_CHUNK (64 * 1024) /* asked of one read(2) */

/* Commits the n bytes read into the reserved vectors. */
static void
fdread_commit(struct fdread *r, struct evbuffer_iovec *v, int nv, size_t n)
{
	int used = 0;

	for (size_t left = n; used < nv && left > 0; used++) {
		if (v[used].iov_len > left)
			v[used].iov_len = left;
		left -= v[used].iov_len;
	}
	if (evbuffer_commit_space(r->in, v, used) < 0)
		fatalx("fdread: cannot commit what was read");
}

/* Keeps the descriptors of an SCM_RIGHTS message, closing those past room. */
static void
fdread_keep(struct fdread *r, struct msghdr *mh)
{
	struct cmsghdr *cm;
	const int *fds;
	size_t n;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (const int *)(const void *)CMSG_DATA(cm);
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof *fds;
		for (size_t i = 0; i < n; i++) {
			if (r->npassed < FDREAD_PASSED_MAX)
				r->passed[r->npassed++] = fds[i];
			else
				close(fds[i]);
		}
	}
}

/* One read into io: readv(2), or recvmsg(2) where descriptors may come. */
static ssize_t
fdread_once(struct fdread *r, struct iovec *io, int nv)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDREAD_PASSED_MAX)];
		struct cmsghdr align;
	} control;
	struct msghdr mh = { .msg_iov = io, .msg_iovlen = (size_t)nv };
	ssize_t n;

	if (!r->takes_fds)
		return readv(event_get_fd(r->ev), io, nv);
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof control.buf;
	n = recvmsg(event_get_fd(r->ev), &mh, MSG_CMSG_CLOEXEC);
	if (n >= 0 && mh.msg_controllen > 0)
		fdread_keep(r, &mh);
	return n;
}

/*
 * Reads until a short read, EAGAIN, the end, or max bytes. Returns the
 * bytes read; *ret_end is 0 at the end of the stream, else an errno
 * value, or -1 when the stream goes on.
 */
static size_t
fdread_fill(struct fdread *r, int *ret_end)
{
	struct evbuffer_iovec v[2];
	struct iovec io[2];
	size_t total = 0, want, room;
	ssize_t n;
	int nv;

	*ret_end = -1;
	while (total < r->max) {
		want = r->max - total < FDREAD_CHUNK ? r->max - total :
						       FDREAD_CHUNK;
		/* The last chain's free space first, then a new one. */
		if ((nv = evbuffer_reserve_space(r->in, want, v, 2)) < 1) {
			*ret_end = ENOMEM;
			break;
		}
		room = 0;
		for (int i = 0; i < nv; i++) {
			io[i] = (struct iovec){ v[i].iov_base, v[i].iov_len };
			room += v[i].iov_len;
		}
		if ((n = fdread_once(r, io, nv)) < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				*ret_end = 0;
			else if (errno != EAGAIN)
				*ret_end = errno;
			break;
		}
		fdread_commit(r, v, nv, (size_t)n);
		total += (size_t)n;
		if ((size_t)n < room)
			break; /* drained: no second call to learn it */
	}
	return total;
}

/*
 * New bytes go to on_read; the end goes to on_end only when nothing new
 * came with it, so that each callback is the last thing done with r (its
 * owner may end it there) and what came first is read first.
 */
static void
fdread_ready(evutil_socket_t fd, short what, void *arg)
{
	struct fdread *r = arg;
	int end;

	(void)fd, (void)what;
	if (r->is_kicked) {
		r->is_kicked = false;
		if (evbuffer_get_length(r->in) > 0) {
			r->on_read(r->arg);
			return;
		}
	}
	if (event_get_fd(r->ev) < 0)
		return; /* no descriptor: its bytes are put in, never read */
	if (fdread_fill(r, &end) > 0)
		r->on_read(r->arg);
	else if (end >= 0)
		r->on_end(r->arg, end);
}

void
fdread_init(struct fdread *r, int fd, size_t max, void (*on_read)(void *),
    void (*on_end)(void *, int), void *arg)
{
	if ((r->in = evbuffer_new()) == NULL)
		fatalx("out of memory");
	r->max = max;
	r->on_read = on_read;
	r->on_end = on_end;
	r->arg = arg;
	r->is_kicked = false;
	r->takes_fds = false;
	r->npassed = 0;
	if ((r->ev = event_new(mcpd_base, fd, EV_READ | EV_PERSIST,
		 fdread_ready, r)) == NULL)
		fatalx("cannot watch a descriptor for reading");
}

void
fdread_enable(struct fdread *r)
{
	event_add(r->ev, NULL);
}

void
fdread_disable(struct fdread *r)
{
	event_del(r->ev);
}

void
fdread_kick(struct fdread *r)
{
	r->is_kicked = true;
	event_active(r->ev, EV_READ, 0);
}

size_t
fdread_now(struct fdread *r)
{
	int end;

	return fdread_fill(r, &end);
}

void
fdread_take_fds(struct fdread *r)
{
	r->takes_fds = true;
}

int
fdread_passed(struct fdread *r, int fds[FDREAD_PASSED_MAX])
{
	int n = r->npassed;

	for (int i = 0; i < n; i++)
		fds[i] = r->passed[i];
	r->npassed = 0;
	return n;
}

void
fdread_release(struct fdread *r)
{
	if (r->in == NULL)
		return;
	while (r->npassed > 0)
		close(r->passed[--r->npassed]);
	event_free(r->ev);
	evbuffer_free(r->in);
	r->ev = NULL;
	r->in = NULL;
}
