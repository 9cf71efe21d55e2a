/* SPDX-License-Identifier: ISC */
/* A container start: stdio on `docker run -i` raced against HTTP detection. */
#include <sys/time.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "mcpd.h"

#define PROBE_RESEND_MS 100 /* between tries of a handshake over HTTP */
/* A remembered HTTP image that has not answered by then is probed. */
#define PROBE_DIRECT_MS 10000
/* Exposed ports a probe publishes at most (the first ones the image lists). */
#define PROBE_PUBLISH_MAX 8

enum probe_phase {
	PROBE_LOOKING,	 /* docker image inspect: which ports it exposes */
	PROBE_STDIO,	 /* docker run -i; stderr watched for HTTP */
	PROBE_SWITCHING, /* to the managed container: a new one, or renamed */
	PROBE_HTTP,	 /* Streamable HTTP to the published port */
};

struct probe {
	struct transport t;	    /* what the session holds */
	struct probe_target target; /* points into spec, agent, server */
	struct server_spec spec;    /* a copy: values may be resolved secrets */
	char *agent, *server;
	struct docker_container *ct; /* the server's record, borrowed */
	enum probe_phase phase;
	struct transport *inner;
	struct child_spec run;
	char **run_argv, **run_env;
	struct remote_spec remote;
	int port;      /* inside the container */
	int published[PROBE_PUBLISH_MAX]; /* the probe's, on 127.0.0.1 */
	size_t npublished;
	char *since; /* a promoted probe's logs are followed from then on */
	int host_port; /* published on 127.0.0.1 */
	char *path;
	json_t *held;	   /* [msg, tool] pairs not yet answered by anyone */
	bool is_confirmed; /* the server answered: the transport is known */
	struct docker_cmd *cmd;	 /* docker run -d or docker port */
	struct docker_cmd *logs; /* docker logs -f of the managed one */
	struct event *resend;
	struct event *step;	/* the switch, out of the inner's callback */
	struct event *deadline; /* of a remembered image's first answer */
	char *image_id;		/* what the managed container runs */
	char *remembered_id;	/* the image ID remembered as HTTP, or NULL */
	bool is_direct;		/* started managed at once, from the memory */
	char *run_failed; /* why docker run failed, while its name is checked */
	bool saw_name_conflict; /* docker said the name is already in use */
	bool is_closing;
	void (*done)(void *);
	void *done_arg;
};

static const struct transport_cbs probe_inner_cbs;
static void probe_look(struct probe *);
static void probe_fall_back(struct probe *, const char *why, bool forget);
static void probe_progress(struct probe *, const char *stage, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

static struct probe *
probe_of(struct transport *t)
{
	return (struct probe *)t;
}

/* ---- the switch to HTTP ---- */

static void
probe_fail_text(struct probe *p, const char *text)
{
	if (p->is_closing)
		return;
	p->is_closing = true;
	p->t.cbs->closed(p->t.cb_arg, text);
}

static void
probe_fail(struct probe *p, const char *fmt, const char *why)
{
	const char *name = docker_container_name(p->ct);
	char *text;

	xasprintf(&text, fmt, name != NULL ? name : "(none)",
	    why != NULL ? why : "");
	probe_fail_text(p, text);
	free(text);
}

/* docker's (and podman's) words for a name another container holds. */
static bool
probe_is_name_conflict(const char *text, size_t len)
{
	return memmem(text, len, "is already in use", 17) != NULL;
}

/*
 * The name's check after a failed docker run is over: a name someone
 * else holds fails the start as a conflict, naming the holder; anything
 * else with what docker said.
 */
static void
probe_run_checked(void *arg, int err, const char *holder)
{
	struct probe *p = arg;
	char *name = docker_container_name_for(p->ct,
	    p->phase == PROBE_STDIO ? DOCKER_PHASE_PROBE :
				      DOCKER_PHASE_MANAGED);
	char *text = NULL;

	if (err == 0 && (holder != NULL || p->saw_name_conflict)) {
		docker_container_note_conflict(p->ct);
		xasprintf(&text,
		    "the container name %s is taken by %s; mcpd removes only containers it started itself: remove that one (docker rm -f %s) or load this server under another --name",
		    name,
		    holder != NULL ?
			holder :
			"another container (gone by now: load again)",
		    name);
	}
	probe_fail_text(p, text != NULL ? text : p->run_failed);
	free(text);
	free(name);
}

/*
 * docker run failed before the server answered: whether the container
 * exists, and whose it is, is not known. It is removed only when its
 * labels say it is this daemon's; why waits until that is known.
 */
static void
probe_run_failed(struct probe *p, const char *fmt, const char *why)
{
	const char *name = docker_container_name(p->ct);

	if (p->is_closing || p->run_failed != NULL)
		return;
	xasprintf(&p->run_failed, fmt, name != NULL ? name : "(none)",
	    why != NULL ? why : "");
	docker_container_remove(p->ct, probe_run_checked, p);
}

/* Sends the held handshake messages again over the current inner one. */
static void
probe_send_held(struct probe *p)
{
	json_t *pair;
	size_t i;

	json_array_foreach(p->held, i, pair)
		p->inner->ops->send(p->inner, json_array_get(pair, 0),
		    json_array_get(pair, 1));
}

static void
probe_resend_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;

	(void)fd, (void)events;
	if (p->phase == PROBE_HTTP && !p->is_confirmed)
		probe_send_held(p);
}

