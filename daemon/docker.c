/* SPDX-License-Identifier: ISC */
/* The docker CLI: commands as argv, container records, names, reaping. */
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
#define DOCKER_RETRY_MS	  10000 /* between tries of a failed removal */
/* Another removal of the same container (a docker rm -f from a shell) is
 * waited for: rm -f again every DOCKER_BUSY_MS, DOCKER_BUSY_TRIES times. */
#define DOCKER_BUSY_MS	  250
#define DOCKER_BUSY_TRIES 40

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
};

/*
 * Someone waiting for a removal. Told from the loop (defer_call): between
 * its removal's end and then it is in its record's told list, where an
 * unwait still finds it (fn NULL: told nothing) and a freed record leaves
 * it (ct NULL).
 */
struct docker_waiter {
	docker_removed_fn *fn;
	void *arg;
	struct docker_container *ct; /* while told: its record, or NULL */
	int r;			     /* ... how the removal ended */
	char *why;
	TAILQ_ENTRY(docker_waiter) entry;
};
TAILQ_HEAD(docker_waiters, docker_waiter);

struct docker_container {
	char *agent, *server;
	char *base; /* <name> or <agent>.<name> */
	char *name; /* the container that may exist now, or NULL */
	enum docker_phase phase;
	bool is_created;  /* this daemon started the container called name */
	bool is_conflict; /* the last start found name held by another */
	void (*removed)(void *); /* a retried removal succeeded */
	void *removed_arg;
	char *error; /* why the last removal failed, or NULL */
	struct docker_cmd *removing;
	/* A probe removed while the managed container starts (or NULL). */
	char *old;
	char *old_error; /* why its last removal failed, or NULL */
	struct docker_cmd *removing_old;
	char *holder; /* who holds name, until both removals have ended */
	/*
	 * docker rename of old (the probe) to name, or docker create of
	 * name, while it runs.
	 */
	struct docker_cmd *renaming;
	docker_removed_fn *renamed; /* told how the rename (create) ended */
	void *renamed_arg;
	bool is_remove_due; /* a removal waits for the rename (create) */
	bool has_failed; /* a removal failed since the last that ended well */
	struct event *retry;
	struct event *busy; /* pending: another removal runs; rm -f again */
	int busy_tries;
	bool is_busy_name, is_busy_old; /* which one the busy wait is for */
	struct event *tell; /* answers waiters when nothing was to be removed */
	struct event *tell_old; /* answers waiters for an old one that ended */
	struct docker_waiters waiters;
	struct docker_waiters told; /* told from the loop, not yet */
};

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

