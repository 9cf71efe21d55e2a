/* SPDX-License-Identifier: ISC */
/* What a server runs or reaches: its id, endpoint and transport. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"

void
spec_clear(struct server_spec *spec)
{
	child_strv_free(spec->argv);
	child_strv_free(spec->env);
	free(spec->cwd);
	free(spec->remote.url);
	json_decref(spec->remote.headers);
	free(spec->transport);
	memset(spec, 0, sizeof *spec);
}

/* True when an argument needs quotes to read back as one word. */
static bool
spec_needs_quotes(const char *a)
{
	return a[0] == '\0' ||
	    strpbrk(a, " \t\n'\"\\$`*?;&|<>(){}[]#~") != NULL;
}

/* The command line as a shell user would type it (display only). */
static char *
spec_command_line(char *const *argv)
{
	size_t len = 1;
	char *line, *p;

	for (size_t i = 0; argv[i] != NULL; i++)
		len += strlen(argv[i]) * 4 + 3;
	if ((p = line = malloc(len)) == NULL)
		return NULL;
	for (size_t i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			*p++ = ' ';
		if (!spec_needs_quotes(argv[i])) {
			p = stpcpy(p, argv[i]);
			continue;
		}
		*p++ = '\'';
		for (const char *c = argv[i]; *c != '\0'; c++)
			p = *c == '\'' ? stpcpy(p, "'\\''") : (*p = *c, p + 1);
		*p++ = '\'';
	}
	*p = '\0';
	return line;
}

char *
spec_endpoint(const struct server_spec *spec)
{
	if (spec->remote.url != NULL)
		return strdup(spec->remote.url);
	return spec_command_line(spec->argv);
}

const char *
spec_transport_name(const struct server_spec *spec)
{
	if (spec->transport != NULL)
		return spec->transport;
	return spec->remote.url != NULL ? "streamable-http" : "stdio";
}

/* argv, then cwd, then the env names (values may be secrets). */
static char *
spec_process_target(const struct server_spec *spec, size_t *ret_len)
{
	size_t len = 2, off = 0;
	char *target;

	for (size_t i = 0; spec->argv[i] != NULL; i++)
		len += strlen(spec->argv[i]) + 1;
	for (size_t i = 0; spec->env != NULL && spec->env[i] != NULL; i++)
		len += strcspn(spec->env[i], "=") + 2;
	len += spec->cwd != NULL ? strlen(spec->cwd) : 0;
	if ((target = calloc(1, len)) == NULL)
		return NULL;
	for (size_t i = 0; spec->argv[i] != NULL; i++)
		off += sprintf(target + off, "%s", spec->argv[i]) + 1;
	off += sprintf(target + off, "%s", spec->cwd != NULL ? spec->cwd : "") +
	    1;
	for (size_t i = 0; spec->env != NULL && spec->env[i] != NULL; i++)
		off += sprintf(target + off,
			   "%.*s=", (int)strcspn(spec->env[i], "="),
			   spec->env[i]) +
		    1;
	*ret_len = off;
	return target;
}

char *
spec_id(const char *agent, enum server_mode mode,
    const struct server_spec *spec)
{
	size_t len;
	char *target, *id;

	if (spec->remote.url != NULL)
		return identity_connection_id(agent, server_mode_name(mode),
		    spec->remote.url, strlen(spec->remote.url));
	if ((target = spec_process_target(spec, &len)) == NULL)
		return NULL;
	id = identity_connection_id(agent, server_mode_name(mode), target, len);
	free(target);
	return id;
}
