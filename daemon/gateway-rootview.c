/* SPDX-License-Identifier: ISC */
/*
 * The view of a bridge's session from the project file its client's first
 * root names: a bridge that found none from its working directory says so
 * in its hello (roots_project), and mcpd asks the client for its roots
 * once it is initialized, finds .mcpd.json from the first file:// root up
 * to $HOME, and makes that the view, as the bridge would have (DESIGN 13).
 * Lists and calls wait meanwhile: never a silently different view.
 */
#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "projectfile.h"
#include "uriref.h"

/* A request that waits for the view. */
struct rootview_held {
	struct request *req;
	char *method;
	json_t *params;
	TAILQ_ENTRY(rootview_held) entry;
};

struct gateway_rootview {
	struct gateway *gw; /* NULL once the session went */
	unsigned busy;	    /* a roots/list, a request or a release in flight */
	bool is_pending;    /* the view is being made: requests wait */
	bool is_asking;	    /* roots/list is out, or what follows it */
	bool is_again;	    /* the roots changed meanwhile: ask again */
	bool has_made;	    /* a view was made: the session was shown one */
	struct projectfile file;
	size_t defined;	     /* of file.define, the ones loaded */
	const char *loading; /* ... the one loading now (a key of file.doc) */
	json_t *before;	     /* the view it had: a change is announced */
	TAILQ_HEAD(, rootview_held) held;
};

static void rootview_ask(struct gateway_rootview *);

/* rv goes when its session went and nothing in flight holds it. */
static bool
rootview_unbusy(struct gateway_rootview *rv)
{
	rv->busy--;
	if (rv->gw != NULL)
		return true;
	if (rv->busy == 0) {
		projectfile_clear(&rv->file);
		json_decref(rv->before);
		free(rv);
	}
	return false;
}

/* What the session's view is made of now, to compare. */
static json_t *
rootview_view(const struct client *c)
{
	return json_pack("{s:O?, s:s?, s:s?}", "servers",
	    control_client_scope(c), "profile", control_client_profile(c),
	    "error", control_client_view_error(c));
}

/* Held requests run, from the loop, in the order they came. */
static void
rootview_release(void *arg)
{
	struct gateway_rootview *rv = arg;
	struct rootview_held *h;

	while (rv->gw != NULL && !rv->is_pending &&
	    (h = TAILQ_FIRST(&rv->held)) != NULL) {
		TAILQ_REMOVE(&rv->held, h, entry);
		gateway_dispatch(h->req, h->method, h->params);
		json_decref(h->params);
		free(h->method);
		free(h);
	}
	(void)rootview_unbusy(rv);
}

/* The view is made: a changed one is announced, and held requests go. */
static void
rootview_done(struct gateway_rootview *rv)
{
	json_t *now = rootview_view(gateway_client(rv->gw));

	rv->is_asking = false;
	if (rv->file.error != NULL)
		log_info("gateway session of agent %s: %s",
		    control_client_agent(gateway_client(rv->gw)),
		    rv->file.error);
	/* The first view is the one it is shown: only a change is announced. */
	gateway_view_changed(rv->gw,
	    rv->has_made && !json_equal(now, rv->before));
	rv->has_made = true;
	json_decref(now);
	json_decref(rv->before);
	rv->before = NULL;
	projectfile_clear(&rv->file);
	if (rv->is_again) {
		rv->is_again = false;
		rootview_ask(rv);
		return;
	}
	rv->is_pending = false;
	rv->busy++;
	defer_call(rootview_release, rv);
}

/* The file could not give a view: its error is the session's. */
static void
rootview_fail(struct gateway_rootview *rv)
{
	control_client_set_view_error(gateway_client(rv->gw), rv->file.error);
	rootview_done(rv);
}

static void
rootview_hello_answered(void *arg, json_t *msg)
{
	struct gateway_rootview *rv = arg;
	const char *why = json_string_value(json_object_get(json_object_get(msg,
								"error"),
	    "message"));

	if (rootview_unbusy(rv)) {
		/* What it names, mcpd does not have: an error of the file. */
		if (why != NULL)
			projectfile_fail(&rv->file, "%s", why);
		if (rv->file.error != NULL)
			rootview_fail(rv);
		else
			rootview_done(rv);
	}
	json_decref(msg);
}

/* An own request of method for the session's client, answered to fn. */
static void
rootview_request(struct gateway_rootview *rv, const char *method,
    json_t *params, control_own_fn *fn)
{
	rv->busy++;
	cmd_dispatch(control_request_own(gateway_client(rv->gw), fn, rv),
	    method, params);
	json_decref(params);
}

/* The file's profile and servers made the view, checked as hello checks. */
static void
rootview_apply(struct gateway_rootview *rv)
{
	json_t *params = json_object();

	if (rv->file.profile != NULL)
		json_object_set_new(params, "profile",
		    json_string(rv->file.profile));
	if (json_array_size(rv->file.servers) > 0)
		json_object_set(params, "servers", rv->file.servers);
	rootview_request(rv, "mcpd/hello", params, rootview_hello_answered);
}

static void rootview_load_next(struct gateway_rootview *rv);

static void
rootview_loaded(void *arg, json_t *msg)
{
	struct gateway_rootview *rv = arg;
	const json_t *error = json_object_get(msg, "error");
	const json_t *name = json_object_get(json_object_get(msg, "result"),
	    "name");

	if (!rootview_unbusy(rv)) {
		json_decref(msg);
		return;
	}
	if (error != NULL || !json_is_string(name)) {
		projectfile_fail(&rv->file, "its server %s did not load: %s",
		    rv->loading,
		    error != NULL ?
			json_string_value(json_object_get(error, "message")) :
			"mcpd did not answer");
		rootview_fail(rv);
	} else {
		json_array_append(rv->file.servers, (json_t *)(uintptr_t)name);
		rv->defined++;
		rootview_load_next(rv);
	}
	json_decref(msg);
}

