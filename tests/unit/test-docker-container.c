/* SPDX-License-Identifier: ISC */
/*
 * Tests of the container record's state machine (docker-container.c): the
 * moves its table allows and refuses, an illegal move stopping mcpd where
 * bugs are looked for, and the states a record goes through when real
 * commands end. The docker CLI is a shell script here: a unit test cannot
 * make a real engine fail a docker rm or rename on cue, and the record
 * only reads the CLI's exit status and stderr (the integration tests run
 * the real one).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "malloc-spy.h"
#include "mcpd-stubs.h"
#include "tap.h"

static char dir[] = "/tmp/test-docker-container.XXXXXX";
static char *docker_path, *log_path;

/*
 * The fake CLI logs its arguments, one command a line, and exits with the
 * status in the file named after its command (0 without one), saying
 * "boom" on stderr when that is not 0.
 */
static bool
container_fake_docker(void)
{
	FILE *f;

	if (mkdtemp(dir) == NULL ||
	    asprintf(&docker_path, "%s/docker", dir) < 0 ||
	    asprintf(&log_path, "%s/log", dir) < 0 ||
	    (f = fopen(docker_path, "w")) == NULL)
		return false;
	fprintf(f,
	    "#!/bin/sh\n"
	    "echo \"$*\" >>%s/log\n"
	    "s=0; [ -f %s/\"$1\" ] && s=$(cat %s/\"$1\")\n"
	    "[ \"$s\" = 0 ] || echo boom >&2\n"
	    "exit $s\n",
	    dir, dir, dir);
	fclose(f);
	mcpd_opts.docker = docker_path;
	mcpd_opts.docker_timeout_ms = 10000;
	return chmod(docker_path, 0755) == 0;
}

/* The next docker COMMAND exits with status (0: succeeds). */
static void
container_fake_exit(const char *command, int status)
{
	char *path, text[16];

	TAP_REQUIRE(asprintf(&path, "%s/%s", dir, command) > 0, "asprintf");
	snprintf(text, sizeof text, "%d", status);
	TAP_REQUIRE(fileio_write_atomic(path, text, strlen(text), 0644, NULL) ==
		0,
	    "cannot write %s", path);
	free(path);
}

/* What the fake CLI was asked since the last call (new), and forgets it. */
static char *
container_fake_log(void)
{
	char *text = NULL;
	size_t len;

	if (fileio_read_all(log_path, 1 << 16, FILEIO_REGULAR, &text, &len) < 0)
		return strdup("");
	unlink(log_path);
	return text;
}

/* Forgets what the fake CLI was asked. */
static void
container_fake_forget(void)
{
	free(container_fake_log());
}

struct heard {
	int times;
	int err;
	char *why;
	bool is_inside; /* it ran inside the call that asked */
};

static bool is_asking;

static void
container_heard(void *arg, int err, const char *why)
{
	struct heard *h = arg;

	h->times++;
	h->err = err;
	free(h->why);
	h->why = why != NULL ? strdup(why) : NULL;
	h->is_inside = is_asking;
}

