/* SPDX-License-Identifier: ISC */
/* A container start: stdio on `docker run -i` raced against HTTP detection. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "probe-int.h"

static struct probe *
probe_of(struct transport *t)
{
	return (struct probe *)t;
}

/* ---- failures, and the handshake held for the next transport ---- */

/* The session's closed callback can end the probe: held until it returns. */
static void
probe_fail_text(struct probe *p, const char *text)
{
	probe_ref(p);
	transport_wrap_fail(&p->w, text);
	probe_unref(p);
}

void
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
bool
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
void
probe_run_failed(struct probe *p, const char *fmt, const char *why)
{
	const char *name = docker_container_name(p->ct);

	if (p->w.is_closing || p->run_failed != NULL)
		return;
	xasprintf(&p->run_failed, fmt, name != NULL ? name : "(none)",
	    why != NULL ? why : "");
	docker_container_remove(p->ct, probe_run_checked, p);
}

/* Sends the held handshake messages again over the current inner one. */
void
probe_send_held(struct probe *p)
{
	transport_hold_send(&p->w.hold, p->w.inner);
}

/* Tells the session (and a client following the load) how far it got. */
void
probe_progress(struct probe *p, const char *stage, const char *fmt, ...)
{
	va_list ap;
	char text[512];

	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	transport_wrap_progress(&p->w, stage, text);
}

/* ---- what the probe adds to the wrapper's forwarding (transport-wrap.c) ---- */

static struct probe *
probe_of_wrap(const struct transport_wrap *w)
{
	return (struct probe *)(uintptr_t)w;
}

/* An inner transport it is switching away from is not heard. */
static bool
probe_is_heard(const struct transport_wrap *w)
{
	return probe_of_wrap(w)->phase != PROBE_SWITCHING;
}

/* Over HTTP, until the server first answers, a failure means "not yet". */
static bool
probe_waits_listen(const struct transport_wrap *w)
{
	return probe_of_wrap(w)->phase == PROBE_HTTP;
}

static void
probe_describe(const struct transport_wrap *w, char *buf, size_t size)
{
	snprintf(buf, size, "container %s",
	    docker_container_name(probe_of_wrap(w)->ct));
}

/* The first answer: the image's transport is remembered. */
static void
probe_confirmed(struct transport_wrap *w)
{
	struct probe *p = probe_of_wrap(w);

	evtimer_del(p->deadline);
	/* Its next probe need not ask which ports it exposes. */
	if (p->phase == PROBE_STDIO && !p->is_known_stdio)
		imagemem_remember_stdio(p->target.spec->image);
	/* The transport that won, for the next start of this image. */
	if (p->phase == PROBE_HTTP && !p->is_direct && p->image_id != NULL)
		imagemem_remember(p->target.spec->image, p->image_id, p->port,
		    p->path);
}

static void
probe_on_message(struct transport_wrap *w)
{
	struct probe *p = probe_of_wrap(w);

	if (p->phase == PROBE_STDIO)
		docker_container_created(p->ct);
}

/* Until the server answers, the probe's stderr may say it speaks HTTP. */
static void
probe_on_stderr(struct transport_wrap *w, const char *line, size_t len)
{
	struct probe *p = probe_of_wrap(w);
	char *path = NULL;
	int port;

	if (p->phase != PROBE_STDIO || p->w.hold.is_confirmed)
		return;
	if (probe_is_name_conflict(line, len))
		p->saw_name_conflict = true;
	if (strstr(line, "Unable to find image") != NULL ||
	    strstr(line, "Pulling from") != NULL)
		probe_progress(p, "pulling", "%.*s", (int)len, line);
	if (probe_detect_http(line, len, &port, &path) > 0)
		probe_http_switch(p, port, path);
}

static void
probe_on_closed(struct transport_wrap *w, const char *why)
{
	struct probe *p = probe_of_wrap(w);

	if (p->phase == PROBE_STDIO && !p->w.hold.is_confirmed)
		probe_run_failed(p, "docker run of %s ended: %s", why);
	else if (p->is_direct && !p->w.hold.is_confirmed)
		probe_http_fall_back(p, why, true);
	else if (p->phase == PROBE_STDIO)
		probe_fail(p, "docker run of %s ended: %s", why);
	else
		probe_fail(p, "the HTTP connection to %s ended: %s", why);
}

