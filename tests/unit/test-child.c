/* SPDX-License-Identifier: ISC */
/*
 * Tests of mcpd-child.c and docker.c's commands: an exit is reported from the
 * event loop, never from inside the call that spawned or watched the child,
 * even when the child is long gone by then. (A fast `docker rm` once ran
 * its callback inside docker_cmd_start, which then returned freed memory.)
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcpd-stubs.h"
#include "tap.h"

static char prog_true[] = "true", prog_false[] = "false";
static int exits, last_status;
static bool is_inside_start;

/* Blocks until pid has exited, leaving it to be reaped by mcpd-child.c. */
static void
wait_exited_unreaped(pid_t pid)
{
	siginfo_t info;

	TAP_CHECK_INT(waitid(P_PID, pid, &info, WEXITED | WNOWAIT), 0);
}

static pid_t
spawn(char *program, char **cause)
{
	static char path[] = "PATH=/usr/bin:/bin";
	char *argv[] = { program, NULL };
	char *env[] = { path, NULL };
	struct child_spec spec = { argv, env, NULL };
	struct child_io io;

	if (child_spawn(&spec, &io, cause) < 0)
		return -1;
	close(io.in);
	close(io.out);
	close(io.err);
	return io.pid;
}

static void
count_exit(void *arg, int status)
{
	(void)arg;
	TAP_CHECK(!is_inside_start, "exited() ran inside the spawning call");
	exits++;
	last_status = status;
}

static void
test_watch_after_exit(void)
{
	char *cause = NULL;
	pid_t pid = spawn(prog_false, &cause);

	TAP_CHECK(pid > 0, "spawn: %s", cause != NULL ? cause : "");
	wait_exited_unreaped(pid);
	exits = 0;
	is_inside_start = true;
	child_watch(pid, count_exit, NULL);
	is_inside_start = false;
	TAP_CHECK_INT(exits, 0);
	event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK_INT(exits, 1);
	TAP_CHECK(WIFEXITED(last_status) && WEXITSTATUS(last_status) == 1,
	    "status %#x", last_status);
}

/* A child spawned from an exit callback is not reaped inside it. */
static void
spawn_again(void *arg, int status)
{
	char *cause = NULL;
	pid_t pid;

	(void)arg, (void)status;
	exits++;
	if (exits > 1)
		return;
	pid = spawn(prog_true, &cause);
	wait_exited_unreaped(pid);
	is_inside_start = true;
	child_watch(pid, count_exit, NULL);
	is_inside_start = false;
	TAP_CHECK_INT(exits, 1);
}

static void
test_watch_from_exit_callback(void)
{
	char *cause = NULL;
	pid_t pid = spawn(prog_true, &cause);

	exits = 0;
	child_watch(pid, spawn_again, NULL);
	for (int i = 0; i < 200 && exits < 2; i++) {
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
		usleep(10000);
	}
	TAP_CHECK_INT(exits, 2);
}

static struct docker_cmd *started;
static int cmd_done;

static void
cmd_finished(void *arg, int status, const char *out, const char *err)
{
	(void)arg, (void)out, (void)err;
	TAP_CHECK(started != NULL,
	    "done() ran before docker_cmd_start returned");
	TAP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x",
	    status);
	cmd_done++;
}

/* The case that crashed: a command that ends at once. */
static void
test_docker_cmd_fast_exit(void)
{
	const char *args[] = { "/bin/false", NULL };

	for (int round = 0; round < 20; round++) {
		started = NULL;
		cmd_done = 0;
		started = docker_cmd_start(args, NULL, 5000, NULL, cmd_finished,
		    NULL);
		TAP_CHECK(started != NULL, "start returned NULL");
		for (int i = 0; i < 500 && cmd_done == 0; i++) {
			event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
			usleep(2000);
		}
		TAP_CHECK_INT(cmd_done, 1);
	}
}

static char *failed_err;
static int failed_status;

static void
cmd_not_run(void *arg, int status, const char *out, const char *err)
{
	(void)arg;
	TAP_CHECK(started != NULL,
	    "done() ran before docker_cmd_start returned");
	TAP_CHECK(*out == '\0', "output of a command that never ran: %s", out);
	failed_status = status;
	free(failed_err);
	failed_err = strdup(err);
	cmd_done++;
}

/* The descriptors open now (the listing's own not counted). */
static int
open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = -1;

	while (d != NULL && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d != NULL)
		closedir(d);
	return n;
}

/* Runs args until done; the command must not have run. */
static void
run_not_run(const char *const *args, const char *want)
{
	started = NULL;
	cmd_done = 0;
	failed_status = 0;
	started = docker_cmd_start(args, NULL, 5000, NULL, cmd_not_run, NULL);
	TAP_CHECK(started != NULL, "start returned NULL");
	TAP_CHECK_INT(cmd_done, 0);
	for (int i = 0; i < 100 && cmd_done == 0; i++)
		event_base_loop(mcpd_base, EVLOOP_NONBLOCK);
	TAP_CHECK_INT(cmd_done, 1);
	TAP_CHECK_INT(failed_status, -1);
	TAP_CHECK(failed_err != NULL && strstr(failed_err, want) != NULL,
	    "err %s, wanted %s", failed_err != NULL ? failed_err : "(null)",
	    want);
}

/* exec fails: reported as status -1 with why, from the loop. */
static void
test_docker_cmd_exec_fails(void)
{
	const char *args[] = { "/nonexistent/docker", "ps", NULL };
	const char *dir[] = { "/", "ps", NULL };
	int before = open_fds();

	run_not_run(args, "cannot run /nonexistent/docker: No such file");
	run_not_run(dir, "cannot run /: Permission denied");
	TAP_CHECK_INT(open_fds(), before);
}

/* No descriptors left for the pipes: the same, and nothing leaks. */
static void
test_docker_cmd_pipes_fail(void)
{
	const char *args[] = { "/bin/true", NULL };
	struct rlimit old, low;
	int before = open_fds();

	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = dup(0); /* the lowest free one: no new fd fits */
	close((int)low.rlim_cur);
	setrlimit(RLIMIT_NOFILE, &low);
	run_not_run(args,
	    "cannot make pipes for /bin/true: Too many open files");
	setrlimit(RLIMIT_NOFILE, &old);
	TAP_CHECK_INT(open_fds(), before);
	free(failed_err);
	failed_err = NULL;
}

static const struct tap_test tests[] = {
	{ "a child gone before child_watch is reported by the loop",
	    test_watch_after_exit },
	{ "a child watched from an exit callback is reaped later",
	    test_watch_from_exit_callback },
	{ "docker_cmd_start returns before a fast command is done",
	    test_docker_cmd_fast_exit },
	{ "a docker that cannot exec is status -1 with why, from the loop",
	    test_docker_cmd_exec_fails },
	{ "no descriptors for pipes is status -1 with why, nothing leaks",
	    test_docker_cmd_pipes_fail },
};

int
main(void)
{
	if ((mcpd_base = event_base_new()) == NULL)
		return 1;
	child_init();
	return tap_run(tests, TAP_COUNT(tests));
}
