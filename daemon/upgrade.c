/* SPDX-License-Identifier: ISC */
/* Upgrade in place: check the new binary, drain, save, exec (DESIGN 15). */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "httpd.h"
#include "fileio.h"
#include "log.h"
#include "mcpd.h"
#include "paths.h"

#define UPGRADE_CHECK_MS  10000	      /* the new binary's start check */
#define UPGRADE_POLL_MS	  1	      /* how often a drain looks for quiet */
#define UPGRADE_STATE_MAX (256 << 20) /* bytes of a state read back */
#define UPGRADE_NOTE_MAX  512	      /* bytes of the check's output told */

extern char **environ;

struct upgrade {
	struct request *req;
	char *binary;
	pid_t check_pid;
	int check_out;	     /* memory file: the check's stdout and stderr */
	struct event *timer; /* the check's deadline, then the drain's poll */
	uint64_t began_ms, drain_deadline_ms;
	const char *busy; /* why the drain waited at its last look */
	bool is_draining;
};

static struct upgrade *upgrade;
static char **upgrade_argv;
static json_t *upgrade_saved; /* the state handed over to this process */
int mcpd_lock_fd = -1;	      /* mcpd.c sets it; an upgrade keeps it */

void
upgrade_init(char **argv)
{
	upgrade_argv = argv;
}

bool
upgrade_is_draining(void)
{
	return upgrade != NULL && upgrade->is_draining;
}

static void
upgrade_free(void)
{
	if (upgrade == NULL)
		return;
	if (upgrade->timer != NULL)
		event_free(upgrade->timer);
	if (upgrade->check_out >= 0)
		close(upgrade->check_out);
	free(upgrade->binary);
	free(upgrade);
	upgrade = NULL;
}

/* Reading and accepting go on: everything is as before the upgrade. */
static void
upgrade_resume(void)
{
	control_upgrade_hold(false);
	httpd_upgrade_hold(false);
}

static void upgrade_fail(enum errors_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
upgrade_fail(enum errors_kind kind, const char *fmt, ...)
{
	char *why;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&why, fmt, ap) < 0)
		fatalx("out of memory");
	va_end(ap);
	if (upgrade->is_draining)
		upgrade_resume();
	log_warnx("upgrade to %s refused: %s", upgrade->binary, why);
	control_fail(upgrade->req, kind, NULL, "%s", why);
	free(why);
	upgrade_free();
}

/* What the check wrote, its last bytes, on one line. */
static char *
upgrade_check_note(int fd)
{
	char buf[UPGRADE_NOTE_MAX + 1];
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > UPGRADE_NOTE_MAX ? size - UPGRADE_NOTE_MAX : 0;
	ssize_t n = pread(fd, buf, UPGRADE_NOTE_MAX, from);

	if (n < 0)
		n = 0;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
	return xstrdup(n > 0 ? buf : "(it said nothing)");
}

static void upgrade_drain_begin(void);

static void
upgrade_checked(void *arg, int status)
{
	char *note, *how;

	(void)arg;
	upgrade->check_pid = -1;
	evtimer_del(upgrade->timer);
	if (status == 0) {
		upgrade_drain_begin();
		return;
	}
	note = upgrade_check_note(upgrade->check_out);
	how = child_describe_status(status);
	upgrade_fail(ERRORS_UNAVAILABLE,
	    "the new binary %s failed its start check (it %s): %s; mcpd goes on as it is",
	    upgrade->binary, how, note);
	free(how);
	free(note);
}

static void
upgrade_check_overdue(evutil_socket_t fd, short events, void *arg)
{
	(void)fd, (void)events, (void)arg;
	child_unwatch(upgrade->check_pid);
	kill(upgrade->check_pid, SIGKILL);
	upgrade->check_pid = -1;
	upgrade_fail(ERRORS_TIMEOUT,
	    "the new binary %s did not answer its start check within %d ms; mcpd goes on as it is",
	    upgrade->binary, UPGRADE_CHECK_MS);
}