/* Runs the loop until h was told, or for about five seconds. */
static void
container_wait(struct heard *h)
{
	for (int i = 0; i < 5000 && h->times == 0; i++) {
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
}

/* A record named name, this daemon's container (created). */
static struct docker_container *
container_named(const char *name)
{
	struct docker_container *ct = docker_container_new("default", "srv",
	    NULL, NULL);

	docker_container_set(ct, name, DOCKER_PHASE_PROBE);
	docker_container_created(ct);
	return ct;
}

/* Frees ct and lets the loop release its memory. */
static void
container_done(struct docker_container *ct)
{
	docker_container_free(ct);
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
}

static void
test_table(void)
{
	const struct fsm *m = &docker_fsm;

	TAP_CHECK_STR(fsm_state_name(m, DOCKER_EMPTY), "empty");
	TAP_CHECK_STR(fsm_state_name(m, DOCKER_REMOVE_DUE), "remove-due");
	TAP_CHECK_STR(fsm_state_name(m, DOCKER_DEAD), "dead");
	TAP_CHECK_INT(m->n, DOCKER_DEAD + 1);
	/* Legal: the steps of a start, a switch, a rename, a removal. */
	TAP_CHECK(fsm_allows(m, DOCKER_EMPTY, DOCKER_NAMED), "empty -> named");
	TAP_CHECK(fsm_allows(m, DOCKER_NAMED, DOCKER_SWITCHING),
	    "named -> switching");
	TAP_CHECK(fsm_allows(m, DOCKER_RENAMING, DOCKER_REMOVE_DUE),
	    "renaming -> remove-due");
	TAP_CHECK(fsm_allows(m, DOCKER_REMOVE_DUE, DOCKER_REMOVING),
	    "remove-due -> removing");
	TAP_CHECK(fsm_allows(m, DOCKER_REMOVING, DOCKER_FAILED),
	    "removing -> failed");
	TAP_CHECK(fsm_allows(m, DOCKER_FAILED, DOCKER_REMOVING),
	    "failed -> removing (the retry)");
	for (int s = DOCKER_EMPTY; s < DOCKER_DEAD; s++)
		TAP_CHECK(fsm_allows(m, s, DOCKER_DEAD), "%s -> dead",
		    fsm_state_name(m, s));
	/* Illegal: nothing to rename or remove, a rename's removal skipped. */
	TAP_CHECK(!fsm_allows(m, DOCKER_EMPTY, DOCKER_RENAMING),
	    "empty -> renaming");
	TAP_CHECK(!fsm_allows(m, DOCKER_EMPTY, DOCKER_REMOVING),
	    "empty -> removing");
	TAP_CHECK(!fsm_allows(m, DOCKER_REMOVE_DUE, DOCKER_NAMED),
	    "remove-due -> named");
	TAP_CHECK(!fsm_allows(m, DOCKER_FAILED, DOCKER_EMPTY),
	    "failed -> empty");
	TAP_CHECK(!fsm_allows(m, DOCKER_REMOVING, DOCKER_RENAMING),
	    "removing -> renaming");
	/* A create while the probe goes: it settles renaming, or removal due. */
	TAP_CHECK(fsm_allows(m, DOCKER_SWITCHING, DOCKER_RENAMING),
	    "switching -> renaming");
	TAP_CHECK(fsm_allows(m, DOCKER_SWITCHING, DOCKER_REMOVE_DUE),
	    "switching -> remove-due");
	TAP_CHECK(fsm_allows(m, DOCKER_RENAMING, DOCKER_SWITCHING),
	    "renaming -> switching");
	for (int s = DOCKER_EMPTY; s <= DOCKER_DEAD; s++)
		TAP_CHECK(!fsm_allows(m, DOCKER_DEAD, s), "dead -> %s",
		    fsm_state_name(m, s));
}

/* An illegal move ends a strict mcpd, saying which. */
static void
test_illegal_move_stops(void)
{
	int fds[2], status;
	char buf[512];
	ssize_t n;
	pid_t pid;

	TAP_REQUIRE(pipe(fds) == 0, "pipe");
	if ((pid = fork()) == 0) {
		dup2(fds[1], 2);
		setenv("MCPD_STRICT_STATES", "1", 1);
		fsm_move(&docker_fsm, DOCKER_DEAD, DOCKER_NAMED, "a.srv");
		_exit(0);
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof buf - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fds[0]);
	TAP_CHECK_INT(waitpid(pid, &status, 0), pid);
	TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x",
	    status);
	TAP_CHECK(
	    strstr(buf,
		"BUG: container a.srv: illegal state transition dead -> named") !=
		NULL,
	    "stderr: %s", buf);
}

