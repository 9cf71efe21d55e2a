/* SPDX-License-Identifier: ISC */
/* Child processes: spawning without a shell, pipes, and reaping exits. */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errors.h"
#include "fdclose.h"
#include "log.h"
#include "mcpd.h"

extern char **environ;

struct child_watcher {
	pid_t pid;
	void (*exited)(void *, int);
	void *arg;
	LIST_ENTRY(child_watcher) entry;
};
static LIST_HEAD(,
    child_watcher) child_watchers = LIST_HEAD_INITIALIZER(child_watchers);
static struct event *child_sigchld;
static rlim_t child_nofile = RLIM_INFINITY; /* the soft limit mcpd got */

/* What the shim and the server report through the error pipe. */
struct child_failure {
	int stage; /* 0: chdir failed, 1: exec failed, 2: error is the pid */
	int error;
};

static struct child_watcher *
child_watcher_find(pid_t pid)
{
	struct child_watcher *w;

	LIST_FOREACH(w, &child_watchers, entry)
		if (w->pid == pid)
			return w;
	return NULL;
}

static void
child_reap(evutil_socket_t fd, short events, void *arg)
{
	struct child_watcher *w;
	pid_t pid;
	int status;

	(void)fd, (void)events, (void)arg;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if ((w = child_watcher_find(pid)) == NULL)
			continue;
		LIST_REMOVE(w, entry);
		w->exited(w->arg, status);
		free(w);
	}
}

void
child_reap_now(void)
{
	child_reap(-1, 0, NULL);
}

void
child_init(void)
{
	child_sigchld = evsignal_new(mcpd_base, SIGCHLD, child_reap, NULL);
	if (child_sigchld == NULL || evsignal_add(child_sigchld, NULL) < 0)
		fatalx("cannot watch SIGCHLD");
}

void
child_close(void)
{
	if (child_sigchld != NULL)
		event_free(child_sigchld);
	child_sigchld = NULL;
}

void
child_watch(pid_t pid, void (*exited)(void *, int), void *arg)
{
	struct child_watcher *w = xcalloc(1, sizeof *w);

	w->pid = pid;
	w->exited = exited;
	w->arg = arg;
	LIST_INSERT_HEAD(&child_watchers, w, entry);
	/*
	 * It may have exited before we watched it: look on this loop turn,
	 * never from here. Reaping now would call exited() inside the
	 * caller's spawn, before it has stored what it spawned (a fast
	 * `docker rm` freed its command before docker_cmd_start returned it).
	 */
	event_active(child_sigchld, EV_SIGNAL, 1);
}

void
child_unwatch(pid_t pid)
{
	struct child_watcher *w = child_watcher_find(pid);

	if (w != NULL) {
		LIST_REMOVE(w, entry);
		free(w);
	}
}

void
child_set_nofile(rlim_t soft)
{
	child_nofile = soft;
}

