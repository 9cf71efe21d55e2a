/* SPDX-License-Identifier: ISC */
/* Starting mcpd -d in the background when no daemon answers on the socket. */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fdclose.h"
#include "mcpctl.h"
#include "paths.h"

#define AUTOSTART_WAIT_MS 10000		/* until the socket accepts */
#define AUTOSTART_POLL_MS 20		/* between two tries */
#define AUTOSTART_LOG_MAX (4 << 20)	/* bytes before mcpd.log is rotated */
#define AUTOSTART_TAIL	  ((off_t)4096) /* bytes of the log shown on failure */

bool
autostart_is_disabled(void)
{
	const char *v = getenv("MCPD_NO_AUTOSTART");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* Whether a connect to path succeeds now. */
static bool
autostart_accepts(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	bool ok;
	int fd;

	if (strlen(path) >= sizeof sun.sun_path)
		return false;
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return false;
	ok = connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0;
	close(fd);
	return ok;
}

/* Whether path names an executable regular file. */
static bool
autostart_is_program(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

/* mcpd next to mcpctl's own executable, else on PATH; a new string. */
static char *
autostart_find_mcpd(void)
{
	char *self = paths_self_exe(), *slash, *p;
	const char *path = getenv("PATH");

	if (self != NULL && (slash = strrchr(self, '/')) != NULL) {
		*slash = '\0';
		if (asprintf(&p, "%s/mcpd", self) >= 0) {
			if (autostart_is_program(p)) {
				free(self);
				return p;
			}
			free(p);
		}
	}
	free(self);
	while (path != NULL && *path != '\0') {
		size_t len = strcspn(path, ":");

		if (asprintf(&p, "%.*s/mcpd", (int)len, len ? path : ".") >=
		    0) {
			if (autostart_is_program(p))
				return p;
			free(p);
		}
		path += len + (path[len] == ':');
	}
	return NULL;
}

/*
 * Opens the log for appending (0600), first moving one larger than
 * AUTOSTART_LOG_MAX to mcpd.log.old; its size in *ret_size. fd or -errno.
 */
static int
autostart_open_log(const char *log, off_t *ret_size)
{
	struct stat st;
	char *old;
	int fd;

	if (stat(log, &st) == 0 && st.st_size > AUTOSTART_LOG_MAX &&
	    asprintf(&old, "%s.old", log) >= 0) {
		(void)rename(log, old);
		free(old);
	}
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY,
	    0600);
	if (fd < 0)
		return -errno;
	*ret_size = fstat(fd, &st) == 0 ? st.st_size : 0;
	return fd;
}

/* In the child: detach, mcpd's stdio, then exec; never returns. */
static void __attribute__((noreturn))
autostart_exec(const char *mcpd, const char *socket_path, int log_fd)
{
	char *argv[] = { strdup(mcpd), strdup("-d"), strdup("-s"),
		strdup(socket_path), NULL };
	sigset_t none;
	int null_fd;

	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if ((null_fd = open("/dev/null", O_RDWR)) < 0 ||
	    dup2(null_fd, STDIN_FILENO) < 0 ||
	    dup2(null_fd, STDOUT_FILENO) < 0 || dup2(log_fd, STDERR_FILENO) < 0)
		_exit(127);
	/* Nothing of the caller's (a bridge's client pipes) may stay open. */
	if (fdclose_from(STDERR_FILENO + 1) < 0) {
		dprintf(STDERR_FILENO,
		    "mcpctl: cannot close the descriptors mcpd must not inherit\n");
		_exit(127);
	}
	if (chdir("/") < 0)
		_exit(127);
	if (argv[0] != NULL && argv[1] != NULL && argv[2] != NULL &&
	    argv[3] != NULL)
		execv(mcpd, argv);
	dprintf(STDERR_FILENO, "mcpctl: cannot run %s: %s\n", mcpd,
	    strerror(errno));
	_exit(127);
}

/* The last lines of the log from offset from on, on stderr. */
static void
autostart_show_log(const char *log, off_t from)
{
	char buf[AUTOSTART_TAIL + 1], *p = buf, *nl;
	bool is_cut = false;
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(log, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_size - from > AUTOSTART_TAIL) {
		from = st.st_size - AUTOSTART_TAIL;
		is_cut = true;
	}
	n = pread(fd, buf, AUTOSTART_TAIL, from);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	if (is_cut && (nl = strchr(buf, '\n')) != NULL)
		p = nl + 1; /* not half a line */
	fprintf(stderr, "--- the end of %s:\n%s", log, p);
	if (buf[n - 1] != '\n')
		fputc('\n', stderr);
}

static long long
autostart_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for the socket or the child's end; 0, or the exit status. */
static int
autostart_wait(const char *socket_path, pid_t pid, const char *log,
    off_t log_from)
{
	long long deadline = autostart_now_ms() + AUTOSTART_WAIT_MS;
	int status;

	for (;;) {
		if (autostart_accepts(socket_path))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			/* Another mcpctl may have started one at the same time. */
			if (autostart_accepts(socket_path))
				return 0;
			if (WIFEXITED(status))
				print_err(
				    "mcpd (pid %ld) exited with status %d before it accepted on %s",
				    (long)pid, WEXITSTATUS(status),
				    socket_path);
			else
				print_err(
				    "mcpd (pid %ld) was killed by signal %d before it accepted on %s",
				    (long)pid, WTERMSIG(status), socket_path);
			autostart_show_log(log, log_from);
			return MCPCTL_EXIT_UNREACHABLE;
		}
		if (autostart_now_ms() >= deadline) {
			print_err(
			    "mcpd (pid %ld) did not accept on %s within %d s; it keeps running, see %s",
			    (long)pid, socket_path, AUTOSTART_WAIT_MS / 1000,
			    log);
			return MCPCTL_EXIT_UNREACHABLE;
		}
		usleep(AUTOSTART_POLL_MS * 1000);
	}
}

int
autostart_mcpd(const char *socket_path)
{
	char *mcpd = NULL, *state = NULL, *log = NULL;
	off_t log_from = 0;
	int log_fd = -1, r;
	pid_t pid;

	if ((mcpd = autostart_find_mcpd()) == NULL) {
		print_err(
		    "cannot start mcpd: no mcpd next to mcpctl nor on PATH");
		r = MCPCTL_EXIT_UNREACHABLE;
		goto out;
	}
	if ((state = paths_state_default()) == NULL) {
		print_err(
		    "cannot start mcpd: no state directory for its log: set HOME, XDG_STATE_HOME or MCPD_STATE_DIR");
		r = MCPCTL_EXIT_UNREACHABLE;
		goto out;
	}
	if (asprintf(&log, "%s/mcpd.log", state) < 0) {
		log = NULL;
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if ((r = paths_mkdir_p(state, 0700)) < 0 ||
	    (r = log_fd = autostart_open_log(log, &log_from)) < 0) {
		print_err("cannot start mcpd: cannot open its log %s: %s", log,
		    strerror(-r));
		r = MCPCTL_EXIT_UNREACHABLE;
		goto out;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		print_err("cannot start mcpd: fork: %s", strerror(errno));
		r = MCPCTL_EXIT_UNREACHABLE;
		goto out;
	}
	if (pid == 0)
		autostart_exec(mcpd, socket_path, log_fd);
	fprintf(stderr, "mcpctl: started mcpd (pid %ld), log in %s\n",
	    (long)pid, log);
	r = autostart_wait(socket_path, pid, log, log_from);
out:
	if (log_fd >= 0)
		close(log_fd);
	free(mcpd);
	free(state);
	free(log);
	return r;
}
