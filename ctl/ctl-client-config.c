/* SPDX-License-Identifier: ISC */
/* mcpctl client-config: the entry that points an MCP client at the bridge. */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "mcpctl.h"

#define CC_NONE SIZE_MAX
#define CC_NAME "mcpd" /* the entry's name in the client's file */

/* A client, the key its file keeps servers under, its entry's shape. */
struct cc_client {
	const char *name;
	const char *container; /* "mcpServers" or "servers" */
	bool has_type;	       /* "type": "stdio" in the entry */
};

static const struct cc_client cc_clients[] = {
	{ "claude-desktop", "mcpServers", false },
	{ "claude-code", "mcpServers", true },
	{ "cursor", "mcpServers", false },
	{ "vscode", "servers", true },
	{ NULL, NULL, false },
};

static const struct option ctl_client_config_options[] = {
	{ "server", required_argument, NULL, 'S' },
	{ "write", required_argument, NULL, 'w' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A member of an object in the text: where its value starts and ends. */
struct cc_member {
	size_t value_start, value_end; /* CC_NONE when there is none */
	size_t close;		       /* the object's '}' */
	bool has_members;
};

/* Skips blanks, comments and a byte order mark from i on. */
static size_t
cc_skip(const char *s, size_t len, size_t i)
{
	if (i == 0 && len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
			i++;
		else if (s[i] == '/' && i + 1 < len && s[i + 1] == '/')
			while (i < len && s[i] != '\n')
				i++;
		else if (s[i] == '/' && i + 1 < len && s[i + 1] == '*') {
			for (i += 2;
			     i + 1 < len && !(s[i] == '*' && s[i + 1] == '/');
			     i++)
				;
			i = i + 1 < len ? i + 2 : len;
		} else
			break;
	}
	return i;
}

/* The index after the string that starts at s[i], or CC_NONE. */
static size_t
cc_string_end(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return CC_NONE;
}

/* The index after the value that starts at s[i], or CC_NONE. */
static size_t
cc_value_end(const char *s, size_t len, size_t i)
{
	size_t depth = 0;

	if (i >= len)
		return CC_NONE;
	if (s[i] == '"')
		return cc_string_end(s, len, i);
	if (s[i] != '{' && s[i] != '[') {
		while (i < len && strchr(",}] \t\r\n/", s[i]) == NULL)
			i++;
		return i;
	}
	while (i < len) {
		if (s[i] == '"') {
			if ((i = cc_string_end(s, len, i)) == CC_NONE)
				return CC_NONE;
			continue;
		}
		if (s[i] == '/') {
			size_t next = cc_skip(s, len, i);

			i = next > i ? next : i + 1;
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return CC_NONE;
}

/*
 * Finds the (last) member key of the object whose '{' is s[open]; 0 with
 * *ret, or -EINVAL when the text is not as expected.
 */
static int
cc_find(const char *s, size_t len, size_t open, const char *key,
    struct cc_member *ret)
{
	size_t i = open + 1, k, klen = strlen(key), vend, kstart;

	*ret = (struct cc_member){ CC_NONE, CC_NONE, CC_NONE, false };
	for (;;) {
		i = cc_skip(s, len, i);
		if (i >= len)
			return -EINVAL;
		if (s[i] == '}') {
			ret->close = i;
			return 0;
		}
		if (s[i] != '"' || (k = cc_string_end(s, len, i)) == CC_NONE)
			return -EINVAL;
		ret->has_members = true;
		kstart = i + 1;
		i = cc_skip(s, len, k);
		if (i >= len || s[i] != ':')
			return -EINVAL;
		i = cc_skip(s, len, i + 1);
		if ((vend = cc_value_end(s, len, i)) == CC_NONE)
			return -EINVAL;
		if (k - 1 - kstart == klen &&
		    memcmp(s + kstart, key, klen) == 0) {
			ret->value_start = i;
			ret->value_end = vend;
		}
		i = cc_skip(s, len, vend);
		if (i < len && s[i] == ',')
			i++;
	}
}

/* The indentation unit of the text: its first indented key's, or 2 spaces. */
static char *
cc_indent_unit(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		size_t j = i + 1;

		if (s[i] != '\n')
			continue;
		while (j < len && (s[j] == ' ' || s[j] == '\t'))
			j++;
		if (j > i + 1 && j < len && s[j] == '"')
			return strndup(s + i + 1, j - i - 1);
	}
	return strdup("  ");
}

static void
cc_indent(FILE *f, const char *unit, int depth)
{
	while (depth-- > 0)
		fputs(unit, f);
}

/* v as JSON: objects one member a line at depth, arrays on one line. */
static void
cc_render_to(FILE *f, const json_t *v, const char *unit, int depth)
{
	const char *key;
	json_t *item;
	size_t i, n = 0;
	char *text;

	if (json_is_object(v) && json_object_size(v) > 0) {
		fputs("{\n", f);
		json_object_foreach((json_t *)(uintptr_t)v, key, item) {
			json_t *k = json_string(key);

			cc_indent(f, unit, depth + 1);
			text = json_dumps(k, JSON_ENCODE_ANY);
			fprintf(f, "%s: ", text != NULL ? text : "\"\"");
			free(text);
			json_decref(k);
			cc_render_to(f, item, unit, depth + 1);
			fputs(++n < json_object_size(v) ? ",\n" : "\n", f);
		}
		cc_indent(f, unit, depth);
		fputc('}', f);
		return;
	}
	if (json_is_array(v)) {
		fputc('[', f);
		json_array_foreach(v, i, item) {
			text = json_dumps(item, JSON_ENCODE_ANY | JSON_COMPACT);
			fprintf(f, "%s%s", i > 0 ? ", " : "",
			    text != NULL ? text : "null");
			free(text);
		}
		fputc(']', f);
		return;
	}
	text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	fputs(text != NULL ? text : "null", f);
	free(text);
}

/* cc_render_to into a new string, or NULL. */
static char *
cc_render(const json_t *v, const char *unit, int depth)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	cc_render_to(f, v, unit, depth);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* mcpctl's own absolute path, or NULL. */
static char *
cc_self(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

/* The socket path as an absolute one (a new string), or NULL. */
static char *
cc_socket(const char *path)
{
	char *cwd, *abs;

	if (path[0] == '/')
		return strdup(path);
	if ((cwd = getcwd(NULL, 0)) == NULL)
		return NULL;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	free(cwd);
	return abs;
}

/* The entry: command, and args that run the bridge as asked. */
static json_t *
cc_entry(const struct mcpctl *m, const struct cc_client *client,
    const json_t *servers)
{
	char *self = cc_self(), *sock = cc_socket(m->socket_path);
	json_t *entry = json_object(), *args = json_array(), *s;
	size_t i;

	if (self == NULL || sock == NULL || entry == NULL || args == NULL) {
		free(self);
		free(sock);
		json_decref(entry);
		json_decref(args);
		return NULL;
	}
	if (client->has_type)
		json_object_set_new(entry, "type", json_string("stdio"));
	json_object_set_new(entry, "command", json_string(self));
	/*
	 * The socket and the agent are always written down: a client's
	 * environment (a GUI launcher without XDG_RUNTIME_DIR) may not give
	 * the bridge the default mcpctl has here.
	 */
	json_array_append_new(args, json_string("bridge"));
	json_array_append_new(args, json_string("-s"));
	json_array_append_new(args, json_string(sock));
	json_array_append_new(args, json_string("--agent"));
	json_array_append_new(args,
	    json_string(m->agent != NULL ? m->agent : "default"));
	json_array_foreach(servers, i, s) {
		json_array_append_new(args, json_string("--server"));
		json_array_append(args, s);
	}
	json_object_set_new(entry, "args", args);
	free(self);
	free(sock);
	return entry;
}

/* Parses text as JSON with comments (through jsonc_load); NULL if it fails. */
static json_t *
cc_parse(const char *text, size_t len)
{
	char path[64], *cause = NULL;
	json_t *doc = NULL;
	int fd = memfd_create("mcpctl-client-config", MFD_CLOEXEC);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return NULL;
	while (off < len && (n = write(fd, text + off, len - off)) > 0)
		off += n;
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	if (off == len && jsonc_load(path, &doc, &cause) < 0)
		doc = NULL;
	free(cause);
	close(fd);
	return doc;
}

/* Inserts ins at text[at], replacing the del bytes there; a new string. */
static char *
cc_splice(const char *text, size_t len, size_t at, size_t del, const char *ins)
{
	char *out;

	if (asprintf(&out, "%.*s%s%.*s", (int)at, text, ins,
		(int)(len - at - del), text + at + del) < 0)
		return NULL;
	return out;
}

/*
 * The text with the entry put in place, all else as it was (comments
 * too); NULL when the text is not as the scanner expects.
 */
static char *
cc_merge_text(const char *text, size_t len, const char *container,
    const json_t *entry, const char **ret_action)
{
	struct cc_member top, box;
	char *unit = cc_indent_unit(text, len), *value = NULL, *ins = NULL,
	     *out = NULL;
	size_t open = cc_skip(text, len, 0);

	if (unit == NULL || open >= len || text[open] != '{' ||
	    cc_find(text, len, open, container, &top) < 0 ||
	    (value = cc_render(entry, unit, 2)) == NULL)
		goto out;
	if (top.value_start == CC_NONE) {
		*ret_action = "added";
		if (asprintf(&ins, "\n%s\"%s\": {\n%s%s\"%s\": %s\n%s}%s", unit,
			container, unit, unit, CC_NAME, value, unit,
			top.has_members ? "," : "\n") < 0)
			ins = NULL;
		else
			out = cc_splice(text, len, open + 1, 0, ins);
		goto out;
	}
	if (text[top.value_start] != '{' ||
	    cc_find(text, len, top.value_start, CC_NAME, &box) < 0)
		goto out;
	if (box.value_start != CC_NONE) {
		*ret_action = "replaced";
		out = cc_splice(text, len, box.value_start,
		    box.value_end - box.value_start, value);
		goto out;
	}
	*ret_action = "added";
	if (asprintf(&ins, "\n%s%s\"%s\": %s%s%s", unit, unit, CC_NAME, value,
		box.has_members ? "," : "\n", box.has_members ? "" : unit) < 0)
		ins = NULL;
	else
		out = cc_splice(text, len, top.value_start + 1, 0, ins);
out:
	free(unit);
	free(value);
	free(ins);
	return out;
}

/* Writes buf to path atomically, then reads it back; 0 or -errno. */
static int
cc_put(const char *path, const char *buf, size_t len, mode_t mode, char **cause)
{
	char *back = NULL;
	size_t blen = 0;
	int r;

	if ((r = fileio_write_atomic(path, buf, len, mode, cause)) < 0)
		return r;
	if ((r = jsonc_read_file(path, &back, &blen)) < 0) {
		if (asprintf(cause, "cannot read %s back: %s", path,
			strerror(-r)) < 0)
			*cause = NULL;
		return r;
	}
	r = blen == len && memcmp(back, buf, len) == 0 ? 0 : -EIO;
	free(back);
	if (r < 0 &&
	    asprintf(cause, "%s does not read back as what was written to it",
		path) < 0)
		*cause = NULL;
	return r;
}

/* --write FILE: merges the entry in, with a backup and a readback. */
static int
cc_write(const struct mcpctl *m, const struct cc_client *client,
    const json_t *entry, const char *file)
{
	char *text = NULL, *merged = NULL, *cause = NULL, *bak = NULL,
	     *real = NULL;
	json_t *doc = NULL, *want = NULL, *box, *check = NULL, *report;
	const char *action = "created", *path = file, *note = NULL;
	bool is_new = false;
	struct stat st;
	mode_t mode, mask;
	size_t len = 0;
	int r;

	mask = umask(0);
	umask(mask);
	mode = 0666 & ~mask;
	/* A symbolic link (a dotfile manager's) stays one: write its target. */
	if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode)) {
		if ((real = realpath(file, NULL)) == NULL) {
			print_err(
			    "client-config: %s is a symbolic link to nowhere: %s",
			    file, strerror(errno));
			return MCPCTL_EXIT_ERROR;
		}
		path = real;
	}
	if ((r = jsonc_read_file(path, &text, &len)) == -ENOENT) {
		is_new = true;
	} else if (r < 0) {
		print_err("client-config: cannot read %s: %s", path,
		    strerror(-r));
		r = MCPCTL_EXIT_ERROR;
		goto out;
	} else if (stat(path, &st) == 0) {
		mode = st.st_mode & 07777;
	}
	if (!is_new && cc_skip(text, len, 0) < len) {
		if (jsonc_load(path, &doc, &cause) < 0) {
			print_err("client-config: %s", cause);
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
		if (!json_is_object(doc)) {
			print_err(
			    "client-config: %s does not hold a JSON object",
			    path);
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
	} else {
		doc = json_object();
	}
	box = json_object_get(doc, client->container);
	if (box != NULL && !json_is_object(box)) {
		print_err("client-config: \"%s\" in %s is not an object",
		    client->container, path);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if (json_equal(json_object_get(box, CC_NAME), entry)) {
		action = "unchanged";
		r = MCPCTL_EXIT_OK;
		goto report;
	}
	want = json_deep_copy(doc);
	if (json_object_get(want, client->container) == NULL)
		json_object_set_new(want, client->container, json_object());
	json_object_set(json_object_get(want, client->container), CC_NAME,
	    (json_t *)(uintptr_t)entry);
	if (!is_new && cc_skip(text, len, 0) < len &&
	    (merged = cc_merge_text(text, len, client->container, entry,
		 &action)) != NULL &&
	    ((check = cc_parse(merged, strlen(merged))) == NULL ||
		!json_equal(check, want))) {
		free(merged);
		merged = NULL;
	}
	if (merged == NULL) {
		if (!is_new && cc_skip(text, len, 0) < len) {
			action = json_object_get(box, CC_NAME) ? "replaced" :
								 "added";
			note =
			    "the file was written anew: its comments and layout were not kept";
		}
		if ((merged = cc_render(want, "  ", 0)) == NULL ||
		    asprintf(&bak, "%s\n", merged) < 0) {
			print_err("client-config: out of memory");
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
		free(merged);
		merged = bak;
		bak = NULL;
	}
	if (!is_new) {
		if (asprintf(&bak, "%s.bak", path) < 0 ||
		    (r = fileio_write_atomic(bak, text, len, mode, &cause)) <
			0) {
			print_err(
			    "client-config: cannot write the backup, so %s was left alone: %s",
			    path, cause != NULL ? cause : "out of memory");
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
	}
	if ((r = cc_put(path, merged, strlen(merged), mode, &cause)) < 0) {
		print_err("client-config: %s%s%s%s", cause,
		    bak != NULL ? "; the old content is in " : "",
		    bak != NULL ? bak : "", "");
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	r = MCPCTL_EXIT_OK;
report:
	if (m->is_json) {
		report = json_pack("{s:s, s:s, s:s, s:s?, s:s?}", "file", path,
		    "client", client->name, "action",
		    is_new ? "created" : action, "backup", bak, "note", note);
		print_json(report);
		json_decref(report);
	} else if (strcmp(action, "unchanged") == 0) {
		printf("%s already has the %s entry for %s: nothing changed\n",
		    path, CC_NAME, client->name);
	} else {
		printf("%s %s: the %s entry for %s %s under \"%s\"\n",
		    is_new ? "created" : "updated", path, CC_NAME, client->name,
		    is_new || strcmp(action, "added") == 0 ? "added" :
							     "replaced",
		    client->container);
		if (bak != NULL)
			printf("the old content is in %s\n", bak);
		if (note != NULL)
			printf("note: %s\n", note);
		printf("read back: as written; restart %s to use it\n",
		    client->name);
	}
out:
	free(text);
	free(merged);
	free(cause);
	free(bak);
	free(real);
	json_decref(doc);
	json_decref(want);
	json_decref(check);
	return r;
}

static int
ctl_client_config_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const struct cc_client *client = NULL;
	json_t *servers = json_array(), *entry = NULL, *doc = NULL;
	const char *file = NULL;
	char *text;
	int c, r;

	if (servers == NULL)
		return MCPCTL_EXIT_ERROR;
	while ((c = mcpctl_getopt(argc, argv, ":h",
		    ctl_client_config_options)) != -1) {
		switch (c) {
		case 'S':
			if ((r = mcpctl_check_name(cmd, "server", optarg)) != 0)
				goto out;
			json_array_append_new(servers, json_string(optarg));
			break;
		case 'w':
			file = optarg;
			break;
		case 'h':
			r = mcpctl_help(cmd);
			goto out;
		default:
			r = mcpctl_bad_option(cmd, c, argv);
			goto out;
		}
	}
	if ((r = mcpctl_positional(cmd, argc, argv, 1, 1,
		 "CLIENT (claude-desktop, claude-code, cursor or vscode)")) !=
	    0)
		goto out;
	for (size_t i = 0; cc_clients[i].name != NULL; i++)
		if (strcmp(cc_clients[i].name, argv[optind]) == 0)
			client = &cc_clients[i];
	if (client == NULL) {
		r = mcpctl_usage(cmd,
		    "unknown client '%s': use claude-desktop, claude-code, cursor or vscode",
		    argv[optind]);
		goto out;
	}
	/* A view of a server the agent lacks would show nothing: refused. */
	if (json_array_size(servers) > 0 &&
	    (r = ctl_bridge_hello(m, servers)) != 0)
		goto out;
	if ((entry = cc_entry(m, client, servers)) == NULL) {
		print_err("client-config: cannot find mcpctl's own path: %s",
		    strerror(errno != 0 ? errno : ENOMEM));
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if (file != NULL) {
		r = cc_write(m, client, entry, file);
		goto out;
	}
	doc = json_pack("{s:{s:O}}", client->container, CC_NAME, entry);
	if (m->is_json)
		print_json(doc);
	else if ((text = cc_render(doc, "  ", 0)) != NULL) {
		printf("%s\n", text);
		free(text);
	}
	r = MCPCTL_EXIT_OK;
out:
	json_decref(servers);
	json_decref(entry);
	json_decref(doc);
	return r;
}

const struct mcpctl_cmd ctl_client_config_cmd = {
	.name = "client-config",
	.synopsis =
	    "claude-desktop|claude-code|cursor|vscode [--agent AGENT] [--server SERVER]... [--write FILE]",
	.summary =
	    "print the entry that makes an MCP client use mcpd through 'mcpctl bridge', or merge it into the client's FILE",
	.help =
	    "  --agent AGENT      the bridge acts for AGENT (global option)\n"
	    "  --server SERVER    the client sees only this server (repeatable)\n"
	    "  --write FILE       merge the entry into FILE (kept: other entries and keys,\n"
	    "                     comments); FILE.bak gets the old content first\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The entry always names the socket (-s, absolute) and the agent.\n",
	.exec = ctl_client_config_exec,
	.options = ctl_client_config_options,
};