static void
probe_logs_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct probe *p = arg;

	(void)is_stderr;
	if (!p->is_closing)
		p->t.cbs->stderr_line(p->t.cb_arg, line, len);
}

/* docker logs -f ends when the managed container does. */
static void
probe_logs_ended(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;
	char *why = docker_describe_failure(status, err);

	(void)out;
	p->logs = NULL;
	if (p->is_direct && !p->is_confirmed) {
		probe_fall_back(p, "the container stopped", true);
		free(why);
		return;
	}
	if (status == -1)
		probe_fail(p, "cannot follow container %s: %s", why);
	else
		probe_fail(p, "container %s stopped (%s)", why);
	free(why);
}

/* Connects Streamable HTTP to the published port. */
static void
probe_connect(struct probe *p, int host_port)
{
	char *cause = NULL, *since = NULL;
	const char *args[] = { docker_program(), "logs", "--follow",
		docker_container_name(p->ct), NULL, NULL };

	xasprintf(&p->remote.url, "http://127.0.0.1:%d%s", host_port, p->path);
	p->remote.allow_local = true;
	/* A promoted probe's lines up to the switch were read already. */
	if (p->since != NULL) {
		xasprintf(&since, "--since=%s", p->since);
		args[4] = args[3];
		args[3] = since;
	}
	/* A docker logs that cannot start ends at once: probe_logs_ended. */
	p->logs = docker_cmd_start(args, NULL, 0, probe_logs_line,
	    probe_logs_ended, p);
	free(since);
	p->inner = transport_http_new(&p->remote, &probe_inner_cbs, p);
	p->phase = PROBE_HTTP;
	log_debug("container %s: HTTP on %s", docker_container_name(p->ct),
	    p->remote.url);
	probe_progress(p, "connecting", "connecting to %s", p->remote.url);
	if (p->inner->ops->open(p->inner, &cause) < 0) {
		probe_fail(p, "cannot connect to container %s: %s",
		    cause != NULL ? cause : "unknown error");
		free(cause);
		return;
	}
	probe_send_held(p);
}

/* The probe's removal, in the background of the managed start, ended. */
static void
probe_old_removed(void *arg, int err, const char *why)
{
	struct probe *p = arg;

	if (err < 0) {
		probe_fail(p, "cannot remove the probe container of %s: %s",
		    why);
		return;
	}
	probe_connect(p, p->host_port);
}

/* The host port of port/tcp in docker inspect's NetworkSettings.Ports. */
static int
probe_host_port(const char *json, int port)
{
	json_t *ports = json_loads(json, 0, NULL), *b;
	char key[16];
	size_t i;
	int host = 0;

	snprintf(key, sizeof key, "%d/tcp", port);
	json_array_foreach(json_object_get(ports, key), i, b) {
		const char *hp = json_string_value(json_object_get(b,
		    "HostPort"));

		if (hp != NULL &&
		    (host = probe_detect_port(hp, hp + strlen(hp))) > 0)
			break;
	}
	json_decref(ports);
	return host;
}