/* A start's name, then a removal that ends well: empty again. */
static void
test_remove(void)
{
	struct docker_container *ct = docker_container_new("default", "srv",
	    NULL, NULL);
	struct heard h = { 0 };
	char *log;

	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	docker_container_set(ct, "rax-probe-srv-1", DOCKER_PHASE_PROBE);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_NAMED);
	docker_container_set(ct, NULL, DOCKER_PHASE_PROBE);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	docker_container_set(ct, "rax-probe-srv-1", DOCKER_PHASE_PROBE);
	docker_container_created(ct);
	container_fake_forget();
	is_asking = true;
	docker_container_remove(ct, container_heard, &h);
	is_asking = false;
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_REMOVING);
	container_wait(&h);
	TAP_CHECK_INT(h.times, 1);
	TAP_CHECK_INT(h.err, 0);
	TAP_CHECK(!h.is_inside, "told inside docker_container_remove");
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	TAP_CHECK(docker_container_name(ct) == NULL, "a name is left");
	log = container_fake_log();
	TAP_CHECK_STR(log, "rm -f rax-probe-srv-1\n");
	free(log);
	/* Nothing to remove: told, from the loop, and still empty. */
	h.times = 0;
	is_asking = true;
	docker_container_remove(ct, container_heard, &h);
	is_asking = false;
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	container_wait(&h);
	TAP_CHECK_INT(h.times, 1);
	TAP_CHECK(!h.is_inside, "told inside docker_container_remove");
	free(h.why);
	container_done(ct);
}

/* A removal that fails keeps the name and the error: failed. */
static void
test_remove_fails(void)
{
	struct docker_container *ct = container_named("rax-probe-srv-2");
	struct heard h = { 0 };

	container_fake_exit("rm", 1);
	docker_container_remove(ct, container_heard, &h);
	container_wait(&h);
	container_fake_exit("rm", 0);
	TAP_CHECK_INT(h.times, 1);
	TAP_CHECK_INT(h.err, -EIO);
	TAP_CHECK(h.why != NULL && strstr(h.why, "boom") != NULL, "why: %s",
	    h.why != NULL ? h.why : "(null)");
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_FAILED);
	TAP_CHECK_STR(docker_container_name(ct), "rax-probe-srv-2");
	TAP_CHECK(docker_container_error(ct) != NULL, "no error kept");
	/* A new removal from there ends well: empty. */
	h.times = 0;
	docker_container_remove(ct, container_heard, &h);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_REMOVING);
	container_wait(&h);
	TAP_CHECK_INT(h.err, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	free(h.why);
	container_fake_forget();
	container_done(ct);
}

/* A rename, and a removal asked during it: by the new name, after it. */
static void
test_rename_then_remove(void)
{
	struct docker_container *ct = container_named("rax-probe-srv-3");
	struct heard renamed = { 0 }, removed = { 0 };
	char *log;

	container_fake_forget();
	TAP_CHECK_INT(docker_container_rename(ct, "rax-mcp-srv-3",
			  DOCKER_PHASE_MANAGED, container_heard, &renamed),
	    0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_RENAMING);
	TAP_CHECK_STR(docker_container_name(ct), "rax-mcp-srv-3");
	TAP_CHECK_STR(docker_container_old_name(ct), "rax-probe-srv-3");
	TAP_CHECK_INT(docker_container_rename(ct, "x", DOCKER_PHASE_MANAGED,
			  container_heard, &renamed),
	    -EBUSY);
	docker_container_remove(ct, container_heard, &removed);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_REMOVE_DUE);
	container_wait(&removed);
	TAP_CHECK_INT(renamed.times, 1);
	TAP_CHECK_INT(renamed.err, 0);
	TAP_CHECK_INT(removed.times, 1);
	TAP_CHECK_INT(removed.err, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	log = container_fake_log();
	TAP_CHECK_STR(log,
	    "rename rax-probe-srv-3 rax-mcp-srv-3\nrm -f rax-mcp-srv-3\n");
	free(log);
	container_done(ct);
}

/*
 * A create, and a removal asked during it (the load's deadline): the
 * removal waits for the create, so the engine cannot make the container
 * after docker rm -f looked.
 */