/*
 * Each defined server is loaded as the bridge has mcpd load it: not
 * saved, shared with a server of the agent that runs the same.
 */
static void
rootview_load_next(struct gateway_rootview *rv)
{
	const char *name;
	json_t *def, *params;
	size_t i = 0;

	json_object_foreach((json_t *)(uintptr_t)rv->file.define, name, def) {
		if (i++ < rv->defined)
			continue;
		rv->loading = name;
		params = json_deep_copy(def);
		json_object_set_new(params, "name", json_string(name));
		json_object_set_new(params, "persist", json_false());
		json_object_set_new(params, "share", json_true());
		rootview_request(rv, "mcpd/load", params, rootview_loaded);
		return;
	}
	rootview_apply(rv);
}

/* A file that defines servers runs programs: only once it is trusted. */
static bool
rootview_trusted(struct gateway_rootview *rv)
{
	const char *trusted = project_trusted_digest(rv->file.path);
	char *digest;

	if (json_object_size(rv->file.define) == 0)
		return true;
	digest = project_digest(rv->file.text, rv->file.len);
	rv->file.was_trusted = trusted != NULL;
	rv->file.is_trusted = trusted != NULL && strcmp(trusted, digest) == 0;
	free(digest);
	if (!rv->file.is_trusted)
		projectfile_fail_untrusted(&rv->file);
	return rv->file.is_trusted;
}

/*
 * The directory of the first root that is a local file:// URI, new, or
 * NULL: roots are the client's order of preference (DESIGN 13).
 */
static char *
rootview_first_dir(const json_t *result)
{
	const json_t *root;
	size_t i;

	char *dir;

	json_array_foreach(json_object_get(result, "roots"), i, root) {
		const char *uri = json_string_value(json_object_get(root,
		    "uri"));

		if (uri != NULL && (dir = uriref_file_path(uri)) != NULL)
			return dir;
	}
	return NULL;
}

static void
rootview_answered(void *arg, const json_t *result, const json_t *error,
    const char *why)
{
	struct gateway_rootview *rv = arg;
	char *dir;

	if (!rootview_unbusy(rv))
		return;
	if (result == NULL) {
		log_info(
		    "gateway session of agent %s: roots/list %s; its view is the agent's default",
		    control_client_agent(gateway_client(rv->gw)),
		    error != NULL ? "answered with an error" : why);
		rootview_done(rv);
		return;
	}
	if ((dir = rootview_first_dir(result)) == NULL ||
	    projectfile_find(dir, &rv->file) < 0 || rv->file.path == NULL)
		rootview_done(rv);
	else if (rv->file.error != NULL || !rootview_trusted(rv))
		rootview_fail(rv);
	else
		rootview_load_next(rv);
	free(dir);
}

/* The view starts again from the agent's default, and the roots are asked. */
static void
rootview_ask(struct gateway_rootview *rv)
{
	struct client *c = gateway_client(rv->gw);
	int r;

	rv->is_pending = rv->is_asking = true;
	rv->defined = 0;
	json_decref(rv->before);
	rv->before = rootview_view(c);
	control_client_set_scope(c, NULL);
	control_client_set_profile(c, NULL);
	control_client_set_view_error(c, NULL);
	rv->busy++;
	r = control_ask_client(c, mcpd_opts.roots_timeout_ms, "roots/list",
	    json_object(), rootview_answered, rv);
	if (r < 0)
		rootview_answered(rv, NULL, NULL, control_ask_refusal(r));
}

struct gateway_rootview *
gateway_rootview_new(struct gateway *gw)
{
	struct gateway_rootview *rv = xcalloc(1, sizeof *rv);

	rv->gw = gw;
	rv->is_pending = true;
	TAILQ_INIT(&rv->held);
	return rv;
}

void
gateway_rootview_roots(struct gateway_rootview *rv)
{
	if (rv == NULL)
		return;
	if (rv->is_asking)
		rv->is_again = true;
	else
		rootview_ask(rv);
}

bool
gateway_rootview_pending(const struct gateway_rootview *rv)
{
	return rv != NULL && rv->is_pending;
}

bool
gateway_rootview_holds(struct gateway_rootview *rv, struct request *req,
    const char *method, const json_t *params)
{
	struct rootview_held *h;

	if (rv == NULL || !rv->is_pending)
		return false;
	h = xcalloc(1, sizeof *h);
	h->req = req;
	h->method = xstrdup(method);
	h->params = params != NULL ? json_incref((json_t *)(uintptr_t)params) :
				     NULL;
	TAILQ_INSERT_TAIL(&rv->held, h, entry);
	/* A client that asks before it said initialized waits no longer. */
	if (!rv->is_asking)
		rootview_ask(rv);
	return true;
}

void
gateway_rootview_free(struct gateway_rootview *rv)
{
	struct rootview_held *h;

	if (rv == NULL)
		return;
	/* Their client went: the answers go nowhere, the requests are freed. */
	while ((h = TAILQ_FIRST(&rv->held)) != NULL) {
		TAILQ_REMOVE(&rv->held, h, entry);
		control_fail(h->req, ERRORS_UNAVAILABLE, NULL,
		    "the session ended");
		json_decref(h->params);
		free(h->method);
		free(h);
	}
	rv->gw = NULL;
	rv->busy++;
	(void)rootview_unbusy(rv);
}