const char *
docker_instance(void)
{
	static char id[2 * 8 + 1];
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

static void
docker_cmd_free(struct docker_cmd *c)
{
	if (c == NULL)
		return;
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

/* ---- container records ---- */

static void docker_remove_start(struct docker_container *);
static void docker_remove_old_start(struct docker_container *);

static void docker_nothing_to_remove(evutil_socket_t, short, void *);
static void docker_old_ended(evutil_socket_t, short, void *);

static void
docker_retry_due(evutil_socket_t fd, short events, void *arg)
{
	struct docker_container *ct = arg;

	(void)fd, (void)events;
	/* Only what failed: an old probe's retry leaves the serving one be. */
	if (ct->error != NULL)
		docker_remove_start(ct);
	else
		docker_remove_old_start(ct);
}

/* A removal is under way: our docker rm -f, or the wait for another's. */
static bool
docker_is_removing(const struct docker_container *ct)
{
	return ct->removing != NULL || evtimer_pending(ct->busy, NULL);
}

static void
docker_busy_due(evutil_socket_t fd, short events, void *arg)
{
	struct docker_container *ct = arg;

	(void)fd, (void)events;
	/* As a retry: an old probe's leaves the serving one be. */
	if (ct->is_busy_old)
		docker_remove_old_start(ct);
	if (ct->is_busy_name)
		docker_remove_start(ct);
	ct->is_busy_old = ct->is_busy_name = false;
}

struct docker_container *
docker_container_new(const char *agent, const char *server,
    void (*removed)(void *), void *arg)
{
	struct docker_container *ct = xcalloc(1, sizeof *ct);

	ct->removed = removed;
	ct->removed_arg = arg;
	ct->agent = xstrdup(agent);
	ct->server = xstrdup(server);
	if (strcmp(agent, "default") == 0)
		ct->base = xstrdup(server);
	else
		xasprintf(&ct->base, "%s.%s", agent, server);
	ct->retry = evtimer_new(mcpd_base, docker_retry_due, ct);
	ct->busy = evtimer_new(mcpd_base, docker_busy_due, ct);
	ct->tell = event_new(mcpd_base, -1, 0, docker_nothing_to_remove, ct);
	ct->tell_old = event_new(mcpd_base, -1, 0, docker_old_ended, ct);
	if (ct->retry == NULL || ct->busy == NULL || ct->tell == NULL ||
	    ct->tell_old == NULL)
		fatal("out of memory");
	TAILQ_INIT(&ct->waiters);
	TAILQ_INIT(&ct->told);
	return ct;
}

void
docker_container_free(struct docker_container *ct)
{
	struct docker_waiter *w;

	if (ct == NULL)
		return;
	while ((w = TAILQ_FIRST(&ct->waiters)) != NULL) {
		TAILQ_REMOVE(&ct->waiters, w, entry);
		free(w);
	}
	/* Those told already hear nothing: their record is gone. */
	while ((w = TAILQ_FIRST(&ct->told)) != NULL) {
		TAILQ_REMOVE(&ct->told, w, entry);
		w->ct = NULL;
		w->fn = NULL;
	}
	docker_cmd_cancel(ct->removing);
	docker_cmd_cancel(ct->removing_old);
	docker_cmd_cancel(ct->renaming);
	event_free(ct->retry);
	event_free(ct->busy);
	event_free(ct->tell);
	event_free(ct->tell_old);
	free(ct->agent);
	free(ct->server);
	free(ct->base);
	free(ct->name);
	free(ct->error);
	free(ct->old);
	free(ct->old_error);
	free(ct->holder);
	free(ct);
}

char *
docker_container_name_for(const struct docker_container *ct,
    enum docker_phase phase)
{
	char *name;

	xasprintf(&name, "rax-%s-%s-%ld",
	    phase == DOCKER_PHASE_PROBE ? "probe" : "mcp", ct->base,
	    (long)getpid());
	return name;
}

void
docker_container_set(struct docker_container *ct, const char *name,
    enum docker_phase phase)
{
	free(ct->name);
	ct->name = name != NULL ? xstrdup(name) : NULL;
	ct->phase = phase;
	ct->is_created = false;
	if (name != NULL)
		ct->is_conflict = false;
}

void
docker_container_created(struct docker_container *ct)
{
	if (ct->name != NULL)
		ct->is_created = true;
}

void
docker_container_note_conflict(struct docker_container *ct)
{
	ct->is_conflict = true;
}

enum errors_kind
docker_container_kind(const struct docker_container *ct)
{
	return ct != NULL && ct->is_conflict ? ERRORS_CONFLICT :
					       ERRORS_UNAVAILABLE;
}

const char *
docker_container_name(const struct docker_container *ct)
{
	return ct->name != NULL ? ct->name : ct->old;
}

const char *
docker_container_old_name(const struct docker_container *ct)
{
	return ct->name != NULL ? ct->old : NULL;
}

const char *
docker_container_phase(const struct docker_container *ct)
{
	return ct->phase == DOCKER_PHASE_PROBE ? "probe" : "managed";
}

const char *
docker_container_error(const struct docker_container *ct)
{
	return ct->error != NULL ? ct->error : ct->old_error;
}

/* "No such container" means it is gone already: that is success. */
/* Whether docker said another removal of the container is running. */
static bool
docker_is_busy(int status, const char *err)
{
	return status > 0 && strcasestr(err, "already in progress") != NULL;
}

static bool
docker_is_gone(int status, const char *err)
{
	return status == 0 ||
	    (status > 0 &&
		(strcasestr(err, "no such container") != NULL ||
		    strcasestr(err, "no such object") != NULL));
}

static void
docker_waiter_tell(void *arg)
{
	struct docker_waiter *w = arg;

	if (w->ct != NULL)
		TAILQ_REMOVE(&w->ct->told, w, entry);
	if (w->fn != NULL)
		w->fn(w->arg, w->r, w->why);
	free(w->why);
	free(w);
}

/* Tells every waiter, each from the loop (docker_waiter_tell). */
static void
docker_tell_waiters(struct docker_container *ct, int r, const char *holder)
{
	struct docker_waiter *w;
	const char *text = r < 0 ? docker_container_error(ct) : holder;

	/* Each from the loop: none can free another's owner under it. */
	while ((w = TAILQ_FIRST(&ct->waiters)) != NULL) {
		TAILQ_REMOVE(&ct->waiters, w, entry);
		w->ct = ct;
		w->r = r;
		w->why = text != NULL ? xstrdup(text) : NULL;
		TAILQ_INSERT_TAIL(&ct->told, w, entry);
		defer_call(docker_waiter_tell, w);
	}
}

static void
docker_nothing_to_remove(evutil_socket_t fd, short events, void *arg)
{
	struct docker_container *ct = arg;

	(void)fd, (void)events;
	if (ct->name == NULL && !docker_is_removing(ct) && ct->old == NULL &&
	    ct->removing_old == NULL)
		docker_tell_waiters(ct, 0, NULL);
}

/*
 * Both removals (of name and of an old probe) have ended: the waiters
 * hear how, or, when nobody waited, the owner hears that a retried
 * removal left nothing behind.
 */
static void
docker_settle(struct docker_container *ct)
{
	struct timeval retry = { DOCKER_RETRY_MS / 1000, 0 };
	char *holder;
	bool was_retry;

	if (docker_is_removing(ct) || ct->removing_old != NULL)
		return;
	if (ct->error != NULL || ct->old_error != NULL) {
		ct->has_failed = true;
		free(ct->holder);
		ct->holder = NULL;
		evtimer_add(ct->retry, &retry);
		docker_tell_waiters(ct, -EIO, NULL);
		return;
	}
	was_retry = ct->has_failed && TAILQ_EMPTY(&ct->waiters);
	ct->has_failed = false;
	holder = ct->holder;
	ct->holder = NULL;
	if (was_retry && ct->removed != NULL && ct->name == NULL &&
	    ct->old == NULL)
		ct->removed(ct->removed_arg);
	else
		docker_tell_waiters(ct, 0, holder);
	free(holder);
}

/*
 * When docker rm -f of name (or old) said another removal of it runs (a docker rm
 * -f from a shell), it is run again shortly, DOCKER_BUSY_TRIES times at
 * most: true when it will be. Its end is then this removal's end.
 */
static bool
docker_wait_busy(struct docker_container *ct, bool is_old, int status,
    const char *err)
{
	struct timeval tv = { 0, DOCKER_BUSY_MS * 1000 };

	if (!docker_is_busy(status, err) ||
	    ct->busy_tries >= DOCKER_BUSY_TRIES) {
		ct->busy_tries = 0;
		return false;
	}
	ct->busy_tries++;
	if (is_old)
		ct->is_busy_old = true;
	else
		ct->is_busy_name = true;
	log_debug("container %s: another removal of it is in progress; "
		  "waiting for it",
	    is_old ? ct->old : ct->name);
	evtimer_add(ct->busy, &tv);
	return true;
}

/*
 * A removal ended: nothing of this daemon is left under the name (holder,
 * when not NULL, says who holds it instead), or status and err say why
 * the container is still there.
 */
static void
docker_remove_end(struct docker_container *ct, int status, const char *err,
    const char *holder)
{
	ct->removing = NULL;
	free(ct->error);
	ct->error = NULL;
	if (docker_wait_busy(ct, false, status, err))
		return;
	if (docker_is_gone(status, err)) {
		log_debug("container %s: %s", ct->name,
		    holder != NULL ? "not ours, left alone" : "removed");
		docker_container_set(ct, NULL, ct->phase);
		free(ct->holder);
		ct->holder = holder != NULL ? xstrdup(holder) : NULL;
	} else {
		ct->error = docker_describe_failure(status, err);
		log_warnx("cannot remove container %s: %s; retrying in %d s",
		    ct->name, ct->error, DOCKER_RETRY_MS / 1000);
	}
	docker_settle(ct);
}

/* The old probe's docker rm -f ended. */
static void
docker_old_removed(void *arg, int status, const char *out, const char *err)
{
	struct docker_container *ct = arg;

	(void)out;
	ct->removing_old = NULL;
	free(ct->old_error);
	ct->old_error = NULL;
	if (docker_wait_busy(ct, true, status, err))
		return;
	if (docker_is_gone(status, err)) {
		log_debug("container %s: removed", ct->old);
		free(ct->old);
		ct->old = NULL;
	} else {
		ct->old_error = docker_describe_failure(status, err);
		log_warnx("cannot remove container %s: %s; retrying in %d s",
		    ct->old, ct->old_error, DOCKER_RETRY_MS / 1000);
	}
	docker_settle(ct);
}

/* docker rm -f of the old probe (one this daemon started), in the background. */
static void
docker_remove_old_start(struct docker_container *ct)
{
	const char *rm[] = { docker_program(), "rm", "-f", ct->old, NULL };

	if (ct->old == NULL || ct->removing_old != NULL)
		return;
	ct->removing_old = docker_cmd_start(rm, NULL,
	    mcpd_opts.docker_timeout_ms, NULL, docker_old_removed, ct);
}

static void
docker_removed(void *arg, int status, const char *out, const char *err)
{
	(void)out;
	docker_remove_end(arg, status, err, NULL);
}

/* The value of label key in a docker inspect labels object, or NULL. */
static const char *
docker_label(const json_t *labels, const char *key)
{
	return json_string_value(json_object_get(labels, key));
}

/* Who holds name, when it is not this daemon's container of ct (else NULL). */
static char *
docker_holder(const struct docker_container *ct, const json_t *labels)
{
	const char *owner = docker_label(labels, "io.mcpd.owner");
	const char *pid = docker_label(labels, "io.mcpd.daemon-pid");
	const char *inst = docker_label(labels, "io.mcpd.instance");
	const char *agent = docker_label(labels, "io.mcpd.agent");
	const char *server = docker_label(labels, "io.mcpd.server");
	char self[24], *text = NULL;

	snprintf(self, sizeof self, "%ld", (long)getpid());
	if (owner == NULL)
		text = xstrdup("a container with no mcpd labels");
	else if (strcmp(owner, identity_did()) != 0)
		xasprintf(&text,
		    "a container of another owner (io.mcpd.owner=%s)", owner);
	else if (inst == NULL || strcmp(inst, docker_instance()) != 0 ||
	    pid == NULL || strcmp(pid, self) != 0)
		xasprintf(&text,
		    "a container of another run of this mcpd (io.mcpd.daemon-pid=%s, io.mcpd.instance=%s)",
		    pid != NULL ? pid : "none", inst != NULL ? inst : "none");
	else if (agent == NULL || strcmp(agent, ct->agent) != 0 ||
	    server == NULL || strcmp(server, ct->server) != 0)
		xasprintf(&text,
		    "a container of another agent or server of this mcpd (io.mcpd.agent=%s, io.mcpd.server=%s)",
		    agent != NULL ? agent : "none",
		    server != NULL ? server : "none");
	else
		return NULL;
	return text;
}

/* docker inspect said who holds the name: remove it only when it is ours. */
static void
docker_inspected(void *arg, int status, const char *out, const char *err)
{
	struct docker_container *ct = arg;
	json_t *info;
	const char *id;
	char *holder;

	ct->removing = NULL;
	if (status != 0) {
		docker_remove_end(ct, status, err, NULL);
		return;
	}
	info = json_loads(out, 0, NULL);
	if ((id = json_string_value(json_object_get(info, "id"))) == NULL) {
		docker_remove_end(ct, 1,
		    "docker inspect printed no container id", NULL);
		json_decref(info);
		return;
	}
	holder = docker_holder(ct, json_object_get(info, "labels"));
	if (holder != NULL) {
		log_warnx(
		    "container name %s is held by %s: mcpd leaves it alone",
		    ct->name, holder);
		docker_remove_end(ct, 0, "", holder);
	} else {
		const char *args[] = { docker_program(), "rm", "-f", id, NULL };

		ct->removing = docker_cmd_start(args, NULL,
		    mcpd_opts.docker_timeout_ms, NULL, docker_removed, ct);
	}
	free(holder);
	json_decref(info);
}

/*
 * A container this daemon started is removed by name; any other name is
 * looked at first (docker inspect) and removed, by id, only when its
 * labels say it is this daemon's: never a container of someone else.
 */
static void
docker_remove_start(struct docker_container *ct)
{
	const char *rm[] = { docker_program(), "rm", "-f", ct->name, NULL };
	const char *inspect[] = { docker_program(), "container", "inspect",
		"--format",
		"{\"id\":{{json .Id}},\"labels\":{{json .Config.Labels}}}",
		ct->name, NULL };

	evtimer_del(ct->retry);
	/* Removed by the name it ends with: after the rename. */
	if (ct->renaming != NULL) {
		ct->is_remove_due = true;
		return;
	}
	docker_remove_old_start(ct);
	if (ct->name == NULL || ct->removing != NULL)
		return;
	evtimer_del(ct->busy);
	if (ct->is_created)
		ct->removing = docker_cmd_start(rm, NULL,
		    mcpd_opts.docker_timeout_ms, NULL, docker_removed, ct);
	else
		ct->removing = docker_cmd_start(inspect, NULL,
		    mcpd_opts.docker_timeout_ms, NULL, docker_inspected, ct);
}

void
docker_container_remove(struct docker_container *ct, docker_removed_fn *fn,
    void *arg)
{
	struct docker_waiter *w;

	ct->is_conflict = false;
	w = xcalloc(1, sizeof *w);
	w->fn = fn;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&ct->waiters, w, entry);
	/* Nothing to remove: the answer still comes from the loop. */
	if (ct->name == NULL && ct->old == NULL)
		event_active(ct->tell, EV_TIMEOUT, 0);
	else
		docker_remove_start(ct);
}

/* The old one's removal had ended before anyone waited for it. */
static void
docker_old_ended(evutil_socket_t fd, short events, void *arg)
{
	struct docker_container *ct = arg;

	(void)fd, (void)events;
	if (!docker_is_removing(ct) && ct->removing_old == NULL)
		docker_tell_waiters(ct, ct->old != NULL ? -EIO : 0, NULL);
}

void
docker_container_wait_old(struct docker_container *ct, docker_removed_fn *fn,
    void *arg)
{
	struct docker_waiter *w = xcalloc(1, sizeof *w);

	w->fn = fn;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&ct->waiters, w, entry);
	if (ct->removing_old == NULL && !docker_is_removing(ct))
		event_active(ct->tell_old, EV_TIMEOUT, 0);
}

