/* SPDX-License-Identifier: ISC */
/*
 * Container records: the names a server's containers may have, their
 * removal (retried), the probe's switch and rename; one state machine
 * (docker_fsm, doc/states.md) and a reference count (DESIGN 10).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "mcpd.h"

#define DOCKER_RETRY_MS	  10000 /* between tries of a failed removal */
/* Another removal of the same container (a docker rm -f from a shell) is
 * waited for: rm -f again every DOCKER_BUSY_MS, DOCKER_BUSY_TRIES times. */
#define DOCKER_BUSY_MS	  250
#define DOCKER_BUSY_TRIES 40

/*
 * Someone waiting for a removal. Told from the loop (defer_call): between
 * its removal's end and then it is in its record's told list, holding a
 * reference to the record, where an unwait or the record's free still
 * silences it (fn NULL: told nothing).
 */
struct docker_waiter {
	docker_removed_fn *fn;
	void *arg;
	struct docker_container *ct; /* while told: its record (a reference) */
	int r;			     /* ... how the removal ended */
	char *why;
	TAILQ_ENTRY(docker_waiter) entry;
};
TAILQ_HEAD(docker_waiters, docker_waiter);

struct docker_container {
	int references;
	enum docker_state state; /* moved by docker_set_state only */
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
	/* docker rename of old (the probe) to name, while it runs. */
	/* docker rename of old (the probe) to name, or docker create of name. */
	struct docker_cmd *renaming;
	docker_removed_fn *renamed; /* told how the rename (create) ended */
	void *renamed_arg;
	/* A removal failed since the last that ended well: when a retry ends
	 * well with no one waiting, the owner hears (removed). */
	bool has_failed;
	struct event *retry; /* pending in failed (and a rename from there) */
	struct event *busy;  /* pending: another removal runs; rm -f again */
	int busy_tries;
	bool is_busy_name, is_busy_old; /* which one the busy wait is for */
	struct event *tell; /* answers waiters when nothing was to be removed */
	struct event *tell_old; /* answers waiters for an old one that ended */
	struct docker_waiters waiters;
	struct docker_waiters told; /* told from the loop, not yet */
};

/*
 * A record starts empty; a start records a name (named), which a probe
 * renames or switches to the managed one's; a removal empties it or
 * fails, and a failed one is retried; its owner's free ends it from any
 * state (doc/states.md says what each state means).
 */
static const char *const docker_state_names[] = { "empty", "named", "renaming",
	"remove-due", "switching", "removing", "failed", "dead" };
static const unsigned docker_state_next[] = {
#define S(x) (1u << DOCKER_##x)
	[DOCKER_EMPTY] = S(NAMED) | S(DEAD),
	[DOCKER_NAMED] = S(EMPTY) | S(RENAMING) | S(SWITCHING) | S(REMOVING) |
	    S(DEAD),
	[DOCKER_RENAMING] = S(REMOVE_DUE) | S(NAMED) | S(SWITCHING) |
	    S(FAILED) | S(DEAD),
	[DOCKER_REMOVE_DUE] = S(REMOVING) | S(DEAD),
	[DOCKER_SWITCHING] = S(REMOVING) | S(NAMED) | S(RENAMING) |
	    S(REMOVE_DUE) | S(FAILED) | S(DEAD),
	[DOCKER_REMOVING] = S(EMPTY) | S(NAMED) | S(FAILED) | S(DEAD),
	[DOCKER_FAILED] = S(REMOVING) | S(SWITCHING) | S(RENAMING) |
	    S(REMOVE_DUE) | S(DEAD),
	[DOCKER_DEAD] = 0,
#undef S
};
const struct fsm docker_fsm = { "container", docker_state_names,
	docker_state_next,
	sizeof docker_state_names / sizeof *docker_state_names };

/* Moves the record to state, a move its table allows (mcpd-fsm.c). */
static void
docker_set_state(struct docker_container *ct, enum docker_state state)
{
	ct->state = fsm_move(&docker_fsm, ct->state, state, ct->base);
}

/* Named, or empty when no name is left: after a removal or a rename. */
static void
docker_set_named_or_empty(struct docker_container *ct)
{
	/* A create still runs on name: nothing may remove it before it ends. */
	if (ct->renaming != NULL)
		docker_set_state(ct, DOCKER_RENAMING);
	else
		docker_set_state(ct,
		    ct->name != NULL || ct->old != NULL ? DOCKER_NAMED :
							  DOCKER_EMPTY);
}

enum docker_state
docker_container_state(const struct docker_container *ct)
{
	return ct->state;
}

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
	else {
		docker_remove_old_start(ct);
		if (ct->removing_old != NULL)
			docker_set_state(ct,
			    ct->name != NULL ? DOCKER_SWITCHING :
					       DOCKER_REMOVING);
	}
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
	bool is_old = ct->is_busy_old, is_name = ct->is_busy_name;

	(void)fd, (void)events;
	ct->is_busy_old = ct->is_busy_name = false;
	/* As a retry: an old probe's leaves the serving one be. */
	if (is_old)
		docker_remove_old_start(ct);
	if (is_name)
		docker_remove_start(ct);
}

