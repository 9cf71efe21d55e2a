/* SPDX-License-Identifier: ISC */
/* mcpctl client-config: the entry that points an MCP client at the bridge. */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl-client-config.h"
#include "fileio.h"
#include "mcpctl.h"
#include "paths.h"

#define CC_NAME CTL_CLIENT_CONFIG_NAME
#define CC_CLIENTS \
	"claude-desktop, claude-code, cursor, vscode, gemini-cli or codex"

static const struct ctl_client_config_client cc_clients[] = {
	{ "claude-desktop", "mcpServers", false, CTL_CLIENT_CONFIG_JSON, NULL },
	{ "claude-code", "mcpServers", true, CTL_CLIENT_CONFIG_JSON, NULL },
	{ "cursor", "mcpServers", false, CTL_CLIENT_CONFIG_JSON, NULL },
	{ "vscode", "servers", true, CTL_CLIENT_CONFIG_JSON, NULL },
	/*
	 * Gemini CLI turns every MCP server off, user-level ones too, in a
	 * folder it does not trust: no member of the entry changes that.
	 */
	{ "gemini-cli", "mcpServers", false, CTL_CLIENT_CONFIG_JSON,
	    "Gemini CLI disables every MCP server (mcpd too) in a folder it does not trust: trust the folder you run gemini in (/permissions in gemini, or ~/.gemini/trustedFolders.json), else `gemini mcp list` shows mcpd as Disabled" },
	{ "codex", "mcp_servers", false, CTL_CLIENT_CONFIG_TOML, NULL },
	{ NULL, NULL, false, CTL_CLIENT_CONFIG_JSON, NULL },
};

