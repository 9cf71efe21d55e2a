/* SPDX-License-Identifier: ISC */
/* A tiny header-only TAP producer: a {name, fn} table, checks, a runner. */
#ifndef MCPD_TAP_H
#define MCPD_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tap_test {
	const char *name;
	void (*fn)(void);
};

#define TAP_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Failed checks of the running test and their diagnostics. */
struct tap_state {
	int failed;
	char *diag;
	size_t diag_len;
	FILE *diag_out;
};

static inline struct tap_state *
tap_state(void)
{
	static struct tap_state state;

	return &state;
}

/* Writes s on one "#" line: control characters are shown escaped. */
static inline void
tap_diag_escaped(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\r')
			fputs("\\r", f);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('\n', f);
}

static inline bool tap_check(bool, const char *, const char *, int,
    const char *, ...) __attribute__((format(printf, 5, 6)));

/* Records one check; a failure keeps "file:line: expr: message". */
static inline bool
tap_check(bool ok, const char *expr, const char *file, int line,
    const char *fmt, ...)
{
	struct tap_state *st = tap_state();
	char msg[4096];
	va_list ap;

	if (ok)
		return true;
	st->failed++;
	fprintf(st->diag_out, "# %s:%d: %s: ", file, line, expr);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	tap_diag_escaped(st->diag_out, msg);
	return false;
}

/* Checks cond; on failure prints what was expected and what came. */
#define TAP_CHECK(cond, ...) \
	tap_check((cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

/* As TAP_CHECK, and leaves the (void) test function on failure. */
#define TAP_REQUIRE(cond, ...)                     \
	do {                                       \
		if (!TAP_CHECK(cond, __VA_ARGS__)) \
			return;                    \
	} while (0)

/* Compares integers; each argument is evaluated once. */
#define TAP_CHECK_INT(got, want)                                           \
	tap_check_int((long long)(got), (long long)(want), #got, __FILE__, \
	    __LINE__)

/* Compares strings (NULL equals only NULL); each is evaluated once. */
#define TAP_CHECK_STR(got, want) \
	tap_check_str((got), (want), #got, __FILE__, __LINE__)

static inline bool
tap_check_int(long long got, long long want, const char *expr, const char *file,
    int line)
{
	return tap_check(got == want, expr, file, line,
	    "expected %lld, got %lld", want, got);
}

static inline bool
tap_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

static inline const char *
tap_str_show(const char *s)
{
	return s != NULL ? s : "(null)";
}

static inline bool
tap_check_str(const char *got, const char *want, const char *expr,
    const char *file, int line)
{
	return tap_check(tap_str_eq(got, want), expr, file, line,
	    "expected \"%s\", got \"%s\"", tap_str_show(want),
	    tap_str_show(got));
}

/* Runs one test and prints its "ok"/"not ok" line and diagnostics. */
static inline bool
tap_run_one(const struct tap_test *t, size_t number)
{
	struct tap_state *st = tap_state();

	st->failed = 0;
	st->diag_out = open_memstream(&st->diag, &st->diag_len);
	if (st->diag_out == NULL) {
		perror("open_memstream");
		exit(99);
	}
	t->fn();
	fclose(st->diag_out);
	printf("%sok %zu - %s\n", st->failed ? "not " : "", number, t->name);
	fputs(st->diag, stdout);
	free(st->diag);
	st->diag = NULL;
	fflush(stdout);
	return st->failed == 0;
}

/* Runs a table of tests; the exit status is 0 only if all passed. */
static inline int
tap_run(const struct tap_test *tests, size_t n)
{
	size_t failed = 0;

	printf("1..%zu\n", n);
	for (size_t i = 0; i < n; i++)
		if (!tap_run_one(&tests[i], i + 1))
			failed++;
	if (failed > 0)
		printf("# %zu of %zu tests failed\n", failed, n);
	return failed > 0 ? 1 : 0;
}

#endif
