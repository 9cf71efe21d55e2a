/* SPDX-License-Identifier: ISC */
/* What mcp-testserver.c shares with the files linked into it. */
#ifndef TESTSERVER_H
#define TESTSERVER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct ts_conn;

/* One tools/call: its arguments, id, peer and _meta. */
struct ts_call {
	json_t *args;
	json_t *id;
	struct ts_conn *conn; /* NULL: stdio */
	json_t *meta;	      /* the request's _meta, or NULL */
	json_t *params;	      /* the whole request's params */
};

/* mcp-testserver.c */
void ts_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sends a message to its peer and drops the reference. */
void ts_send(struct ts_conn *, json_t *msg);
/* A message the server starts (stdio only); drops the reference. */
void ts_notify(json_t *msg);
json_t *ts_response(json_t *id, json_t *result);
json_t *ts_error(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A tools/call result of one text (isError when is_error). */
json_t *ts_result(bool is_error, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sends a tools/call's result (a deferred one too). */
void ts_call_answer(struct ts_conn *, json_t *id, json_t *result);
/* --modern: the 2026-07-28 era only. */
bool ts_is_modern(void);

/* testserver-conformance.c: the fixtures of the conformance harness. */
json_t *tsc_capabilities(void);
json_t *tsc_tools_list(void);
void tsc_tools_call(json_t *params, json_t *id, struct ts_conn *);
/* Answers prompts, resources, completion and logging; false: not one. */
bool tsc_dispatch(const char *method, json_t *params, json_t *id,
    struct ts_conn *);
/* The client's answer to a request of a fixture; false: not one. */
bool tsc_client_answer(json_t *msg);

#endif