/*
 * The new binary is run first with MCPD_UPGRADE_CHECK=<state version> and
 * the same arguments: it reads its settings as it will at the real start
 * and says whether it reads this state. A binary that cannot even start
 * is found here, while nothing has changed.
 */
static int
upgrade_check_start(char **cause)
{
	char version[16];
	struct timeval tv = { UPGRADE_CHECK_MS / 1000, 0 };
	pid_t pid;
	int null;

	upgrade->check_out = memfd_create("mcpd-upgrade-check", MFD_CLOEXEC);
	if (upgrade->check_out < 0)
		return errors_cause(cause, -errno, "memfd_create: %s",
		    strerror(errno));
	snprintf(version, sizeof version, "%d", UPGRADE_STATE_VERSION);
	if ((pid = fork()) < 0)
		return errors_cause(cause, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		if ((null = open("/dev/null", O_RDONLY)) >= 0)
			dup2(null, 0);
		dup2(upgrade->check_out, 1);
		dup2(upgrade->check_out, 2);
		setenv("MCPD_UPGRADE_CHECK", version, 1);
		execv(upgrade->binary, upgrade_argv);
		dprintf(2, "cannot run it: %s\n", strerror(errno));
		_exit(127);
	}
	upgrade->check_pid = pid;
	child_watch(pid, upgrade_checked, NULL);
	upgrade->timer = evtimer_new(mcpd_base, upgrade_check_overdue, NULL);
	evtimer_add(upgrade->timer, &tv);
	return 0;
}

static void upgrade_drain_poll(evutil_socket_t, short, void *);

static void
upgrade_poll_soon(void)
{
	struct timeval tv = { 0, UPGRADE_POLL_MS * 1000 };

	evtimer_add(upgrade->timer, &tv);
}

/* Nothing more is read or accepted: what is under way ends meanwhile. */
static void
upgrade_drain_begin(void)
{
	upgrade->is_draining = true;
	upgrade->began_ms = mcpd_now_ms();
	upgrade->drain_deadline_ms = upgrade->began_ms +
	    (uint64_t)mcpd_opts.upgrade_drain_ms;
	control_upgrade_hold(true);
	httpd_upgrade_hold(true);
	server_logs_unfollow_all(
	    "mcpd is being upgraded in place; follow again to go on");
	event_free(upgrade->timer);
	upgrade->timer = evtimer_new(mcpd_base, upgrade_drain_poll, NULL);
	log_info("upgrade to %s: draining", upgrade->binary);
	upgrade_poll_soon();
}

/* The state as one JSON document, every descriptor in it marked kept. */
static json_t *
upgrade_state_make(void)
{
	upgrade_fds_forget();
	return json_pack("{s:i, s:s, s:s, s:i, s:I, s:I, s:o, s:o, s:o, s:s}",
	    "version", UPGRADE_STATE_VERSION, "from", MCPD_VERSION, "binary",
	    upgrade->binary, "lock", upgrade_keep_fd(mcpd_lock_fd), "began_ms",
	    (json_int_t)upgrade->began_ms, "started_ms",
	    (json_int_t)mcpd_started_ms, "servers", server_upgrade_save(),
	    "control", control_upgrade_save(upgrade->req), "http",
	    httpd_upgrade_save(), "docker_instance", docker_instance());
}