static const struct option ctl_client_config_options[] = {
	{ "server", required_argument, NULL, 'S' },
	{ "write", required_argument, NULL, 'w' },
	{ "migrate", required_argument, NULL, 'm' },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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
cc_entry(const struct mcpctl *m, const struct ctl_client_config_client *client,
    const json_t *servers)
{
	char *self = paths_self_exe(), *sock = cc_socket(m->socket_path);
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

int
ctl_client_config_open(const char *file, struct ctl_client_config_file *f)
{
	struct stat st;
	mode_t mask;
	int r;

	*f = (struct ctl_client_config_file){ .path = file };
	mask = umask(0);
	umask(mask);
	f->mode = 0666 & ~mask;
	/* A symbolic link (a dotfile manager's) stays one: write its target. */
	if (lstat(file, &st) == 0 && S_ISLNK(st.st_mode)) {
		if ((f->real = realpath(file, NULL)) == NULL) {
			print_err(
			    "client-config: %s is a symbolic link to nowhere: %s",
			    file, strerror(errno));
			return MCPCTL_EXIT_ERROR;
		}
		f->path = f->real;
	}
	if ((r = jsonc_read_file(f->path, &f->text, &f->len)) == -ENOENT) {
		f->is_new = true;
		return 0;
	}
	if (r < 0) {
		print_err("client-config: cannot read %s: %s", f->path,
		    strerror(-r));
		return MCPCTL_EXIT_ERROR;
	}
	if (stat(f->path, &st) == 0)
		f->mode = st.st_mode & 07777;
	f->is_blank = ctl_client_config_skip(f->text, f->len, 0) >= f->len;
	return 0;
}

void
ctl_client_config_close(struct ctl_client_config_file *f)
{
	free(f->text);
	free(f->real);
	f->text = f->real = NULL;
}

/*
 * Makes the directories a new file's path lacks (mode 0700: a client's
 * config directory, ~/.gemini say, before the client ever ran); 0 or -errno.
 */
static int
cc_make_parents(const char *path, char **cause)
{
	char *dir = strdup(path), *slash;
	int r = 0;

	if (dir == NULL)
		return -ENOMEM;
	for (slash = strchr(dir + 1, '/'); slash != NULL && r == 0;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			r = -errno;
			if (asprintf(cause,
				"cannot create the directory %s: %s", dir,
				strerror(errno)) < 0)
				*cause = NULL;
		}
		*slash = '/';
	}
	free(dir);
	return r;
}

int
ctl_client_config_commit(const struct ctl_client_config_file *f,
    const char *out, char **ret_bak)
{
	char *bak = NULL, *cause = NULL;
	int r = MCPCTL_EXIT_OK;

	*ret_bak = NULL;
	if (f->is_new && cc_make_parents(f->path, &cause) < 0) {
		print_err("client-config: %s, so %s was not written",
		    cause != NULL ? cause : "out of memory", f->path);
		free(cause);
		return MCPCTL_EXIT_ERROR;
	}
	if (!f->is_new &&
	    (asprintf(&bak, "%s.bak", f->path) < 0 ||
		fileio_write_atomic(bak, f->text, f->len, f->mode, &cause) <
		    0)) {
		print_err(
		    "client-config: cannot write the backup, so %s was left alone: %s",
		    f->path, cause != NULL ? cause : "out of memory");
		free(cause);
		free(bak);
		return MCPCTL_EXIT_ERROR;
	}
	if (cc_put(f->path, out, strlen(out), f->mode, &cause) < 0) {
		print_err("client-config: %s%s%s",
		    cause != NULL ? cause : "out of memory",
		    bak != NULL ? "; the old content is in " : "",
		    bak != NULL ? bak : "");
		r = MCPCTL_EXIT_ERROR;
	}
	free(cause);
	*ret_bak = bak;
	return r;
}

/* --write FILE: merges the entry in, with a backup and a readback. */
static int
cc_write(const struct mcpctl *m, const struct ctl_client_config_client *client,
    const json_t *entry, const char *file, bool is_dry_run)
{
	struct ctl_client_config_file f;
	char *out = NULL, *cause = NULL, *bak = NULL;
	json_t *doc = NULL, *want = NULL, *box, *none = json_array(), *report;
	const char *action, *note = NULL;
	int r;

	if ((r = ctl_client_config_open(file, &f)) != 0)
		goto out;
	if (!f.is_new && !f.is_blank) {
		if (jsonc_load(f.path, &doc, &cause) < 0) {
			print_err("client-config: %s", cause);
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
		if (!json_is_object(doc)) {
			print_err(
			    "client-config: %s does not hold a JSON object",
			    f.path);
			r = MCPCTL_EXIT_ERROR;
			goto out;
		}
	} else {
		doc = json_object();
	}
	box = json_object_get(doc, client->container);
	if (box != NULL && !json_is_object(box)) {
		print_err("client-config: \"%s\" in %s is not an object",
		    client->container, f.path);
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	action = f.is_new				     ? "created" :
	    json_equal(json_object_get(box, CC_NAME), entry) ? "unchanged" :
	    json_object_get(box, CC_NAME) != NULL	     ? "replaced" :
							       "added";
	if (strcmp(action, "unchanged") == 0 || is_dry_run)
		goto report;
	want = json_deep_copy(doc);
	if (json_object_get(want, client->container) == NULL)
		json_object_set_new(want, client->container, json_object());
	json_object_set(json_object_get(want, client->container), CC_NAME,
	    (json_t *)(uintptr_t)entry);
	if ((out = ctl_client_config_json_text(&f, client->container, entry,
		 none, want, &note)) == NULL) {
		print_err("client-config: out of memory");
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if ((r = ctl_client_config_commit(&f, out, &bak)) != 0)
		goto out;
report:
	r = MCPCTL_EXIT_OK;
	if (m->is_json) {
		report = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:b}", "file",
		    f.path, "client", client->name, "action", action, "backup",
		    bak, "note", note, "dry_run", is_dry_run);
		print_json(report);
		json_decref(report);
	} else if (strcmp(action, "unchanged") == 0) {
		printf("%s already has the %s entry for %s: nothing changed\n",
		    f.path, CC_NAME, client->name);
	} else if (is_dry_run) {
		printf("would %s %s: the %s entry for %s %s under \"%s\"\n",
		    f.is_new ? "create" : "update", f.path, CC_NAME,
		    client->name,
		    strcmp(action, "replaced") == 0 ? "replaced" : "added",
		    client->container);
		printf("dry run, nothing changed\n");
	} else {
		printf("%s %s: the %s entry for %s %s under \"%s\"\n",
		    f.is_new ? "created" : "updated", f.path, CC_NAME,
		    client->name,
		    strcmp(action, "replaced") == 0 ? "replaced" : "added",
		    client->container);
		if (bak != NULL)
			printf("the old content is in %s\n", bak);
		if (note != NULL)
			printf("note: %s\n", note);
		printf("read back: as written; restart %s to use it\n",
		    client->name);
	}
	if (!m->is_json && client->note != NULL)
		printf("note: %s\n", client->note);
out:
	ctl_client_config_close(&f);
	free(out);
	free(cause);
	free(bak);
	json_decref(doc);
	json_decref(want);
	json_decref(none);
	return r;
}

/* Prints the entry as the client's file would hold it. */
static void
cc_print(const struct mcpctl *m, const struct ctl_client_config_client *client,
    const json_t *entry)
{
	json_t *doc;
	char *text;

	if (client->format == CTL_CLIENT_CONFIG_TOML && !m->is_json) {
		ctl_client_config_toml_print(entry);
		return;
	}
	doc = json_pack("{s:{s:O}}", client->container, CC_NAME, entry);
	if (m->is_json)
		print_json(doc);
	else if ((text = ctl_client_config_render(doc, "  ", 0)) != NULL) {
		printf("%s\n", text);
		free(text);
	}
	json_decref(doc);
}

static int
ctl_client_config_exec(struct mcpctl *m, const struct mcpctl_cmd *cmd, int argc,
    char **argv)
{
	const struct ctl_client_config_client *client = NULL;
	json_t *servers = json_array(), *entry = NULL;
	const char *file = NULL, *migrate = NULL;
	bool is_dry_run = false;
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
		case 'm':
			migrate = optarg;
			break;
		case 'n':
			is_dry_run = true;
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
		 "CLIENT (" CC_CLIENTS ")")) != 0)
		goto out;
	for (size_t i = 0; cc_clients[i].name != NULL; i++)
		if (strcmp(cc_clients[i].name, argv[optind]) == 0)
			client = &cc_clients[i];
	if (client == NULL) {
		r = mcpctl_usage(cmd, "unknown client '%s': use " CC_CLIENTS,
		    argv[optind]);
		goto out;
	}
	if (file != NULL && migrate != NULL) {
		r = mcpctl_usage(cmd,
		    "--write and --migrate both name the file to change: give one");
		goto out;
	}
	if (is_dry_run && file == NULL && migrate == NULL) {
		r = mcpctl_usage(cmd,
		    "--dry-run shows what --write FILE or --migrate FILE would change: give one");
		goto out;
	}
	if (migrate != NULL && client->format == CTL_CLIENT_CONFIG_TOML) {
		r = mcpctl_usage(cmd,
		    "--migrate reads what mcpctl import brought into mcpd, and import does not read %s's config.toml: use --write",
		    client->name);
		goto out;
	}
	/* A view of a server the agent lacks would show nothing: refused. */
	if (json_array_size(servers) > 0 &&
	    (r = ctl_bridge_hello(m, servers, NULL)) != 0)
		goto out;
	if ((entry = cc_entry(m, client, servers)) == NULL) {
		print_err("client-config: cannot find mcpctl's own path: %s",
		    strerror(errno != 0 ? errno : ENOMEM));
		r = MCPCTL_EXIT_ERROR;
		goto out;
	}
	if (migrate != NULL)
		r = ctl_client_config_migrate(m, client, entry, servers,
		    migrate, is_dry_run);
	else if (file != NULL && client->format == CTL_CLIENT_CONFIG_TOML)
		r = ctl_client_config_toml_write(m, client, entry, file,
		    is_dry_run);
	else if (file != NULL)
		r = cc_write(m, client, entry, file, is_dry_run);
	else {
		cc_print(m, client, entry);
		r = MCPCTL_EXIT_OK;
	}
