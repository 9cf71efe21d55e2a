/* SPDX-License-Identifier: ISC */
/* Where the socket and the state live, by the XDG and systemd rules. */
#define _GNU_SOURCE 1 /* asprintf */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

static const char *
paths_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

static char *
paths_join(const char *dir, const char *rest)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, rest) < 0)
		return NULL;
	return p;
}

char *
paths_socket_default(void)
{
	const char *v;
	char *p;

	if ((v = paths_env("MCPD_SOCKET")) != NULL)
		return strdup(v);
	if ((v = paths_env("RUNTIME_DIRECTORY")) != NULL)
		return paths_join(v, "mcpd.sock");
	if ((v = paths_env("XDG_RUNTIME_DIR")) != NULL)
		return paths_join(v, "mcpd/mcpd.sock");
	if (asprintf(&p, "/tmp/mcpd-%u/mcpd.sock", (unsigned)getuid()) < 0)
		return NULL;
	return p;
}

char *
paths_state_default(void)
{
	const char *v;

	if ((v = paths_env("MCPD_STATE_DIR")) != NULL)
		return strdup(v);
	if ((v = paths_env("STATE_DIRECTORY")) != NULL)
		return strdup(v);
	if ((v = paths_env("XDG_STATE_HOME")) != NULL)
		return paths_join(v, "mcpd");
	if ((v = paths_env("HOME")) != NULL)
		return paths_join(v, ".local/state/mcpd");
	return NULL;
}

int
paths_mkdir_p(const char *dir, unsigned int mode)
{
	char *copy = strdup(dir), *p;
	int r = 0;

	if (copy == NULL)
		return -ENOMEM;
	for (p = copy + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			r = -errno;
		*p = '/';
		if (r < 0)
			break;
	}
	if (r == 0 && mkdir(copy, mode) < 0 && errno != EEXIST)
		r = -errno;
	free(copy);
	return r;
}

/* What the symbolic link names (new), or NULL. */
static char *
paths_link_read(const char *link)
{
	char exe[4097];
	ssize_t n;

	if ((n = readlink(link, exe, sizeof exe - 1)) <= 0)
		return NULL;
	exe[n] = '\0';
	return strdup(exe);
}

char *
paths_proc_exe(int pid)
{
	char link[32];

	snprintf(link, sizeof link, "/proc/%d/exe", pid);
	return paths_link_read(link);
}

char *
paths_self_exe(void)
{
	char *exe = paths_link_read("/proc/self/exe");
	size_t n = exe != NULL ? strlen(exe) : 0;

	/* Replaced on disk (a package upgrade): the path names the new one. */
	if (n > 10 && strcmp(exe + n - 10, " (deleted)") == 0)
		exe[n - 10] = '\0';
	return exe;
}
