/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/state-store.c: enabled.json, its writes and its refusals. */
#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd.h"
#include "tap.h"

/* Root that may mount: the tmpfs cases run (decided once, in main). */
static bool can_mount;
/* A file the next posix_fadvise() changes, and whether it did. */
static const char *tamper_path;
static bool has_tampered;

/*
 * Stands in for libc's: the store calls it on the file it is about to read
 * back, which lets a test change that file between the write and the read.
 */
int
posix_fadvise(int fd, off_t offset, off_t len, int advice)
{
	static int (*real)(int, off_t, off_t, int);
	int tfd;

	if (tamper_path != NULL) {
		tfd = open(tamper_path, O_WRONLY | O_CLOEXEC);
		if (tfd >= 0 && pwrite(tfd, "[", 1, 0) == 1)
			has_tampered = true;
		if (tfd >= 0)
			close(tfd);
		tamper_path = NULL;
	}
	if (real == NULL &&
	    (real = (int (*)(int, off_t, off_t, int))dlsym(RTLD_NEXT,
		 "posix_fadvise")) == NULL)
		return ENOSYS;
	return real(fd, offset, len, advice);
}

static char *
test_dir(void)
{
	char *dir = strdup("/tmp/mcpd-test-store.XXXXXX");

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

	if (asprintf(&path, "%s/%s", dir, name) < 0) {
		perror("asprintf");
		exit(1);
	}
	return path;
}

static void
test_dir_remove(char *dir)
{
	char *path;

	chmod(dir, 0700);
	path = test_path(dir, "enabled.json");
	unlink(path);
	free(path);
	path = test_path(dir, "enabled.json.tmp");
	if (unlink(path) < 0)
		rmdir(path);
	free(path);
	if (rmdir(dir) < 0)
		fprintf(stderr, "# cannot remove %s: %s\n", dir,
		    strerror(errno));
	free(dir);
}

/* Runs a shell command quietly; true when it exited 0. */
static bool
test_system(const char *fmt, const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, fmt, dir);
	return system(cmd) == 0;
}

/* The bytes of dir/name (NUL-terminated), or NULL if it cannot be read. */
static char *
read_file(const char *dir, const char *name, size_t *ret_len)
{
	char *path = test_path(dir, name), *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r"), *out;

	free(path);
	if (f == NULL)
		return NULL;
	if ((out = open_memstream(&buf, &len)) == NULL)
		exit(1);
	for (int c; (c = fgetc(f)) != EOF;)
		fputc(c, out);
	fclose(f);
	fclose(out);
	if (ret_len != NULL)
		*ret_len = len;
	return buf;
}

static void
write_file(const char *dir, const char *name, const char *text)
{
	char *path = test_path(dir, name);
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	free(path);
}

/* enabled.json as parsed from disk (new reference), or NULL. */
static json_t *
file_doc(const char *dir)
{
	char *path = test_path(dir, "enabled.json");
	json_t *doc = json_load_file(path, 0, NULL);

	free(path);
	return doc;
}

/* The rows of agent in enabled.json on disk (borrowed from doc). */
static json_t *
file_rows(json_t *doc, const char *agent)
{
	return json_object_get(json_object_get(doc, "agents"), agent);
}

static json_t *
row_new(const char *id, const char *name)
{
	return json_pack("{s:s, s:s, s:s, s:[s, s]}", "id", id, "name", name,
	    "mode", "process", "argv", "server", "--stdio");
}

static bool
is_tmp_gone(const char *dir)
{
	char *path = test_path(dir, "enabled.json.tmp");
	bool gone = access(path, F_OK) < 0 && errno == ENOENT;

	free(path);
	return gone;
}

static const char *
show(const char *s)
{
	return s != NULL ? s : "(null)";
}

/* Puts a row and checks that it worked. */
static void
put_ok(struct store *s, const char *agent, const char *id, const char *name)
{
	json_t *row = row_new(id, name);
	char *cause = NULL;

	TAP_CHECK(store_put(s, agent, row, &cause) == 0, "put %s/%s: %s", agent,
	    id, show(cause));
	json_decref(row);
	free(cause);
}

/* store_recheck, with its cause shown on failure. */
static int
recheck(const struct store *s, const char *agent, const char *id)
{
	char *cause = NULL;
	int r = store_recheck(s, agent, id, &cause);

	TAP_CHECK(r >= 0, "recheck %s/%s: %s", agent, id, show(cause));
	free(cause);
	return r;
}