out:
	json_decref(servers);
	json_decref(entry);
	return r;
}

const struct mcpctl_cmd ctl_client_config_cmd = {
	.name = "client-config",
	.synopsis =
	    "claude-desktop|claude-code|cursor|vscode|gemini-cli|codex [--agent AGENT] [--server SERVER]... [--write FILE | --migrate FILE] [--dry-run]",
	.summary =
	    "print the entry that makes an MCP client use mcpd through 'mcpctl bridge', or merge it into the client's FILE",
	.help =
	    "  --agent AGENT      the bridge acts for AGENT (global option)\n"
	    "  --server SERVER    the client sees only this server (repeatable)\n"
	    "  --write FILE       merge the entry into FILE (kept: other entries and keys,\n"
	    "                     comments); FILE.bak gets the old content first\n"
	    "  --migrate FILE     as --write, and take out of FILE the entries that\n"
	    "                     mcpctl import brought into mcpd (same name, same\n"
	    "                     command, URL or image), so that the client does not\n"
	    "                     see their tools twice; the others stay, each with why\n"
	    "  --dry-run          with --write or --migrate: say what would change,\n"
	    "                     change nothing\n"
	    "  -h, --help         this text\n"
	    "\n"
	    "The entry always names the socket (-s, absolute) and the agent.\n"
	    "Files: claude-desktop claude_desktop_config.json, claude-code\n"
	    "~/.claude.json or .mcp.json, cursor ~/.cursor/mcp.json, vscode\n"
	    ".vscode/mcp.json, gemini-cli ~/.gemini/settings.json (Gemini CLI\n"
	    "disables MCP servers in a folder it does not trust), codex\n"
	    "~/.codex/config.toml (the [mcp_servers.mcpd] table).\n",
	.exec = ctl_client_config_exec,
	.options = ctl_client_config_options,
};
