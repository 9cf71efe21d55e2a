/* SPDX-License-Identifier: ISC */
/* The docker CLI: its path, environment, and commands run as argv. */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "linebuf.h"
#include "log.h"
#include "mcpd.h"

#define DOCKER_OUTPUT_MAX (64 * 1024) /* kept of a command's stdout/stderr */
#define DOCKER_LINE_MAX	  4096

struct docker_cmd {
	struct child_io io;
	char **env;
	struct event *out_ev, *err_ev, *deadline;
	struct evbuffer *out, *err;
	struct linebuf out_lines, err_lines;
	docker_line_fn *line; /* NULL: collect, for done */
	docker_done_fn *done;
	docker_data_fn *data_done; /* collect all of stdout, up to out_max */
	size_t out_max;		   /* 0: keep the last DOCKER_OUTPUT_MAX */
	void *arg;
	bool is_out_eof, is_err_eof, has_exited;
	bool is_too_long; /* stdout passed out_max: killed, reported as -1 */
	int status;
	LIST_ENTRY(docker_cmd) entry; /* in docker_cmds */
};

static LIST_HEAD(, docker_cmd) docker_cmds = LIST_HEAD_INITIALIZER(docker_cmds);

/* Variables the docker CLI itself reads; passed through from mcpd's. */
static const char *const docker_env_pass[] = {
	"DOCKER_HOST",
	"DOCKER_CONFIG",
	"DOCKER_CONTEXT",
	"DOCKER_CERT_PATH",
	"DOCKER_TLS_VERIFY",
	"CONTAINER_HOST",
	"XDG_RUNTIME_DIR",
	NULL,
};

const char *
docker_program(void)
{
	const char *p = mcpd_opts.docker;

	return p != NULL && *p != '\0' ? p : "docker";
}

/* True when path names an executable file. */
static bool
docker_is_executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

char *
docker_cli_path(char **cause)
{
	const char *prog = docker_program(), *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, *full = NULL;
	struct stat st;

	if (strchr(prog, '/') != NULL) {
		if (docker_is_executable(prog))
			return xstrdup(prog);
	} else {
		dirs = xstrdup(path != NULL ? path : "/usr/bin:/bin");
		for (dir = strtok_r(dirs, ":", &save); dir != NULL;
		     dir = strtok_r(NULL, ":", &save)) {
			xasprintf(&full, "%s/%s", dir, prog);
			if (docker_is_executable(full))
				break;
			free(full);
			full = NULL;
		}
		free(dirs);
		if (full != NULL)
			return full;
	}
	if (cause == NULL)
		return NULL;
	if (strchr(prog, '/') != NULL && stat(prog, &st) == 0) {
		xasprintf(cause,
		    "the docker CLI '%s' is not an executable file; set MCPD_DOCKER / mcpd --docker to the path of docker (or podman)",
		    prog);
	} else
		xasprintf(cause,
		    "the docker CLI '%s' is not installed or not on PATH; install docker.io (or podman) or set MCPD_DOCKER / mcpd --docker to its path",
		    prog);
	return NULL;
}

int
docker_available(char **cause)
{
	char *full = docker_cli_path(cause);

	if (full == NULL)
		return -ENOENT;
	free(full);
	return 0;
}

static char docker_instance_id[2 * 8 + 1];

void
docker_instance_set(const char *id)
{
	if (id != NULL && strlen(id) < sizeof docker_instance_id)
		snprintf(docker_instance_id, sizeof docker_instance_id, "%s",
		    id);
}

const char *
docker_instance(void)
{
	char *id = docker_instance_id;
	unsigned char raw[8];

	if (id[0] != '\0')
		return id;
	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		fatal("getrandom");
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return id;
}

char **
docker_env(char *const *extra)
{
	size_t npass = 0, m = 0;
	char **all, **env;
	const char *v;

	while (extra != NULL && extra[m] != NULL)
		m++;
	all = xcalloc(m + 8, sizeof *all);
	for (size_t i = 0; docker_env_pass[i] != NULL; i++)
		if ((v = getenv(docker_env_pass[i])) != NULL)
			xasprintf(&all[npass++], "%s=%s", docker_env_pass[i],
			    v);
	if (m > 0)
		memcpy(all + npass, extra, m * sizeof *all);
	env = child_env_build(all);
	for (size_t i = 0; i < npass; i++)
		free(all[i]);
	free(all);
	return env;
}

/* Commands whose output is collected (not followed): they end by themselves. */
static size_t docker_cmds_bounded;