static void
test_create_then_remove(void)
{
	struct docker_container *ct = docker_container_new("default", "srv",
	    NULL, NULL);
	struct heard created = { 0 }, removed = { 0 };
	char *const argv[] = { docker_path, "create", "--name", "rax-mcp-srv-9",
		"img", NULL };
	char *log;

	docker_container_set(ct, "rax-mcp-srv-9", DOCKER_PHASE_MANAGED);
	container_fake_forget();
	TAP_CHECK_INT(docker_container_create(ct, argv, NULL, container_heard,
			  &created),
	    0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_RENAMING);
	TAP_CHECK_INT(docker_container_create(ct, argv, NULL, container_heard,
			  &created),
	    -EBUSY);
	docker_container_remove(ct, container_heard, &removed);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_REMOVE_DUE);
	container_wait(&removed);
	TAP_CHECK_INT(created.times, 1);
	TAP_CHECK_INT(created.err, 0);
	TAP_CHECK_INT(removed.times, 1);
	TAP_CHECK_INT(removed.err, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	log = container_fake_log();
	TAP_CHECK_STR(log,
	    "create --name rax-mcp-srv-9 img\nrm -f rax-mcp-srv-9\n");
	free(log);
	container_done(ct);
}

/* A rename that ends well keeps only the new name: named. */
static void
test_rename(void)
{
	struct docker_container *ct = container_named("rax-probe-srv-4");
	struct heard h = { 0 };

	TAP_CHECK_INT(docker_container_rename(ct, "rax-mcp-srv-4",
			  DOCKER_PHASE_MANAGED, container_heard, &h),
	    0);
	container_wait(&h);
	TAP_CHECK_INT(h.err, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_NAMED);
	TAP_CHECK(docker_container_old_name(ct) == NULL,
	    "the old name is left");
	container_fake_forget();
	container_done(ct);
}

/* A switch removes the probe in the background: named once it is gone. */
static void
test_switch(void)
{
	struct docker_container *ct = docker_container_new("default", "srv",
	    NULL, NULL);
	struct heard h = { 0 };
	char *log;

	/* Nothing recorded, or not this daemon's: no switch. */
	TAP_CHECK_INT(docker_container_switch(ct, "rax-mcp-srv-5",
			  DOCKER_PHASE_MANAGED),
	    -EBUSY);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_EMPTY);
	docker_container_set(ct, "rax-probe-srv-5", DOCKER_PHASE_PROBE);
	TAP_CHECK_INT(docker_container_switch(ct, "rax-mcp-srv-5",
			  DOCKER_PHASE_MANAGED),
	    -EBUSY);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_NAMED);
	docker_container_created(ct);
	container_fake_forget();
	TAP_CHECK_INT(docker_container_switch(ct, "rax-mcp-srv-5",
			  DOCKER_PHASE_MANAGED),
	    0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_SWITCHING);
	docker_container_wait_old(ct, container_heard, &h);
	container_wait(&h);
	TAP_CHECK_INT(h.err, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_NAMED);
	TAP_CHECK_STR(docker_container_name(ct), "rax-mcp-srv-5");
	log = container_fake_log();
	TAP_CHECK_STR(log, "rm -f rax-probe-srv-5\n");
	free(log);
	container_done(ct);
}

/*
 * Freed while its removal runs: dead, its waiter hears nothing, and its
 * memory stays while a reference is held (a probe's), through loop turns.
 */
static void
test_free_while_removing(void)
{
	struct docker_container *ct = container_named("rax-probe-srv-6");
	struct heard h = { 0 }, late = { 0 };

	docker_container_ref(ct);
	docker_container_remove(ct, container_heard, &h);
	docker_container_free(ct);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_DEAD);
	for (int i = 0; i < 200; i++) {
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	TAP_CHECK_INT(h.times, 0);
	/* A dead record changes nothing and starts nothing. */
	docker_container_set(ct, "rax-probe-srv-7", DOCKER_PHASE_PROBE);
	TAP_CHECK_STR(docker_container_name(ct), "rax-probe-srv-6");
	docker_container_remove(ct, container_heard, &late);
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK_INT(late.times, 0);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_DEAD);
	docker_container_free(ct); /* twice: nothing more */
	docker_container_unref(ct);
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	container_fake_forget();
}