int
docker_container_switch(struct docker_container *ct, const char *name,
    enum docker_phase phase)
{
	if (ct->old != NULL || ct->name == NULL || !ct->is_created ||
	    docker_is_removing(ct))
		return -EBUSY;
	ct->old = ct->name;
	ct->name = NULL;
	docker_container_set(ct, name, phase);
	docker_remove_old_start(ct);
	return 0;
}

/*
 * The command that held the record (a rename, a create) ended, and the
 * record says what it left: a removal that waited goes now, and whoever
 * asked hears how it ended.
 */
static void
docker_held_ended(struct docker_container *ct, int status, const char *err)
{
	docker_removed_fn *fn = ct->renamed;
	char *why = status != 0 ? docker_describe_failure(status, err) : NULL;

	ct->renamed = NULL;
	if (ct->is_remove_due) {
		ct->is_remove_due = false;
		docker_remove_start(ct);
	}
	if (fn != NULL)
		fn(ct->renamed_arg, status == 0 ? 0 : -EIO, why);
	free(why);
}

/*
 * docker rename ended. Done, the container has only its new name. Failed,
 * it may have either: the old one (this daemon's probe) is removed by
 * name, the new one only after its labels say it is this daemon's (docker
 * refuses a name another container holds).
 */
static void
docker_renamed(void *arg, int status, const char *out, const char *err)
{
	struct docker_container *ct = arg;

	(void)out;
	ct->renaming = NULL;
	if (status == 0) {
		log_debug("container %s: renamed %s", ct->old, ct->name);
		free(ct->old);
		ct->old = NULL;
	} else
		ct->is_created = false;
	docker_held_ended(ct, status, err);
}

