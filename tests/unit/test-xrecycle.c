/* SPDX-License-Identifier: ISC */
/* Unit tests of common/xalloc.c's recycling of same-sized objects. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "xalloc.h"

struct thing {
	char bytes[40];
};

static void
test_reuse_comes_zeroed(void)
{
	struct xrecycle r = XRECYCLE_INIT(struct thing, 2);
	struct thing *a = xrecycle_get(&r), *b;
	struct thing zero = { { 0 } };

	TAP_CHECK(memcmp(a, &zero, sizeof zero) == 0, "a new one is zeroed");
	memset(a, 0x5a, sizeof *a);
	xrecycle_put(&r, a);
	b = xrecycle_get(&r);
	TAP_CHECK(memcmp(b, &zero, sizeof zero) == 0, "a kept one is zeroed");
#if !defined(__SANITIZE_ADDRESS__)
	TAP_CHECK(a == b, "the kept one is handed out again");
#endif
	xrecycle_put(&r, b);
	xrecycle_put(&r, NULL);
#if !defined(__SANITIZE_ADDRESS__)
	TAP_CHECK_INT((long)r.n, 1);
#else
	TAP_CHECK_INT((long)r.n, 0);
#endif
	free(xrecycle_get(&r));
}

static void
test_at_most_max_are_kept(void)
{
	struct xrecycle r = XRECYCLE_INIT(struct thing, 2);
	struct thing *t[4];

	for (int i = 0; i < 4; i++)
		t[i] = xrecycle_get(&r);
	for (int i = 0; i < 4; i++)
		xrecycle_put(&r, t[i]);
#if !defined(__SANITIZE_ADDRESS__)
	TAP_CHECK_INT((long)r.n, 2);
#else
	TAP_CHECK_INT((long)r.n, 0);
#endif
	while (r.n > 0)
		free(xrecycle_get(&r));
}

static const struct tap_test tests[] = {
	{ "what is handed out is zeroed, kept or new",
	    test_reuse_comes_zeroed },
	{ "no more than max are kept", test_at_most_max_are_kept },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
