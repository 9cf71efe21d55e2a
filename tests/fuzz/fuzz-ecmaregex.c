/* SPDX-License-Identifier: ISC */
/* Fuzzes common/ecmaregex.c: the rewrite of ECMA-262 patterns and PCRE2. */
#include <errno.h>
#include <string.h>

#include "ecmaregex.h"
#include "fuzz.h"

/*
 * The input is a pattern, a NUL, and a subject: the pattern compiles or
 * is refused with a cause, and a search gives one of its four answers.
 */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ecmaregex *re = NULL;
	char *buf, *cause = NULL;
	size_t plen;
	int r;

	if ((buf = malloc(size + 1)) == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	plen = strlen(buf);
	r = ecmaregex_new(buf, &re, &cause);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
	FUZZ_CHECK((r == 0) == (re != NULL));
	FUZZ_CHECK(r != -EINVAL || cause != NULL);
	if (re != NULL) {
		const char *s = plen < size ? buf + plen + 1 : "";
		size_t n = plen < size ? size - plen - 1 : 0;

		r = ecmaregex_search(re, s, n);
		FUZZ_CHECK(r == 0 || r == 1 || r == -E2BIG || r == -EILSEQ ||
		    r == -ENOMEM);
	}
	ecmaregex_free(re);
	free(cause);
	free(buf);
	return 0;
}
