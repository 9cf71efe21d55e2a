/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/mcpd-fdread.c: reads, and descriptors a peer passes. */
#include <sys/socket.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fdpass.h"
#include "mcpd-stubs.h"
#include "tap.h"

struct seen {
	int reads, ends, error;
};

static void
on_read(void *arg)
{
	((struct seen *)arg)->reads++;
}

static void
on_end(void *arg, int error)
{
	struct seen *s = arg;

	s->ends++;
	s->error = error;
}

/* Sends text with the n descriptors fds over sock (SCM_RIGHTS). */
static bool
send_with(int sock, const char *text, const int *fds, int n)
{
	return fdpass_send(sock, text, strlen(text), fds, n) ==
	    (ssize_t)strlen(text);
}

/* The inode behind fd, or 0. */
static ino_t
inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* Open descriptors in this process whose inode is ino. */
static int
count_open(ino_t ino)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) >= 0 && inode_of(fd) == ino)
			n++;
	return n;
}

/* A reader on one end of a socketpair, and a pipe to pass over it. */
struct fixture {
	struct seen seen;
	struct fdread r;
	int sv[2], p[2];
	ino_t ino; /* the pipe's (both ends share it) */
};

static bool
fixture_open(struct fixture *f, bool takes_fds)
{
	memset(&f->seen, 0, sizeof f->seen);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, f->sv) < 0)
		return false;
	if (pipe(f->p) < 0) {
		close(f->sv[0]);
		close(f->sv[1]);
		return false;
	}
	f->ino = inode_of(f->p[0]);
	fdread_init(&f->r, f->sv[0], 1 << 16, on_read, on_end, &f->seen);
	if (takes_fds)
		fdread_take_fds(&f->r);
	return true;
}

static void
fixture_close(struct fixture *f)
{
	fdread_release(&f->r);
	for (int i = 0; i < 2; i++) {
		close(f->sv[i]);
		close(f->p[i]);
	}
}

static void
test_passed_descriptors_are_kept_up_to_the_limit(void)
{
	struct fixture f;
	int fds[FDREAD_PASSED_MAX], three[3];

	TAP_REQUIRE(fixture_open(&f, true), "socketpair and pipe");
	three[0] = f.p[0], three[1] = f.p[1], three[2] = f.p[0];
	TAP_REQUIRE(send_with(f.sv[1], "hello\n", three, 3), "sendmsg");
	TAP_CHECK_INT((long)fdread_now(&f.r), 6);
	TAP_CHECK_INT(count_open(f.ino), 2 + FDREAD_PASSED_MAX);
	TAP_CHECK_INT(fdread_passed(&f.r, fds), FDREAD_PASSED_MAX);
	TAP_CHECK(inode_of(fds[0]) == f.ino && inode_of(fds[1]) == f.ino,
	    "the first two came");
	TAP_CHECK((fcntl(fds[0], F_GETFL) & O_ACCMODE) == O_RDONLY &&
		(fcntl(fds[1], F_GETFL) & O_ACCMODE) == O_WRONLY,
	    "the read end, then the write end: in order");
	TAP_CHECK(fcntl(fds[0], F_GETFD) & FD_CLOEXEC, "close-on-exec");
	TAP_CHECK_INT(fdread_passed(&f.r, fds + 0), 0);
	close(fds[0]);
	close(fds[1]);
	fixture_close(&f);
}

static void
test_release_closes_what_was_not_taken(void)
{
	struct fixture f;

	TAP_REQUIRE(fixture_open(&f, true), "socketpair and pipe");
	TAP_REQUIRE(send_with(f.sv[1], "x", f.p, 2), "sendmsg");
	TAP_CHECK_INT((long)fdread_now(&f.r), 1);
	TAP_CHECK_INT(count_open(f.ino), 4);
	fdread_release(&f.r);
	TAP_CHECK_INT(count_open(f.ino), 2);
	fixture_close(&f);
}

static void
test_a_reader_that_takes_none_gets_none(void)
{
	struct fixture f;
	int fds[FDREAD_PASSED_MAX];

	TAP_REQUIRE(fixture_open(&f, false), "socketpair and pipe");
	TAP_REQUIRE(send_with(f.sv[1], "abc", f.p, 2), "sendmsg");
	TAP_CHECK_INT((long)fdread_now(&f.r), 3);
	TAP_CHECK_INT(fdread_passed(&f.r, fds), 0);
	TAP_CHECK_INT(count_open(f.ino), 2); /* the kernel dropped them */
	TAP_CHECK_INT((long)evbuffer_get_length(f.r.in), 3);
	fixture_close(&f);
}

static const struct tap_test tests[] = {
	{ "passed descriptors are kept up to the limit, the rest closed",
	    test_passed_descriptors_are_kept_up_to_the_limit },
	{ "release closes the descriptors not taken",
	    test_release_closes_what_was_not_taken },
	{ "a reader that does not take descriptors gets none",
	    test_a_reader_that_takes_none_gets_none },
};

int
main(void)
{
	if ((mcpd_base = event_base_new()) == NULL)
		return 1;
	return tap_run(tests, TAP_COUNT(tests));
}