static const struct transport_wrap_hooks probe_hooks = {
	.is_heard = probe_is_heard,
	.waits_listen = probe_waits_listen,
	.describe = probe_describe,
	.confirmed = probe_confirmed,
	.message = probe_on_message,
	.stderr_line = probe_on_stderr,
	.closed = probe_on_closed,
};

/* ---- the transport the session sees ---- */

/*
 * A probe's phases: looking at the image, then stdio, then switching to
 * the managed container, then HTTP; a remembered image goes straight to
 * switching, and one that no longer answers as remembered goes back to
 * looking (doc/states.md).
 */
static const char *const probe_phase_names[] = { "looking", "stdio",
	"switching", "http" };
static const unsigned probe_phase_next[] = {
#define S(x) (1u << PROBE_##x)
	[PROBE_LOOKING] = S(STDIO) | S(SWITCHING),
	[PROBE_STDIO] = S(SWITCHING),
	[PROBE_SWITCHING] = S(HTTP) | S(LOOKING),
	[PROBE_HTTP] = S(SWITCHING),
#undef S
};
const struct fsm probe_fsm = { "probe", probe_phase_names, probe_phase_next,
	sizeof probe_phase_names / sizeof *probe_phase_names };

void
probe_set_phase(struct probe *p, enum probe_phase phase)
{
	p->phase = fsm_move(&probe_fsm, p->phase, phase, p->target.server);
}

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
	probe_set_phase(p, PROBE_STDIO);
	p->w.inner = transport_stdio_new(&p->run, &transport_wrap_cbs, &p->w);
	probe_progress(p, "probing",
	    "running %s: stdio handshake, stderr watched for HTTP",
	    docker_container_name(p->ct));
	r = p->w.inner->ops->open(p->w.inner, cause);
	if (r < 0) /* docker did not even start: nothing can exist */
		docker_container_set(p->ct, NULL, DOCKER_PHASE_PROBE);
	return r;
}

/* The probe with the ports in p->published; fails the start if it cannot. */
static void
probe_start_probe(struct probe *p)
{
	char *cause = NULL;

	if (probe_start_stdio(p, &cause) < 0) {
		probe_fail(p, "cannot start the probe container %s: %s",
		    cause != NULL ? cause : "");
		free(cause);
		return;
	}
	probe_send_held(p);
}

/* The image's exposed ports are known (or not): the probe starts. */
static void
probe_looked(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;

	(void)err;
	p->cmd = NULL;
	/* An image not pulled yet is not inspected: it publishes nothing. */
	p->npublished = status == 0 ?
	    probe_detect_exposed(out, p->published, PROBE_PUBLISH_MAX) :
	    0;
	log_debug("image %s: %zu exposed TCP port(s) to publish",
	    p->target.spec->image, p->npublished);
	probe_start_probe(p);
}

/*
 * The ports the image exposes are published by the probe (on 127.0.0.1):
 * a probe that says it listens on one of them becomes the managed
 * container, with no second start.
 */
void
probe_look(struct probe *p)
{
	const char *args[] = { docker_program(), "image", "inspect", "--format",
		"{{json .Config.ExposedPorts}}", p->target.spec->image, NULL };

	probe_set_phase(p, PROBE_LOOKING);
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

	docker_note_use();
	switch (imagemem_lookup(p->target.spec->image, &id, &port, &path)) {
	case 1:
		probe_http_start_direct(p, id, port, path);
		return 0;
	case 2: /* stdio before: the probe publishes nothing, asks nothing */
		p->is_known_stdio = true;
		return probe_start_stdio(p, cause);
	default:
		probe_look(p);
		return 0;
	}
}

static int
probe_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct probe *p = probe_of(t);

	/* Over stdio the cancel goes on: the probe reads what it was sent. */
	if (transport_hold_note(&p->w.hold, msg, tool) &&
	    p->phase != PROBE_STDIO)
		return 0;
	if (p->phase == PROBE_SWITCHING || p->phase == PROBE_LOOKING)
		return 0;
	return p->w.inner->ops->send(p->w.inner, msg, tool);
}