/*
 * `docker container inspect` says "<image id> <ports>": the image the
 * container runs (what the memory is keyed by) and the published port,
 * in the one call that the port costs anyway.
 */
static void
probe_inspected(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;
	const char *sp = strchr(out, ' ');
	char *why;
	int port = 0;

	p->cmd = NULL;
	if (status == 0 && sp != NULL) {
		port = probe_host_port(sp + 1, p->port);
		p->image_id = xstrndup(out, sp - out);
	}
	if (p->is_direct && p->image_id != NULL &&
	    strcmp(p->image_id, p->remembered_id) != 0) {
		/* The tag moved: what the new image serves is not known. */
		imagemem_unref(p->target.spec->image, p->remembered_id);
		probe_fall_back(p, "the image is another one now", false);
		return;
	}
	if (p->is_direct && p->image_id != NULL && port == 0) {
		/* Ended already (a stdio server without stdin does). */
		probe_fall_back(p, "the container stopped", true);
		return;
	}
	if (port == 0) {
		why = status != 0 ? docker_describe_failure(status, err) :
				    xstrdup(out);
		probe_fail(p, "cannot read the published port of %s: %s",
		    why != NULL ? why : "");
		free(why);
		return;
	}
	p->host_port = port;
	/* Ready only once the probe is gone: it went while this one started. */
	if (docker_container_old_name(p->ct) != NULL)
		docker_container_wait_old(p->ct, probe_old_removed, p);
	else
		probe_connect(p, port);
}

/* The managed container's image and published port: probe_inspected. */
static void
probe_inspect_managed(struct probe *p)
{
	const char *args[] = { docker_program(), "container", "inspect",
		"--format", "{{.Image}} {{json .NetworkSettings.Ports}}",
		docker_container_name(p->ct), NULL };

	p->cmd = docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    probe_inspected, p);
}

static void
probe_managed_started(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;
	char *why;

	(void)out;
	p->cmd = NULL;
	if (status != 0) {
		why = docker_describe_failure(status, err);
		p->saw_name_conflict = status > 0 &&
		    probe_is_name_conflict(err, strlen(err));
		probe_run_failed(p, "cannot start container %s: %s", why);
		free(why);
		return;
	}
	docker_container_created(p->ct);
	probe_inspect_managed(p);
}

/* docker run -d of the managed container, its name recorded already. */
static void
probe_run_managed(struct probe *p)
{
	char **argv = probe_argv(&p->target, docker_container_name(p->ct),
	    DOCKER_PHASE_MANAGED, &p->port, 1);

	p->cmd = docker_cmd_start((const char *const *)argv,
	    p->target.spec->env, 0, NULL, probe_managed_started, p);
	child_strv_wipe_free(argv);
}

/* The probe is gone (the switch that waits for it): start the managed one. */
static void
probe_removed(void *arg, int err, const char *why)
{
	struct probe *p = arg;
	char *name;

	if (err < 0) {
		probe_fail(p, "cannot remove the probe container %s: %s", why);
		return;
	}
	name = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);
	docker_container_set(p->ct, name, DOCKER_PHASE_MANAGED);
	free(name);
	probe_run_managed(p);
}

/* The promoted probe has its managed name: read its port, then connect. */
static void
probe_renamed(void *arg, int err, const char *why)
{
	struct probe *p = arg;

	if (err < 0) {
		p->saw_name_conflict = why != NULL &&
		    probe_is_name_conflict(why, strlen(why));
		probe_run_failed(p, "cannot rename the probe container to %s: %s",
		    why);
		return;
	}
	probe_inspect_managed(p);
}

/* True when the probe publishes port (on 127.0.0.1) already. */
static bool
probe_is_published(const struct probe *p, int port)
{
	for (size_t i = 0; i < p->npublished; i++)
		if (p->published[i] == port)
			return true;
	return false;
}

/*
 * The probe itself becomes the managed container: its docker run -i goes
 * (killed: the container runs on, its stdin at end of file as a docker
 * run -d's is), and it is renamed rax-mcp-... .
 */
