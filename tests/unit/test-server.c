/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of the server layer of its own (server.c, server-job.c,
 * server-start.c, server-idle.c, server-kept.c, server-call.c): the state
 * table, the gate's order, answers from the loop, and an on-demand
 * server's idle and wake. Its callers answer through a struct server_reply
 * of the test's, and what it tells the layers above goes to a watcher of
 * the test's (server-watch.h): no control layer, gateway or HTTP front is
 * linked (the archive links only what is named), and a test checks that.
 *
 * Stubbed, and only these: the transport (transport_stdio_new and _pid: a loopback
 * whose "server" answers from the loop, a handshake only when the test
 * lets it), and the policy and the audit log, the layer beside the
 * server, which would link the gateway's views; the stubs let every call
 * go.
 */
#include <sys/wait.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "httpd.h"
#include "gateway.h"
#include "log.h"
#include "mcpd-stubs.h"
#include "server-int.h"
#include "tap.h"

/* ---- what happened, in order: answers, transports, states ---- */

static char events[4096];

static void event_add_text(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

static void
event_add_text(const char *fmt, ...)
{
	size_t n = strlen(events);
	va_list ap;

	if (n > 0 && n + 1 < sizeof events)
		events[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(events + n, sizeof events - n, fmt, ap);
	va_end(ap);
}

/* Each state a server moves to (server_set_state logs it) is an event. */
static void
test_sink(int priority, const char *server, const char *msg)
{
	static const char *const states[] = { "starting", "connecting", "ready",
		"restarting", "stopping", "stopped", "failed", "idle", "waking",
		"recovering", "resuming", "removing" };

	if (priority == LOG_CRIT) {
		/* fatalx: the illegal move's child says it to its parent. */
		dprintf(STDERR_FILENO, "%s\n", msg);
		return;
	}
	if (server == NULL || priority != LOG_INFO)
		return;
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
		if (strcmp(msg, states[i]) == 0)
			event_add_text("%s", msg);
}

/* ---- the layers above: a watcher of the test's, and stubs (see the top) ---- */

static int tools_changed;

static void
test_tools_changed(const char *agent)
{
	(void)agent;
	tools_changed++;
}

static const struct server_watch test_watch = {
	.tools_changed = test_tools_changed,
};

/*
 * The link check: none of the layers above is linked. A weak reference
 * pulls nothing from the archive, so each of these stays NULL unless a
 * module the test links names it for real (and so links its file).
 */
#pragma weak gateway_dispatch
#pragma weak gateway_subs_has
#pragma weak gateway_roots_answer
#pragma weak gateway_server_watch
#pragma weak httpd_listen
#pragma weak httpd_server_watch
#pragma weak control_listen
#pragma weak control_reply

enum policy_verdict
policy_call_check(const struct call_who *who, struct server_reply *rep,
    struct server *s, const char *tool, json_t **decision)
{
	(void)who, (void)rep, (void)s, (void)tool;
	*decision = NULL;
	return POLICY_GO;
}

void
policy_ask_hold(struct server_reply *rep, struct server *s, uint64_t generation,
    const char *tool, json_t *arguments, int timeout_ms,
    const json_t *mcp_params, const struct server_call_opts *opts,
    json_t *decision)
{
	(void)rep, (void)s, (void)generation, (void)tool, (void)arguments;
	(void)timeout_ms, (void)mcp_params, (void)opts, (void)decision;
}

struct audit_call *
audit_call_new(const struct call_who *who, const char *method,
    const char *server, const char *tool, const char *definition,
    const json_t *arguments)
{
	(void)who, (void)method, (void)server, (void)tool, (void)definition;
	(void)arguments;
	return NULL;
}

struct audit_call *
audit_call_new_text(const struct call_who *who, const char *method,
    const char *server, const char *tool, const char *definition,
    const char *args, size_t len)
{
	(void)who, (void)method, (void)server, (void)tool, (void)definition;
	(void)args, (void)len;
	return NULL;
}

void
audit_call_set_decision(struct audit_call *ac, json_t *decision)
{
	(void)ac;
	json_decref(decision);
}

char *
audit_admit(struct audit_call *ac, const char *server)
{
	(void)ac, (void)server;
	return NULL;
}

void
audit_call_end(struct audit_call *ac, const struct audit_end *end)
{
	(void)ac, (void)end;
}

void
audit_call_end_reply(struct audit_call *ac, const struct session_reply *r)
{
	(void)ac, (void)r;
}

void
audit_refused(const struct call_who *who, const char *method,
    const char *server, const char *tool, int code, enum errors_kind kind)
{
	(void)who, (void)method, (void)server, (void)tool, (void)code;
	(void)kind;
}

/* ---- the transport: a loopback, the test plays the server ---- */

struct loopback {
	struct transport t;
	int number;	/* the how-manieth transport made */
	json_t *outbox; /* for the session, delivered from the loop */
	json_t *held;	/* initialize requests not answered yet */
	struct event *deliver;
};

static struct loopback *lb_last;
static int lb_made;
static bool lb_holds; /* initialize waits for lb_release */

static void
lb_deliver(evutil_socket_t fd, short events_, void *arg)
{
	struct loopback *lb = arg;
	json_t *msg;

	(void)fd, (void)events_;
	while ((msg = json_incref(json_array_get(lb->outbox, 0))) != NULL) {
		json_array_remove(lb->outbox, 0);
		lb->t.cbs->message(lb->t.cb_arg, msg);
		json_decref(msg);
	}
}

/* The "server" says msg (stolen); the session hears it on a later turn. */
static void
lb_say(struct loopback *lb, json_t *msg)
{
	json_array_append_new(lb->outbox, msg);
	event_active(lb->deliver, EV_TIMEOUT, 0);
}

static void
lb_answer_initialize(struct loopback *lb, json_t *id)
{
	lb_say(lb,
	    jsonrpc_result(id,
		json_pack("{s:s, s:{s:{}}, s:{s:s, s:s}}", "protocolVersion",
		    "2025-11-25", "capabilities", "tools", "serverInfo", "name",
		    "lb", "version", "1")));
}

/* The test lets the held handshake of the last transport go on. */
static void
lb_release(void)
{
	json_t *id;
	size_t i;

	json_array_foreach(lb_last->held, i, id)
		lb_answer_initialize(lb_last, id);
	json_array_clear(lb_last->held);
}

static int
lb_open(struct transport *t, char **cause)
{
	(void)t, (void)cause;
	return 0;
}

static int
lb_send(struct transport *t, const json_t *msg, const json_t *tool)
{
	struct loopback *lb = (struct loopback *)t;
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");

	(void)tool;
	if (method == NULL || id == NULL)
		return 0;
	if (strcmp(method, "initialize") == 0 && lb_holds)
		json_array_append(lb->held, id);
	else if (strcmp(method, "initialize") == 0)
		lb_answer_initialize(lb, id);
	else if (strcmp(method, "tools/list") == 0)
		lb_say(lb,
		    jsonrpc_result(id,
			json_pack("{s:[{s:s, s:{s:s}}]}", "tools", "name",
			    "echo", "inputSchema", "type", "object")));
	else if (strcmp(method, "tools/call") == 0)
		lb_say(lb,
		    jsonrpc_result(id,
			json_pack("{s:[{s:s, s:s}]}", "content", "type", "text",
			    "text", "echoed")));
	else
		lb_say(lb, jsonrpc_error(id, -32601, "Method not found", NULL));
	return 0;
}

static void
lb_close(struct transport *t, void (*done)(void *), void *arg)
{
	(void)t;
	done(arg);
}

static void
lb_free(struct transport *t)
{
	struct loopback *lb = (struct loopback *)t;

	if (lb_last == lb)
		lb_last = NULL;
	event_free(lb->deliver);
	json_decref(lb->outbox);
	json_decref(lb->held);
	free(lb);
}

static const struct transport_ops lb_ops = {
	.name = "loopback",
	.open = lb_open,
	.send = lb_send,
	.close = lb_close,
	.free = lb_free,
};

struct transport *
transport_stdio_new(const struct child_spec *spec,
    const struct transport_cbs *cbs, void *arg)
{
	struct loopback *lb = xcalloc(1, sizeof *lb);

	(void)spec;
	lb->t.ops = &lb_ops;
	lb->t.name = "loopback";
	lb->t.cbs = cbs;
	lb->t.cb_arg = arg;
	lb->number = ++lb_made;
	lb->outbox = json_array();
	lb->held = json_array();
	if ((lb->deliver = event_new(mcpd_base, -1, 0, lb_deliver, lb)) == NULL)
		fatalx("cannot make an event");
	lb_last = lb;
	event_add_text("transport%d", lb->number);
	return &lb->t;
}

/* No program runs behind the loopback. */
pid_t
transport_stdio_pid(const struct transport *t)
{
	(void)t;
	return -1;
}

/* Nor is one kept across an upgrade (test_upgrade.py tests that). */
json_t *
transport_stdio_save(struct transport *t)
{
	(void)t;
	return NULL;
}

struct transport *
transport_stdio_adopt(const json_t *saved)
{
	(void)saved;
	return NULL;
}

/* ---- a caller of the test's: its answers are events ---- */

struct test_reply {
	struct server_reply rep; /* first: the ops get it */
	const char *name;
	int answers;
};

static void
tr_reply(struct server_reply *rep, json_t *result)
{
	struct test_reply *tr = (struct test_reply *)rep;

	tr->answers++;
	event_add_text("%s:ok", tr->name);
	json_decref(result);
}

static void
tr_reply_raw(struct server_reply *rep, const char *result, size_t len)
{
	struct test_reply *tr = (struct test_reply *)rep;

	tr->answers++;
	event_add_text("%s:raw:%.*s", tr->name, (int)len, result);
}

static void
tr_reply_error(struct server_reply *rep, const json_t *error)
{
	struct test_reply *tr = (struct test_reply *)rep;

	(void)error;
	tr->answers++;
	event_add_text("%s:error", tr->name);
}

static void
tr_fail(struct server_reply *rep, enum errors_kind kind, json_t *data,
    const char *message)
{
	struct test_reply *tr = (struct test_reply *)rep;

	(void)message;
	tr->answers++;
	event_add_text("%s:%s", tr->name, errors_kind_name(kind));
	json_decref(data);
}

static void
tr_fail_code(struct server_reply *rep, int code, json_t *data,
    const char *message)
{
	struct test_reply *tr = (struct test_reply *)rep;

	(void)message;
	tr->answers++;
	event_add_text("%s:%d", tr->name, code);
	json_decref(data);
}

static void
tr_progress(struct server_reply *rep, const char *server, const char *stage,
    const char *message)
{
	(void)rep, (void)server, (void)stage, (void)message;
}

static int
tr_notify(struct server_reply *rep, const char *method, json_t *params)
{
	(void)rep, (void)method;
	json_decref(params);
	return 0;
}

static bool
tr_false(const struct server_reply *rep)
{
	(void)rep;
	return false;
}

static bool
tr_true(const struct server_reply *rep)
{
	(void)rep;
	return true;
}

static void
tr_on_gone(struct server_reply *rep, void (*fn)(void *), void *arg)
{
	(void)rep, (void)fn, (void)arg;
}

static const char *
tr_ask(struct server_reply *rep, int timeout_ms, const char *method,
    json_t *params, server_answer_fn *cb, void *arg)
{
	(void)rep, (void)timeout_ms, (void)method, (void)cb, (void)arg;
	json_decref(params);
	return "the test answers nothing";
}

static const json_t *
tr_caps(const struct server_reply *rep)
{
	(void)rep;
	return NULL;
}

static bool
tr_wants_log(const struct server_reply *rep, const char *level)
{
	(void)rep, (void)level;
	return false;
}

static void
tr_who(const struct server_reply *rep, struct call_who *ret)
{
	ret->agent = rep->agent;
	ret->profile = NULL;
	ret->client = NULL;
	ret->session = NULL;
}

static const struct server_reply_ops tr_ops = {
	.reply = tr_reply,
	.reply_raw = tr_reply_raw,
	.reply_error = tr_reply_error,
	.fail = tr_fail,
	.fail_code = tr_fail_code,
	.progress = tr_progress,
	.notify = tr_notify,
	.notify_mcp = tr_notify,
	.wants_progress = tr_false,
	.is_live = tr_true,
	.on_gone = tr_on_gone,
	.ask = tr_ask,
	.caps = tr_caps,
	.wants_log = tr_wants_log,
	.who = tr_who,
};

static void
tr_init(struct test_reply *tr, const char *name)
{
	memset(tr, 0, sizeof *tr);
	tr->name = name;
	server_reply_init(&tr->rep, &tr_ops, tr, "default", NULL);
}

/* ---- helpers ---- */

/* Runs the loop (never blocking) until *answers reaches want. */
static bool
run_until(const int *answers, int want)
{
	for (int i = 0; i < 1000 && *answers < want; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	return *answers >= want;
}

static void
run_turns(int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
}

/* A process server called name of the default agent, in state starting. */
static struct server *
make_server(const char *name)
{
	struct server_spec spec = { 0 };
	struct server *s;

	spec.argv = xcalloc(2, sizeof *spec.argv);
	spec.argv[0] = xstrdup("/bin/true"); /* never run: the loopback */
	server_new("default", name, name, SERVER_PROCESS, &spec, &s);
	return s;
}

/*
 * Unloads s through its gate, as mcpctl unload does: its connection
 * closes, and it leaves the list (its memory goes on a later turn).
 */
static bool
unload(struct server *s)
{
	struct test_reply u;
	char name[NAMES_MAX + 1];

	snprintf(name, sizeof name, "%s", s->name);
	tr_init(&u, "unload");
	server_unload(s, &u.rep);
	if (!run_until(&u.answers, 1))
		return false;
	run_turns(20);
	return server_find("default", name) == NULL;
}

static void
reset_events(void)
{
	events[0] = '\0';
	tools_changed = 0;
	lb_made = 0;
	lb_holds = false;
}

/* Removes the test's state directory and what the server layer wrote. */
static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void
remove_tree(const char *dir)
{
	nftw(dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* ---- the tests ---- */

/*
 * The children (this program again, with MCPD_STRICT_STATES=1 set before
 * any move was checked), by their argument: a stopped server moved to
 * ready; a server that is only a container to remove (a failed first load
 * whose container would not go) moved to ready; a server whose restart is
 * due moved to stopping without its timer deleted; a server with a
 * connection being started (never touched: the child stops first) and no
 * job running moved on.
 */
static void __attribute__((noreturn)) child_illegal_move(const char *what)
{
	struct server *s = make_server("x");
	struct timeval later = { 60, 0 };

	if (strcmp(what, "--illegal-move") == 0) {
		server_set_state(s, SERVER_STOPPING);
		server_set_state(s, SERVER_STOPPED);
		server_set_state(s, SERVER_READY);
	} else if (strcmp(what, "--illegal-removing") == 0) {
		server_set_state(s, SERVER_REMOVING);
		server_set_state(s, SERVER_READY);
	} else if (strcmp(what, "--restart-due") == 0) {
		server_set_state(s, SERVER_CONNECTING);
		server_set_state(s, SERVER_READY);
		server_set_state(s, SERVER_RESTARTING);
		evtimer_add(s->restart_timer, &later);
		server_set_state(s, SERVER_STOPPING);
	} else if (strcmp(what, "--next-without-job") == 0) {
		s->next = (struct session *)(uintptr_t)1;
		server_set_state(s, SERVER_CONNECTING);
	}
	_exit(3); /* it went on */
}

static const char *test_self; /* argv[0] */

/* Runs the child what: it must stop (fatalx) saying want on stderr. */
static void
check_child_stops(const char *what, const char *want)
{
	char got[512] = "";
	int pipefd[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	TAP_REQUIRE(pipe(pipefd) == 0, "pipe: %s", strerror(errno));
	fflush(stdout);
	if ((pid = fork()) == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		setenv("MCPD_STRICT_STATES", "1", 1);
		execl(test_self, test_self, what, (char *)NULL);
		_exit(99);
	}
	TAP_REQUIRE(pid > 0, "fork: %s", strerror(errno));
	close(pipefd[1]);
	while ((n = read(pipefd[0], got + len, sizeof got - 1 - len)) > 0)
		len += n;
	close(pipefd[0]);
	TAP_REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid");
	TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	    "%s should stop mcpd (fatalx: status 1), got %d", what,
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	TAP_CHECK_STR(got, want);
}

static void
test_illegal_move_stops(void)
{
	check_child_stops("--illegal-move",
	    "BUG: server x: illegal state transition stopped -> ready\n");
}

/* Only its container is left: it goes (stopped), is unloaded or reloaded. */
static void
test_removing_moves(void)
{
	struct server *s = make_server("gone");

	reset_events();
	server_set_state(s, SERVER_REMOVING);
	TAP_CHECK_STR(server_state_shown(s), "failed");
	TAP_CHECK(!server_is_failed(s),
	    "an unloaded server is not one to log in to");
	server_set_state(s, SERVER_FAILED);
	server_set_state(s, SERVER_REMOVING);
	server_set_state(s, SERVER_STOPPING);
	server_set_state(s, SERVER_REMOVING);
	server_set_state(s, SERVER_STOPPED);
	TAP_CHECK_STR(events,
	    "removing failed removing stopping removing stopped");
	server_kill(s);
	run_turns(5);
	check_child_stops("--illegal-removing",
	    "BUG: server x: illegal state transition removing -> ready\n");
}

static void
test_restart_due_only_while_restarting(void)
{
	check_child_stops("--restart-due",
	    "BUG: server x: a restart is due in state stopping\n");
}

static void
test_next_only_with_its_job(void)
{
	check_child_stops("--next-without-job",
	    "BUG: server x: a connection is being started in state connecting\n");
}

static void
test_legal_moves(void)
{
	struct server *s = make_server("legal");

	reset_events();
	server_set_state(s, SERVER_CONNECTING);
	server_set_state(s, SERVER_READY);
	server_set_state(s, SERVER_RESTARTING);
	server_set_state(s, SERVER_STARTING);
	server_set_state(s, SERVER_IDLE);
	server_set_state(s, SERVER_STOPPING);
	server_set_state(s, SERVER_STOPPED);
	TAP_CHECK_STR(events,
	    "connecting ready restarting starting idle stopping stopped");
	TAP_CHECK_INT(s->state, SERVER_STOPPED);
	server_kill(s);
	run_turns(5);
}

static void
test_answer_from_loop(void)
{
	struct server *s = make_server("later");
	struct test_reply unload;

	reset_events();
	tr_init(&unload, "unload");
	/* Nothing to wait for, and still no answer inside the call. */
	server_unload(s, &unload.rep);
	TAP_CHECK_INT(unload.answers, 0);
	TAP_CHECK_STR(events, "");
	TAP_CHECK(run_until(&unload.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events, "stopping stopped unload:ok");
	/* Stopped, it leaves the list on the gate's next turn. */
	run_turns(20);
	TAP_CHECK(server_find("default", "later") == NULL,
	    "an unloaded server should leave the list");
}

static void
test_reload_waits_for_load(void)
{
	struct server *s = make_server("gate");
	struct test_reply load, reload;

	reset_events();
	tr_init(&load, "load");
	tr_init(&reload, "reload");
	lb_holds = true;
	server_load(s, &load.rep, 5000, NULL, NULL, NULL);
	run_turns(20);
	/* The load runs: its handshake waits for the test. */
	TAP_CHECK_STR(events, "transport1 connecting");
	TAP_CHECK(s->running != NULL, "the load should be running");
	server_reload(s, &reload.rep, 5000);
	run_turns(20);
	/* Queued behind it: no second connection, no answer. */
	TAP_CHECK_STR(events, "transport1 connecting");
	TAP_CHECK_INT(reload.answers, 0);
	lb_holds = false;
	lb_release();
	TAP_CHECK(run_until(&reload.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events,
	    "transport1 connecting ready load:ok transport2 reload:ok");
	TAP_CHECK_INT(load.answers, 1);
	TAP_CHECK_INT(s->state, SERVER_READY);
	TAP_CHECK_INT(s->generation > 0, 1);
	TAP_CHECK(unload(s), "the unload should answer and end it");
}

static void
test_on_demand_idle_and_wake(void)
{
	struct server *s = make_server("lazy");
	struct test_reply load, call;
	json_t *args = json_object();

	reset_events();
	tr_init(&load, "load");
	tr_init(&call, "call");
	server_idle_configure(s, true, 0);
	server_load(s, &load.rep, 5000, NULL, NULL, NULL);
	TAP_CHECK(run_until(&load.answers, 1), "no answer: %s", events);
	run_turns(50);
	/* Its lists kept, a first start stops at once: idle, listed. */
	TAP_CHECK_STR(events, "transport1 connecting ready load:ok idle");
	TAP_REQUIRE(s->state == SERVER_IDLE, "state %s",
	    server_state_name(s->state));
	TAP_CHECK(s->session == NULL, "an idle server has no connection");
	TAP_CHECK(server_tool_peek(s, "echo") != NULL,
	    "its kept tools should list echo");
	/* A call wakes it, waits for its start, then goes. */
	reset_events();
	server_call(s, 0, "echo", args, 5000, &call.rep, NULL);
	TAP_CHECK_INT(call.answers, 0);
	TAP_CHECK(run_until(&call.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events, "waking transport1 ready call:ok");
	TAP_CHECK_INT(s->state, SERVER_READY);
	/* Its lists were as kept: agents were told nothing. */
	TAP_CHECK_INT(tools_changed, 0);
	json_decref(args);
	TAP_CHECK(unload(s), "the unload should answer and end it");
}

/* The server layer links without the gateway, the HTTP front or control. */
static void
test_links_alone(void)
{
	TAP_CHECK(&gateway_dispatch == NULL, "gateway.c is linked");
	TAP_CHECK(&gateway_subs_has == NULL, "gateway-subs.c is linked");
	TAP_CHECK(&gateway_roots_answer == NULL, "gateway-roots.c is linked");
	TAP_CHECK(&gateway_server_watch == NULL,
	    "the gateway's watch is linked");
	TAP_CHECK(&httpd_listen == NULL, "httpd.c is linked");
	TAP_CHECK(&httpd_server_watch == NULL, "the front's watch is linked");
	TAP_CHECK(&control_listen == NULL, "control.c is linked");
	TAP_CHECK(&control_reply == NULL, "control-request.c is linked");
}

/* An on-demand server of the default agent, idle with its lists kept. */
static struct server *
make_idle_server(const char *name)
{
	struct server *s = make_server(name);
	struct test_reply load;

	tr_init(&load, "load");
	server_idle_configure(s, true, 0);
	server_load(s, &load.rep, 5000, NULL, NULL, NULL);
	run_until(&load.answers, 1);
	run_turns(50);
	return s;
}

/*
 * Waking is a state: listed as idle until its handshake is sent, then as
 * connecting; the calls that came meanwhile wait, one start for all.
 */
static void
test_waking_is_listed_as_before(void)
{
	struct server *s = make_idle_server("sleepy");
	struct test_reply one, two;
	json_t *args = json_object();

	TAP_REQUIRE(s->state == SERVER_IDLE, "state %s",
	    server_state_name(s->state));
	reset_events();
	tr_init(&one, "one");
	tr_init(&two, "two");
	lb_holds = true;
	server_call(s, 0, "echo", args, 5000, &one.rep, NULL);
	TAP_CHECK_INT(s->state, SERVER_WAKING);
	TAP_CHECK_STR(server_state_shown(s), "idle");
	TAP_CHECK_INT(server_count_idle(), 1);
	server_call(s, 0, "echo", args, 5000, &two.rep, NULL);
	run_turns(20);
	/* The wake's handshake waits for the test: connecting, not idle. */
	TAP_CHECK_STR(events, "waking transport1");
	TAP_CHECK_INT(s->state, SERVER_WAKING);
	TAP_CHECK_STR(server_state_shown(s), "connecting");
	TAP_CHECK_INT(server_count_idle(), 0);
	TAP_CHECK(server_tool_peek(s, "echo") != NULL,
	    "its kept tools should stay listed while it wakes");
	TAP_CHECK_INT(one.answers + two.answers, 0);
	lb_holds = false;
	lb_release();
	TAP_CHECK(run_until(&two.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events, "waking transport1 ready one:ok two:ok");
	json_decref(args);
	TAP_CHECK(unload(s), "the unload should answer and end it");
}

/*
 * A wake whose start fails at once (a variable of its command is unset)
 * goes back to idle and fails the calls that waited, now: before waking
 * was a state, the server stayed idle with its wake marked as running,
 * and every later call waited for its deadline.
 */
static void
test_waking_fails_back_to_idle(void)
{
	struct server *s = make_idle_server("broken");
	struct test_reply call, again;
	json_t *args = json_object();

	TAP_REQUIRE(s->state == SERVER_IDLE, "state %s",
	    server_state_name(s->state));
	free(s->spec.argv[0]);
	s->spec.argv[0] = xstrdup("$(env.MCPD_TEST_NOT_SET)");
	unsetenv("MCPD_TEST_NOT_SET");
	reset_events();
	tr_init(&call, "call");
	tr_init(&again, "again");
	server_call(s, 0, "echo", args, 5000, &call.rep, NULL);
	TAP_CHECK(run_until(&call.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events, "waking idle call:unavailable");
	TAP_CHECK_INT(s->state, SERVER_IDLE);
	/* The next call wakes it again (and fails the same way). */
	server_call(s, 0, "echo", args, 5000, &again.rep, NULL);
	TAP_CHECK(run_until(&again.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events,
	    "waking idle call:unavailable waking idle again:unavailable");
	json_decref(args);
	TAP_CHECK(unload(s), "the unload should answer and end it");
}

/*
 * A ready server whose connection dies recovers: its kept lists stand for
 * it (listed as restarting), a call waits for it, and its agents are told
 * nothing; its restart resumes it (listed as connecting) and the call goes.
 */
static void
test_crash_recovers(void)
{
	struct server *s = make_server("crashy");
	struct test_reply load, call;
	json_t *args = json_object();

	reset_events();
	tr_init(&load, "load");
	tr_init(&call, "call");
	server_load(s, &load.rep, 5000, NULL, NULL, NULL);
	TAP_REQUIRE(run_until(&load.answers, 1), "no answer: %s", events);
	run_turns(50);
	TAP_REQUIRE(s->kept != NULL, "its lists should be kept");
	reset_events();
	lb_last->t.cbs->closed(lb_last->t.cb_arg, "killed by the test");
	run_turns(5);
	TAP_CHECK_STR(events, "recovering");
	TAP_CHECK_STR(server_state_shown(s), "restarting");
	TAP_CHECK(evtimer_pending(s->restart_timer, NULL),
	    "its restart should be due");
	TAP_CHECK(server_tool_peek(s, "echo") != NULL,
	    "its kept tools should stand for it");
	server_call(s, 0, "echo", args, 5000, &call.rep, NULL);
	run_turns(5);
	TAP_CHECK_INT(call.answers, 0);
	/* Its backoff over (now, for the test): the restart runs. */
	lb_holds = true;
	evtimer_del(s->restart_timer);
	server_restart_due(-1, EV_TIMEOUT, s);
	run_turns(20);
	TAP_CHECK_STR(events, "recovering transport1 resuming");
	TAP_CHECK_STR(server_state_shown(s), "connecting");
	lb_holds = false;
	lb_release();
	TAP_CHECK(run_until(&call.answers, 1), "no answer: %s", events);
	TAP_CHECK_STR(events, "recovering transport1 resuming ready call:ok");
	TAP_CHECK_INT(s->restarts, 1);
	TAP_CHECK_INT(tools_changed, 0);
	json_decref(args);
	TAP_CHECK(unload(s), "the unload should answer and end it");
}

static const struct tap_test tests[] = {
	{ "the server layer links without the layers above it",
	    test_links_alone },
	{ "an illegal move of the server table stops mcpd (strict)",
	    test_illegal_move_stops },
	{ "legal moves of the server table go", test_legal_moves },
	{ "a job that has nothing to wait for answers from the loop",
	    test_answer_from_loop },
	{ "a reload queued behind a running load waits for its answer",
	    test_reload_waits_for_load },
	{ "an on-demand server goes idle with its lists kept, a call wakes it",
	    test_on_demand_idle_and_wake },
	{ "a server that is only a container to remove moves as the table says",
	    test_removing_moves },
	{ "a restart due in any state but restarting stops mcpd (strict)",
	    test_restart_due_only_while_restarting },
	{ "a connection started with no job running stops mcpd (strict)",
	    test_next_only_with_its_job },
	{ "a waking server is listed as idle, then connecting; calls wait",
	    test_waking_is_listed_as_before },
	{ "a wake that cannot start goes back to idle and fails its calls",
	    test_waking_fails_back_to_idle },
	{ "a ready server whose connection dies recovers, its lists standing",
	    test_crash_recovers },
};

int
main(int argc, char **argv)
{
	static char state_dir[] = "/tmp/test-server.XXXXXX";
	int r;

	test_self = argv[0];
	log_init(test_sink, 0, "mcpd");
	mcpd_opts.log_lines = 100;
	mcpd_opts.load_timeout_ms = 5000;
	mcpd_opts.call_timeout_ms = 5000;
	mcpd_opts.max_message = 1 << 20;
	mcpd_opts.max_kept_bytes = 1 << 20;
	if ((mcpd_base = event_base_new()) == NULL)
		return 99;
	if (argc == 2 && strncmp(argv[1], "--", 2) == 0)
		child_illegal_move(argv[1]);
	if (mkdtemp(state_dir) == NULL)
		return 99;
	mcpd_opts.state_dir = state_dir;
	if (server_pins_open(state_dir) < 0)
		return 99;
	server_watch_add(&test_watch);
	r = tap_run(tests, TAP_COUNT(tests));
	server_pins_close();
	event_base_free(mcpd_base);
	remove_tree(state_dir);
	return r;
}
