/* SPDX-License-Identifier: ISC */
/*
 * Tests of control.c's end of a client (DESIGN 10): control_client_free
 * unlinks it and runs its hooks at once, but its memory (and its
 * connection) goes with the last reference, from the loop; a hook that
 * ends another client, or the one being ended, frees nothing twice.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control-int.h"
#include "mcpd-stubs.h"
#include "tap.h"

/* A client on one end of a socketpair; *peer is the other end. */
static struct client *
control_test_client(int *peer)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return NULL;
	*peer = sv[1];
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	return control_client_new(sv[0], sv[0], "default", NULL);
}

/* Whether the peer sees the end of the connection (read gives 0). */
static bool
control_test_peer_ended(int peer)
{
	char c;

	return read(peer, &c, 1) == 0;
}

/* What is sent to an ended client is dropped, not queued. */
static void
control_test_send_to_dead(struct client *c)
{
	size_t before = control_output_length(c);

	control_send(c, json_pack("{s:s}", "jsonrpc", "2.0"));
	TAP_CHECK_INT(control_output_length(c), before);
}

static void
control_test_turns(int n)
{
	for (int i = 0; i < n; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
}

/* Ended, the client is unlisted at once; its memory waits for its holder. */
static void
test_free_is_deferred(void)
{
	size_t before = control_client_count();
	int peer = -1;
	struct client *c = control_test_client(&peer);

	TAP_REQUIRE(c != NULL, "socketpair");
	TAP_CHECK_INT(control_client_count(), before + 1);
	control_client_ref(c); /* a caller that keeps it across the free */
	control_client_free(c);
	TAP_CHECK(c->is_dead, "not marked dead");
	TAP_CHECK_INT(control_client_count(), before);
	for (const struct client *o = control_client_next(NULL); o != NULL;
	     o = control_client_next(o))
		TAP_CHECK(o != c, "a dead client is still listed");
	/* Held: still whole after loop turns, its connection open. */
	control_test_turns(3);
	TAP_CHECK(c->is_dead && strcmp(c->agent, "default") == 0,
	    "the held client changed");
	TAP_CHECK(!control_test_peer_ended(peer), "closed while held");
	/* A second end is none. */
	control_client_free(c);
	TAP_CHECK_INT(control_client_count(), before);
	control_test_send_to_dead(c);
	control_client_unref(c);
	control_test_turns(3);
	TAP_CHECK(control_test_peer_ended(peer), "not closed once released");
	close(peer);
}

static void
control_test_end(void *arg)
{
	control_client_free(arg);
}

/*
 * Each client's pending request ends the other when its client goes (as
 * an attached client goes with the connection that attached it): ending
 * one ends both, once each.
 */
static void
test_hooks_end_each_other(void)
{
	size_t before = control_client_count();
	int px = -1, py = -1;
	struct client *x = control_test_client(&px);
	struct client *y = control_test_client(&py);
	json_t *id = json_integer(1);
	struct request *rx, *ry;

	TAP_REQUIRE(x != NULL && y != NULL, "socketpair");
	rx = control_request_new(x, id);
	ry = control_request_new(y, id);
	json_decref(id);
	control_on_gone(rx, control_test_end, y);
	control_on_gone(ry, control_test_end, x);
	control_client_free(x);
	TAP_CHECK(x->is_dead && y->is_dead, "both end");
	TAP_CHECK_INT(control_client_count(), before);
	TAP_CHECK(rx->client == NULL && ry->client == NULL,
	    "a request still points at its client");
	/* Their owners answer into nothing. */
	control_finish(rx, json_object(), NULL, 0);
	control_finish(ry, json_object(), NULL, 0);
	control_test_turns(3);
	TAP_CHECK(control_test_peer_ended(px) && control_test_peer_ended(py),
	    "a connection stays open");
	close(px);
	close(py);
}

static const struct tap_test tests[] = {
	{ "an ended client's memory waits for its last reference",
	    test_free_is_deferred },
	{ "hooks that end each other's client end each once",
	    test_hooks_end_each_other },
};

int
main(void)
{
	int r;

	mcpd_opts.max_message = 1 << 20;
	mcpd_opts.max_client_output = 1 << 20;
	mcpd_opts.max_client_requests = 64;
	if ((mcpd_base = event_base_new()) == NULL)
		return 1;
	r = tap_run(tests, TAP_COUNT(tests));
	defer_close();
	return r;
}
