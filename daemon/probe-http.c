/* SPDX-License-Identifier: ISC */
/* A container start's switch to HTTP: the probe promoted or replaced. */
#include <sys/time.h>

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "probe-int.h"

static void
probe_logs_line(void *arg, const char *line, size_t len, bool is_stderr)
{
	struct probe *p = arg;

	(void)is_stderr;
	if (!p->w.is_closing)
		p->w.t.cbs->stderr_line(p->w.t.cb_arg, line, len);
}

/* docker logs -f ends when the managed container does. */
static void
probe_logs_ended(void *arg, int status, const char *out, const char *err)
{
	struct probe *p = arg;
	char *why = docker_describe_failure(status, err);

	(void)out;
	p->logs = NULL;
	if (p->is_direct && !p->w.hold.is_confirmed) {
		probe_http_fall_back(p, "the container stopped", true);
		free(why);
		return;
	}
	if (status == -1)
		probe_fail(p, "cannot follow container %s: %s", why);
	else
		probe_fail(p, "container %s stopped (%s)", why);
	free(why);
}

/* The managed container's output becomes the server's stderr. */
static void
probe_follow_logs(struct probe *p)
{
	char *since = NULL;
	const char *args[] = { docker_program(), "logs", "--follow",
		docker_container_name(p->ct), NULL, NULL };

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
}

/* Connects Streamable HTTP to the published port. */
static void
probe_connect(struct probe *p, int host_port)
{
	char *cause = NULL;

	xasprintf(&p->remote.url, "http://127.0.0.1:%d%s", host_port, p->path);
	p->remote.allow_local = true;
	probe_follow_logs(p);
	p->w.inner = transport_http_new(&p->remote, &transport_wrap_cbs, &p->w);
	probe_set_phase(p, PROBE_HTTP);
	log_debug("container %s: HTTP on %s", docker_container_name(p->ct),
	    p->remote.url);
	probe_progress(p, "connecting", "connecting to %s", p->remote.url);
	if (p->w.inner->ops->open(p->w.inner, &cause) < 0) {
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
		probe_http_fall_back(p, "the image is another one now", false);
		return;
	}
	if (p->is_direct && p->image_id != NULL && port == 0) {
		/* Ended already (a stdio server without stdin does). */
		probe_http_fall_back(p, "the container stopped", true);
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
		probe_run_failed(p, "cannot start container %s: %s", why);
		free(why);
		return;
	}
	probe_inspect_managed(p);
}

/* Created: docker start may be cut off, docker rm -f finds it now. */
static void
probe_managed_created(void *arg, int err, const char *why)
{
	struct probe *p = arg;
	const char *args[] = { docker_program(), "start",
		docker_container_name(p->ct), NULL };

	p->is_creating = false;
	if (err < 0) {
		p->saw_name_conflict = why != NULL &&
		    probe_is_name_conflict(why, strlen(why));
		probe_run_failed(p, "cannot create container %s: %s", why);
		return;
	}
	p->cmd = docker_cmd_start(args, NULL, mcpd_opts.docker_timeout_ms, NULL,
	    probe_managed_started, p);
}

/*
 * The managed container, its name recorded already: docker create, then
 * docker start. Not docker run -d: a run -d client killed (an unload, the
 * load's deadline) may leave the engine making the container after the
 * docker rm -f of its name found nothing; the record waits for a create
 * instead (docker_container_create), and once it has answered the name
 * is there to remove.
 */
static void
probe_run_managed(struct probe *p)
{
	char **argv = probe_argv(&p->target, docker_container_name(p->ct),
	    DOCKER_PHASE_MANAGED, &p->port, 1);

	if (docker_container_create(p->ct, argv, p->target.spec->env,
		probe_managed_created, p) < 0)
		probe_fail(p, "cannot create container %s: %s",
		    "its record is busy");
	else
		p->is_creating = true;
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
		probe_run_failed(p,
		    "cannot rename the probe container to %s: %s", why);
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
void
probe_http_switch_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;
	char *name = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);

	(void)fd, (void)events;
	p->w.inner->ops->free(p->w.inner);
	p->w.inner = NULL;
	if (probe_is_published(p, p->port))
		probe_promote(p, name);
	else if (docker_container_switch(p->ct, name, DOCKER_PHASE_MANAGED) ==
	    0)
		probe_run_managed(p);
	else
		docker_container_remove(p->ct, probe_removed, p);
	free(name);
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

void
probe_http_switch(struct probe *p, int port, char *path)
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
	probe_set_phase(p, PROBE_SWITCHING);
	p->port = port;
	p->path = path;
	p->w.t.name = "streamable-http";
	event_active(p->step, EV_TIMEOUT, 0);
}

/* ---- a remembered HTTP image: the managed container at once ---- */

