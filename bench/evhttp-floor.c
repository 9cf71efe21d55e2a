/* SPDX-License-Identifier: ISC */
/* evhttp-floor: libevent's evhttp answering every POST at once, nothing more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

/*
 * The floor of any front built on evhttp, as mcpd's is: a request is read
 * and parsed by evhttp, a fixed result (mcpd-load --serve's) is written
 * with the headers mcpd's front writes on a JSON answer, and nothing else
 * runs. mcpd-load against it (bench/load.bash) says how many calls a
 * second evhttp alone allows on this machine, and callgrind how many
 * instructions a request evhttp costs by itself.
 */

static const char floor_body[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":"
    "\"text\",\"text\":\"hi\"}]}}";

static void
floor_answer(struct evhttp_request *req, void *arg)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *out = evbuffer_new();

	(void)arg;
	if (out == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evhttp_add_header(h, "Content-Type", "application/json");
	evhttp_add_header(h, "Mcp-Session-Id", "s");
	evbuffer_add_reference(out, floor_body, sizeof floor_body - 1, NULL,
	    NULL);
	evhttp_send_reply(req, 200, "OK", out);
	evbuffer_free(out);
}

int
main(int argc, char **argv)
{
	struct event_base *base;
	struct evhttp *http;
	char *end;
	long port;

	if (argc != 2 || (port = strtol(argv[1], &end, 10)) <= 0 ||
	    port > 65535 || *end != '\0') {
		fprintf(stderr, "usage: evhttp-floor PORT\n");
		return 2;
	}
	if ((base = event_base_new()) == NULL ||
	    (http = evhttp_new(base)) == NULL) {
		fprintf(stderr, "evhttp-floor: libevent: out of memory\n");
		return 1;
	}
	evhttp_set_allowed_methods(http, EVHTTP_REQ_POST | EVHTTP_REQ_GET);
	evhttp_set_gencb(http, floor_answer, NULL);
	if (evhttp_bind_socket(http, "127.0.0.1", (unsigned short)port) < 0) {
		fprintf(stderr, "evhttp-floor: cannot listen on port %ld: %s\n",
		    port, strerror(errno));
		return 1;
	}
	event_base_dispatch(base);
	evhttp_free(http);
	event_base_free(base);
	return 0;
}
