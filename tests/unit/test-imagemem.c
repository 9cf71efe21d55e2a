/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/docker-imagemem.c: image-transports.json. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd-stubs.h"
#include "tap.h"

#define ID_A "sha256:aaaa"
#define ID_B "sha256:bbbb"

static char path[256];

/* A fresh, empty state dir for each test. */
static void
test_state(void)
{
	static char dir[64];

	snprintf(dir, sizeof dir, "/tmp/mcpd-test-imagemem.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		exit(1);
	}
	mcpd_opts.state_dir = dir;
	snprintf(path, sizeof path, "%s/image-transports.json", dir);
}

static void
test_state_remove(void)
{
	unlink(path);
	rmdir(mcpd_opts.state_dir);
}

static char *
test_read(void)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	if (f != NULL) {
		(void)!fread(buf, 1, 65535, f);
		fclose(f);
	}
	return buf;
}

static void
test_write(const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

/* Whether imagemem_lookup finds image as id on port and path. */
static bool
test_finds(const char *image, const char *id, int port, const char *path_)
{
	char *got_id = NULL, *got_path = NULL;
	int got_port = 0;
	bool ok;

	if (imagemem_lookup(image, &got_id, &got_port, &got_path) != 1)
		return false;
	ok = strcmp(got_id, id) == 0 && got_port == port &&
	    strcmp(got_path, path_) == 0;
	free(got_id);
	free(got_path);
	return ok;
}

static void
test_missing_is_empty(void)
{
	char *id = NULL, *p = NULL;
	int port = 0;

	test_state();
	TAP_CHECK_INT(imagemem_lookup("x:latest", &id, &port, &p), 0);
	TAP_CHECK(access(path, F_OK) != 0, "a lookup created the file");
	test_state_remove();
}

static void
test_remember_lookup_forget(void)
{
	struct stat st;
	char *before, *after;

	test_state();
	imagemem_remember("web:latest", ID_A, 8080, "/mcp");
	imagemem_remember("web:1", ID_A, 8080, "/mcp");
	TAP_CHECK(test_finds("web:latest", ID_A, 8080, "/mcp"), "latest");
	TAP_CHECK(test_finds("web:1", ID_A, 8080, "/mcp"), "web:1");
	TAP_CHECK(!test_finds("other:latest", ID_A, 8080, "/mcp"), "other");
	TAP_REQUIRE(stat(path, &st) == 0, "no file");
	TAP_CHECK_INT(st.st_mode & 0777, 0600);
	/* Known already: not written again (same bytes, same inode). */
	before = test_read();
	imagemem_remember("web:latest", ID_A, 8080, "/mcp");
	after = test_read();
	TAP_CHECK_STR(after, before);
	free(before);
	free(after);
	/* Forgetting the ID drops every reference to it. */
	imagemem_forget(ID_A);
	TAP_CHECK(!test_finds("web:latest", ID_A, 8080, "/mcp"), "kept");
	TAP_CHECK(!test_finds("web:1", ID_A, 8080, "/mcp"), "kept web:1");
	after = test_read();
	TAP_CHECK(strstr(after, "sha256") == NULL, "still in the file");
	free(after);
	test_state_remove();
}

static void
test_moved_tag(void)
{
	char *got;

	test_state();
	imagemem_remember("web:latest", ID_A, 8080, "/mcp");
	/* The tag now names B: only the reference goes, A's entry stays. */
	imagemem_unref("web:latest", ID_B);
	TAP_CHECK(test_finds("web:latest", ID_A, 8080, "/mcp"), "wrong id");
	imagemem_unref("web:latest", ID_A);
	TAP_CHECK(!test_finds("web:latest", ID_A, 8080, "/mcp"), "ref kept");
	got = test_read();
	TAP_CHECK(strstr(got, ID_A "\": {") != NULL, "entry gone");
	free(got);
	/* B learnt under the same tag replaces the reference. */
	imagemem_remember("web:latest", ID_B, 3001, "/x");
	TAP_CHECK(test_finds("web:latest", ID_B, 3001, "/x"), "not B");
	test_state_remove();
}

static void
test_corrupt_left_alone(void)
{
	static const char *const bad[] = {
		"{not json",
		"{\"version\": 2, \"images\": {}, \"refs\": {}}",
		"{\"version\": 1, \"images\": [], \"refs\": {}}",
		"{\"version\": 1, \"images\": {\"" ID_A
		"\": {\"transport\": \"stdio\", \"port\": 1, \"path\": \"/\", "
		"\"saved\": 1}}, \"refs\": {}}",
		"{\"version\": 1, \"images\": {}, \"refs\": {\"a\": 1}}",
	};
	char *got;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		test_state();
		test_write(bad[i]);
		TAP_CHECK(!test_finds("web:latest", ID_A, 1, "/"), "%zu", i);
		imagemem_remember("web:latest", ID_A, 8080, "/mcp");
		imagemem_forget(ID_A);
		got = test_read();
		TAP_CHECK_STR(got, bad[i]);
		free(got);
		test_state_remove();
	}
}

static void
test_oldest_go_first(void)
{
	char id[32], ref[32];

	test_state();
	for (int i = 0; i < 130; i++) {
		snprintf(id, sizeof id, "sha256:%04d", i);
		snprintf(ref, sizeof ref, "img%d:latest", i);
		imagemem_remember(ref, id, 8080, "/mcp");
	}
	/* Same second: the order among equals is not the point, the cap is. */
	{
		json_t *doc = json_load_file(path, 0, NULL);

		TAP_CHECK_INT(json_object_size(json_object_get(doc, "images")),
		    128);
		TAP_CHECK_INT(json_object_size(json_object_get(doc, "refs")),
		    128);
		json_decref(doc);
	}
	test_state_remove();
}

/* A reference that answered stdio: 2, until it answers HTTP. */
static void
test_stdio(void)
{
	char *id = NULL, *p = NULL, *before, *after;
	int port = 0;

	test_state();
	imagemem_remember_stdio("cli:latest");
	TAP_CHECK_INT(imagemem_lookup("cli:latest", &id, &port, &p), 2);
	TAP_CHECK_INT(imagemem_lookup("cli:1", &id, &port, &p), 0);
	/* Known already: not written again. */
	before = test_read();
	imagemem_remember_stdio("cli:latest");
	after = test_read();
	TAP_CHECK_STR(after, before);
	free(before);
	free(after);
	/* The tag moved to an HTTP image: that is what it is now. */
	imagemem_remember("cli:latest", ID_A, 8080, "/mcp");
	TAP_CHECK(test_finds("cli:latest", ID_A, 8080, "/mcp"), "not HTTP");
	after = test_read();
	TAP_CHECK(strstr(after, "\"stdio\": {}") != NULL, "stdio kept: %s",
	    after);
	free(after);
	/* Anything but an object of times is a corrupt file. */
	test_write("{\"version\": 1, \"images\": {}, \"refs\": {}, "
		   "\"stdio\": {\"cli:latest\": \"x\"}}");
	TAP_CHECK_INT(imagemem_lookup("cli:latest", &id, &port, &p), 0);
	test_state_remove();
}

static struct tap_test tests[] = {
	{ "a reference that answered stdio", test_stdio },
	{ "a missing file remembers nothing", test_missing_is_empty },
	{ "remember, look up, forget", test_remember_lookup_forget },
	{ "a moved tag drops only its reference", test_moved_tag },
	{ "a corrupt file is ignored and left alone", test_corrupt_left_alone },
	{ "at most 128 images are kept", test_oldest_go_first },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
