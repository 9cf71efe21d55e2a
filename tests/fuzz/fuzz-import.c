/* SPDX-License-Identifier: ISC */
/* Fuzzes config import: ctl/jsonc.c's reader, then common/import.c's entries. */
#define _GNU_SOURCE 1 /* memfd_create */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz.h"
#include "import.h"
#include "mcpctl.h"
#include "names.h"
#include "url.h"

static bool
fuzz_import_is_strings(json_t *v, bool is_object)
{
	const char *k;
	json_t *x;
	size_t i;

	if (is_object ? !json_is_object(v) : !json_is_array(v))
		return false;
	if (is_object) {
		json_object_foreach((json_t *)v, k, x)
			if (!json_is_string(x))
				return false;
	} else {
		json_array_foreach(v, i, x)
			if (!json_is_string(x))
				return false;
	}
	return true;
}

/* One entry has the members its kind promises (import.h). */
static void
fuzz_import_check_entry(const json_t *e)
{
	const char *kind = json_string_value(json_object_get(e, "kind"));
	json_t *secrets = json_object_get(e, "secrets");

	FUZZ_CHECK(json_is_string(json_object_get(e, "name")));
	FUZZ_CHECK(kind != NULL);
	if (strcmp(kind, "process") == 0) {
		json_t *cmd = json_object_get(e, "command");

		FUZZ_CHECK(fuzz_import_is_strings(cmd, false));
		FUZZ_CHECK(json_array_size(cmd) > 0);
		FUZZ_CHECK(fuzz_import_is_strings(json_object_get(e, "env"),
		    true));
	} else if (strcmp(kind, "remote") == 0) {
		const char *t = json_string_value(json_object_get(e,
		    "transport"));
		const char *u = json_string_value(json_object_get(e, "url"));
		struct url url;

		FUZZ_CHECK(t != NULL &&
		    (strcmp(t, "http") == 0 || strcmp(t, "sse") == 0));
		FUZZ_CHECK(u != NULL);
		/* $(...) references are resolved at load; others parse. */
		if (strstr(u, "$(") == NULL) {
			FUZZ_CHECK(url_parse(u, &url, NULL) == 0);
			url_free(&url);
		}
		FUZZ_CHECK(fuzz_import_is_strings(json_object_get(e, "headers"),
		    true));
	} else if (strcmp(kind, "container") == 0) {
		const char *image = json_string_value(json_object_get(e,
		    "image"));
		char *again = NULL;

		FUZZ_CHECK(image != NULL);
		/* What mcpctl import sends to mcpd/load is accepted there. */
		FUZZ_CHECK(names_image_normalize(image, &again, NULL) == 0);
		FUZZ_CHECK(strcmp(again, image) == 0);
		free(again);
		FUZZ_CHECK(fuzz_import_is_strings(json_object_get(e, "args"),
		    false));
		FUZZ_CHECK(fuzz_import_is_strings(json_object_get(e, "env"),
		    true));
		FUZZ_CHECK(fuzz_import_is_strings(json_object_get(e, "volumes"),
		    false));
	} else {
		FUZZ_CHECK(strcmp(kind, "skipped") == 0 ||
		    strcmp(kind, "invalid") == 0);
		FUZZ_CHECK(json_is_string(json_object_get(e, "reason")));
		FUZZ_CHECK(secrets == NULL);
	}
	if (secrets != NULL)
		FUZZ_CHECK(fuzz_import_is_strings(secrets, false) &&
		    json_array_size(secrets) > 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root = NULL, *plain, *entries = NULL, *again = NULL;
	char path[64], *cause = NULL;
	size_t i;
	json_t *e;
	int fd, r;

	setenv("HOME", "/home/fuzz", 1);
	/* jsonc_load reads a path: the input goes through a memfd. */
	if ((fd = memfd_create("fuzz-import", 0)) < 0)
		return 0;
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	r = jsonc_load(path, &root, &cause);
	close(fd);
	FUZZ_CHECK((r == 0) == (root != NULL));
	free(cause);
	cause = NULL;
	/* Plain JSON reads the same with comments allowed. */
	plain = json_loadb((const char *)data, size, 0, NULL);
	if (plain != NULL && memchr(data, '\0', size) == NULL)
		FUZZ_CHECK(root != NULL && json_equal(root, plain));
	json_decref(plain);
	if (root == NULL)
		return 0;
	r = import_parse(root, &entries, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK((r == 0) == (entries != NULL));
	FUZZ_CHECK((r == 0) == (cause == NULL));
	free(cause);
	if (r == 0) {
		FUZZ_CHECK(json_is_array(entries));
		json_array_foreach(entries, i, e)
			fuzz_import_check_entry(e);
		/* The same file gives the same plan. */
		FUZZ_CHECK(import_parse(root, &again, NULL) == 0);
		FUZZ_CHECK(json_equal(again, entries));
	}
	json_decref(again);
	json_decref(entries);
	json_decref(root);
	return 0;
}