/* The state in a memory file, at offset 0, kept open for the next. */
static int
upgrade_state_write(const json_t *state)
{
	int fd = memfd_create("mcpd-upgrade-state", 0);
	char *text = json_dumps(state, JSON_COMPACT);
	size_t len = text != NULL ? strlen(text) : 0;
	size_t off = 0;
	ssize_t n = 0;

	while (fd >= 0 && text != NULL && off < len &&
	    (n = write(fd, text + off, len - off)) > 0)
		off += (size_t)n;
	free(text);
	if (fd < 0 || off != len || lseek(fd, 0, SEEK_SET) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The old binary itself, for a new one that must hand the state back. */
static int
upgrade_self_fd(void)
{
	return open("/proc/self/exe", O_RDONLY);
}

static void
upgrade_exec(void)
{
	json_t *state = upgrade_state_make();
	int fd = upgrade_state_write(state), self = upgrade_self_fd();
	char num[16], prev[16];

	json_decref(state);
	if (fd < 0 || self < 0) {
		if (fd >= 0)
			close(fd);
		if (self >= 0)
			close(self);
		upgrade_fail(ERRORS_UNAVAILABLE,
		    "cannot write the state for the new binary: %s",
		    strerror(errno));
		return;
	}
	snprintf(num, sizeof num, "%d", fd);
	snprintf(prev, sizeof prev, "%d", self);
	setenv("MCPD_UPGRADE_STATE", num, 1);
	setenv("MCPD_UPGRADE_PREV", prev, 1);
	upgrade_fds_inherit(true);
	log_info("upgrade: exec %s after %llu ms of drain", upgrade->binary,
	    (unsigned long long)(mcpd_now_ms() - upgrade->began_ms));
	notify_reloading();
	/*
	 * Their pipes close at the exec, but a quiet container's never end.
	 * Should the exec fail, their ends read as the containers' and those
	 * servers restart (unseen by agents, as a crash).
	 */
	docker_cmds_kill_followers();
	execv(upgrade->binary, upgrade_argv);
	/* Still here: the old process goes on, nothing was handed over. */
	notify_ready();
	upgrade_fds_inherit(false);
	unsetenv("MCPD_UPGRADE_STATE");
	unsetenv("MCPD_UPGRADE_PREV");
	close(fd);
	close(self);
	upgrade_fail(ERRORS_UNAVAILABLE, "cannot exec %s: %s", upgrade->binary,
	    strerror(errno));
}

static void
upgrade_drain_poll(evutil_socket_t fd, short events, void *arg)
{
	const char *busy;

	(void)fd, (void)events, (void)arg;
	busy = server_upgrade_busy();
	if (busy == NULL)
		busy = control_upgrade_busy(upgrade->req);
	if (busy == NULL)
		busy = httpd_upgrade_busy();
	if (busy == NULL) {
		upgrade_exec();
		return;
	}
	if (busy != upgrade->busy) /* each reason once, for mcpd -v */
		log_debug("upgrade: draining %llu ms: %s",
		    (unsigned long long)(mcpd_now_ms() - upgrade->began_ms),
		    busy);
	upgrade->busy = busy;
	if (mcpd_now_ms() < upgrade->drain_deadline_ms) {
		upgrade_poll_soon();
		return;
	}
	upgrade_fail(ERRORS_UNAVAILABLE,
	    "mcpd stayed busy for %d ms (%s); nothing changed: try again, or raise --upgrade-drain",
	    mcpd_opts.upgrade_drain_ms, busy);
}

void
upgrade_start(struct request *req, const char *binary)
{
	char *cause = NULL, *path;
	struct stat st;

	/* Its answer comes from the new process, on a connection it keeps. */
	if (!control_request_on_socket(req)) {
		control_fail(req, ERRORS_DENIED, NULL,
		    "mcpd/upgrade is taken on the control socket only (mcpctl upgrade), not over HTTP");
		return;
	}
	if (upgrade != NULL) {
		control_fail(req, ERRORS_CONFLICT, NULL,
		    "an upgrade to %s is already under way", upgrade->binary);
		return;
	}
	path = binary != NULL ? xstrdup(binary) : paths_self_exe();
	if (path == NULL || path[0] != '/' || stat(path, &st) < 0 ||
	    !S_ISREG(st.st_mode) || access(path, X_OK) < 0) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL,
		    "%s is not an executable file given by its absolute path",
		    path != NULL ? path : "the running binary");
		free(path);
		return;
	}
	upgrade = xcalloc(1, sizeof *upgrade);
	upgrade->req = req;
	upgrade->binary = path;
	upgrade->check_out = -1;
	upgrade->check_pid = -1;
	if (upgrade_check_start(&cause) < 0) {
		upgrade_fail(ERRORS_UNAVAILABLE,
		    "cannot check the new binary: %s", cause);
		free(cause);
	}
}