static void
test_open_missing(void)
{
	char *dir = test_dir(), *gone = test_path(dir, "not-there");
	struct store *s = NULL;

	TAP_REQUIRE(store_open(dir, &s) == 0 && s != NULL, "open");
	TAP_CHECK_STR(store_error(s), NULL);
	TAP_CHECK(json_is_object(store_agents_peek(s)) &&
		json_object_size(store_agents_peek(s)) == 0,
	    "a missing file is an empty store");
	TAP_CHECK(store_row_peek(s, "default", "x") == NULL, "no row");
	TAP_CHECK(read_file(dir, "enabled.json", NULL) == NULL,
	    "open does not create the file");
	store_free(s);
	TAP_REQUIRE(store_open(gone, &s) == 0, "open in a missing dir");
	TAP_CHECK_STR(store_error(s), NULL);
	store_free(s);
	store_free(NULL);
	free(gone);
	test_dir_remove(dir);
}

static void
test_round_trip(void)
{
	char *dir = test_dir(), *cause = NULL, *text, *path, *want;
	json_t *row = row_new("a1", "files"), *doc;
	struct store *s = NULL;
	struct stat st;
	bool removed = false;
	size_t len;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	TAP_CHECK_INT(store_put(s, "default", row, &cause), 0);
	TAP_CHECK_STR(cause, NULL);
	/* The store keeps its own copy. */
	json_object_set_new(row, "name", json_string("changed"));
	TAP_CHECK_STR(json_string_value(json_object_get(store_row_peek(s,
							    "default", "a1"),
			  "name")),
	    "files");

	doc = file_doc(dir);
	TAP_CHECK(json_integer_value(json_object_get(doc, "version")) == 1,
	    "version 1 on disk");
	TAP_CHECK(json_array_size(file_rows(doc, "default")) == 1 &&
		json_equal(json_array_get(file_rows(doc, "default"), 0),
		    store_row_peek(s, "default", "a1")),
	    "the row is on disk as put");
	text = read_file(dir, "enabled.json", &len);
	want = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	TAP_CHECK(text != NULL && want != NULL && len == strlen(want) + 1 &&
		strncmp(text, want, len - 1) == 0 && text[len - 1] == '\n',
	    "indented by 2, one trailing newline: %s", show(text));
	free(text);
	free(want);
	json_decref(doc);
	path = test_path(dir, "enabled.json");
	TAP_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "mode 0600");
	free(path);
	TAP_CHECK(is_tmp_gone(dir), "no temporary file is left");

	/* A new store reads what the first one wrote. */
	store_free(s);
	TAP_REQUIRE(store_open(dir, &s) == 0, "reopen");
	TAP_CHECK_STR(store_error(s), NULL);
	TAP_CHECK_STR(json_string_value(json_object_get(store_row_peek(s,
							    "default", "a1"),
			  "name")),
	    "files");

	TAP_CHECK_INT(store_remove(s, "default", "a1", &removed, &cause), 0);
	TAP_CHECK(removed, "the row was there");
	TAP_CHECK(store_row_peek(s, "default", "a1") == NULL, "gone");
	doc = file_doc(dir);
	TAP_CHECK(json_is_object(json_object_get(doc, "agents")) &&
		json_array_size(file_rows(doc, "default")) == 0,
	    "gone from the file too");
	json_decref(doc);
	TAP_CHECK_INT(store_remove(s, "default", "a1", &removed, &cause), 0);
	TAP_CHECK(!removed, "nothing to remove the second time");
	TAP_CHECK_STR(cause, NULL);
	store_free(s);
	json_decref(row);
	test_dir_remove(dir);
}

static void
test_replace_keeps_position(void)
{
	char *dir = test_dir();
	const char *ids[] = { "a", "b", "c" };
	struct store *s = NULL;
	json_t *doc, *rows;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	put_ok(s, "default", "b", "second");
	put_ok(s, "default", "c", "third");
	put_ok(s, "default", "b", "second, again");
	doc = file_doc(dir);
	rows = file_rows(doc, "default");
	TAP_CHECK_INT(json_array_size(rows), 3);
	for (size_t i = 0; i < 3; i++)
		TAP_CHECK_STR(json_string_value(json_object_get(
				  json_array_get(rows, i), "id")),
		    ids[i]);
	TAP_CHECK_STR(json_string_value(json_object_get(json_array_get(rows, 1),
			  "name")),
	    "second, again");
	TAP_CHECK(json_equal(rows,
		      json_object_get(store_agents_peek(s), "default")),
	    "memory and disk agree");
	json_decref(doc);
	store_free(s);
	test_dir_remove(dir);
}

