/* SPDX-License-Identifier: ISC */
/* Unit tests of common/fileio.c: whole reads, atomic replacement and its
 * failures. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "tap.h"

/* Root that may mount: the tmpfs cases run (decided once, in main). */
static bool can_mount;

/* A new directory for one test; test_dir_remove() takes it away. */
static char *
test_dir(void)
{
	char *dir = strdup("/tmp/mcpd-test-fileio.XXXXXX");

	if (dir == NULL || mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	return dir;
}

static char *
test_path(const char *dir, const char *name)
{
	char *path;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		exit(1);
	return path;
}

/* Removes dir and what the tests leave in it (files, one level of dirs). */
static void
test_dir_remove(char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# cannot remove %s\n", dir);
	free(dir);
}

/* Runs a shell command quietly with dir; true when it exited 0. */
static bool
test_system(const char *fmt, const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, fmt, dir);
	return system(cmd) == 0;
}

/* The whole content of path, NUL-terminated (new), or NULL. */
static char *
slurp(const char *path)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *out;

	if (f == NULL)
		return NULL;
	if ((out = open_memstream(&buf, &len)) == NULL)
		exit(1);
	for (int c; (c = fgetc(f)) != EOF;)
		fputc(c, out);
	fclose(f);
	fclose(out);
	return buf;
}

static void
spew(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 ||
	    chmod(path, mode) < 0) {
		perror(path);
		exit(1);
	}
}

static bool
is_gone(const char *path)
{
	return access(path, F_OK) < 0 && errno == ENOENT;
}

/* The mode bits of path, or -1. */
static int
mode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* Writes text to path and checks that it worked. */
static bool
write_ok(const char *path, const char *text, mode_t mode)
{
	char *cause = NULL;
	int r = fileio_write_atomic(path, text, strlen(text), mode, &cause);
	bool ok = TAP_CHECK(r == 0, "write %s: %d %s", path, r,
	    tap_str_show(cause));

	free(cause);
	return ok;
}

/*
 * Writes text to path expecting failure want, with a cause that says says,
 * and checks that path is as it was and no temporary file was left.
 */
static void
write_fails(const char *path, const char *text, int want, const char *says)
{
	char *before = slurp(path), *after, *cause = NULL, *tmp;
	struct stat st_before, st_after;
	bool had = stat(path, &st_before) == 0, had_tmp;
	int r;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		exit(1);
	had_tmp = access(tmp, F_OK) == 0;
	r = fileio_write_atomic(path, text, strlen(text), 0600, &cause);
	TAP_CHECK(r == want, "%s: expected %d, got %d (%s)", path, want, r,
	    tap_str_show(cause));
	TAP_CHECK(cause != NULL && strstr(cause, says) != NULL,
	    "the cause says \"%s\": %s", says, tap_str_show(cause));
	after = slurp(path);
	TAP_CHECK(tap_str_eq(before, after), "%s is untouched: \"%s\"", path,
	    tap_str_show(after));
	TAP_CHECK(!had ||
		(stat(path, &st_after) == 0 &&
		    st_after.st_ino == st_before.st_ino &&
		    st_after.st_mode == st_before.st_mode),
	    "%s is the same file, with the same mode", path);
	TAP_CHECK(had_tmp || is_gone(tmp), "no temporary file is left");
	free(before);
	free(after);
	free(cause);
	free(tmp);
}