void
probe_http_direct_due(evutil_socket_t fd, short events, void *arg)
{
	struct probe *p = arg;

	struct timeval tv = { 0, PROBE_RESEND_MS * 1000 };

	(void)fd, (void)events;
	/* Its docker create or start first: the fallback removes it then. */
	if (p->cmd != NULL || p->is_creating)
		evtimer_add(p->deadline, &tv);
	else if (p->is_direct && !p->w.hold.is_confirmed)
		probe_http_fall_back(p, "no HTTP answer in time", true);
}

/* Starts rax-mcp-... as the memory says the image ID answered before. */
void
probe_http_start_direct(struct probe *p, char *id, int port, char *path)
{
	struct timeval tv = { PROBE_DIRECT_MS / 1000,
		(PROBE_DIRECT_MS % 1000) * 1000 };
	char *name = docker_container_name_for(p->ct, DOCKER_PHASE_MANAGED);

	p->is_direct = true;
	p->remembered_id = id;
	p->port = port;
	p->path = path;
	probe_set_phase(p, PROBE_SWITCHING);
	p->w.t.name = "streamable-http";
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
	if (p->w.inner != NULL)
		p->w.inner->ops->free(p->w.inner);
	p->w.inner = NULL;
	free(p->remote.url);
	p->remote.url = NULL;
	free(p->path);
	p->path = NULL;
	free(p->image_id);
	p->image_id = NULL;
	p->is_direct = false;
	p->w.t.name = "stdio";
	probe_look(p);
}

/*
 * The remembered image did not answer HTTP: its managed container goes
 * and the full probe starts; what was remembered of the image ID is
 * forgotten when it was the same image.
 */
void
probe_http_fall_back(struct probe *p, const char *why, bool forget)
{
	const char *name = docker_container_name(p->ct);

	if (p->w.is_closing || !p->is_direct || p->phase == PROBE_STDIO ||
	    p->w.hold.is_confirmed)
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
	/* A create under way ends (the removal waits), unheard by the probe. */
	if (p->is_creating)
		docker_container_unwait(p->ct, p);
	p->is_creating = false;
	docker_cmd_cancel(p->cmd);
	docker_cmd_cancel(p->logs);
	p->cmd = p->logs = NULL;
	transport_hold_stop(&p->w.hold);
	evtimer_del(p->deadline);
	probe_set_phase(p, PROBE_SWITCHING);
	docker_container_remove(p->ct, probe_direct_removed, p);
}

/* A container served over stdio: its docker run -i is adopted. */
static int
probe_adopt_stdio(struct probe *p, const json_t *saved, char **cause)
{
	docker_container_set(p->ct,
	    json_string_value(json_object_get(saved, "name")),
	    DOCKER_PHASE_PROBE);
	probe_set_phase(p, PROBE_STDIO);
	p->w.inner = transport_stdio_adopt(json_object_get(saved, "stdio"));
	p->w.inner->cbs = &transport_wrap_cbs;
	p->w.inner->cb_arg = &p->w;
	(void)cause;
	return 0;
}

/* A managed container: its HTTP session goes on, its logs followed anew. */
static int
probe_adopt_http(struct probe *p, const json_t *saved, char **cause)
{
	const char *path = json_string_value(json_object_get(saved, "path"));

	docker_container_set(p->ct,
	    json_string_value(json_object_get(saved, "name")),
	    DOCKER_PHASE_MANAGED);
	p->host_port = (int)json_integer_value(json_object_get(saved,
	    "host_port"));
	p->path = xstrdup(path != NULL ? path : "/mcp");
	p->since = probe_now();
	xasprintf(&p->remote.url, "http://127.0.0.1:%d%s", p->host_port,
	    p->path);
	p->remote.allow_local = true;
	p->w.t.name = "streamable-http";
	probe_set_phase(p, PROBE_SWITCHING);
	probe_set_phase(p, PROBE_HTTP);
	probe_follow_logs(p);
	p->w.inner = transport_http_adopt(&p->remote,
	    json_object_get(saved, "http"), &transport_wrap_cbs, &p->w, cause);
	return p->w.inner != NULL ? 0 : -EIO;
}

struct transport *
probe_adopt(const struct probe_target *target, struct docker_container *ct,
    const json_t *saved, char **cause)
{
	struct transport *t = probe_new(target, ct, NULL, NULL);
	struct probe *p = (struct probe *)t;
	int r;

	p->w.hold.is_confirmed = true;
	if (json_object_get(saved, "stdio") != NULL)
		r = probe_adopt_stdio(p, saved, cause);
	else
		r = probe_adopt_http(p, saved, cause);
	docker_container_created(ct);
	if (r < 0) {
		t->ops->free(t);
		return NULL;
	}
	return t;
}