static void
test_agents_apart(void)
{
	char *dir = test_dir(), *cause = NULL;
	struct store *s = NULL;
	bool removed = false;
	json_t *doc;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "same", "for default");
	put_ok(s, "other-agent", "same", "for other");
	TAP_CHECK_STR(json_string_value(json_object_get(store_row_peek(s,
							    "other-agent",
							    "same"),
			  "name")),
	    "for other");
	TAP_CHECK_INT(store_remove(s, "other-agent", "same", &removed, &cause),
	    0);
	TAP_CHECK(removed, "removed from other-agent");
	TAP_CHECK(store_row_peek(s, "default", "same") != NULL,
	    "default keeps its row");
	TAP_CHECK(store_row_peek(s, "other-agent", "same") == NULL,
	    "other-agent lost its row");
	doc = file_doc(dir);
	TAP_CHECK_STR(json_string_value(json_object_get(
			  json_array_get(file_rows(doc, "default"), 0),
			  "name")),
	    "for default");
	TAP_CHECK(file_rows(doc, "other-agent") == NULL,
	    "an agent without rows leaves the file");
	json_decref(doc);
	free(cause);
	store_free(s);
	test_dir_remove(dir);
}

/* Opens dir whose enabled.json holds text; checks the store refuses. */
static void
check_refused(const char *dir, const char *text, const char *says)
{
	char *cause = NULL, *after;
	struct store *s = NULL;
	json_t *row = row_new("x", "x");
	bool removed = false;
	int r;

	write_file(dir, "enabled.json", text);
	TAP_REQUIRE(store_open(dir, &s) == 0, "open returns a store: %s", text);
	TAP_CHECK(store_error(s) != NULL && strstr(store_error(s), says) &&
		strstr(store_error(s), dir) != NULL,
	    "%s: want \"%s\" and the path in: %s", text, says,
	    show(store_error(s)));
	TAP_CHECK(json_object_size(store_agents_peek(s)) == 0, "no rows");
	r = store_put(s, "default", row, &cause);
	TAP_CHECK(r < 0 && r != -EINVAL, "put is refused: %d", r);
	TAP_CHECK_STR(cause, store_error(s));
	free(cause);
	cause = NULL;
	r = store_remove(s, "default", "x", &removed, &cause);
	TAP_CHECK(r < 0 && cause != NULL, "remove is refused: %d", r);
	free(cause);
	after = read_file(dir, "enabled.json", NULL);
	TAP_CHECK_STR(after, text);
	TAP_CHECK(is_tmp_gone(dir), "nothing was written");
	free(after);
	json_decref(row);
	store_free(s);
}

static void
test_corrupt_refused(void)
{
	static const char *const bad[] = {
		"{\"version\": 1, \"agents\": {\"default\": [",
		"",
		"[]\n",
		"{\"agents\": {}}\n",
		"{\"version\": 0, \"agents\": {}}\n",
		"{\"version\": \"1\", \"agents\": {}}\n",
		"{\"version\": 1.0, \"agents\": {}}\n",
		"{\"version\": 1}\n",
		"{\"version\": 1, \"agents\": []}\n",
		"{\"version\": 1, \"agents\": {\"default\": {}}}\n",
		"{\"version\": 1, \"agents\": {\"default\": [{\"name\": 1}]}}\n",
		"{\"version\": 1, \"agents\": {\"default\": [{\"id\": 7}]}}\n",
		"{\"version\": 1, \"agents\": {\"default\": [\"id\"]}}\n",
		"{\"version\": 1, \"agents\": {\"default\": "
		"[{\"id\": \"a\"}, {\"id\": \"a\"}]}}\n",
		"{\"version\": 1, \"version\": 1, \"agents\": {}}\n",
	};
	char *dir = test_dir();

	for (size_t i = 0; i < TAP_COUNT(bad); i++)
		check_refused(dir, bad[i], "is corrupt");
	test_dir_remove(dir);
}

static void
test_newer_refused(void)
{
	char *dir = test_dir();

	check_refused(dir,
	    "{\"version\": 2, \"agents\": {\"default\": [{\"id\": \"a\"}]},"
	    " \"more\": true}\n",
	    "written by a newer mcpd (version 2); this mcpd reads version 1: "
	    "upgrade mcpd or move the file aside");
	test_dir_remove(dir);
}