static void
test_new_file(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f.json");
	char *tmp = test_path(dir, "f.json.tmp"), *got;
	mode_t old = umask(077);

	if (write_ok(path, "{\"a\": 1}\n", 0640)) {
		got = slurp(path);
		TAP_CHECK_STR(got, "{\"a\": 1}\n");
		free(got);
		TAP_CHECK(mode_of(path) == 0640,
		    "the mode asked, not the umask's: %04o", mode_of(path));
		TAP_CHECK(is_gone(tmp), "no temporary file is left");
	}
	umask(022);
	if (write_ok(path, "", 0600)) {
		got = slurp(path);
		TAP_CHECK_STR(got, "");
		free(got);
		TAP_CHECK(mode_of(path) == 0600, "mode 0600: %04o",
		    mode_of(path));
		TAP_CHECK(is_gone(tmp), "no temporary file is left");
	}
	umask(old);
	/* Without a directory part, the current directory is the one. */
	if (chdir(dir) == 0) {
		if (write_ok("plain", "here", 0600)) {
			got = slurp("plain");
			TAP_CHECK_STR(got, "here");
			free(got);
		}
		if (chdir("/") < 0)
			exit(1);
	}
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

static void
test_replace(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");
	char *tmp = test_path(dir, "f.tmp"), *got, old[8] = "";
	int fd;

	spew(path, "old content", 0644);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (write_ok(path, "new", 0600)) {
		got = slurp(path);
		TAP_CHECK_STR(got, "new");
		free(got);
		TAP_CHECK(mode_of(path) == 0600,
		    "mode 0600, not the old 0644: "
		    "%04o",
		    mode_of(path));
		/* A new file took the name; the old one was not written. */
		TAP_CHECK(fd >= 0 && pread(fd, old, 7, 0) == 7 &&
			strcmp(old, "old con") == 0,
		    "the old file still holds \"%s\"", old);
		TAP_CHECK(is_gone(tmp), "no temporary file is left");
	}
	if (fd >= 0)
		close(fd);
	/* A stale temporary file, longer and loose, is replaced whole. */
	spew(tmp, "}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}}", 0666);
	if (write_ok(path, "{}", 0600)) {
		got = slurp(path);
		TAP_CHECK_STR(got, "{}");
		free(got);
		TAP_CHECK(mode_of(path) == 0600, "mode 0600: %04o",
		    mode_of(path));
		TAP_CHECK(is_gone(tmp), "no temporary file is left");
	}
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

static void
test_no_dir(void)
{
	char *dir = test_dir(), *path = test_path(dir, "missing/f");
	char *tmp = test_path(dir, "missing/f.tmp"), *cause = NULL;

	write_fails(path, "x", -ENOENT, "cannot create ");
	TAP_CHECK_INT(fileio_write_atomic(path, "x", 1, 0600, &cause), -ENOENT);
	TAP_CHECK(cause != NULL && strstr(cause, tmp) != NULL &&
		strstr(cause, "No such file or directory") != NULL,
	    "the cause names the step and the path: %s", tap_str_show(cause));
	free(cause);
	TAP_CHECK_INT(fileio_write_atomic(path, "x", 1, 0600, NULL), -ENOENT);
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

static void
test_target_is_dir(void)
{
	char *dir = test_dir(), *path = test_path(dir, "d");
	char *tmp = test_path(dir, "d.tmp"), *inner = test_path(dir, "d/x");
	struct stat st;

	if (mkdir(path, 0700) < 0)
		exit(1);
	spew(inner, "inner", 0600);
	write_fails(path, "x", -EISDIR, "cannot rename ");
	TAP_CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode),
	    "the directory is still there");
	TAP_CHECK(mode_of(inner) == 0600, "and what it holds");
	TAP_CHECK(is_gone(tmp), "the temporary file is removed");
	free(inner);
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

static void
test_tmp_in_the_way(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");
	char *tmp = test_path(dir, "f.tmp"), *cause = NULL;
	struct stat st;

	spew(path, "kept", 0600);
	if (mkdir(tmp, 0700) < 0)
		exit(1);
	write_fails(path, "new", -EISDIR, "cannot create ");
	TAP_CHECK(fileio_write_atomic(path, "new", 3, 0600, &cause) < 0 &&
		cause != NULL && strstr(cause, tmp) != NULL,
	    "the cause names the temporary path: %s", tap_str_show(cause));
	free(cause);
	TAP_CHECK(stat(tmp, &st) == 0 && S_ISDIR(st.st_mode),
	    "what was in the way is left alone");
	rmdir(tmp);
	TAP_CHECK(write_ok(path, "new", 0600), "it works once it is gone");
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

/* A tmpfs of 16k on a new directory: full, then read-only. */
static void
test_full_and_read_only(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");
	char *tmp = test_path(dir, "f.tmp"), *big;
	size_t big_len = 256 * 1024;

	if (!can_mount) {
		test_dir_remove(dir);
		return; /* skipped: see main */
	}
	TAP_REQUIRE(test_system("mount -t tmpfs -o size=16k,mode=0700 "
				"mcpd-test %s 2>/dev/null",
			dir),
	    "mount a 16k tmpfs on %s", dir);
	if ((big = malloc(big_len + 1)) == NULL)
		exit(1);
	memset(big, 'x', big_len);
	big[big_len] = '\0';
	if (write_ok(path, "old", 0600)) {
		write_fails(path, big, -ENOSPC,
		    "/f.tmp: No space left on device");
		TAP_CHECK(is_gone(tmp),
		    "the partial temporary file is removed");
		/* Its space came back. */
		TAP_CHECK(write_ok(path, "small", 0600), "a small write fits");
		TAP_CHECK(test_system("mount -o remount,ro %s 2>/dev/null",
			      dir),
		    "remount read-only");
		write_fails(path, "new", -EROFS, "Read-only file system");
		TAP_CHECK(is_gone(tmp), "no temporary file");
	}
	free(big);
	if (!test_system("umount %s", dir))
		fprintf(stderr, "# cannot unmount %s\n", dir);
	free(path);
	free(tmp);
	test_dir_remove(dir);
}

/* A non-root user cannot write in a directory of mode 0500. */
static void
test_unwritable_dir(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");

	if (geteuid() == 0) {
		test_dir_remove(dir);
		free(path);
		return; /* skipped: see main */
	}
	spew(path, "kept", 0600);
	TAP_CHECK(chmod(dir, 0500) == 0, "chmod 0500");
	write_fails(path, "new", -EACCES, "Permission denied");
	chmod(dir, 0700);
	free(path);
	test_dir_remove(dir);
}

static void
test_sync_dir(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");
	char *missing = test_path(dir, "no/f"), *cause = NULL;

	TAP_CHECK_INT(fileio_sync_dir(path, &cause), 0);
	TAP_CHECK(cause == NULL, "no cause");
	TAP_CHECK_INT(fileio_sync_dir("/f", NULL), 0);
	TAP_CHECK_INT(fileio_sync_dir(missing, &cause), -ENOENT);
	TAP_CHECK(cause != NULL && strstr(cause, "cannot sync directory ") &&
		strstr(cause, dir) != NULL,
	    "the cause names the directory: %s", tap_str_show(cause));
	free(cause);
	free(missing);
	free(path);
	test_dir_remove(dir);
}

/* Writes n bytes of c to a new file at path. */
static void
test_fill(const char *path, int c, size_t n)
{
	char *buf = malloc(n + 1);
	char *cause = NULL;

	TAP_REQUIRE(buf != NULL, "malloc");
	memset(buf, c, n);
	TAP_REQUIRE(fileio_write_atomic(path, buf, n, 0600, &cause) == 0,
	    "write %s: %s", path, tap_str_show(cause));
	free(buf);
}

/* Whole files up to the cap, and one byte more is -EFBIG; a file's size
 * at exactly a doubling step, and an empty file. */
static void
test_read_all(void)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536, 100000 };
	char *dir = test_dir(), *path = test_path(dir, "f"), *buf;
	size_t len;

	for (size_t i = 0; i < TAP_COUNT(sizes); i++) {
		test_fill(path, 'x', sizes[i]);
		buf = NULL;
		TAP_CHECK_INT(fileio_read_all(path, sizes[i], FILEIO_UNCACHED,
				  &buf, &len),
		    0);
		TAP_CHECK(len == sizes[i], "size %zu: read %zu", sizes[i], len);
		TAP_CHECK(buf != NULL && buf[len] == '\0' &&
			strspn(buf, "x") == sizes[i],
		    "size %zu: content", sizes[i]);
		free(buf);
		if (sizes[i] > 0)
			TAP_CHECK_INT(fileio_read_all(path, sizes[i] - 1, 0,
					  &buf, &len),
			    -EFBIG);
	}
	unlink(path);
	TAP_CHECK_INT(fileio_read_all(path, 10, 0, &buf, &len), -ENOENT);
	free(path);
	test_dir_remove(dir);
}

/* A pipe has no size: it is read in growing steps to its end or the cap;
 * FILEIO_REGULAR refuses it, FILEIO_NOFOLLOW a symbolic link. */
static void
test_read_fd_and_flags(void)
{
	char *dir = test_dir(), *path = test_path(dir, "f");
	char *link = test_path(dir, "l"), *buf = NULL;
	int fds[2];
	size_t len;

	TAP_REQUIRE(pipe(fds) == 0, "pipe");
	TAP_REQUIRE(write(fds[1], "hello, pipe", 11) == 11, "write");
	close(fds[1]);
	TAP_CHECK_INT(fileio_read_fd(fds[0], 11, &buf, &len), 0);
	TAP_CHECK(len == 11 && strcmp(buf, "hello, pipe") == 0, "pipe: %s",
	    tap_str_show(buf));
	free(buf);
	close(fds[0]);
	TAP_REQUIRE(pipe(fds) == 0, "pipe");
	TAP_REQUIRE(write(fds[1], "hello, pipe", 11) == 11, "write");
	close(fds[1]);
	TAP_CHECK_INT(fileio_read_fd(fds[0], 10, &buf, &len), -EFBIG);
	close(fds[0]);
	test_fill(path, 'y', 3);
	TAP_REQUIRE(symlink(path, link) == 0, "symlink");
	TAP_CHECK_INT(fileio_read_all(link, 10, FILEIO_NOFOLLOW, &buf, &len),
	    -ELOOP);
	TAP_CHECK_INT(fileio_read_all(link, 10, FILEIO_REGULAR, &buf, &len), 0);
	free(buf);
	TAP_CHECK_INT(fileio_read_all(dir, 10, FILEIO_REGULAR, &buf, &len),
	    -EINVAL);
	TAP_CHECK_INT(fileio_read_all("/dev/null", 10, FILEIO_REGULAR, &buf,
			  &len),
	    -EINVAL);
	TAP_CHECK_INT(fileio_read_all("/dev/null", 10, 0, &buf, &len), 0);
	TAP_CHECK(len == 0, "/dev/null: %zu bytes", len);
	free(buf);
	unlink(link);
	unlink(path);
	free(link);
	free(path);
	test_dir_remove(dir);
}

/* fileio_read_upto stops at size or at the end. */
static void
test_read_upto(void)
{
	char buf[8];
	int fds[2];

	TAP_REQUIRE(pipe(fds) == 0, "pipe");
	TAP_REQUIRE(write(fds[1], "0123456789", 10) == 10, "write");
	TAP_CHECK(fileio_read_upto(fds[0], buf, 4) == 4, "4 of 10");
	TAP_CHECK(memcmp(buf, "0123", 4) == 0, "the first 4");
	close(fds[1]);
	TAP_CHECK(fileio_read_upto(fds[0], buf, sizeof buf) == 6, "the last 6");
	TAP_CHECK(fileio_read_upto(fds[0], buf, sizeof buf) == 0, "the end");
	close(fds[0]);
	TAP_CHECK(fileio_read_upto(-1, buf, sizeof buf) == -EBADF, "EBADF");
}

/* Root without mount(8) rights cannot make a directory full or read-only. */
static bool
test_can_mount(void)
{
	char *dir;
	bool ok;

	if (geteuid() != 0)
		return false;
	dir = test_dir();
	ok = test_system("mount -t tmpfs -o size=16k mcpd-test %s 2>/dev/null",
	    dir);
	if (ok && !test_system("umount %s", dir))
		ok = false;
	test_dir_remove(dir);
	return ok;
}

static struct tap_test tests[] = {
	{ "a new file: its content and exactly its mode, no tmp left",
	    test_new_file },
	{ "an existing file is replaced by a new one; a stale tmp goes",
	    test_replace },
	{ "a missing directory fails at create", test_no_dir },
	{ "a directory as the target fails at rename, tmp removed",
	    test_target_is_dir },
	{ "a directory in the tmp's way fails and is left alone",
	    test_tmp_in_the_way },
	{ "a full, then a read-only file system: the target untouched",
	    test_full_and_read_only },
	{ "a directory without write permission", test_unwritable_dir },
	{ "fileio_sync_dir", test_sync_dir },
	{ "fileio_read_all: whole files to the cap, -EFBIG past it",
	    test_read_all },
	{ "fileio_read_fd on a pipe; FILEIO_REGULAR and FILEIO_NOFOLLOW",
	    test_read_fd_and_flags },
	{ "fileio_read_upto", test_read_upto },
};

int
main(void)
{
	can_mount = test_can_mount();
	for (size_t i = 0; i < TAP_COUNT(tests); i++) {
		if (tests[i].fn == test_full_and_read_only && !can_mount)
			tests[i].name = "a full file system # SKIP needs root "
					"and mount(8) for a 16k tmpfs";
		if (tests[i].fn == test_unwritable_dir && geteuid() == 0)
			tests[i].name = "an unwritable dir # SKIP root ignores "
					"chmod 0500; the tmpfs case covers it";
	}
	return tap_run(tests, TAP_COUNT(tests));
}
