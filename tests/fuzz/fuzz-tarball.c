/* SPDX-License-Identifier: ISC */
/* Fuzzes the tar reader (common/tarball.c) docker image exports go through. */
#include <string.h>

#include "fuzz.h"
#include "tarball.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tarball t;
	struct tarball_member m, found;
	size_t n = 0;
	int r;

	tarball_init(&t, data, size);
	while ((r = tarball_next(&t, &m)) > 0) {
		/* Every member's data lies within the archive. */
		FUZZ_CHECK(m.data >= data && m.data <= data + size);
		FUZZ_CHECK(m.size <= (size_t)(data + size - m.data));
		FUZZ_CHECK(strlen(m.name) <= 4096);
		FUZZ_CHECK(strncmp(m.name, "./", 2) != 0 && m.name[0] != '/');
		/* A regular file is found by its name (its first copy). */
		if (m.type == '0' || m.type == '7') {
			FUZZ_CHECK(tarball_find(data, size, m.name, &found) ==
			    1);
			FUZZ_CHECK(strcmp(found.name, m.name) == 0);
			FUZZ_CHECK(found.data <= m.data);
		}
		/* Each header takes a block: it cannot go on for ever. */
		FUZZ_CHECK(++n <= size / 512);
	}
	FUZZ_CHECK(r == 0 || r == -22 /* EINVAL */);
	return 0;
}
