/* SPDX-License-Identifier: ISC */
/* mcpctl secret: set (value from stdin, never argv), list and rm secrets. */
#include <sys/mman.h>
#include <sys/prctl.h>

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "fileio.h"
#include "mcpctl.h"
#include "names.h"
#include "xalloc.h"

#define CTL_SECRET_VALUE_MAX 65536 /* mcpd's limit, in bytes */
/* The value, a trailing newline and one byte to see that it is too long. */
#define CTL_SECRET_BUF	     (CTL_SECRET_VALUE_MAX + 2)

/* What the prompt catches; each is sent again once the terminal is back. */
static const int ctl_secret_signals[] = { SIGALRM, SIGHUP, SIGINT, SIGPIPE,
	SIGQUIT, SIGTERM, SIGTSTP, SIGTTIN, SIGTTOU };

#define CTL_SECRET_NSIGNALS \
	(sizeof ctl_secret_signals / sizeof ctl_secret_signals[0])

static volatile sig_atomic_t ctl_secret_caught[NSIG];

static void
ctl_secret_catch(int signo)
{
	ctl_secret_caught[signo] = 1;
}

/* jansson's free: a string of the request may hold the value. */
static void
ctl_secret_free_wiped(void *p)
{
	if (p != NULL)
		explicit_bzero(p, malloc_usable_size(p));
	free(p);
}

static int
ctl_secret_check_name(const struct mcpctl_cmd *cmd, const char *name)
{
	if (names_secret_valid(name))
		return 0;
	return mcpctl_usage(cmd,
	    "invalid secret name '%s': use 1 to %d letters, digits, '_' and '.'",
	    name, NAMES_SECRET_MAX);
}

/* Whether one of the prompt's signals came. */
static bool
ctl_secret_is_interrupted(void)
{
	for (size_t i = 0; i < CTL_SECRET_NSIGNALS; i++)
		if (ctl_secret_caught[ctl_secret_signals[i]])
			return true;
	return false;
}

/*
 * Reads one line from the terminal. The prompt's signals are blocked but
 * while ppoll waits (with the mask waiting), so that one coming at any
 * moment ends the read.
 */
static ssize_t
ctl_secret_read_line(char *buf, size_t size, const sigset_t *waiting)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	size_t off = 0;
	ssize_t n;

	while (off < size) {
		if (ctl_secret_is_interrupted())
			return -EINTR;
		if (ppoll(&pfd, 1, NULL, waiting) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if ((n = read(STDIN_FILENO, buf + off, size - off)) < 0)
			return -errno;
		if (n == 0)
			break;
		off += n;
		if (buf[off - 1] == '\n')
			break;
	}
	return off;
}

/*
 * Prompts on stderr and reads one line from the terminal on stdin with
 * echo off. A signal first puts the terminal back, then takes its course;
 * after a stop and a continue the prompt starts again.
 */
static ssize_t
ctl_secret_read_tty(const char *name, char *buf, size_t size)
{
	struct sigaction sa, saved[CTL_SECRET_NSIGNALS];
	struct termios term, quiet;
	sigset_t prompt, before;
	bool is_again;
	ssize_t n;

	if (tcgetattr(STDIN_FILENO, &term) < 0)
		return -errno;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = ctl_secret_catch;
	sigemptyset(&prompt);
	for (size_t i = 0; i < CTL_SECRET_NSIGNALS; i++)
		sigaddset(&prompt, ctl_secret_signals[i]);
	quiet = term;
	quiet.c_lflag &= ~(ECHO | ECHOE | ECHOK);
	quiet.c_lflag |= ECHONL | ICANON;
	do {
		is_again = false;
		sigprocmask(SIG_BLOCK, &prompt, &before);
		for (size_t i = 0; i < CTL_SECRET_NSIGNALS; i++) {
			ctl_secret_caught[ctl_secret_signals[i]] = 0;
			sigaction(ctl_secret_signals[i], &sa, &saved[i]);
		}
		if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0) {
			n = -errno;
		} else {
			fprintf(stderr,
			    "value of secret %s (not shown): ", name);
			n = ctl_secret_read_line(buf, size, &before);
		}
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &term);
		for (size_t i = 0; i < CTL_SECRET_NSIGNALS; i++)
			sigaction(ctl_secret_signals[i], &saved[i], NULL);
		/* One still pending now takes its own course. */
		sigprocmask(SIG_SETMASK, &before, NULL);
		for (size_t i = 0; i < CTL_SECRET_NSIGNALS; i++) {
			int signo = ctl_secret_signals[i];

			if (!ctl_secret_caught[signo])
				continue;
			explicit_bzero(buf, size);
			fputc('\n', stderr);
			kill(getpid(), signo);
			is_again |= signo == SIGTSTP || signo == SIGTTIN ||
			    signo == SIGTTOU;
		}
		/* A caught signal that did not end us: only a stop restarts. */
		if (!is_again && n == -EINTR)
			n = -ECANCELED;
	} while (is_again);
	return n;
}