static void
probe_drain(struct transport *t)
{
	struct probe *p = probe_of(t);

	if (p->w.inner != NULL && p->w.inner->ops->drain != NULL)
		p->w.inner->ops->drain(p->w.inner);
}

static void
probe_stop_helpers(struct probe *p)
{
	p->w.is_closing = true;
	docker_container_unwait(p->ct, p);
	docker_cmd_cancel(p->cmd);
	docker_cmd_cancel(p->logs);
	p->cmd = p->logs = NULL;
	transport_hold_stop(&p->w.hold);
	event_del(p->step);
	evtimer_del(p->deadline);
}

static void
probe_release(void *arg)
{
	struct probe *p = arg;

	docker_container_unref(p->ct);
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
	free(p);
}

void
probe_ref(struct probe *p)
{
	p->references++;
}

/*
 * The memory goes from the loop, as the other transports' does, so that
 * a caller up the stack (a failure that ended in a free) never returns
 * into a freed probe.
 */
void
probe_unref(struct probe *p)
{
	if (--p->references == 0)
		defer_call(probe_release, p);
}

/* Nothing of the probe runs any more; the session's reference goes. */
static void
probe_free(struct transport *t)
{
	struct probe *p = probe_of(t);

	probe_stop_helpers(p);
	transport_wrap_free(&p->w);
	event_free(p->step);
	event_free(p->deadline);
	p->step = p->deadline = NULL;
	probe_unref(p);
}

/* Its close ended; a probe freed meanwhile tells no one. */
static void
probe_closed_now(void *arg)
{
	struct probe *p = arg;

	transport_wrap_closed_now(&p->w);
	probe_unref(p);
}

/* The container is removed by its owner first; this ends the pipes. */
static void
probe_close(struct transport *t, void (*done)(void *), void *arg)
{
	struct probe *p = probe_of(t);

	probe_stop_helpers(p);
	if (p->w.inner != NULL) {
		p->w.inner->ops->close(p->w.inner, done, arg);
		return;
	}
	p->w.done = done;
	p->w.done_arg = arg;
	probe_ref(p); /* until the loop answers */
	defer_call(probe_closed_now, p);
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

	p->references = 1; /* the session's, through the transport */
	transport_wrap_init(&p->w, &probe_ops, "stdio", &probe_hooks,
	    PROBE_RESEND_MS, cbs, arg);
	spec_copy(&p->spec, target->spec);
	p->agent = xstrdup(target->agent);
	p->server = xstrdup(target->server);
	p->target.spec = &p->spec;
	p->target.agent = p->agent;
	p->target.server = p->server;
	p->ct = ct;
	docker_container_ref(ct); /* its server can go first */
	p->step = event_new(mcpd_base, -1, 0, probe_http_switch_due, p);
	p->deadline = evtimer_new(mcpd_base, probe_http_direct_due, p);
	p->run_env = docker_env(p->spec.env);
	if (p->step == NULL || p->deadline == NULL)
		fatal("out of memory");
	return &p->w.t;
}

json_t *
probe_save(struct transport *t)
{
	struct probe *p;
	json_t *inner;

	if (t == NULL || t->ops != &probe_ops)
		return NULL;
	p = probe_of(t);
	if (!p->w.hold.is_confirmed || p->w.is_closing ||
	    docker_container_name(p->ct) == NULL)
		return NULL;
	if (p->phase == PROBE_STDIO &&
	    (inner = transport_stdio_save(p->w.inner)) != NULL)
		return json_pack("{s:s, s:o}", "name",
		    docker_container_name(p->ct), "stdio", inner);
	if (p->phase == PROBE_HTTP &&
	    (inner = transport_http_save(p->w.inner)) != NULL)
		return json_pack("{s:s, s:i, s:s?, s:o}", "name",
		    docker_container_name(p->ct), "host_port", p->host_port,
		    "path", p->path, "http", inner);
	return NULL;
}