size_t
docker_cmds_running(void)
{
	return docker_cmds_bounded;
}

void
docker_cmds_kill_followers(void)
{
	struct docker_cmd *c;

	LIST_FOREACH(c, &docker_cmds, entry)
		if (c->line != NULL && !c->has_exited)
			kill(-c->io.pid, SIGKILL);
}

static void
docker_cmd_free(struct docker_cmd *c)
{
	if (c == NULL)
		return;
	if (c->line == NULL)
		docker_cmds_bounded--;
	LIST_REMOVE(c, entry);
	if (!c->has_exited) {
		child_unwatch(c->io.pid);
		kill(-c->io.pid, SIGKILL);
	}
	if (c->out_ev != NULL)
		event_free(c->out_ev);
	if (c->err_ev != NULL)
		event_free(c->err_ev);
	if (c->deadline != NULL)
		event_free(c->deadline);
	if (c->io.out >= 0)
		close(c->io.out);
	if (c->io.err >= 0)
		close(c->io.err);
	if (c->out != NULL)
		evbuffer_free(c->out);
	if (c->err != NULL)
		evbuffer_free(c->err);
	child_strv_wipe_free(c->env);
	free(c);
}

void
docker_cmd_cancel(struct docker_cmd *c)
{
	docker_cmd_free(c);
}

/* Hands complete lines to the line callback (line mode). */
static void
docker_cmd_lines(struct docker_cmd *c, struct evbuffer *buf, struct linebuf *lb,
    bool is_stderr)
{
	char *line;
	size_t len;
	int r;

	while ((r = linebuf_peek(lb, buf, &line, &len)) > 0) {
		c->line(c->arg, line, len, is_stderr);
		linebuf_consume(lb, buf);
	}
	if (r < 0) {
		evbuffer_drain(buf, evbuffer_get_length(buf));
		linebuf_init(lb, DOCKER_LINE_MAX);
	}
}

/* Reads what one pipe holds now; false at end of file. */
static bool
docker_cmd_read(struct docker_cmd *c, int fd, struct evbuffer *buf,
    struct linebuf *lb, bool is_stderr)
{
	int n;

	while ((n = evbuffer_read(buf, fd, 4096)) > 0) {
		if (c->line != NULL)
			docker_cmd_lines(c, buf, lb, is_stderr);
		else if (c->out_max > 0 && !is_stderr &&
		    evbuffer_get_length(buf) > c->out_max) {
			/* Whole or nothing: the command is stopped. */
			evbuffer_drain(buf, evbuffer_get_length(buf));
			if (!c->is_too_long && !c->has_exited)
				kill(-c->io.pid, SIGKILL);
			c->is_too_long = true;
		} else if (evbuffer_get_length(buf) > DOCKER_OUTPUT_MAX &&
		    (c->out_max == 0 || is_stderr))
			evbuffer_drain(buf,
			    evbuffer_get_length(buf) - DOCKER_OUTPUT_MAX);
	}
	return !(n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR));
}

/* Both pipes at their end and the process reaped: report, once. */
static void
docker_cmd_finish(struct docker_cmd *c)
{
	docker_done_fn *done = c->done;
	docker_data_fn *data_done = c->data_done;
	size_t out_len = evbuffer_get_length(c->out);
	char *out, *err, why[96];

	if (!c->has_exited || !c->is_out_eof || !c->is_err_eof)
		return;
	evbuffer_add(c->out, "", 1);
	evbuffer_add(c->err, "", 1);
	out = (char *)evbuffer_pullup(c->out, -1);
	err = (char *)evbuffer_pullup(c->err, -1);
	c->done = NULL;
	c->data_done = NULL;
	if (c->is_too_long) {
		snprintf(why, sizeof why,
		    "it printed more than %zu bytes, mcpd's limit", c->out_max);
		c->status = -1;
		err = why;
		out_len = 0;
		out[0] = '\0';
	}
	if (done != NULL)
		done(c->arg, c->status, out, err);
	if (data_done != NULL)
		data_done(c->arg, c->status, out, out_len, err);
	docker_cmd_free(c);
}

static void
docker_cmd_readable(evutil_socket_t fd, short events, void *arg)
{
	struct docker_cmd *c = arg;
	bool is_err = fd == c->io.err;

	(void)events;
	if (docker_cmd_read(c, fd, is_err ? c->err : c->out,
		is_err ? &c->err_lines : &c->out_lines, is_err))
		return;
	event_del(is_err ? c->err_ev : c->out_ev);
	if (is_err)
		c->is_err_eof = true;
	else
		c->is_out_eof = true;
	docker_cmd_finish(c);
}

