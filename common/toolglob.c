/* SPDX-License-Identifier: ISC */
/* Tool globs: the checker that says where a pattern is wrong, and fnmatch. */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "toolglob.h"

/* Fails at column col (1-based) with why. */
static int
toolglob_fail(size_t col, const char *why, size_t *ret_column,
    const char **ret_why)
{
	*ret_column = col;
	*ret_why = why;
	return -EINVAL;
}

/* The end of the bracket expression opened at glob[i], or 0 if none. */
static size_t
toolglob_bracket_end(const char *glob, size_t i)
{
	size_t j = i + 1;

	if (glob[j] == '!' || glob[j] == '^')
		j++;
	if (glob[j] == ']') /* a ']' first is a member */
		j++;
	for (; glob[j] != '\0'; j++) {
		if (glob[j] == '\\' && glob[j + 1] != '\0')
			j++;
		else if (glob[j] == ']')
			return j;
	}
	return 0;
}

int
toolglob_check(const char *glob, size_t *ret_column, const char **ret_why)
{
	size_t len = strlen(glob), i, end;

	if (len == 0)
		return toolglob_fail(1, "a glob cannot be empty", ret_column,
		    ret_why);
	if (len > TOOLGLOB_MAX)
		return toolglob_fail(TOOLGLOB_MAX + 1,
		    "a glob is at most 256 bytes", ret_column, ret_why);
	for (i = 0; i < len; i++) {
		if ((unsigned char)glob[i] < 0x20 || glob[i] == 0x7f)
			return toolglob_fail(i + 1,
			    "a control character is not part of a tool name",
			    ret_column, ret_why);
		if (glob[i] == '\\') {
			if (glob[i + 1] == '\0')
				return toolglob_fail(i + 1,
				    "'\\' at the end escapes nothing",
				    ret_column, ret_why);
			i++;
		} else if (glob[i] == '[') {
			if ((end = toolglob_bracket_end(glob, i)) == 0)
				return toolglob_fail(i + 1,
				    "'[' has no closing ']'", ret_column,
				    ret_why);
			i = end;
		} else if (glob[i] == ']')
			return toolglob_fail(i + 1,
			    "']' closes no '[' (write \\] for the character)",
			    ret_column, ret_why);
	}
	return 0;
}

bool
toolglob_match(const char *glob, const char *name)
{
	return glob != NULL && name != NULL && fnmatch(glob, name, 0) == 0;
}