static void
test_too_large_refused(void)
{
	char *dir = test_dir(), *path = test_path(dir, "enabled.json");
	struct store *s = NULL;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	TAP_REQUIRE(fd >= 0 && ftruncate(fd, 16 * 1024 * 1024 + 1) == 0,
	    "a sparse file of 16 MiB + 1");
	close(fd);
	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	TAP_CHECK(store_error(s) != NULL &&
		strstr(store_error(s), "larger than 16 MiB") != NULL,
	    "the cap is named: %s", show(store_error(s)));
	store_free(s);
	free(path);
	test_dir_remove(dir);
}

static void
test_recheck(void)
{
	char *dir = test_dir(), *cause = NULL, *path;
	struct store *s = NULL;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	put_ok(s, "default", "b", "second");
	TAP_CHECK_INT(store_recheck(s, "default", "a", &cause), 1);
	TAP_CHECK_INT(store_recheck(s, "default", "nope", &cause), 0);
	TAP_CHECK_INT(store_recheck(s, "other", "a", &cause), 0);

	/* Same content in another layout is the same row. */
	write_file(dir, "enabled.json",
	    "{\"agents\": {\"default\": [{\"argv\": [\"server\", \"--stdio\"],"
	    " \"mode\": \"process\", \"name\": \"first\", \"id\": \"a\"}]},"
	    " \"version\": 1}");
	TAP_CHECK_INT(store_recheck(s, "default", "a", &cause), 1);
	TAP_CHECK_INT(store_recheck(s, "default", "b", &cause), 0);

	/* The file changed behind the store's back: the cache is not used. */
	write_file(dir, "enabled.json",
	    "{\"version\": 1, \"agents\": {\"default\": "
	    "[{\"id\": \"a\", \"name\": \"tampered\"}]}}");
	TAP_CHECK_INT(store_recheck(s, "default", "a", &cause), 0);
	TAP_CHECK_STR(json_string_value(json_object_get(store_row_peek(s,
							    "default", "a"),
			  "name")),
	    "first");

	write_file(dir, "enabled.json", "{\"version\": 1, \"agents\": ");
	TAP_CHECK(store_recheck(s, "default", "a", &cause) < 0 &&
		cause != NULL && strstr(cause, "is corrupt") != NULL,
	    "a corrupt file is an error: %s", show(cause));
	free(cause);
	cause = NULL;

	path = test_path(dir, "enabled.json");
	unlink(path);
	free(path);
	TAP_CHECK_INT(store_recheck(s, "default", "a", &cause), 0);
	TAP_CHECK_STR(cause, NULL);

	/* A put writes the whole cached store again, read back whole. */
	put_ok(s, "default", "c", "third");
	TAP_CHECK_INT(store_recheck(s, "default", "a", &cause), 1);
	TAP_CHECK_INT(store_recheck(s, "default", "c", &cause), 1);
	store_free(s);
	test_dir_remove(dir);
}

static void
test_readback_differs(void)
{
	char *dir = test_dir(), *path = test_path(dir, "enabled.json");
	char *cause = NULL, *text;
	json_t *agents, *row = row_new("b", "second");
	struct store *s = NULL;
	int r;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	agents = json_deep_copy(store_agents_peek(s));
	tamper_path = path;
	has_tampered = false;
	r = store_put(s, "default", row, &cause);
	TAP_REQUIRE(has_tampered, "the file was changed before its read back");
	TAP_CHECK_INT(r, -EIO);
	TAP_CHECK(cause != NULL && strstr(cause, "read back of ") != NULL &&
		strstr(cause, path) != NULL &&
		strstr(cause, " differs from what was written") != NULL,
	    "the cause says so: %s", show(cause));
	TAP_CHECK(json_equal(agents, store_agents_peek(s)),
	    "the rows in memory are unchanged");
	text = read_file(dir, "enabled.json", NULL);
	TAP_CHECK(text != NULL && text[0] == '[', "the file is as changed");
	free(text);
	free(cause);
	json_decref(agents);
	json_decref(row);
	free(path);
	store_free(s);
	test_dir_remove(dir);
}