static void
probe_promote(struct probe *p, const char *name)
{
	if (docker_container_rename(p->ct, name, DOCKER_PHASE_MANAGED,
		probe_renamed, p) < 0)
		probe_fail(p, "cannot rename the probe container %s: %s",
		    "its record is busy");
}

/*
 * Out of the inner's callback: the probe's docker run -i goes. A probe
 * that listens on a port it publishes is promoted; else the probe
 * container is removed in the background (docker_container_switch) while
 * the managed one starts; both names are distinct, and the record keeps
 * both until the removal ends.
 */
static void
probe_switch_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;
	char *name = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);

	(void)fd, (void)events;
	p->inner->ops->free(p->inner);
	p->inner = NULL;
	if (probe_is_published(p, p->port))
		probe_promote(p, name);
	else if (docker_container_switch(p->ct, name, DOCKER_PHASE_MANAGED) == 0)
		probe_run_managed(p);
	else
		docker_container_remove(p->ct, probe_removed, p);
	free(name);
}

/* Tells the session (and a client following the load) how far it got. */
static void
probe_progress(struct probe *p, const char *stage, const char *fmt, ...)
{
	va_list ap;
	char text[512];

	if (p->t.cbs == NULL || p->t.cbs->progress == NULL || p->is_closing)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	p->t.cbs->progress(p->t.cb_arg, stage, text);
}

/* When the docker logs of a promoted probe are followed from: now. */
static char *
probe_now(void)
{
	struct timeval tv;
	char *now;

	gettimeofday(&tv, NULL);
	xasprintf(&now, "%lld.%06ld", (long long)tv.tv_sec, (long)tv.tv_usec);
	return now;
}

static void
probe_switch(struct probe *p, int port, char *path)
{
	char *managed = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);

	if (probe_is_published(p, port)) {
		p->since = probe_now();
		probe_progress(p, "http-detected",
		    "HTTP on port %d (path %s), published on 127.0.0.1 already: renaming the probe %s",
		    port, path, managed);
		log_server(LOG_INFO, p->target.server,
		    "container %s serves HTTP on port %d (path %s), published on 127.0.0.1: renaming it %s",
		    docker_container_name(p->ct), port, path, managed);
	} else {
		probe_progress(p, "http-detected",
		    "HTTP on port %d (path %s): removing the probe, starting %s with the port on 127.0.0.1",
		    port, path, managed);
		log_server(LOG_INFO, p->target.server,
		    "container %s serves HTTP on port %d (path %s): restarting it as a managed container",
		    docker_container_name(p->ct), port, path);
	}
	free(managed);
	/* The container itself said it listens: it is this daemon's. */
	docker_container_created(p->ct);
	p->phase = PROBE_SWITCHING;
	p->port = port;
	p->path = path;
	p->t.name = "streamable-http";
	event_active(p->step, EV_TIMEOUT, 0);
}

/* ---- a remembered HTTP image: the managed container at once ---- */

static void
probe_direct_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;

	struct timeval tv = { 0, PROBE_RESEND_MS * 1000 };

	(void)fd, (void)events;
	/* A docker run -d that is cut off could still leave a container. */
	if (p->cmd != NULL)
		evtimer_add(p->deadline, &tv);
	else if (p->is_direct && !p->is_confirmed)
		probe_fall_back(p, "no HTTP answer in time", true);
}

/* Starts rax-mcp-... as the memory says the image ID answered before. */
static void
probe_start_direct(struct probe *p, char *id, int port, char *path)
{
	struct timeval tv = { PROBE_DIRECT_MS / 1000,
		(PROBE_DIRECT_MS % 1000) * 1000 };
	char *name = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);

	p->is_direct = true;
	p->remembered_id = id;
	p->port = port;
	p->path = path;
	p->phase = PROBE_SWITCHING;
	p->t.name = "streamable-http";
	log_server(LOG_INFO, p->target.server,
	    "image %s (%s) answered HTTP on port %d before: starting %s directly",
	    p->target.spec->image, id, port, name);
	probe_progress(p, "remembered",
	    "image %s answered HTTP on port %d before: starting %s with the port on 127.0.0.1",
	    id, port, name);
	/* The record first: a failed start leaves something to remove. */
	docker_container_set(p->ct, name, DOCKER_PHASE_MANAGED);
	free(name);
	evtimer_add(p->deadline, &tv);
	probe_run_managed(p);
}

