/* SPDX-License-Identifier: ISC */
/* Removing the containers that earlier runs of this daemon left behind. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mcpd.h"

#define DOCKER_REAP_RETRY_MS 10000 /* between tries of a failed reap */

/*
 * The marker file says that a daemon of this state dir started containers:
 * only then is there anything to reap, and docker is touched at start only
 * by those who use it.
 */
static bool docker_is_noted;
static struct event *docker_reap_timer;
static bool docker_reap_has_failed; /* logged once, then at debug level */

static void docker_reap_finished(void);

static void
docker_reap_due(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	docker_reap();
}

/* A step failed: say so (once) and try the whole reap again later. */
static void
docker_reap_failed(const char *what, int status, const char *err)
{
	struct timeval tv = { DOCKER_REAP_RETRY_MS / 1000, 0 };
	char *why = docker_describe_failure(status, err);

	if (docker_reap_has_failed)
		log_debug("%s: %s; trying again in %d s", what, why,
		    DOCKER_REAP_RETRY_MS / 1000);
	else
		log_warnx("%s: %s; trying again in %d s", what, why,
		    DOCKER_REAP_RETRY_MS / 1000);
	docker_reap_has_failed = true;
	free(why);
	if (docker_reap_timer == NULL &&
	    (docker_reap_timer = evtimer_new(mcpd_base, docker_reap_due,
		 NULL)) == NULL)
		fatal("out of memory");
	evtimer_add(docker_reap_timer, &tv);
}

static void
docker_reaped(void *arg, int status, const char *out, const char *err)
{
	(void)arg, (void)out;
	if (status != 0) {
		docker_reap_failed(
		    "cannot remove containers of an earlier mcpd", status, err);
		return;
	}
	docker_reap_finished();
}

/*
 * Adds the ids from `docker ps` lines "ID NAME INSTANCE" of rax-*
 * containers whose instance is not this run's: whatever their pid (a
 * reboot reuses pids), they are an earlier run's.
 */
static size_t
docker_stale_ids(char *out, char **args, size_t max)
{
	char *line, *save = NULL, *name, *inst;
	size_t n = 0;

	for (line = strtok_r(out, "\n", &save); line != NULL && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		if ((name = strchr(line, ' ')) == NULL)
			continue;
		*name++ = '\0';
		if ((inst = strchr(name, ' ')) != NULL)
			*inst++ = '\0';
		if (strncmp(name, "rax-", 4) == 0 &&
		    (inst == NULL || strcmp(inst, docker_instance()) != 0))
			args[n++] = line;
	}
	return n;
}

static void
docker_listed(void *arg, int status, const char *out, const char *err)
{
	char *copy;
	const char **args;
	size_t n, max = 3;

	(void)arg;
	if (status != 0) {
		docker_reap_failed("cannot list containers of an earlier mcpd",
		    status, err);
		return;
	}
	for (const char *p = out; *p != '\0'; p++)
		max += *p == '\n';
	copy = xstrdup(out);
	args = xcalloc(max + 1, sizeof *args);
	args[0] = docker_program();
	args[1] = "rm";
	args[2] = "-f";
	n = docker_stale_ids(copy, (char **)(uintptr_t)(args + 3), max - 3);
	if (n == 0)
		docker_reap_finished();
	else {
		log_info("removing %zu container(s) of an earlier mcpd", n);
		docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
		    docker_reaped, NULL);
	}
	free(args);
	free(copy);
}

static char *
docker_marker_path(void)
{
	char *path;

	xasprintf(&path, "%s/containers.pid", mcpd_opts.state_dir);
	return path;
}

void
docker_note_use(void)
{
	char *path, pid[24];
	int fd, len;

	if (docker_is_noted)
		return;
	docker_is_noted = true;
	path = docker_marker_path();
	len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, pid, len) != len)
		log_warn(
		    "cannot write %s (containers of this run may not be reaped after a crash)",
		    path);
	if (fd >= 0)
		close(fd);
	free(path);
}

/* Nothing of an earlier run is left: the marker can go, unless in use. */
static void
docker_reap_finished(void)
{
	char *path;

	if (docker_reap_has_failed)
		log_info("containers of an earlier mcpd are removed at last");
	docker_reap_has_failed = false;
	if (docker_is_noted)
		return;
	path = docker_marker_path();
	unlink(path);
	free(path);
}

void
docker_reap(void)
{
	char *filter, *marker = docker_marker_path();
	bool has_marker = access(marker, F_OK) == 0;

	free(marker);
	if (!has_marker || docker_available(NULL) < 0)
		return;
	xasprintf(&filter, "label=io.mcpd.owner=%s", identity_did());
	const char *args[] = { docker_program(), "ps", "-a", "--no-trunc",
		"--filter", filter, "--format",
		"{{.ID}} {{.Names}} {{.Label \"io.mcpd.instance\"}}", NULL };
	docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    docker_listed, NULL);
	free(filter);
}

void
docker_reap_close(void)
{
	if (docker_reap_timer != NULL)
		event_free(docker_reap_timer);
	docker_reap_timer = NULL;
}