static void
test_stale_tmp_replaced(void)
{
	char *dir = test_dir(), *tmp = test_path(dir, "enabled.json.tmp");
	char *path = test_path(dir, "enabled.json"), big[8192], *text;
	struct store *s = NULL;
	struct stat st;
	json_t *doc;

	/* Left by a crash: longer than what comes next, and loose. */
	memset(big, '}', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	write_file(dir, "enabled.json.tmp", big);
	chmod(tmp, 0644);
	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	TAP_CHECK_STR(store_error(s), NULL);
	put_ok(s, "default", "a", "first");
	doc = file_doc(dir);
	TAP_CHECK(doc != NULL &&
		json_equal(json_object_get(doc, "agents"),
		    store_agents_peek(s)),
	    "the file holds the store and nothing of the stale file");
	text = read_file(dir, "enabled.json", NULL);
	TAP_CHECK(text != NULL && strstr(text, "}}") == NULL,
	    "nothing of the stale file is left: %s", show(text));
	TAP_CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
	    "mode 0600, not the stale file's");
	TAP_CHECK(is_tmp_gone(dir), "no temporary file is left");
	free(text);
	json_decref(doc);
	free(path);
	free(tmp);
	store_free(s);
	test_dir_remove(dir);
}

static void
test_bad_rows(void)
{
	char *dir = test_dir(), *cause = NULL;
	struct store *s = NULL;
	json_t *noid = json_pack("{s:s}", "name", "x");
	json_t *empty = json_pack("{s:s}", "id", "");
	json_t *num = json_pack("{s:i}", "id", 3);
	json_t *arr = json_array(), *ok = row_new("a", "a");

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	TAP_CHECK_INT(store_put(s, "default", noid, &cause), -EINVAL);
	TAP_CHECK(cause != NULL && strstr(cause, "\"id\"") != NULL,
	    "says why: %s", show(cause));
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(store_put(s, "default", empty, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(store_put(s, "default", num, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(store_put(s, "default", arr, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	TAP_CHECK_INT(store_put(s, "\xff\xfe", ok, &cause), -EINVAL);
	free(cause);
	TAP_CHECK(read_file(dir, "enabled.json", NULL) == NULL,
	    "nothing was written");
	json_decref(noid);
	json_decref(empty);
	json_decref(num);
	json_decref(arr);
	json_decref(ok);
	store_free(s);
	test_dir_remove(dir);
}

/*
 * Puts row "big" (payload bytes of name) into a store holding one row and
 * checks the failure: want error and cause text, old file byte-identical,
 * memory unchanged, no temporary file left unless it was in the way.
 */
static void
check_put_fails(struct store *s, const char *dir, size_t payload, int want,
    const char *says)
{
	char *before = read_file(dir, "enabled.json", NULL), *after;
	char *cause = NULL, *name = malloc(payload + 1);
	json_t *agents = json_deep_copy(store_agents_peek(s)), *row;
	int r;

	if (name == NULL)
		exit(1);
	memset(name, 'x', payload);
	name[payload] = '\0';
	row = row_new("big", name);
	r = store_put(s, "default", row, &cause);
	TAP_CHECK(r == want, "put fails with %d, got %d (%s)", want, r,
	    show(cause));
	TAP_CHECK(cause != NULL && strstr(cause, says) != NULL &&
		strstr(cause, dir) != NULL,
	    "the cause says \"%s\" and names the path: %s", says, show(cause));
	after = read_file(dir, "enabled.json", NULL);
	TAP_CHECK(before != NULL && after != NULL && strcmp(before, after) == 0,
	    "enabled.json is unchanged: %s", show(after));
	TAP_CHECK(json_equal(agents, store_agents_peek(s)),
	    "the rows in memory are unchanged");
	TAP_CHECK(store_row_peek(s, "default", "big") == NULL, "no new row");
	free(before);
	free(after);
	free(cause);
	free(name);
	json_decref(agents);
	json_decref(row);
}

static void
test_file_in_the_way(void)
{
	char *dir = test_dir(), *tmp = test_path(dir, "enabled.json.tmp");
	struct store *s = NULL;
	struct stat st;

	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	TAP_REQUIRE(mkdir(tmp, 0700) == 0, "a directory in the way");
	check_put_fails(s, dir, 10, -EISDIR,
	    "cannot create /tmp/mcpd-test-store.");
	TAP_CHECK(stat(tmp, &st) == 0 && S_ISDIR(st.st_mode),
	    "what was in the way is left alone");
	TAP_CHECK_INT(recheck(s, "default", "a"), 1);
	rmdir(tmp);
	put_ok(s, "default", "big", "now it fits");
	TAP_CHECK_INT(recheck(s, "default", "big"), 1);
	free(tmp);
	store_free(s);
	test_dir_remove(dir);
}

static void
test_read_only_dir(void)
{
	char *dir = test_dir();
	struct store *s = NULL;
	bool is_mounted = false;

	if (geteuid() == 0 && !can_mount) {
		test_dir_remove(dir);
		return; /* skipped: see main */
	}
	if (geteuid() == 0) {
		is_mounted = test_system("mount -t tmpfs -o size=64k,mode=0700 "
					 "mcpd-test %s 2>/dev/null",
		    dir);
		TAP_REQUIRE(is_mounted, "mount a tmpfs on %s", dir);
	}
	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	if (is_mounted) {
		TAP_CHECK(test_system("mount -o remount,ro %s 2>/dev/null",
			      dir),
		    "remount read-only");
		check_put_fails(s, dir, 10, -EROFS, "Read-only file system");
	} else {
		TAP_CHECK(chmod(dir, 0500) == 0, "chmod 0500");
		check_put_fails(s, dir, 10, -EACCES, "Permission denied");
	}
	TAP_CHECK(is_tmp_gone(dir), "no temporary file");
	TAP_CHECK_INT(recheck(s, "default", "a"), 1);
	store_free(s);
	if (is_mounted && !test_system("umount %s", dir))
		fprintf(stderr, "# cannot unmount %s\n", dir);
	test_dir_remove(dir);
}

static void
test_no_space(void)
{
	char *dir = test_dir();
	struct store *s = NULL;

	if (!can_mount) {
		test_dir_remove(dir);
		return; /* skipped: see main */
	}
	TAP_REQUIRE(test_system("mount -t tmpfs -o size=12k,mode=0700 "
				"mcpd-test %s 2>/dev/null",
			dir),
	    "mount a 12k tmpfs on %s", dir);
	TAP_REQUIRE(store_open(dir, &s) == 0, "open");
	put_ok(s, "default", "a", "first");
	check_put_fails(s, dir, 32 * 1024, -ENOSPC,
	    "/enabled.json.tmp: No space left on device");
	TAP_CHECK(is_tmp_gone(dir), "the partial temporary file is removed");
	/* Its space came back: a small change fits again. */
	put_ok(s, "default", "b", "second");
	TAP_CHECK_INT(recheck(s, "default", "a"), 1);
	TAP_CHECK_INT(recheck(s, "default", "b"), 1);
	store_free(s);
	if (!test_system("umount %s", dir))
		fprintf(stderr, "# cannot unmount %s\n", dir);
	test_dir_remove(dir);
}

/* Root without mount(8) rights cannot make a directory read-only. */
static bool
test_can_mount(void)
{
	char *dir;
	bool ok;

	if (geteuid() != 0)
		return false;
	dir = test_dir();
	ok = test_system("mount -t tmpfs -o size=12k mcpd-test %s 2>/dev/null",
	    dir);
	if (ok && !test_system("umount %s", dir))
		ok = false;
	test_dir_remove(dir);
	return ok;
}

static struct tap_test tests[] = {
	{ "a missing file or dir is an empty store", test_open_missing },
	{ "put and remove round trip through the file", test_round_trip },
	{ "replacing a row keeps its position", test_replace_keeps_position },
	{ "agents' rows are kept apart", test_agents_apart },
	{ "a corrupt file is refused and left alone", test_corrupt_refused },
	{ "a newer version is refused and left alone", test_newer_refused },
	{ "a file past 16 MiB is refused", test_too_large_refused },
	{ "recheck reads the disk, not the cache", test_recheck },
	{ "a read back that differs fails the put", test_readback_differs },
	{ "a stale temporary file is replaced whole", test_stale_tmp_replaced },
	{ "a row without an id or a bad agent is refused", test_bad_rows },
	{ "a file in the way fails the put, nothing changes",
	    test_file_in_the_way },
	{ "a read-only dir fails the put, nothing changes",
	    test_read_only_dir },
	{ "a full file system fails the put, nothing changes", test_no_space },
};

int
main(void)
{
	can_mount = test_can_mount();
	for (size_t i = 0; i < TAP_COUNT(tests); i++) {
		if (tests[i].fn == test_read_only_dir && geteuid() == 0 &&
		    !can_mount)
			tests[i].name =
			    "a read-only dir # SKIP root ignores chmod 0500 and "
			    "cannot mount here; the integration tests use a "
			    "read-only mount";
		if (tests[i].fn == test_no_space && !can_mount)
			tests[i].name =
			    "a full file system # SKIP needs root and mount(8) "
			    "for a 12k tmpfs";
	}
	return tap_run(tests, TAP_COUNT(tests));
}
