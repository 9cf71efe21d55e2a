/* SPDX-License-Identifier: ISC */
/* The audit log's file: audit.jsonl (0600), its rotation, its failures. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "log.h"
#include "mcpd.h"

#define AUDIT_FILE "audit.jsonl"

static char *audit_path;
static int audit_fd = -1;
static off_t audit_size;
static bool audit_to_journal;
/* The episode of failure: its first error, since when, lines lost. */
static int audit_error;
static char audit_error_since[32];
static uint64_t audit_lost;

void
audit_open(const char *state_dir, bool to_journal)
{
	if (mcpd_opts.is_audit_off)
		return;
	xasprintf(&audit_path, "%s/%s", state_dir, AUDIT_FILE);
	audit_to_journal = to_journal;
}

void
audit_close(void)
{
	if (audit_fd >= 0)
		close(audit_fd);
	audit_fd = -1;
	free(audit_path);
	audit_path = NULL;
	audit_kept_forget();
}

bool
audit_is_on(void)
{
	return audit_path != NULL;
}

static int
audit_file_open(void)
{
	struct stat st;
	int fd;

	fd = open(audit_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	audit_fd = fd;
	audit_size = st.st_size;
	return 0;
}

/* audit.jsonl becomes .1, .1 becomes .2 ... and the oldest (.N) goes. */
static int
audit_file_rotate(void)
{
	char *from, *to;
	int err = 0;

	close(audit_fd);
	audit_fd = -1;
	for (size_t i = mcpd_opts.audit_files; i > 0; i--) {
		if (i > 1)
			xasprintf(&from, "%s.%zu", audit_path, i - 1);
		else
			from = xstrdup(audit_path);
		xasprintf(&to, "%s.%zu", audit_path, i);
		if (rename(from, to) < 0 && errno != ENOENT && err == 0)
			err = -errno;
		free(from);
		free(to);
	}
	if (mcpd_opts.audit_files == 0 && unlink(audit_path) < 0 &&
	    errno != ENOENT)
		err = -errno;
	return err;
}

/* The episode's state after a write that gave err (0: it worked). */
static void
audit_file_note(int err)
{
	char now[32];
	time_t t;
	struct tm tm;

	if (err == 0 && audit_error != 0) {
		log_info(
		    "audit: %s is written again; %llu records were lost since %s (%s)",
		    audit_path, (unsigned long long)audit_lost,
		    audit_error_since, strerror(-audit_error));
		audit_error = 0;
		audit_lost = 0;
	} else if (err != 0 && audit_error == 0) {
		t = time(NULL);
		gmtime_r(&t, &tm);
		strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
		memcpy(audit_error_since, now, sizeof now);
		audit_error = err;
		audit_lost = 1;
		log_warnx(
		    "audit: cannot write %s: %s; %s until it can be written (logged again when it can)",
		    audit_path, strerror(-err),
		    mcpd_opts.is_audit_required ?
			"calls are refused (--audit-required)" :
			"calls go on unrecorded");
	} else if (err != 0)
		audit_lost++;
}

/* One write(2) of the whole line; a part written is taken back. */
static int
audit_file_append(const char *line, size_t len)
{
	ssize_t n;
	int err;

	if (audit_fd < 0 && (err = audit_file_open()) < 0)
		return err;
	if (audit_size > 0 &&
	    (size_t)audit_size + len > mcpd_opts.audit_max_bytes) {
		if ((err = audit_file_rotate()) < 0)
			return err;
		if ((err = audit_file_open()) < 0)
			return err;
	}
	n = write(audit_fd, line, len);
	if (n == (ssize_t)len) {
		audit_size += n;
		return 0;
	}
	err = n < 0 ? -errno : -ENOSPC;
	/* A line is whole or absent: a reader never sees half of one. */
	if (n > 0 && ftruncate(audit_fd, audit_size) < 0)
		log_warn("audit: cannot take back a part of a line of %s",
		    audit_path);
	/* Opened again next time: the file may have been fixed or moved. */
	close(audit_fd);
	audit_fd = -1;
	return err;
}

static void
audit_file_journal(const char *line, size_t len, const struct audit_call *ac,
    const struct audit_end *end)
{
	const char *server = audit_call_server(ac);

	if (server == NULL)
		server = "-";
	sd_journal_send("MESSAGE=audit: %s %s %s %s", audit_call_agent(ac),
	    server, audit_call_tool(ac), end->outcome, "PRIORITY=%d", LOG_INFO,
	    "MCP_AUDIT=1", "MCP_AGENT=%s", audit_call_agent(ac),
	    "MCP_SERVER=%s", server, "MCP_TOOL=%s", audit_call_tool(ac),
	    "MCP_OUTCOME=%s", end->outcome, "MCP_AUDIT_TIME=%s",
	    audit_call_time(ac), "MCP_AUDIT_JSON=%.*s", (int)(len - 1), line,
	    NULL);
}

int
audit_file_write(const char *line, size_t len, const struct audit_call *ac,
    const struct audit_end *end)
{
	int err = audit_file_append(line, len);

	audit_file_note(err);
	if (audit_to_journal)
		audit_file_journal(line, len, ac, end);
	return err;
}

json_t *
audit_status(void)
{
	if (!audit_is_on())
		return json_pack("{s:b}", "on", 0);
	return json_pack("{s:b, s:s, s:b, s:b, s:I, s:I, s:s, s:s?, s:s?, s:I}",
	    "on", 1, "path", audit_path, "required",
	    mcpd_opts.is_audit_required, "arguments",
	    mcpd_opts.is_audit_arguments, "max_bytes",
	    (json_int_t)mcpd_opts.audit_max_bytes, "files",
	    (json_int_t)mcpd_opts.audit_files, "state",
	    audit_error != 0 ? "failing" : "ok", "error",
	    audit_error != 0 ? strerror(-audit_error) : NULL, "since",
	    audit_error != 0 ? audit_error_since : NULL, "lost",
	    (json_int_t)audit_lost);
}

const char *
audit_failure(void)
{
	return audit_error != 0 ? strerror(-audit_error) : NULL;
}
