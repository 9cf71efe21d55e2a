/* SPDX-License-Identifier: ISC */
/* What probe.c and probe-http.c share: a container start's state. */
#ifndef MCPD_PROBE_INT_H
#define MCPD_PROBE_INT_H

#include "mcpd.h"

#define PROBE_RESEND_MS	  100 /* between tries of a handshake over HTTP */
/* A remembered HTTP image that has not answered by then is probed. */
#define PROBE_DIRECT_MS	  10000
/* Exposed ports a probe publishes at most (the first ones the image lists). */
#define PROBE_PUBLISH_MAX 8

enum probe_phase {
	PROBE_LOOKING,	 /* docker image inspect: which ports it exposes */
	PROBE_STDIO,	 /* docker run -i; stderr watched for HTTP */
	PROBE_SWITCHING, /* to the managed container: a new one, or renamed */
	PROBE_HTTP,	 /* Streamable HTTP to the published port */
};

struct probe;
/* Moves the probe to phase, a move its table allows (mcpd-fsm.c). */
void probe_set_phase(struct probe *, enum probe_phase);
extern const struct fsm probe_fsm;
/*
 * Whoever keeps a probe across a callback holds a reference: its session
 * (the transport's owner, until probe_free), a close answered from the
 * loop, and a failure while the session's closed callback runs (it may
 * free the session, and the probe with it).
 */
void probe_ref(struct probe *);
void probe_unref(struct probe *);

struct probe {
	struct transport_wrap w; /* what the session holds, and its inner one */
	int references;
	struct probe_target target; /* points into spec, agent, server */
	struct server_spec spec;    /* a copy: values may be resolved secrets */
	char *agent, *server;
	struct docker_container *ct; /* the server's record (a reference) */
	enum probe_phase phase;
	struct child_spec run;
	char **run_argv, **run_env;
	struct remote_spec remote;
	int port;			  /* inside the container */
	int published[PROBE_PUBLISH_MAX]; /* the probe's, on 127.0.0.1 */
	size_t npublished;
	char *since;   /* a promoted probe's logs are followed from then on */
	int host_port; /* published on 127.0.0.1 */
	char *path;
	struct docker_cmd *cmd;	 /* docker start, inspect, ... */
	struct docker_cmd *logs; /* docker logs -f of the managed one */
	struct event *step;	 /* the switch, out of the inner's callback */
	struct event *deadline;	 /* of a remembered image's first answer */
	char *image_id;		 /* what the managed container runs */
	char *remembered_id;	 /* the image ID remembered as HTTP, or NULL */
	bool is_direct;		 /* started managed at once, from the memory */
	bool is_known_stdio;	 /* the memory says the image answered stdio */
	bool is_creating;	 /* the record runs its docker create for it */
	char *run_failed; /* why docker run failed, while its name is checked */
	bool saw_name_conflict; /* docker said the name is already in use */
};

/* probe.c */
/* Fails the start: fmt has two %s, the container's name and why. */
void probe_fail(struct probe *, const char *fmt, const char *why);
/*
 * docker run (or rename) failed before the server answered: the load
 * fails once the container's labels said whose the name is.
 */
void probe_run_failed(struct probe *, const char *fmt, const char *why);
/* docker's (and podman's) words for a name another container holds. */
bool probe_is_name_conflict(const char *text, size_t len);
/* Sends the held handshake messages again over the current inner one. */
void probe_send_held(struct probe *);
/* Tells the session (and a client following the load) how far it got. */
void probe_progress(struct probe *, const char *stage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* docker image inspect (the ports to publish), then the probe. */
void probe_look(struct probe *);

/* probe-http.c: the switch to HTTP, and a start from the memory. */
/* The probe said it listens on port (path is taken): switch to HTTP. */
void probe_http_switch(struct probe *, int port, char *path);
/* The switch, out of the inner transport's callback (p->step). */
void probe_http_switch_due(evutil_socket_t fd, short events, void *arg);
/* Starts rax-mcp-... at once, as the memory says id answered (takes id, path). */
void probe_http_start_direct(struct probe *, char *id, int port, char *path);
/* A remembered image's deadline for its first HTTP answer (p->deadline). */
void probe_http_direct_due(evutil_socket_t fd, short events, void *arg);
/* A remembered image did not answer HTTP: remove it, probe the image. */
void probe_http_fall_back(struct probe *, const char *why, bool forget);

#endif
