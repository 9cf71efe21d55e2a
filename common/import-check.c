/* SPDX-License-Identifier: ISC */
/* Import: what mcpd would show for a load, and loads that cannot work. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errors.h"
#include "import.h"
#include "netaddr.h"
#include "url.h"

/* Where execvp looks when PATH is unset (and mcpd's children get). */
#define IMPORT_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* True when an argument needs quotes to read back as one word. */
static bool
import_needs_quotes(const char *a)
{
	return a[0] == '\0' ||
	    strpbrk(a, " \t\n'\"\\$`*?;&|<>(){}[]#~") != NULL;
}

/* Writes the strings of argv as a shell user would type them. */
static void
import_put_line(FILE *f, const json_t *argv)
{
	const char *a;
	size_t i;
	json_t *v;

	json_array_foreach(argv, i, v) {
		a = json_string_value(v);
		if (i > 0)
			fputc(' ', f);
		if (!import_needs_quotes(a)) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a != '\0'; a++)
			if (*a == '\'')
				fputs("'\\''", f);
			else
				fputc(*a, f);
		fputc('\'', f);
	}
}

/* The canonical form of a URL, or a copy of it when it does not parse. */
static char *
import_url_canonical(const char *target)
{
	struct url u;
	char *canonical;

	if (url_parse(target, &u, NULL) < 0)
		return strdup(target);
	canonical = url_canonical(&u);
	url_free(&u);
	return canonical;
}

/*
 * The endpoint mcpd shows (daemon/server-spec.c spec_endpoint): the command line,
 * the canonical URL, or the image and the args as a command line.
 */
char *
import_endpoint(const json_t *params)
{
	const char *target = json_string_value(json_object_get(params,
	    "target"));
	const json_t *args = json_object_get(params, "args");
	char *line = NULL;
	size_t len;
	FILE *f;

	if (target != NULL && strstr(target, "://") != NULL)
		return import_url_canonical(target);
	if ((f = open_memstream(&line, &len)) == NULL)
		return NULL;
	if (target == NULL)
		import_put_line(f, json_object_get(params, "command"));
	else {
		fputs(target, f);
		if (json_array_size(args) > 0)
			fputc(' ', f);
		import_put_line(f, args);
	}
	if (fclose(f) != 0) {
		free(line);
		return NULL;
	}
	return line;
}

/* Whether path names a file that execvp can run. */
static bool
import_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/* Whether program is found in the directories of path. */
static bool
import_is_on_path(const char *program, const char *path)
{
	const char *dir = path, *end;
	char *file;
	bool is_found = false;

	for (; !is_found; dir = end + 1) {
		end = strchrnul(dir, ':');
		/* An empty element is the current directory, as for execvp. */
		if (asprintf(&file, "%.*s/%s",
			end == dir ? 1 : (int)(end - dir),
			end == dir ? "." : dir, program) < 0)
			return true; /* no memory: say nothing */
		is_found = import_is_executable(file);
		free(file);
		if (*end == '\0')
			break;
	}
	return is_found;
}

/* A command whose program is not there. */
static int
import_check_command(const json_t *params, char **why)
{
	const char *program =
	    json_string_value(json_array_get(json_object_get(params, "command"),
		0));
	const char *cwd = json_string_value(json_object_get(params, "cwd"));
	const char *path =
	    json_string_value(json_object_get(json_object_get(params, "env"),
		"PATH"));
	char *file;
	bool is_there;

	/* A reference is resolved by mcpd: nothing to say here. */
	if (program == NULL || strstr(program, "$(") != NULL)
		return 0;
	if (strchr(program, '/') == NULL) {
		if (path == NULL || strstr(path, "$(") != NULL)
			path = getenv("PATH");
		if (import_is_on_path(program,
			path != NULL ? path : IMPORT_DEFAULT_PATH))
			return 0;
		return errors_cause(why, -EINVAL,
		    "the command %s is not on PATH; install it, or give its path",
		    program);
	}
	if (program[0] == '/' || cwd == NULL)
		is_there = import_is_executable(program);
	else if (asprintf(&file, "%s/%s", cwd, program) < 0)
		return 0;
	else {
		is_there = import_is_executable(file);
		free(file);
	}
	if (is_there)
		return 0;
	return errors_cause(why, -EINVAL,
	    "the command %s is not an executable file", program);
}

/* A URL that mcpd's policy refuses whatever the host resolves to. */
static int
import_check_url(const json_t *params, const char *target, char **why)
{
	bool is_local = json_is_true(json_object_get(params, "allow_local"));
	struct sockaddr_storage addr;
	const struct sockaddr *addrs[1] = { (struct sockaddr *)&addr };
	char *cause = NULL;
	struct url u;
	int r = 0;

	if (strstr(target, "$(") != NULL || url_parse(target, &u, NULL) < 0)
		return 0;
	if (strcmp(u.scheme, "https") != 0 && !is_local)
		r = errors_cause(why, -EINVAL,
		    "plain http is refused without --allow-local, which allows it to loopback addresses only");
	else if (u.has_userinfo)
		r = errors_cause(why, -EINVAL,
		    "credentials in the URL (user:pass@) are refused; send them as a header");
	else if (u.has_fragment)
		r = errors_cause(why, -EINVAL,
		    "URL fragments (#...) are refused");
	else if (netaddr_parse_literal(u.host, &addr) == 1 &&
	    netaddr_judge(addrs, 1, is_local, &cause) < 0)
		r = errors_cause(why, -EINVAL, "%s%s",
		    cause != NULL ? cause : "the address is refused",
		    netaddr_classify(addrs[0]) == NETADDR_LOOPBACK ?
			"; --allow-local allows it" :
			"");
	free(cause);
	url_free(&u);
	return r;
}

/*
 * Why mcpd will certainly refuse or fail the mcpd/load params of an
 * entry, known without asking it: -EINVAL and *why, else 0.
 */
int
import_check_load(const json_t *params, char **why)
{
	const char *target = json_string_value(json_object_get(params,
	    "target"));

	if (target == NULL)
		return import_check_command(params, why);
	if (strstr(target, "://") != NULL)
		return import_check_url(params, target, why);
	return 0;
}