struct docker_container *
docker_container_new(const char *agent, const char *server,
    void (*removed)(void *), void *arg)
{
	struct docker_container *ct = xcalloc(1, sizeof *ct);

	ct->references = 1; /* the owner's, until docker_container_free */
	ct->state = DOCKER_EMPTY;
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
docker_container_ref(struct docker_container *ct)
{
	ct->references++;
}

static void
docker_container_release(void *arg)
{
	struct docker_container *ct = arg;

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

/* The memory goes from the loop: the caller may be one of its callbacks. */
void
docker_container_unref(struct docker_container *ct)
{
	if (--ct->references == 0)
		defer_call(docker_container_release, ct);
}

void
docker_container_free(struct docker_container *ct)
{
	struct docker_waiter *w;

	if (ct == NULL || ct->state == DOCKER_DEAD)
		return;
	docker_set_state(ct, DOCKER_DEAD);
	while ((w = TAILQ_FIRST(&ct->waiters)) != NULL) {
		TAILQ_REMOVE(&ct->waiters, w, entry);
		free(w);
	}
	/* Those told already hear nothing: their owner is gone. */
	TAILQ_FOREACH(w, &ct->told, entry)
		w->fn = NULL;
	docker_cmd_cancel(ct->removing);
	docker_cmd_cancel(ct->removing_old);
	docker_cmd_cancel(ct->renaming);
	ct->removing = ct->removing_old = ct->renaming = NULL;
	ct->renamed = NULL;
	ct->removed = NULL;
	event_del(ct->retry);
	event_del(ct->busy);
	event_del(ct->tell);
	event_del(ct->tell_old);
	docker_container_unref(ct);
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

/* The name recorded now (NULL: none), not yet known to be this daemon's. */
static void
docker_name_set(struct docker_container *ct, const char *name,
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
docker_container_set(struct docker_container *ct, const char *name,
    enum docker_phase phase)
{
	if (ct->state == DOCKER_DEAD)
		return;
	docker_name_set(ct, name, phase);
	/* Elsewhere what runs decides the state when it ends. */
	if (ct->state == DOCKER_EMPTY || ct->state == DOCKER_NAMED)
		docker_set_named_or_empty(ct);
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
	struct docker_container *ct = w->ct;

	TAILQ_REMOVE(&ct->told, w, entry);
	if (w->fn != NULL)
		w->fn(w->arg, w->r, w->why);
	free(w->why);
	free(w);
	docker_container_unref(ct);
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
		docker_container_ref(ct);
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
	/* A removal waits for the create: it starts when that ends. */
	if (ct->state == DOCKER_REMOVE_DUE)
		return;
	if (ct->error != NULL || ct->old_error != NULL) {
		docker_set_state(ct, DOCKER_FAILED);
		ct->has_failed = true;
		free(ct->holder);
		ct->holder = NULL;
		evtimer_add(ct->retry, &retry);
		docker_tell_waiters(ct, -EIO, NULL);
		return;
	}
	docker_set_named_or_empty(ct);
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
		docker_name_set(ct, NULL, ct->phase);
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
		docker_set_state(ct, DOCKER_REMOVE_DUE);
		return;
	}
	docker_remove_old_start(ct);
	if (ct->name == NULL || ct->removing != NULL) {
		if (ct->removing_old != NULL || docker_is_removing(ct))
			docker_set_state(ct, DOCKER_REMOVING);
		return;
	}
	/* A busy wait of either ends here: both removals run now. */
	evtimer_del(ct->busy);
	ct->is_busy_name = ct->is_busy_old = false;
	docker_set_state(ct, DOCKER_REMOVING);
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

	/* Its owner freed it: the waiter would hear nothing anyway. */
	if (ct->state == DOCKER_DEAD)
		return;
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
	struct docker_waiter *w;

	if (ct->state == DOCKER_DEAD)
		return;
	w = xcalloc(1, sizeof *w);
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
	if ((ct->state != DOCKER_NAMED && ct->state != DOCKER_FAILED) ||
	    ct->old != NULL || ct->name == NULL || !ct->is_created ||
	    docker_is_removing(ct))
		return -EBUSY;
	ct->old = ct->name;
	ct->name = NULL;
	docker_name_set(ct, name, phase);
	docker_set_state(ct, DOCKER_SWITCHING);
	docker_remove_old_start(ct);
	return 0;
}

/*
 * The command that held the record (a rename, a create) ended: a removal
 * that waited for it goes now, a probe still being removed goes on, and
 * whoever asked hears how it ended.
 */
static void
docker_held_ended(struct docker_container *ct, int status, const char *err)
{
	docker_removed_fn *fn = ct->renamed;
	char *why = status != 0 ? docker_describe_failure(status, err) : NULL;

	ct->renamed = NULL;
	if (ct->state == DOCKER_REMOVE_DUE)
		docker_remove_start(ct);
	else if (evtimer_pending(ct->retry, NULL))
		docker_set_state(ct, DOCKER_FAILED); /* held from there */
	else if (ct->removing_old != NULL)
		docker_set_state(ct, DOCKER_SWITCHING);
	else
		docker_set_named_or_empty(ct);
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

	if ((ct->state != DOCKER_NAMED && ct->state != DOCKER_FAILED) ||
	    ct->old != NULL || ct->name == NULL || !ct->is_created ||
	    docker_is_removing(ct) || ct->renaming != NULL)
		return -EBUSY;
	docker_set_state(ct, DOCKER_RENAMING);
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
	if (ct->state == DOCKER_DEAD || ct->name == NULL ||
	    docker_is_removing(ct) || ct->renaming != NULL)
		return -EBUSY;
	/* The load's deadline bounds it (a pull), not docker's usual one. */
	ct->renaming = docker_cmd_start((const char *const *)argv, env,
	    mcpd_opts.load_timeout_ms, NULL, docker_created, ct);
	ct->renamed = fn;
	ct->renamed_arg = arg;
	/* While the probe is removed it stays switching, then renaming. */
	if (ct->state != DOCKER_SWITCHING)
		docker_set_state(ct, DOCKER_RENAMING);
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