static void
docker_cmd_exited(void *arg, int status)
{
	struct docker_cmd *c = arg;

	c->has_exited = true;
	c->status = status;
	/* Whatever it wrote is in the pipes now; a stray holder cannot stall us. */
	if (!c->is_out_eof)
		docker_cmd_read(c, c->io.out, c->out, &c->out_lines, false);
	if (!c->is_err_eof)
		docker_cmd_read(c, c->io.err, c->err, &c->err_lines, true);
	c->is_out_eof = c->is_err_eof = true;
	event_del(c->out_ev);
	event_del(c->err_ev);
	docker_cmd_finish(c);
}

static void
docker_cmd_timeout(evutil_socket_t fd, short events, void *arg)
{
	struct docker_cmd *c = arg;

	(void)fd, (void)events;
	/* One that never started reports from here (status -1). */
	if (c->has_exited) {
		docker_cmd_finish(c);
		return;
	}
	/* The exit comes through SIGCHLD and reports the signal. */
	kill(-c->io.pid, SIGKILL);
}

struct docker_cmd *
docker_cmd_start(const char *const *args, char *const *env, int timeout_ms,
    docker_line_fn *line, docker_done_fn *done, void *arg)
{
	struct docker_cmd *c = xcalloc(1, sizeof *c);
	struct child_spec spec = { 0 };
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	char *cause = NULL;

	c->env = docker_env(env);
	spec.argv = (char *const *)(uintptr_t)args;
	spec.env = c->env;
	c->io.out = c->io.err = -1;
	c->line = line;
	c->done = done;
	c->arg = arg;
	if (line == NULL)
		docker_cmds_bounded++;
	LIST_INSERT_HEAD(&docker_cmds, c, entry);
	c->out = evbuffer_new();
	c->err = evbuffer_new();
	c->deadline = evtimer_new(mcpd_base, docker_cmd_timeout, c);
	if (c->out == NULL || c->err == NULL || c->deadline == NULL)
		fatal("out of memory running docker");
	if (child_spawn(&spec, &c->io, &cause) < 0) {
		/* Nothing runs: the failure is reported from the loop. */
		log_debug("%s", cause != NULL ? cause : "cannot run docker");
		evbuffer_add_printf(c->err, "%s",
		    cause != NULL ? cause : "cannot run docker");
		free(cause);
		c->io.out = c->io.err = -1;
		c->has_exited = c->is_out_eof = c->is_err_eof = true;
		c->status = -1;
		event_active(c->deadline, EV_TIMEOUT, 1);
		return c;
	}
	close(c->io.in);
	linebuf_init(&c->out_lines, DOCKER_LINE_MAX);
	linebuf_init(&c->err_lines, DOCKER_LINE_MAX);
	c->out_ev = event_new(mcpd_base, c->io.out, EV_READ | EV_PERSIST,
	    docker_cmd_readable, c);
	c->err_ev = event_new(mcpd_base, c->io.err, EV_READ | EV_PERSIST,
	    docker_cmd_readable, c);
	if (c->out_ev == NULL || c->err_ev == NULL)
		fatal("out of memory running docker");
	event_add(c->out_ev, NULL);
	event_add(c->err_ev, NULL);
	if (timeout_ms > 0)
		evtimer_add(c->deadline, &tv);
	child_watch(c->io.pid, docker_cmd_exited, c);
	return c;
}

struct docker_cmd *
docker_cmd_start_data(const char *const *args, int timeout_ms, size_t out_max,
    docker_data_fn *done, void *arg)
{
	struct docker_cmd *c = docker_cmd_start(args, NULL, timeout_ms, NULL,
	    NULL, arg);

	/* Nothing is read before the loop runs: the fields take effect. */
	c->data_done = done;
	c->out_max = out_max;
	return c;
}

char *
docker_describe_failure(int status, const char *err)
{
	char *how, *why = NULL;
	size_t len = strlen(err);

	while (len > 0 && (err[len - 1] == '\n' || err[len - 1] == ' '))
		len--;
	if (status == -1) {
		/* It did not run: err is why (pipes, fork or exec). */
		xasprintf(&why, "%.*s", (int)len, err);
		return why;
	}
	how = child_describe_status(status);
	xasprintf(&why, "%s %s%s%.*s", docker_program(), how,
	    len > 0 ? ": " : "", (int)(len > 300 ? 300 : len), err);
	free(how);
	return why;
}
