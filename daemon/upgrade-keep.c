/* SPDX-License-Identifier: ISC */
/* What an upgrade keeps across the exec: descriptors, and unread bytes. */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <sodium.h>

#include "mcpd.h"

#define UPGRADE_FDS_MAX 8192

static int upgrade_fds[UPGRADE_FDS_MAX];
static size_t upgrade_nfds;

void
upgrade_fds_close_on_exec(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int fd, flags;

	while (dir != NULL && (e = readdir(dir)) != NULL) {
		fd = atoi(e->d_name);
		if (fd < 3 || fd == dirfd(dir))
			continue;
		if ((flags = fcntl(fd, F_GETFD)) >= 0 && !(flags & FD_CLOEXEC))
			fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
	}
	if (dir != NULL)
		closedir(dir);
}

void
upgrade_fds_forget(void)
{
	upgrade_nfds = 0;
}

int
upgrade_keep_fd(int fd)
{
	if (fd >= 0 && upgrade_nfds < UPGRADE_FDS_MAX)
		upgrade_fds[upgrade_nfds++] = fd;
	return fd;
}

json_t *
upgrade_bytes_save(struct evbuffer *buf)
{
	size_t len = buf != NULL ? evbuffer_get_length(buf) : 0;
	size_t size = sodium_base64_ENCODED_LEN(len,
	    sodium_base64_VARIANT_ORIGINAL);
	unsigned char *data;
	char *text;
	json_t *out;

	if (len == 0)
		return json_string("");
	data = evbuffer_pullup(buf, -1);
	text = xmalloc(size);
	sodium_bin2base64(text, size, data, len,
	    sodium_base64_VARIANT_ORIGINAL);
	out = json_string(text);
	free(text);
	return out;
}

void
upgrade_bytes_restore(struct evbuffer *buf, const json_t *saved)
{
	const char *text = json_string_value(saved);
	size_t len = text != NULL ? strlen(text) : 0, n = 0;
	unsigned char *data;

	if (len == 0)
		return;
	data = xmalloc(len);
	if (sodium_base642bin(data, len, text, len, NULL, &n, NULL,
		sodium_base64_VARIANT_ORIGINAL) == 0 &&
	    n > 0)
		evbuffer_prepend(buf, data, n);
	free(data);
}

void
upgrade_fds_inherit(bool is_inherited)
{
	for (size_t i = 0; i < upgrade_nfds; i++) {
		int flags = fcntl(upgrade_fds[i], F_GETFD);

		if (flags >= 0)
			fcntl(upgrade_fds[i], F_SETFD,
			    is_inherited ? flags & ~FD_CLOEXEC :
					   flags | FD_CLOEXEC);
	}
}