/* The removed managed container's successor: the full probe. */
static void
probe_direct_removed(void *arg, int err, const char *why)
{
	struct probe *p = arg;

	if (err < 0) {
		probe_fail(p, "cannot remove container %s: %s", why);
		return;
	}
	if (p->inner != NULL)
		p->inner->ops->free(p->inner);
	p->inner = NULL;
	free(p->remote.url);
	p->remote.url = NULL;
	free(p->path);
	p->path = NULL;
	free(p->image_id);
	p->image_id = NULL;
	p->is_direct = false;
	p->t.name = "stdio";
	probe_look(p);
}

/*
 * The remembered image did not answer HTTP: its managed container goes
 * and the full probe starts; what was remembered of the image ID is
 * forgotten when it was the same image.
 */
static void
probe_fall_back(struct probe *p, const char *why, bool forget)
{
	const char *name = docker_container_name(p->ct);

	if (p->is_closing || !p->is_direct || p->phase == PROBE_STDIO ||
	    p->is_confirmed)
		return;
	log_server(LOG_WARNING, p->target.server,
	    "container %s of image %s did not answer HTTP as remembered (%s): %sremoving it and probing the image",
	    name != NULL ? name : "(none)", p->remembered_id, why,
	    forget ? "forgetting the image, " : "");
	probe_progress(p, "probing",
	    "image %s did not answer HTTP as remembered (%s): probing it",
	    p->remembered_id, why);
	if (forget)
		imagemem_forget(p->remembered_id);
	p->is_direct = false;
	docker_cmd_cancel(p->cmd);
	docker_cmd_cancel(p->logs);
	p->cmd = p->logs = NULL;
	evtimer_del(p->resend);
	evtimer_del(p->deadline);
	p->phase = PROBE_SWITCHING;
	docker_container_remove(p->ct, probe_direct_removed, p);
}

/* ---- the inner transport's callbacks ---- */

static bool
probe_on_raw(void *arg, const char *line, size_t len)
{
	struct probe *p = arg;

	if (p->t.cbs->raw == NULL || !p->t.cbs->raw(p->t.cb_arg, line, len))
		return false;
	p->is_confirmed = true;
	return true;
}

static void
probe_on_message(void *arg, json_t *msg)
{
	struct probe *p = arg;

	if (p->phase == PROBE_SWITCHING)
		return;
	if (!p->is_confirmed) {
		p->is_confirmed = true;
		json_array_clear(p->held);
		evtimer_del(p->resend);
		evtimer_del(p->deadline);
		/* The transport that won, for the next start of this image. */
		if (p->phase == PROBE_HTTP && !p->is_direct &&
		    p->image_id != NULL)
			imagemem_remember(p->target.spec->image, p->image_id,
			    p->port, p->path);
	}
	if (p->phase == PROBE_STDIO)
		docker_container_created(p->ct);
	p->t.cbs->message(p->t.cb_arg, msg);
}

/* Over HTTP, until the server first answers, a failure means "not yet". */
static void
probe_on_failed(void *arg, const json_t *id, enum errors_kind kind,
    const char *why)
{
	struct probe *p = arg;
	struct timeval tv = { 0, PROBE_RESEND_MS * 1000 };

	if (p->phase == PROBE_SWITCHING)
		return;
	if (p->phase == PROBE_HTTP && !p->is_confirmed) {
		log_debug("container %s not answering yet: %s",
		    docker_container_name(p->ct), why);
		if (!evtimer_pending(p->resend, NULL))
			evtimer_add(p->resend, &tv);
		return;
	}
	p->t.cbs->failed(p->t.cb_arg, id, kind, why);
}