/*
 * Reads the value into buf: all of stdin less one trailing newline, or a
 * line typed at the terminal. Returns its length, or the exit status
 * (negated) after saying why.
 */
static ssize_t
ctl_secret_read_value(const struct mcpctl_cmd *cmd, const char *name, char *buf)
{
	bool is_tty = isatty(STDIN_FILENO);
	ssize_t n;

	n = is_tty ? ctl_secret_read_tty(name, buf, CTL_SECRET_BUF) :
		     fileio_read_upto(STDIN_FILENO, buf, CTL_SECRET_BUF);
	if (n < 0) {
		print_err("%s: cannot read the value: %s", cmd->name,
		    strerror((int)-n));
		return -MCPCTL_EXIT_ERROR;
	}
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if ((size_t)n > CTL_SECRET_VALUE_MAX) {
		print_err("%s: the value is longer than %d bytes", cmd->name,
		    CTL_SECRET_VALUE_MAX);
		return -MCPCTL_EXIT_USAGE;
	}
	if (n == 0) {
		print_err(
		    "%s: the value is empty; nothing was set (pipe it in: mcpctl secret set %s < FILE)",
		    cmd->name, name);
		return -MCPCTL_EXIT_USAGE;
	}
	if (memchr(buf, '\0', n) != NULL) {
		print_err("%s: the value holds a NUL byte; mcpd stores text",
		    cmd->name);
		return -MCPCTL_EXIT_USAGE;
	}
	return n;
}

static void
ctl_secret_print_set(const json_t *result)
{
	const char *name = json_string_value(json_object_get(result, "name"));

	printf("%s secret %s; use it as $(secret.%s)\n",
	    json_is_true(json_object_get(result, "replaced")) ? "replaced" :
								"set",
	    name != NULL ? name : "-", name != NULL ? name : "NAME");
}

