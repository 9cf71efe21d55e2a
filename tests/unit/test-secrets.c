/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/state-secrets.c: the key, the encrypted file, the values. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd.h"
#include "tap.h"

#define VALUE_A "hunter2-correct-horse-battery-staple"
#define VALUE_B "line one\nline two\ttab \x01\xff end"
#define NAME_A	"github.token"
#define NAME_B	"OPENAI_API_KEY"

/* A scratch directory with the paths the store uses in it. */
struct fixture {
	char *dir;
	char store[256];
	char key[256];
};

static void
fixture_init(struct fixture *f)
{
	f->dir = strdup("/tmp/mcpd-test-secrets.XXXXXX");
	if (f->dir == NULL || mkdtemp(f->dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	/* The state dir exists; the key file's directory does not yet. */
	snprintf(f->store, sizeof f->store, "%s/state", f->dir);
	if (mkdir(f->store, 0700) < 0) {
		perror(f->store);
		exit(1);
	}
	snprintf(f->store, sizeof f->store, "%s/state/secrets.enc", f->dir);
	snprintf(f->key, sizeof f->key, "%s/config/mcpd/secrets.key", f->dir);
}

static int
fixture_remove_one(const char *path, const struct stat *st, int flag,
    struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (remove(path) < 0)
		perror(path);
	return 0;
}

static void
fixture_free(struct fixture *f)
{
	unsetenv("CREDENTIALS_DIRECTORY");
	nftw(f->dir, fixture_remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->dir);
}

/* The whole file in a new buffer (*len its size), or NULL. */
static unsigned char *
slurp(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY);

	*len = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && (buf = malloc(st.st_size + 1)) != NULL &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	if (buf != NULL)
		*len = st.st_size;
	close(fd);
	return buf;
}

static void
spew(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len ||
	    fchmod(fd, mode) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
}

static bool
contains(const unsigned char *buf, size_t len, const char *needle)
{
	return memmem(buf, len, needle, strlen(needle)) != NULL;
}

/* True when cause is a message that names path and shows no secret. */
static bool
cause_ok(const char *cause, const char *path)
{
	return cause != NULL && strstr(cause, path) != NULL &&
	    strstr(cause, VALUE_A) == NULL && strstr(cause, "hunter2") == NULL;
}

static struct secrets *
open_ok(const struct fixture *f)
{
	struct secrets *s = NULL;
	char *cause = NULL;
	int r = secrets_open(f->store, f->key, &s, &cause);

	TAP_CHECK(r == 0 && s != NULL, "secrets_open: %d %s", r,
	    cause != NULL ? cause : "");
	free(cause);
	return s;
}

static int
set(struct secrets *s, const char *name, const char *value)
{
	char *cause = NULL;
	int r = secrets_set(s, name, value, strlen(value), &cause);

	TAP_CHECK(r == 0 && cause == NULL, "secrets_set %s: %d %s", name, r,
	    cause != NULL ? cause : "");
	free(cause);
	return r;
}

/* A store holding VALUE_A, closed again. */
static void
make_store(const struct fixture *f)
{
	struct secrets *s = open_ok(f);

	if (s != NULL)
		set(s, NAME_A, VALUE_A);
	secrets_free(s);
}

static void
check_names(const struct secrets *s, const char *want)
{
	json_t *names = secrets_names(s);
	char *text = json_dumps(names, JSON_COMPACT);

	TAP_CHECK_STR(text, want);
	free(text);
	json_decref(names);
}

static void
test_round_trip(void)
{
	struct fixture f;
	struct secrets *s;
	char *cause = NULL;
	bool removed = true;

	fixture_init(&f);
	if ((s = open_ok(&f)) == NULL)
		goto out;
	check_names(s, "[]");
	TAP_CHECK(access(f.store, F_OK) < 0, "opening alone writes no store");
	set(s, NAME_A, "first");
	set(s, NAME_B, VALUE_B);
	set(s, "empty", "");
	set(s, NAME_A, VALUE_A);
	TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	TAP_CHECK_STR(secrets_get(s, NAME_B), VALUE_B);
	TAP_CHECK_STR(secrets_get(s, "empty"), "");
	TAP_CHECK(secrets_get(s, "missing") == NULL, "no such secret");
	TAP_CHECK(secrets_get(s, "bad name") == NULL, "no such secret");
	check_names(s, "[\"OPENAI_API_KEY\",\"empty\",\"github.token\"]");
	TAP_CHECK_STR(secrets_key_source(s), f.key);
	secrets_free(s);

	if ((s = open_ok(&f)) == NULL)
		goto out;
	TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	TAP_CHECK_STR(secrets_get(s, NAME_B), VALUE_B);
	TAP_CHECK_STR(secrets_get(s, "empty"), "");
	check_names(s, "[\"OPENAI_API_KEY\",\"empty\",\"github.token\"]");
	TAP_CHECK_INT(secrets_remove(s, NAME_B, &removed, &cause), 0);
	TAP_CHECK(removed, "the secret was there");
	TAP_CHECK_INT(secrets_remove(s, NAME_B, &removed, &cause), 0);
	TAP_CHECK(!removed, "the secret is gone");
	TAP_CHECK(secrets_get(s, NAME_B) == NULL, "removed from memory");
	TAP_CHECK_INT(secrets_remove(s, "empty", NULL, &cause), 0);
	TAP_CHECK(cause == NULL, "no cause on success");
	secrets_free(s);

	if ((s = open_ok(&f)) == NULL)
		goto out;
	check_names(s, "[\"github.token\"]");
	TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	TAP_CHECK_INT(secrets_remove(s, NAME_A, &removed, &cause), 0);
	secrets_free(s);
	if ((s = open_ok(&f)) != NULL)
		check_names(s, "[]");
	secrets_free(s);
out:
	free(cause);
	fixture_free(&f);
}

static void
test_file_is_opaque(void)
{
	struct fixture f;
	struct secrets *s;
	unsigned char *one, *two;
	size_t one_len, two_len, plain_len;
	struct stat st;

	fixture_init(&f);
	if ((s = open_ok(&f)) == NULL)
		goto out;
	set(s, NAME_A, VALUE_A);
	set(s, NAME_B, VALUE_B);
	one = slurp(f.store, &one_len);
	set(s, NAME_B, VALUE_B); /* the same content again */
	two = slurp(f.store, &two_len);
	secrets_free(s);

	if (!TAP_CHECK(one != NULL && two != NULL, "the store file is there"))
		goto done;
	plain_len = 2 + strlen(NAME_A) + 4 + strlen(VALUE_A) + 2 +
	    strlen(NAME_B) + 4 + strlen(VALUE_B);
	TAP_CHECK_INT(one_len, 8 + 24 + 16 + plain_len);
	TAP_CHECK(memcmp(one, "MCPDSEC1", 8) == 0, "the magic leads");
	TAP_CHECK(!contains(one, one_len, VALUE_A) &&
		!contains(one, one_len, "hunter2") &&
		!contains(one, one_len, "line one"),
	    "no value in clear");
	TAP_CHECK(!contains(one, one_len, NAME_A) &&
		!contains(one, one_len, "github") &&
		!contains(one, one_len, NAME_B),
	    "no name in clear");
	TAP_CHECK(one_len == two_len && memcmp(one, two, 8) == 0 &&
		memcmp(one + 8, two + 8, 24) != 0 &&
		memcmp(one + 32, two + 32, one_len - 32) != 0,
	    "each write has a fresh nonce");
	TAP_CHECK(stat(f.store, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "the store is 0600 (it is %04o)", (unsigned)(st.st_mode & 0777));
	snprintf(f.key, sizeof f.key, "%s/state/secrets.enc.tmp", f.dir);
	TAP_CHECK(access(f.key, F_OK) < 0, "no temporary file is left");
done:
	free(one);
	free(two);
out:
	fixture_free(&f);
}

static void
test_wrong_key(void)
{
	struct fixture f;
	struct secrets *s = NULL;
	unsigned char other[32], *before, *after;
	size_t before_len, after_len;
	char *cause = NULL;

	fixture_init(&f);
	make_store(&f);
	before = slurp(f.store, &before_len);
	memset(other, 0x5a, sizeof other);
	spew(f.key, other, sizeof other, 0600);
	TAP_CHECK_INT(secrets_open(f.store, f.key, &s, &cause), -EBADMSG);
	TAP_CHECK(s == NULL, "nothing is returned");
	TAP_CHECK(cause_ok(cause, f.store), "the cause names the store: %s",
	    cause != NULL ? cause : "(none)");
	after = slurp(f.store, &after_len);
	TAP_CHECK(before != NULL && after != NULL && before_len == after_len &&
		memcmp(before, after, before_len) == 0,
	    "a refused open leaves the store alone");
	free(before);
	free(after);
	free(cause);
	fixture_free(&f);
}

static void
test_missing_key(void)
{
	struct fixture f;
	struct secrets *s = NULL;
	char *cause = NULL;

	fixture_init(&f);
	make_store(&f);
	unlink(f.key);
	TAP_CHECK_INT(secrets_open(f.store, f.key, &s, &cause), -ENOENT);
	TAP_CHECK(cause_ok(cause, f.key) && strstr(cause, f.store) != NULL,
	    "the cause names the key file and the store: %s",
	    cause != NULL ? cause : "(none)");
	TAP_CHECK(access(f.key, F_OK) < 0,
	    "no new key is made for a store that exists");
	free(cause);
	fixture_free(&f);
}

/* Opening a store of these bytes fails with a cause that names it. */
static void
check_refused(const struct fixture *f, const unsigned char *buf, size_t len,
    const char *what)
{
	struct secrets *s = NULL;
	char *cause = NULL;
	int r;

	spew(f->store, buf, len, 0600);
	r = secrets_open(f->store, f->key, &s, &cause);
	TAP_CHECK(r < 0 && s == NULL, "%s: refused (%d)", what, r);
	TAP_CHECK(cause_ok(cause, f->store), "%s: %s", what,
	    cause != NULL ? cause : "(none)");
	free(cause);
	secrets_free(s);
}

static void
test_damaged_file(void)
{
	static const size_t cuts[] = { 0, 5, 8, 20, 32, 47, 48, 60 };
	struct fixture f;
	unsigned char *buf;
	size_t len;
	char what[64];

	fixture_init(&f);
	make_store(&f);
	buf = slurp(f.store, &len);
	if (!TAP_CHECK(buf != NULL && len > 60, "the store was written"))
		goto out;
	for (size_t i = 0; i < TAP_COUNT(cuts); i++) {
		snprintf(what, sizeof what, "cut to %zu bytes", cuts[i]);
		check_refused(&f, buf, cuts[i], what);
	}
	check_refused(&f, buf, len - 1, "one byte short");
	buf[len / 2] ^= 0x01;
	check_refused(&f, buf, len, "one bit flipped in the box");
	buf[len / 2] ^= 0x01;
	buf[10] ^= 0x80;
	check_refused(&f, buf, len, "one bit flipped in the nonce");
	buf[10] ^= 0x80;
	buf[0] = 'X';
	check_refused(&f, buf, len, "wrong magic");
out:
	free(buf);
	fixture_free(&f);
}

static void
test_key_file_created(void)
{
	struct fixture f;
	struct secrets *s;
	struct stat st;
	char dir[256];

	fixture_init(&f);
	s = open_ok(&f);
	secrets_free(s);
	TAP_CHECK(stat(f.key, &st) == 0 && (st.st_mode & 0777) == 0600 &&
		st.st_size == 32,
	    "a 32-byte key file with mode 0600 (mode %04o, size %lld)",
	    (unsigned)(st.st_mode & 0777), (long long)st.st_size);
	snprintf(dir, sizeof dir, "%s/config/mcpd", f.dir);
	TAP_CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700,
	    "its directory is made 0700 (it is %04o)",
	    (unsigned)(st.st_mode & 0777));
	make_store(&f);
	if ((s = open_ok(&f)) != NULL)
		TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	secrets_free(s);
	fixture_free(&f);
}

static void
test_loose_key_refused(void)
{
	static const mode_t modes[] = { 0644, 0640, 0604, 0620, 0602 };
	struct fixture f;
	struct secrets *s = NULL;
	char *cause = NULL;

	fixture_init(&f);
	make_store(&f);
	for (size_t i = 0; i < TAP_COUNT(modes); i++) {
		TAP_CHECK(chmod(f.key, modes[i]) == 0, "chmod");
		TAP_CHECK_INT(secrets_open(f.store, f.key, &s, &cause), -EPERM);
		TAP_CHECK(cause_ok(cause, f.key) &&
			strstr(cause, "chmod 600") != NULL,
		    "mode %04o: the cause says what to do: %s",
		    (unsigned)modes[i], cause != NULL ? cause : "(none)");
		free(cause);
		cause = NULL;
	}
	chmod(f.key, 0400);
	s = open_ok(&f);
	secrets_free(s);
	fixture_free(&f);
}

static void
test_credential_wins(void)
{
	static const char hex[] = "000102030405060708090a0b0c0d0e0f"
				  "101112131415161718191a1b1c1d1e1f\n";
	struct fixture f;
	struct secrets *s = NULL;
	unsigned char raw[32];
	char creds[256], path[300], *cause = NULL;

	fixture_init(&f);
	snprintf(creds, sizeof creds, "%s/credentials", f.dir);
	snprintf(path, sizeof path, "%s/mcpd-secrets-key", creds);
	mkdir(creds, 0700);
	setenv("CREDENTIALS_DIRECTORY", creds, 1);

	/* No credential there yet: the key file serves. */
	s = open_ok(&f);
	TAP_CHECK(s != NULL && strcmp(secrets_key_source(s), f.key) == 0,
	    "without the credential the key file serves");
	secrets_free(s);
	unlink(f.key);

	spew(path, hex, strlen(hex), 0400);
	if ((s = open_ok(&f)) == NULL)
		goto out;
	TAP_CHECK_STR(secrets_key_source(s), "credential");
	set(s, NAME_A, VALUE_A);
	secrets_free(s);
	TAP_CHECK(access(f.key, F_OK) < 0, "no key file is made");

	/* The same key given as 32 raw bytes opens the store. */
	for (size_t i = 0; i < sizeof raw; i++)
		raw[i] = (unsigned char)i;
	unlink(path);
	spew(path, raw, sizeof raw, 0400);
	if ((s = open_ok(&f)) != NULL)
		TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	secrets_free(s);
	s = NULL;

	/* Without the credential, a key file's key does not open it. */
	unsetenv("CREDENTIALS_DIRECTORY");
	memset(raw, 0x77, sizeof raw);
	spew(f.key, raw, sizeof raw, 0600);
	TAP_CHECK_INT(secrets_open(f.store, f.key, &s, &cause), -EBADMSG);
	TAP_CHECK(cause_ok(cause, f.store) && strstr(cause, f.key) != NULL,
	    "the cause names the store and the key: %s",
	    cause != NULL ? cause : "(none)");
	free(cause);
	cause = NULL;

	/* A credential that is no key is refused, not skipped. */
	setenv("CREDENTIALS_DIRECTORY", f.dir, 1);
	snprintf(path, sizeof path, "%s/mcpd-secrets-key", f.dir);
	spew(path, "not a key\n", 10, 0400);
	TAP_CHECK_INT(secrets_open(f.store, f.key, &s, &cause), -EINVAL);
	TAP_CHECK(cause_ok(cause, path), "the cause names the credential: %s",
	    cause != NULL ? cause : "(none)");
out:
	free(cause);
	fixture_free(&f);
}

static void
test_names(void)
{
	/* Which names are valid is names_secret_valid's (test-names.c). */
	static const char *const bad[] = { "", "a b", "a-b", "a/b", "a\n",
		"caf\xc3\xa9", "a=b", " a", "a:b", "$A" };
	struct fixture f;
	struct secrets *s;
	char n129[130], *cause = NULL;
	bool removed;

	memset(n129, 'n', 129);
	n129[129] = '\0';
	fixture_init(&f);
	if ((s = open_ok(&f)) == NULL)
		goto out;
	for (size_t i = 0; i < TAP_COUNT(bad); i++) {
		TAP_CHECK_INT(secrets_set(s, bad[i], "v", 1, &cause), -EINVAL);
		TAP_CHECK(cause != NULL, "a cause is given");
		free(cause);
		cause = NULL;
	}
	TAP_CHECK_INT(secrets_set(s, "hunter2 oops", "v", 1, &cause), -EINVAL);
	TAP_CHECK(cause != NULL && strstr(cause, "hunter2") == NULL,
	    "a refused name is not echoed: %s", cause ? cause : "(none)");
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(secrets_set(s, n129, "v", 1, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(secrets_remove(s, "a b", &removed, &cause), -EINVAL);
	free(cause);
	check_names(s, "[]");
	TAP_CHECK(access(f.store, F_OK) < 0, "nothing was written");
	secrets_free(s);
out:
	fixture_free(&f);
}

static void
test_values_refused(void)
{
	struct fixture f;
	struct secrets *s;
	char *big, *cause = NULL;

	fixture_init(&f);
	if ((big = malloc(65537)) == NULL || (s = open_ok(&f)) == NULL)
		goto out;
	memset(big, 'v', 65537);
	TAP_CHECK_INT(secrets_set(s, "big", big, 65537, &cause), -EINVAL);
	TAP_CHECK(cause != NULL && strstr(cause, "vvvv") == NULL,
	    "a cause without the value: %s", cause ? cause : "(none)");
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(secrets_set(s, "nul", "ab\0cd", 5, &cause), -EINVAL);
	TAP_CHECK(cause != NULL && strstr(cause, "NUL") != NULL,
	    "the cause says why: %s", cause ? cause : "(none)");
	free(cause);
	cause = NULL;
	TAP_CHECK(access(f.store, F_OK) < 0, "nothing was written");
	TAP_CHECK(secrets_get(s, "big") == NULL &&
		secrets_get(s, "nul") == NULL,
	    "nothing was kept");

	TAP_CHECK_INT(secrets_set(s, "big", big, 65536, &cause), 0);
	secrets_free(s);
	if ((s = open_ok(&f)) != NULL) {
		const char *v = secrets_get(s, "big");

		TAP_CHECK(v != NULL && strlen(v) == 65536 &&
			memcmp(v, big, 65536) == 0,
		    "64 KiB come back whole");
	}
	secrets_free(s);
out:
	free(big);
	free(cause);
	fixture_free(&f);
}

static void
test_atomic_write(void)
{
	struct fixture f;
	struct secrets *s;
	unsigned char *before, *after;
	size_t before_len, after_len;
	char tmp[300], *cause = NULL;
	bool removed = false;

	fixture_init(&f);
	make_store(&f);
	before = slurp(f.store, &before_len);
	snprintf(tmp, sizeof tmp, "%s.tmp", f.store);
	if (!TAP_CHECK(mkdir(tmp, 0700) == 0, "the tmp path is blocked") ||
	    (s = open_ok(&f)) == NULL)
		goto out;
	TAP_CHECK(secrets_set(s, NAME_A, "new value", 9, &cause) < 0,
	    "the set fails");
	TAP_CHECK(cause_ok(cause, tmp), "the cause names the tmp path: %s",
	    cause != NULL ? cause : "(none)");
	free(cause);
	cause = NULL;
	TAP_CHECK(secrets_set(s, NAME_B, "other", 5, &cause) < 0,
	    "an insert fails");
	free(cause);
	cause = NULL;
	TAP_CHECK(secrets_remove(s, NAME_A, &removed, &cause) < 0,
	    "a remove fails");
	free(cause);
	cause = NULL;
	TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	TAP_CHECK(secrets_get(s, NAME_B) == NULL, "memory did not change");
	check_names(s, "[\"github.token\"]");
	after = slurp(f.store, &after_len);
	TAP_CHECK(before != NULL && after != NULL && before_len == after_len &&
		memcmp(before, after, before_len) == 0,
	    "the old file is intact");
	free(after);
	secrets_free(s);

	rmdir(tmp);
	if ((s = open_ok(&f)) == NULL)
		goto out;
	TAP_CHECK_STR(secrets_get(s, NAME_A), VALUE_A);
	set(s, NAME_A, "new value");
	secrets_free(s);
	if ((s = open_ok(&f)) != NULL)
		TAP_CHECK_STR(secrets_get(s, NAME_A), "new value");
	secrets_free(s);
out:
	free(before);
	fixture_free(&f);
}

static const struct tap_test tests[] = {
	{ "set, get, list and remove last across reopening", test_round_trip },
	{ "the file shows no name or value and has a fresh nonce per write",
	    test_file_is_opaque },
	{ "a wrong key is refused without showing a value", test_wrong_key },
	{ "a missing key file is not replaced while the store exists",
	    test_missing_key },
	{ "a truncated or damaged file is refused", test_damaged_file },
	{ "the key file is made 0600 in a 0700 directory",
	    test_key_file_created },
	{ "a key file open to group or other is refused",
	    test_loose_key_refused },
	{ "a credential's key wins over the key file", test_credential_wins },
	{ "invalid names are refused", test_names },
	{ "values over 64 KiB or with NUL bytes are refused",
	    test_values_refused },
	{ "a failed write leaves the old file and memory intact",
	    test_atomic_write },
};

int
main(void)
{
	unsetenv("CREDENTIALS_DIRECTORY");
	return tap_run(tests, TAP_COUNT(tests));
}