static void
probe_on_stderr(void *arg, const char *line, size_t len)
{
	struct probe *p = arg;
	char *path = NULL;
	int port;

	if (p->phase == PROBE_SWITCHING || p->is_closing)
		return;
	p->t.cbs->stderr_line(p->t.cb_arg, line, len);
	if (p->phase == PROBE_STDIO && !p->is_confirmed &&
	    probe_is_name_conflict(line, len))
		p->saw_name_conflict = true;
	if (p->phase == PROBE_STDIO && !p->is_confirmed &&
	    (strstr(line, "Unable to find image") != NULL ||
		strstr(line, "Pulling from") != NULL))
		probe_progress(p, "pulling", "%.*s", (int)len, line);
	if (p->phase == PROBE_STDIO && !p->is_confirmed &&
	    probe_detect_http(line, len, &port, &path) > 0)
		probe_switch(p, port, path);
}

static void
probe_on_closed(void *arg, const char *why)
{
	struct probe *p = arg;

	if (p->phase == PROBE_SWITCHING || p->is_closing)
		return;
	if (p->phase == PROBE_STDIO && !p->is_confirmed)
		probe_run_failed(p, "docker run of %s ended: %s", why);
	else if (p->is_direct && !p->is_confirmed)
		probe_fall_back(p, why, true);
	else if (p->phase == PROBE_STDIO)
		probe_fail(p, "docker run of %s ended: %s", why);
	else
		probe_fail(p, "the HTTP connection to %s ended: %s", why);
}

static const struct transport_cbs probe_inner_cbs = {
	.raw = probe_on_raw,
	.message = probe_on_message,
	.failed = probe_on_failed,
	.stderr_line = probe_on_stderr,
	.closed = probe_on_closed,
};

/* ---- the transport the session sees ---- */

/* docker run -i of the probe: stdio, its stderr watched for HTTP. */
static int
probe_start_stdio(struct probe *p, char **cause)
{
	char *name = docker_container_name_for(p->ct, DOCKER_PHASE_PROBE);
	int r;

	/* The record first: a failed start leaves something to remove. */
	docker_container_set(p->ct, name, DOCKER_PHASE_PROBE);
	child_strv_wipe_free(p->run_argv);
	p->run_argv = probe_argv(&p->target, name, DOCKER_PHASE_PROBE,
	    p->published, p->npublished);
	p->run.argv = p->run_argv;
	p->run.env = p->run_env;
	free(name);
	p->phase = PROBE_STDIO;
	p->inner = transport_stdio_new(&p->run, &probe_inner_cbs, p);
	probe_progress(p, "probing",
	    "running %s: stdio handshake, stderr watched for HTTP",
	    docker_container_name(p->ct));
	r = p->inner->ops->open(p->inner, cause);
	if (r < 0) /* docker did not even start: nothing can exist */
		docker_container_set(p->ct, NULL, DOCKER_PHASE_PROBE);
	return r;
}

/* The image's exposed ports are known (or not): the probe starts. */
static void
probe_looked(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;
	char *cause = NULL;

	(void)err;
	p->cmd = NULL;
	/* An image not pulled yet is not inspected: it publishes nothing. */
	p->npublished = status == 0 ?
	    probe_detect_exposed(out, p->published, PROBE_PUBLISH_MAX) :
	    0;
	log_debug("image %s: %zu exposed TCP port(s) to publish",
	    p->target.spec->image, p->npublished);
	if (probe_start_stdio(p, &cause) < 0) {
		probe_fail(p, "cannot start the probe container %s: %s",
		    cause != NULL ? cause : "");
		free(cause);
		return;
	}
	probe_send_held(p);
}

/*
 * The ports the image exposes are published by the probe (on 127.0.0.1):
 * a probe that says it listens on one of them becomes the managed
 * container, with no second start.
 */
static void
probe_look(struct probe *p)
{
	const char *args[] = { docker_program(), "image", "inspect",
		"--format", "{{json .Config.ExposedPorts}}",
		p->target.spec->image, NULL };

	p->phase = PROBE_LOOKING;
	free(p->since);
	p->since = NULL;
	p->cmd = docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    probe_looked, p);
}