/* Runs in the server's process between fork and exec. */
static void __attribute__((noreturn))
child_exec(const struct child_spec *spec, int fds[3], int errfd, pid_t parent)
{
	struct child_failure f = { 0, 0 };
	const int sigs[] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	sigset_t none;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (child_nofile != RLIM_INFINITY) {
		/* Programs using select() break above 1024: give theirs back. */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    child_nofile < rl.rlim_cur) {
			rl.rlim_cur = child_nofile;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			_exit(127);
	/*
	 * Nothing else of mcpd's reaches the program, not even a descriptor
	 * without O_CLOEXEC (libevent makes its outgoing sockets so, and an
	 * upgrade hands descriptors over): a docker logs -f that held the
	 * control socket would keep it open after mcpd. The error pipe
	 * becomes 3, closed by the exec.
	 */
	if ((errfd != 3 && dup2(errfd, 3) < 0) ||
	    fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		_exit(127);
	errfd = 3;
	(void)fdclose_from(4);
	if (spec->cwd != NULL && chdir(spec->cwd) < 0) {
		f.error = errno;
		goto fail;
	}
	environ = (char **)(uintptr_t)spec->env;
	execvp(spec->argv[0], spec->argv);
	f.stage = 1;
	f.error = errno;
fail:
	(void)!write(errfd, &f, sizeof f);
	_exit(127);
}

/* The shim ends the way its server ended, so that mcpd sees the same. */
static void __attribute__((noreturn)) child_shim_exit(int status)
{
	sigset_t set;

	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, WTERMSIG(status));
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		kill(getpid(), WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

/*
 * The range of the line of /proc/self/maps that ends with "[heap]" (the
 * brk heap), read without malloc; false when there is none (under
 * valgrind, say, which keeps the program's heap its own way).
 */
static bool
child_heap_range(uintptr_t *ret_lo, uintptr_t *ret_hi)
{
	static const char tag[] = "[heap]";
	char buf[4096], line[512], *p;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	bool is_found = false;
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return false;
	while (!is_found && (r = read(fd, buf, sizeof buf)) > 0)
		for (ssize_t i = 0; i < r && !is_found; i++) {
			if (buf[i] != '\n') {
				if (n < sizeof line - 1)
					line[n++] = buf[i];
				continue;
			}
			line[n] = '\0';
			if (n >= sizeof tag - 1 &&
			    strcmp(line + n - (sizeof tag - 1), tag) == 0) {
				*ret_lo = (uintptr_t)strtoull(line, &p, 16);
				*ret_hi = *p == '-' ?
				    (uintptr_t)strtoull(p + 1, NULL, 16) :
				    0;
				is_found = *ret_hi > *ret_lo;
			}
			n = 0;
		}
	close(fd);
	return is_found;
}

/*
 * Gives back the shim's copy of mcpd's heap: the shim never reads it again
 * (nor mallocs), and each page mcpd writes later would otherwise stay in
 * the shim as a private copy, so that every shim would come to hold a
 * snapshot of mcpd's heap. Only the mapping the kernel names [heap] is
 * touched.
 */
static void
child_shim_drop_heap(void)
{
	uintptr_t lo, hi;

	if (child_heap_range(&lo, &hi))
		(void)madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/*
 * The shim leads the server's process group and holds nothing else. A
 * parent-death signal reaches only direct children, so when mcpd dies
 * the shim kills the whole group: programs the server started (npx ->
 * node) cannot outlive the daemon.
 */
static void __attribute__((noreturn))
child_shim(const struct child_spec *spec, int fds[3], int errfd, pid_t parent)
{
	sigset_t set;
	pid_t pid, shim = getpid();
	int status, sig;

	setsid();
	prctl(PR_SET_NAME, "mcpd-shim");
	signal(SIGTERM, SIG_IGN); /* the group gets it: the server decides */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_SETMASK, &set, NULL);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	if (getppid() != parent)
		_exit(127);
	if ((pid = fork()) == 0)
		child_exec(spec, fds, errfd, shim);
	if (pid > 0) {
		struct child_failure started = { 2, pid };

		(void)!write(errfd, &started, sizeof started);
	}
	/*
	 * The shim keeps nothing of mcpd's: a descriptor left open here (the
	 * state lock, the control socket) would outlive mcpd. Should even
	 * the fallback fail, no server runs rather than one with such a shim.
	 */
	if (fdclose_from(0) < 0 || pid < 0) {
		if (pid > 0)
			kill(pid, SIGKILL);
		_exit(127);
	}
	child_shim_drop_heap(); /* the server has its own copy of the spec */
	for (;;) {
		if ((sig = sigwaitinfo(&set, NULL)) == SIGUSR1) {
			kill(0, SIGKILL);
			_exit(137);
		}
		if (sig == SIGCHLD && waitpid(pid, &status, WNOHANG) == pid)
			child_shim_exit(status);
	}
}

static int
child_pipes(int p[3][2])
{
	for (int i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			int r = -errno;

			while (i-- > 0) {
				close(p[i][0]);
				close(p[i][1]);
			}
			return r;
		}
	return 0;
}

static int
child_fail(char **cause, int error, const char *fmt, const char *what)
{
	if (cause != NULL)
		xasprintf(cause, fmt, what, strerror(error));
	return -error;
}

/* Waits for exec in the child: the error pipe closes on success. */
static int
child_await_exec(const struct child_spec *spec, struct child_io *io, int errfd,
    char **cause)
{
	struct child_failure f;
	ssize_t n;

	for (;;) {
		do
			n = read(errfd, &f, sizeof f);
		while (n < 0 && errno == EINTR);
		if (n != (ssize_t)sizeof f)
			return 0;
		if (f.stage != 2)
			break;
		io->server_pid = f.error;
	}
	pid_t pid = io->pid;
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (f.stage == 0)
		return child_fail(cause, f.error,
		    "cannot enter directory %s: %s", spec->cwd);
	return child_fail(cause, f.error, "cannot run %s: %s", spec->argv[0]);
}

int
child_spawn(const struct child_spec *spec, struct child_io *ret, char **cause)
{
	int p[3][2], errpipe[2], fds[3], r;
	pid_t parent = getpid(), pid;

	if ((r = child_pipes(p)) < 0)
		return child_fail(cause, -r, "cannot make pipes for %s: %s",
		    spec->argv[0]);
	if (pipe2(errpipe, O_CLOEXEC) < 0) {
		r = errno;
		for (int i = 0; i < 3; i++) {
			close(p[i][0]);
			close(p[i][1]);
		}
		return child_fail(cause, r, "cannot make pipes for %s: %s",
		    spec->argv[0]);
	}
	fds[0] = p[0][0];
	fds[1] = p[1][1];
	fds[2] = p[2][1];
	pid = fork();
	if (pid == 0)
		child_shim(spec, fds, errpipe[1], parent);
	r = pid < 0 ? errno : 0;
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	close(errpipe[1]);
	if (r == 0) {
		ret->pid = pid;
		r = -child_await_exec(spec, ret, errpipe[0], cause);
	} else
		child_fail(cause, r, "cannot fork for %s: %s", spec->argv[0]);
	close(errpipe[0]);
	if (r != 0) {
		close(p[0][1]);
		close(p[1][0]);
		close(p[2][0]);
		return -r;
	}
	ret->in = p[0][1];
	ret->out = p[1][0];
	ret->err = p[2][0];
	for (int i = 0; i < 3; i++)
		evutil_make_socket_nonblocking(i == 0 ? ret->in :
			i == 1			      ? ret->out :
							ret->err);
	return 0;
}

char *
child_describe_status(int status)
{
	char *s = NULL;

	/* A shell or a wrapper (npx) says a child's signal as 128 + it. */
	if (WIFEXITED(status) && WEXITSTATUS(status) > 128 &&
	    WEXITSTATUS(status) - 128 < NSIG)
		xasprintf(&s,
		    "exited with status %d (128 + %d: a wrapper saying its child was killed by signal %d, %s)",
		    WEXITSTATUS(status), WEXITSTATUS(status) - 128,
		    WEXITSTATUS(status) - 128,
		    strsignal(WEXITSTATUS(status) - 128));
	else if (WIFEXITED(status))
		xasprintf(&s, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		xasprintf(&s, "was killed by signal %d (%s)", WTERMSIG(status),
		    strsignal(WTERMSIG(status)));
	else
		xasprintf(&s, "ended with wait status %d", status);
	return s;
}

static const char *const child_env_keep[] = {
	"HOME",
	"LOGNAME",
	"PATH",
	"SHELL",
	"TERM",
	"USER",
	"LANG",
	NULL,
};

static size_t
child_strv_len(char *const *v)
{
	size_t n = 0;

	while (v != NULL && v[n] != NULL)
		n++;
	return n;
}

/* True when extra sets the variable of "K=..." itself. */
static bool
child_env_overridden(char *const *extra, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		if (strncmp(extra[i], key, klen) == 0 && extra[i][klen] == '=')
			return true;
	return false;
}

char **
child_env_build(char *const *extra)
{
	size_t n = 0, max = child_strv_len(extra) + 8;
	char **env = xcalloc(max + 1, sizeof *env);
	const char *v;

	for (size_t i = 0; child_env_keep[i] != NULL; i++) {
		if ((v = getenv(child_env_keep[i])) == NULL ||
		    child_env_overridden(extra, child_env_keep[i]))
			continue;
		xasprintf(&env[n], "%s=%s", child_env_keep[i], v);
		n++;
	}
	if (getenv("PATH") == NULL && !child_env_overridden(extra, "PATH"))
		env[n++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		env[n++] = xstrdup(extra[i]);
	return env;
}

/* 0 when path (relative to cwd, NULL: mcpd's) is a file exec can run. */
static int
child_is_runnable(const char *path, const char *cwd)
{
	char *full = NULL;
	struct stat st;
	int r = 0;

	if (path[0] != '/' && cwd != NULL)
		xasprintf(&full, "%s/%s", cwd, path);
	if (full != NULL)
		path = full;
	if (stat(path, &st) < 0)
		r = -errno;
	else if (S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		r = -EACCES;
	free(full);
	return r;
}

int
child_find_program(const struct child_spec *spec, char **cause)
{
	const char *file = spec->argv[0], *path = NULL, *p, *end;
	char *candidate;
	int r, first = -ENOENT;

	if (strchr(file, '/') != NULL) {
		if ((r = child_is_runnable(file, spec->cwd)) == 0)
			return 0;
		return errors_cause(cause, r, "cannot run %s: %s", file,
		    strerror(-r));
	}
	for (size_t i = 0; spec->env != NULL && spec->env[i] != NULL; i++)
		if (strncmp(spec->env[i], "PATH=", 5) == 0)
			path = spec->env[i] + 5;
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		end = strchrnul(p, ':');
		xasprintf(&candidate, "%.*s%s%s", (int)(end - p), p,
		    end > p ? "/" : "", file);
		r = child_is_runnable(candidate, spec->cwd);
		free(candidate);
		if (r == 0)
			return 0;
		if (first == -ENOENT)
			first = r; /* execvp reports the first that exists */
		if (*end == '\0')
			break;
	}
	if (first == -ENOENT)
		return errors_cause(cause, -ENOENT,
		    "no program %s on the PATH a server gets (%s)", file, path);
	return errors_cause(cause, first,
	    "cannot run %s from the PATH a server gets (%s): %s", file, path,
	    strerror(-first));
}

char **
child_strv_copy(char *const *v)
{
	size_t n = child_strv_len(v);
	char **copy = xcalloc(n + 1, sizeof *copy);

	for (size_t i = 0; i < n; i++)
		copy[i] = xstrdup(v[i]);
	return copy;
}

void
child_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

void
child_strv_wipe_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		explicit_bzero(v[i], strlen(v[i]));
	child_strv_free(v);
}
