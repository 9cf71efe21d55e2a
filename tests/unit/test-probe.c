/* SPDX-License-Identifier: ISC */
/* Tests of probe.c's HTTP detection in a container's log lines. */
#include <stdlib.h>
#include <string.h>

#include "mcpd-stubs.h"
#include "tap.h"

struct detect_case {
	const char *line;
	int port; /* 0: nothing detected */
	const char *path;
};

static const struct detect_case detect_cases[] = {
	/* The test images and server-everything, as they print. */
	{ "listening on http://127.0.0.1:8080/mcp", 8080, "/mcp" },
	{ "listening on port 8080", 8080, "/mcp" },
	{ "MCP Streamable HTTP Server listening on port 3001", 3001, "/mcp" },
	/* Other shapes real servers print. */
	{ "Server running at http://0.0.0.0:9000/api/mcp?x=1 now", 9000,
	    "/api/mcp?x=1" },
	{ "Listening on http://[::]:7000", 7000, "/mcp" },
	{ "Uvicorn running on http://0.0.0.0:8000/ (Press CTRL+C)", 8000,
	    "/mcp" },
	{ "INFO listening on 0.0.0.0:4321", 4321, "/mcp" },
	{ "Listening on :5555", 5555, "/mcp" },
	{ "listening at port=6000", 6000, "/mcp" },
	{ "url: \"http://localhost:3000/sse\"", 3000, "/sse" },
	/* Not an endpoint. */
	{ "Starting default (STDIO) server...", 0, NULL },
	{ "Server is running on port 3001", 0, NULL },
	{ "see http://example.com/docs", 0, NULL },
	{ "listening on port 70000", 0, NULL },
	{ "listening on port 0", 0, NULL },
	{ "listening soon", 0, NULL },
	{ "http://host:12ab/x", 0, NULL },
	{ "", 0, NULL },
};

static void
test_detect(void)
{
	for (size_t i = 0; i < TAP_COUNT(detect_cases); i++) {
		const struct detect_case *c = &detect_cases[i];
		char *path = NULL;
		int port = -1;
		int r = probe_detect_http(c->line, strlen(c->line), &port,
		    &path);

		if (c->port == 0) {
			TAP_CHECK(r == 0, "\"%s\": detected port %d", c->line,
			    port);
			continue;
		}
		TAP_CHECK(r == 1 && port == c->port && path != NULL &&
			strcmp(path, c->path) == 0,
		    "\"%s\": expected %d %s, got %d %d %s", c->line, c->port,
		    c->path, r, port, path != NULL ? path : "(null)");
		free(path);
	}
}

/* A line is not NUL-terminated where the transport hands it over. */
static void
test_detect_bounded(void)
{
	const char buf[] = "listening on port 8080123";
	char *path = NULL;
	int port = 0;

	TAP_CHECK_INT(probe_detect_http(buf, strlen("listening on port 8080"),
			  &port, &path),
	    1);
	TAP_CHECK_INT(port, 8080);
	free(path);
}

/* The TCP ports an image exposes, as docker image inspect prints them. */
static void
test_exposed(void)
{
	int ports[3] = { 0 };

	TAP_CHECK_INT(probe_detect_exposed("{\"8080/tcp\":{}}\n", ports, 3), 1);
	TAP_CHECK_INT(ports[0], 8080);
	TAP_CHECK_INT(
	    probe_detect_exposed("{\"53/udp\":{},\"3001/tcp\":{},\"9000\":{}}",
		ports, 3),
	    2);
	TAP_CHECK_INT(ports[0], 3001);
	TAP_CHECK_INT(ports[1], 9000);
	/* Bounded: the first max ones. */
	TAP_CHECK_INT(
	    probe_detect_exposed(
		"{\"1/tcp\":{},\"2/tcp\":{},\"3/tcp\":{},\"4/tcp\":{}}", ports,
		3),
	    3);
	TAP_CHECK_INT(ports[2], 3);
	TAP_CHECK_INT(probe_detect_exposed("null\n", ports, 3), 0);
	TAP_CHECK_INT(probe_detect_exposed("", ports, 3), 0);
	TAP_CHECK_INT(probe_detect_exposed("{\"x/tcp\":{},\"70000/tcp\":{}}",
			  ports, 3),
	    0);
}

static const struct tap_test tests[] = {
	{ "exposed TCP ports of an image, at most max", test_exposed },
	{ "HTTP endpoints found in log lines, and not found", test_detect },
	{ "only len bytes of a line are read", test_detect_bounded },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