/* The highest state version this binary reads (a test may lower it). */
static int
upgrade_reads_max(void)
{
	const char *v = getenv("MCPD_TEST_UPGRADE_READS");

	return v != NULL ? atoi(v) : UPGRADE_STATE_VERSION;
}

void
upgrade_check_mode(void)
{
	const char *v = getenv("MCPD_UPGRADE_CHECK");
	int asked;

	if (v == NULL)
		return;
	asked = atoi(v);
	if (asked < 1 || asked > upgrade_reads_max()) {
		fprintf(stderr,
		    "mcpd %s reads upgrade states of versions 1 to %d, not %s\n",
		    MCPD_VERSION, upgrade_reads_max(), v);
		exit(2);
	}
	printf("mcpd %s reads upgrade state version %d\n", MCPD_VERSION, asked);
	exit(0);
}

/*
 * This binary cannot take the state over: the one before is exec'd back
 * with it (it made it, so it reads it) and says why. Without one, mcpd
 * cannot go on with the descriptors it has: it exits, and the servers'
 * shims end their servers.
 */
static void __attribute__((noreturn))
upgrade_fall_back(int state_fd, const char *why)
{
	const char *prev = getenv("MCPD_UPGRADE_PREV");
	int fd = prev != NULL ? atoi(prev) : -1;
	char num[16];

	log_warnx("upgrade: this binary cannot take the state over: %s", why);
	if (fd >= 0 && getenv("MCPD_UPGRADE_FAILED") == NULL &&
	    lseek(state_fd, 0, SEEK_SET) == 0) {
		snprintf(num, sizeof num, "%d", state_fd);
		setenv("MCPD_UPGRADE_STATE", num, 1);
		setenv("MCPD_UPGRADE_FAILED", why, 1);
		unsetenv("MCPD_UPGRADE_PREV");
		/* The new binary's own settings are not the old one's. */
		unsetenv("MCPD_TEST_UPGRADE_REFUSE");
		unsetenv("MCPD_TEST_UPGRADE_READS");
		/* An ELF binary: its descriptor need not outlive the exec. */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fexecve(fd, upgrade_argv, environ);
		log_warn("upgrade: cannot exec the binary before");
	}
	fatalx("upgrade: no binary to fall back to; stopping");
}

/*
 * The state's JSON, read whole from fd first: jansson's json_loadfd reads
 * a byte a system call (a state with full log rings took 250 ms so).
 */
static json_t *
upgrade_state_read(int fd, char **cause)
{
	json_error_t jerr;
	json_t *state;
	char *text = NULL;
	size_t len;
	int r;

	if ((r = fileio_read_fd(fd, UPGRADE_STATE_MAX, &text, &len)) < 0) {
		xasprintf(cause, "the state cannot be read: %s", strerror(-r));
		return NULL;
	}
	state = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (state == NULL)
		xasprintf(cause, "the state does not parse: %s", jerr.text);
	return state;
}

const json_t *
upgrade_state(void)
{
	static bool has_looked;
	const char *v, *failed;
	char *cause = NULL;
	json_int_t version;
	int fd;

	if (has_looked)
		return upgrade_saved;
	has_looked = true;
	if ((v = getenv("MCPD_UPGRADE_STATE")) == NULL)
		return NULL;
	fd = atoi(v);
	unsetenv("MCPD_UPGRADE_STATE");
	if ((upgrade_saved = upgrade_state_read(fd, &cause)) == NULL)
		upgrade_fall_back(fd, cause);
	version = json_integer_value(json_object_get(upgrade_saved, "version"));
	failed = getenv("MCPD_UPGRADE_FAILED");
	if (version < 1 || version > upgrade_reads_max()) {
		xasprintf(&cause,
		    "the state is of version %lld; this mcpd reads 1 to %d",
		    (long long)version, upgrade_reads_max());
		upgrade_fall_back(fd, cause);
	}
	if (failed == NULL && getenv("MCPD_TEST_UPGRADE_REFUSE") != NULL)
		upgrade_fall_back(fd,
		    "MCPD_TEST_UPGRADE_REFUSE is set (a test's stand-in for a binary that cannot adopt)");
	close(fd);
	/* Taken over: no child inherits what was handed over (a fallback did). */
	upgrade_fds_close_on_exec();
	/* The daemon's uptime is the run's, not this binary's. */
	if (json_integer_value(json_object_get(upgrade_saved, "started_ms")) >
	    0)
		mcpd_started_ms = (uint64_t)
		    json_integer_value(json_object_get(upgrade_saved,
			"started_ms"));
	return upgrade_saved;
}