int
docker_container_rename(struct docker_container *ct, const char *name,
    enum docker_phase phase, docker_removed_fn *fn, void *arg)
{
	const char *args[] = { docker_program(), "rename", ct->name, name,
		NULL };

	if (ct->old != NULL || ct->name == NULL || !ct->is_created ||
	    docker_is_removing(ct) || ct->renaming != NULL)
		return -EBUSY;
	ct->renaming = docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms,
	    NULL, docker_renamed, ct);
	ct->renamed = fn;
	ct->renamed_arg = arg;
	ct->old = ct->name;
	ct->name = xstrdup(name);
	ct->phase = phase;
	return 0;
}

/*
 * docker create ended: the container exists under name (status 0), or
 * the engine made nothing. Only now may a removal go.
 */
static void
docker_created(void *arg, int status, const char *out, const char *err)
{
	struct docker_container *ct = arg;

	(void)out;
	ct->renaming = NULL;
	if (status == 0)
		ct->is_created = true;
	docker_held_ended(ct, status, err);
}

int
docker_container_create(struct docker_container *ct, char *const *argv,
    char *const *env, docker_removed_fn *fn, void *arg)
{
	if (ct->name == NULL || docker_is_removing(ct) || ct->renaming != NULL)
		return -EBUSY;
	/* The load's deadline bounds it (a pull), not docker's usual one. */
	ct->renaming = docker_cmd_start((const char *const *)argv, env,
	    mcpd_opts.load_timeout_ms, NULL, docker_created, ct);
	ct->renamed = fn;
	ct->renamed_arg = arg;
	return 0;
}

int
docker_container_rebase(struct docker_container *ct, const char *server,
    docker_removed_fn *fn, void *arg)
{
	char *name;
	int r;

	free(ct->server);
	free(ct->base);
	ct->server = xstrdup(server);
	if (strcmp(ct->agent, "default") == 0)
		ct->base = xstrdup(server);
	else
		xasprintf(&ct->base, "%s.%s", ct->agent, server);
	if (ct->name == NULL)
		return -ENOENT;
	name = docker_container_name_for(ct, ct->phase);
	r = docker_container_rename(ct, name, ct->phase, fn, arg);
	free(name);
	return r;
}

void
docker_container_unwait(struct docker_container *ct, void *arg)
{
	struct docker_waiter *w, *next;

	if (ct->renamed_arg == arg)
		ct->renamed = NULL;
	for (w = TAILQ_FIRST(&ct->waiters); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->arg == arg) {
			TAILQ_REMOVE(&ct->waiters, w, entry);
			free(w);
		}
	}
	/* Told already, from the loop: it hears nothing now. */
	TAILQ_FOREACH(w, &ct->told, entry)
		if (w->arg == arg)
			w->fn = NULL;
}