static struct docker_container *owned;

/* The first waiter's owner frees the record (its server went). */
static void
container_heard_free(void *arg, int err, const char *why)
{
	container_heard(arg, err, why);
	docker_container_free(owned);
}

/*
 * Two waiters told in one batch: the first one's callback frees the
 * record, and the second, queued already, hears nothing (nor touches
 * freed memory: its queued answer holds a reference).
 */
static void
test_free_while_telling(void)
{
	struct heard first = { 0 }, second = { 0 };

	owned = container_named("rax-probe-srv-8");
	docker_container_remove(owned, container_heard_free, &first);
	docker_container_remove(owned, container_heard, &second);
	container_wait(&first);
	for (int i = 0; i < 10; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK_INT(first.times, 1);
	TAP_CHECK_INT(second.times, 0);
	free(first.why);
	container_fake_forget();
}

#define HELD_NAME "srv-held-by-its-probe"

/*
 * The server goes first (it frees its record) while its probe is still
 * closing; the probe's end still reads the record (it stops waiting on
 * it). The probe holds a reference: the record stays, dead, until the
 * probe goes. Without it the probe read freed memory (AddressSanitizer
 * says so; elsewhere the malloc spy sees the record's strings freed).
 */
static void
test_probe_holds_its_record(void)
{
	static const struct transport_cbs cbs;
	struct server_spec spec = { .image = (char *)(uintptr_t) "img" };
	struct probe_target target = { &spec, "default", "other" };
	struct docker_container *ct = docker_container_new("default", HELD_NAME,
	    NULL, NULL);
	struct transport *t = probe_new(&target, ct, &cbs, NULL);

	malloc_spy_needle = HELD_NAME;
	malloc_spy_found = 0;
	docker_container_free(ct);
	for (int i = 0; i < 3; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK_INT(docker_container_state(ct), DOCKER_DEAD);
	if (MALLOC_SPY)
		TAP_CHECK_INT(malloc_spy_found, 0);
	t->ops->free(t);
	for (int i = 0; i < 3; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	if (MALLOC_SPY)
		TAP_CHECK(malloc_spy_found >= 2,
		    "the record was not released with its probe (%zu)",
		    malloc_spy_found);
	malloc_spy_needle = NULL;
}

static const struct tap_test tests[] = {
	{ "the table's legal and illegal moves", test_table },
	{ "an illegal move stops a strict mcpd", test_illegal_move_stops },
	{ "named, removing, empty", test_remove },
	{ "a failed removal leaves the record failed", test_remove_fails },
	{ "a removal asked during a rename waits for it",
	    test_rename_then_remove },
	{ "a rename ends named", test_rename },
	{ "a removal asked during a create waits for it",
	    test_create_then_remove },
	{ "a switch removes the probe in the background", test_switch },
	{ "a freed record is dead and its memory held",
	    test_free_while_removing },
	{ "a waiter of a freed record hears nothing", test_free_while_telling },
	{ "a probe holds its server's record", test_probe_holds_its_record },
};

int
main(void)
{
	char *rm_path;
	int r;

	if ((mcpd_base = event_base_new()) == NULL)
		return 1;
	child_init();
	if (!container_fake_docker()) {
		perror("cannot write the fake docker CLI");
		return 1;
	}
	r = tap_run(tests, TAP_COUNT(tests));
	if (asprintf(&rm_path, "%s/rm", dir) > 0) {
		unlink(rm_path);
		free(rm_path);
	}
	unlink(docker_path);
	unlink(log_path);
	rmdir(dir);
	free(docker_path);
	free(log_path);
	return r;
}