/* The binary before, kept open for a fallback: not needed any more. */
static void
upgrade_forget_prev(void)
{
	const char *prev = getenv("MCPD_UPGRADE_PREV");

	if (prev != NULL)
		close(atoi(prev));
	unsetenv("MCPD_UPGRADE_PREV");
	unsetenv("MCPD_UPGRADE_FAILED");
}

/* What the answer of the upgrade needs once the servers are back. */
struct upgrade_answer {
	struct request *req;
	char *from, *binary, *failed;
	uint64_t began_ms, resumed_ms;
	size_t servers;
};

/*
 * Every adopted server is ready again (or said why not): the upgrade's
 * request is answered, by the new binary, or failed by the old one that
 * a new binary handed everything back to.
 */
static void
upgrade_answer(void *arg, const json_t *not_ready)
{
	struct upgrade_answer *a = arg;
	uint64_t now = mcpd_now_ms();

	if (a->failed != NULL) {
		log_warnx("upgrade failed, mcpd %s goes on: %s", MCPD_VERSION,
		    a->failed);
		if (a->req != NULL)
			control_fail(a->req, ERRORS_UNAVAILABLE, NULL,
			    "the new binary could not take the state over (%s); mcpd %s went back to the binary before, with every server and client",
			    a->failed, MCPD_VERSION);
	} else {
		log_info(
		    "upgraded from mcpd %s to %s: %zu servers, %zu not ready again; clients paused %llu ms",
		    a->from != NULL ? a->from : "?", MCPD_VERSION, a->servers,
		    json_array_size(not_ready),
		    (unsigned long long)(a->resumed_ms - a->began_ms));
		if (a->req != NULL)
			control_reply(a->req,
			    json_pack(
				"{s:s?, s:s, s:s?, s:i, s:I, s:I, s:I, s:O}",
				"from", a->from, "to", MCPD_VERSION, "binary",
				a->binary, "pid", (int)getpid(), "servers",
				(json_int_t)a->servers, "pause_ms",
				(json_int_t)(a->resumed_ms - a->began_ms),
				"ready_ms", (json_int_t)(now - a->began_ms),
				"not_ready", not_ready));
	}
	free(a->from);
	free(a->binary);
	free(a->failed);
	free(a);
}

static char *
upgrade_strdup_or_null(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

void
upgrade_adopt(void)
{
	const json_t *st = upgrade_saved;
	struct upgrade_answer *a = xcalloc(1, sizeof *a);

	a->failed = upgrade_strdup_or_null(getenv("MCPD_UPGRADE_FAILED"));
	a->from = upgrade_strdup_or_null(json_string_value(json_object_get(st,
	    "from")));
	a->binary = upgrade_strdup_or_null(json_string_value(json_object_get(st,
	    "binary")));
	a->began_ms = (uint64_t)json_integer_value(json_object_get(st,
	    "began_ms"));
	a->servers = json_array_size(json_object_get(st, "servers"));
	/* Answered once they are back (from the loop): list shows them ready. */
	server_upgrade_adopt(json_object_get(st, "servers"), upgrade_answer, a);
	a->req = control_upgrade_adopt(json_object_get(st, "control"));
	a->resumed_ms = mcpd_now_ms();
	/* A child that ended during the exec was not reaped by anyone yet. */
	child_reap_now();
	upgrade_forget_prev();
	json_decref(upgrade_saved);
	upgrade_saved = NULL;
}