static int
probe_open(struct transport *t, char **cause)
{
	struct probe *p = probe_of(t);
	char *id, *path;
	int port;

	(void)cause;
	docker_note_use();
	if (imagemem_lookup(p->target.spec->image, &id, &port, &path) > 0)
		probe_start_direct(p, id, port, path);
	else
		probe_look(p);
	return 0;
}

static int
probe_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct probe *p = probe_of(t);

	/*
	 * A request the session gave up on (it sends notifications/cancelled)
	 * is not held any longer: over HTTP it would only race the one that
	 * replaced it (a stale server/discover next to initialize).
	 */
	if (!p->is_confirmed && jsonrpc_unqueue_cancelled(p->held, msg) >= 0 &&
	    p->phase != PROBE_STDIO)
		return 0;
	if (!p->is_confirmed && json_object_get(msg, "id") != NULL)
		json_array_append_new(p->held,
		    json_pack("[OO]", msg, tool != NULL ? tool : json_null()));
	if (p->phase == PROBE_SWITCHING || p->phase == PROBE_LOOKING)
		return 0;
	return p->inner->ops->send(p->inner, msg, tool);
}

static void
probe_drain(struct transport *t)
{
	struct probe *p = probe_of(t);

	if (p->inner != NULL && p->inner->ops->drain != NULL)
		p->inner->ops->drain(p->inner);
}

static void
probe_stop_helpers(struct probe *p)
{
	p->is_closing = true;
	docker_container_unwait(p->ct, p);
	docker_cmd_cancel(p->cmd);
	docker_cmd_cancel(p->logs);
	p->cmd = p->logs = NULL;
	evtimer_del(p->resend);
	event_del(p->step);
	evtimer_del(p->deadline);
}

static void
probe_free(struct transport *t)
{
	struct probe *p = probe_of(t);

	probe_stop_helpers(p);
	if (p->inner != NULL)
		p->inner->ops->free(p->inner);
	event_free(p->resend);
	event_free(p->step);
	event_free(p->deadline);
	free(p->image_id);
	free(p->remembered_id);
	child_strv_wipe_free(p->run_argv);
	child_strv_wipe_free(p->run_env);
	spec_clear(&p->spec);
	free(p->agent);
	free(p->server);
	free(p->remote.url);
	free(p->path);
	free(p->run_failed);
	free(p->since);
	json_decref(p->held);
	free(p);
}

static void
probe_closed_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;

	(void)fd, (void)events;
	p->done(p->done_arg);
}

/* The container is removed by its owner first; this ends the pipes. */
static void
probe_close(struct transport *t, void (*done)(void *), void *arg)
{
	struct probe *p = probe_of(t);

	probe_stop_helpers(p);
	if (p->inner != NULL) {
		p->inner->ops->close(p->inner, done, arg);
		return;
	}
	p->done = done;
	p->done_arg = arg;
	event_assign(p->resend, mcpd_base, -1, 0, probe_closed_due, p);
	event_active(p->resend, EV_TIMEOUT, 0);
}

static const struct transport_ops probe_ops = {
	.name = "container",
	.open = probe_open,
	.send = probe_send,
	.drain = probe_drain,
	.close = probe_close,
	.free = probe_free,
};

struct transport *
probe_new(const struct probe_target *target, struct docker_container *ct,
    const struct transport_cbs *cbs, void *arg)
{
	struct probe *p = xcalloc(1, sizeof *p);

	p->t.ops = &probe_ops;
	p->t.name = "stdio";
	p->t.cbs = cbs;
	p->t.cb_arg = arg;
	spec_copy(&p->spec, target->spec);
	p->agent = xstrdup(target->agent);
	p->server = xstrdup(target->server);
	p->target.spec = &p->spec;
	p->target.agent = p->agent;
	p->target.server = p->server;
	p->ct = ct;
	p->held = xjson(json_array());
	p->resend = evtimer_new(mcpd_base, probe_resend_due, p);
	p->step = event_new(mcpd_base, -1, 0, probe_switch_due, p);
	p->deadline = evtimer_new(mcpd_base, probe_direct_due, p);
	p->run_env = docker_env(p->spec.env);
	if (p->resend == NULL || p->step == NULL || p->deadline == NULL)
		fatal("out of memory");
	return &p->t;
}