static int
ctl_secret_set(struct mcpctl *m, const struct mcpctl_cmd *cmd, const char *name)
{
	json_t *params = NULL;
	ssize_t n;
	char *buf;

	/* No core dump, no ptrace by others of our uid, no swap of buf. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	json_set_alloc_funcs(xmalloc, ctl_secret_free_wiped);
	if ((buf = malloc(CTL_SECRET_BUF)) == NULL) {
		print_err("%s: out of memory", cmd->name);
		return MCPCTL_EXIT_ERROR;
	}
	(void)mlock(buf, CTL_SECRET_BUF);
	if ((n = ctl_secret_read_value(cmd, name, buf)) >= 0 &&
	    (params = json_pack("{s:s, s:s%}", "name", name, "value", buf,
		 (size_t)n)) == NULL) {
		print_err("%s: the value is not valid UTF-8; mcpd stores text",
		    cmd->name);
		n = -MCPCTL_EXIT_USAGE;
	}
	explicit_bzero(buf, CTL_SECRET_BUF);
	munlock(buf, CTL_SECRET_BUF);
	free(buf);
	if (n < 0)
		return (int)-n;
	return mcpctl_run(m, "mcpd/secret-set", params, ctl_secret_print_set);
}

static void
ctl_secret_print_list(const json_t *result)
{
	const json_t *names = json_object_get(result, "names"), *v;
	const char *key = json_string_value(json_object_get(result,
	    "key_source"));
	size_t i;

	json_int_t hidden = json_integer_value(json_object_get(result,
	    "hidden"));

	json_array_foreach(names, i, v)
		if (json_is_string(v))
			printf("%s\n", json_string_value(v));
	if (json_array_size(names) == 0 && hidden == 0)
		printf("no secrets; add one with 'mcpctl secret set NAME'\n");
	if (hidden > 0)
		printf(
		    "(%" JSON_INTEGER_FORMAT
		    " more that mcpd keeps for the values of saved loads: --all shows them)\n",
		    hidden);
	if (key != NULL && strcmp(key, "credential") == 0)
		printf("key: the systemd credential mcpd-secrets-key\n");
	else if (key != NULL)
		printf("key: %s\n", key);
}

static void
ctl_secret_print_rm(const json_t *result)
{
	const char *name = json_string_value(json_object_get(result, "name"));
	const json_t *users = json_object_get(result, "used_by"), *u;
	size_t i;

	if (json_is_true(json_object_get(result, "removed")))
		printf("removed secret %s\n", name != NULL ? name : "-");
	else
		printf("no secret %s; nothing removed\n",
		    name != NULL ? name : "-");
	json_array_foreach(users, i, u)
		fprintf(stderr,
		    "mcpctl: warning: saved server %s (agent %s) uses $(secret.%s): it fails at its next start\n",
		    json_string_value(json_object_get(u, "name")),
		    json_string_value(json_object_get(u, "agent")),
		    name != NULL ? name : "-");
}

static const struct option ctl_secret_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int
ctl_secret_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const char *sub;
	bool all = false, force = false;
	int c, r;

	while ((c = mcpctl_getopt(argc, argv, ":afh", ctl_secret_options)) !=
	    -1) {
		if (c == 'h')
			return mcpctl_help(cmd);
		if (c == 'a')
			all = true;
		else if (c == 'f')
			force = true;
		else
			return mcpctl_bad_option(cmd, c, argv);
	}
	if (optind >= argc)
		return mcpctl_usage(cmd, "missing set, list or rm");
	sub = argv[optind++];
	if ((all && strcmp(sub, "list") != 0) ||
	    (force && strcmp(sub, "rm") != 0))
		return mcpctl_usage(cmd,
		    "--all goes with list, --force with rm");
	if (strcmp(sub, "list") == 0) {
		if ((r = mcpctl_positional(cmd, argc, argv, 0, 0, "")) != 0)
			return r;
		return mcpctl_run(m, "mcpd/secret-list",
		    all ? json_pack("{s:b}", "all", 1) : json_object(),
		    ctl_secret_print_list);
	}
	if (strcmp(sub, "set") != 0 && strcmp(sub, "rm") != 0)
		return mcpctl_usage(cmd,
		    "unknown secret command '%s': set, list or rm", sub);
	if (strcmp(sub, "set") == 0 && argc - optind > 1)
		return mcpctl_usage(cmd,
		    "unexpected argument '%s': the value is read from standard input, never from the command line (where ps shows it)",
		    argv[optind + 1]);
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1, "NAME")) != 0 ||
	    (r = ctl_secret_check_name(cmd, argv[optind])) != 0)
		return r;
	if (strcmp(sub, "set") == 0)
		return ctl_secret_set(m, cmd, argv[optind]);
	return mcpctl_run(m, "mcpd/secret-rm",
	    force ? json_pack("{s:s, s:b}", "name", argv[optind], "force", 1) :
		    json_pack("{s:s}", "name", argv[optind]),
	    ctl_secret_print_rm);
}

const struct mcpctl_cmd ctl_secret_cmd = {
	.name = "secret",
	.synopsis = "set NAME | list [--all] | rm [--force] NAME",
	.summary = "keep secret values in mcpd's encrypted store",
	.help =
	    "  -a, --all          list: also the secrets mcpd keeps for saved loads\n"
	    "  -f, --force        rm: even a secret that saved servers use\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "set NAME reads the value from standard input (all of it, less\n"
	    "one trailing newline), or asks for it without echo when that is\n"
	    "a terminal; never from the command line, where ps shows it.\n"
	    "list prints the names only, and where the store's key comes\n"
	    "from; the secrets mcpd keeps for the literal values of saved\n"
	    "loads (mcpd.<id>.env.NAME ...) only with --all. rm NAME removes\n"
	    "one; a secret that a saved server uses only with --force (the\n"
	    "server then fails at its next start). A name is 1 to 128\n"
	    "letters, digits, '_' and '.'.\n"
	    "\n"
	    "A load uses a secret as $(secret.NAME) in its args, env values,\n"
	    "URL and headers; mcpd puts the value in when it starts the\n"
	    "server, and saves and shows the reference only:\n"
	    "  mcpctl secret set gh_token < token.txt\n"
	    "  mcpctl load --env 'GITHUB_TOKEN=$(secret.gh_token)' -- CMD\n",
	.exec = ctl_secret_exec,
};
