/* SPDX-License-Identifier: ISC */
/* Unit tests of common/import.c: client files, inference, docker run. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>

#include "import.h"
#include "tap.h"

/*
 * JSON in this file is written with ' for " to stay readable; q() turns
 * it back. The client files are laid out as each client writes them.
 */
static char *
q(const char *s)
{
	char *copy = strdup(s);

	for (char *p = copy; *p != '\0'; p++)
		if (*p == '\'')
			*p = '"';
	return copy;
}

/* Parses text (in ' form); NULL and a failed check if it is not JSON. */
static json_t *
load(const char *text)
{
	char *json = q(text);
	json_error_t err;
	json_t *root = json_loads(json, JSON_DECODE_ANY, &err);

	TAP_CHECK(root != NULL, "test JSON: %s at line %d", err.text, err.line);
	free(json);
	return root;
}

/* The entries of a file (in ' form), one compact JSON line each. */
static char *
entries_of(const char *text)
{
	json_t *root = load(text), *entries = NULL, *e;
	char *cause = NULL, *out = NULL, *line;
	size_t len, i;
	FILE *f;
	int r;

	if (root == NULL)
		return NULL;
	r = import_parse(root, &entries, &cause);
	TAP_CHECK(r == 0, "refused (%d): %s", r, tap_str_show(cause));
	free(cause);
	f = open_memstream(&out, &len);
	json_array_foreach(entries, i, e) {
		line = json_dumps(e, JSON_COMPACT);
		fprintf(f, "%s\n", line);
		free(line);
	}
	fclose(f);
	json_decref(entries);
	json_decref(root);
	return out;
}

/* Checks the entries of a file against want (both in ' form). */
static void
check_file(const char *text, const char *want)
{
	char *got = entries_of(text);

	if (got != NULL)
		for (char *p = got; *p != '\0'; p++)
			if (*p == '"')
				*p = '\'';
	TAP_CHECK(tap_str_eq(got, want), "expected\n%s\ngot\n%s", want,
	    tap_str_show(got));
	free(got);
}

/* One entry and what it becomes (both in ' form, the entry named "x"). */
struct entry_case {
	const char *entry;
	const char *want;
};

static void
check_entries(const struct entry_case *cases, size_t n)
{
	char *file, *want;

	for (size_t i = 0; i < n; i++) {
		if (asprintf(&file, "{'mcpServers': {'x': %s}}",
			cases[i].entry) < 0 ||
		    asprintf(&want, "%s\n", cases[i].want) < 0)
			abort();
		check_file(file, want);
		free(file);
		free(want);
	}
}

#define CHECK_ENTRIES(cases) check_entries((cases), TAP_COUNT(cases))

/* An entry (in ' form) and the reason it is invalid (as it is). */
struct reason_case {
	const char *entry;
	const char *reason;
};

/* Checks that each entry is invalid for its reason. */
static void
check_reasons(const struct reason_case *cases, size_t n)
{
	json_t *root, *entries = NULL, *e;
	char *file, *cause = NULL, *got;

	for (size_t i = 0; i < n; i++) {
		if (asprintf(&file, "{'mcpServers': {'x': %s}}",
			cases[i].entry) < 0)
			abort();
		root = load(file);
		free(file);
		TAP_CHECK_INT(import_parse(root, &entries, &cause), 0);
		e = json_array_get(entries, 0);
		got = json_dumps(e, JSON_COMPACT);
		TAP_CHECK(json_array_size(entries) == 1 &&
			tap_str_eq(json_string_value(json_object_get(e,
				       "kind")),
			    "invalid") &&
			tap_str_eq(json_string_value(json_object_get(e,
				       "reason")),
			    cases[i].reason) &&
			json_object_size(e) == 3,
		    "%s: expected invalid \"%s\", got %s", cases[i].entry,
		    cases[i].reason, tap_str_show(got));
		free(got);
		json_decref(entries);
		json_decref(root);
		free(cause);
		entries = NULL;
		cause = NULL;
	}
}

#define CHECK_REASONS(cases) check_reasons((cases), TAP_COUNT(cases))

static void
test_claude_desktop(void)
{
	/* claude_desktop_config.json */
	check_file(
	    "{\n"
	    "  'mcpServers': {\n"
	    "    'filesystem': {\n"
	    "      'command': 'npx',\n"
	    "      'args': [\n"
	    "        '-y',\n"
	    "        '@modelcontextprotocol/server-filesystem',\n"
	    "        '/Users/username/Desktop',\n"
	    "        '/Users/username/Downloads'\n"
	    "      ]\n"
	    "    },\n"
	    "    'brave-search': {\n"
	    "      'command': 'npx',\n"
	    "      'args': ['-y', '@modelcontextprotocol/server-brave-search'],\n"
	    "      'env': {\n"
	    "        'BRAVE_API_KEY': 'YOUR_API_KEY_HERE'\n"
	    "      }\n"
	    "    },\n"
	    "    'github': {\n"
	    "      'command': 'docker',\n"
	    "      'args': [\n"
	    "        'run',\n"
	    "        '-i',\n"
	    "        '--rm',\n"
	    "        '-e',\n"
	    "        'GITHUB_PERSONAL_ACCESS_TOKEN',\n"
	    "        'ghcr.io/github/github-mcp-server'\n"
	    "      ],\n"
	    "      'env': {\n"
	    "        'GITHUB_PERSONAL_ACCESS_TOKEN': '<YOUR_TOKEN>'\n"
	    "      }\n"
	    "    }\n"
	    "  },\n"
	    "  'globalShortcut': ''\n"
	    "}\n",
	    "{'name':'filesystem','kind':'process','transport':'stdio',"
	    "'command':['npx','-y','@modelcontextprotocol/server-filesystem',"
	    "'/Users/username/Desktop','/Users/username/Downloads'],"
	    "'env':{}}\n"
	    "{'name':'brave-search','kind':'process','transport':'stdio',"
	    "'command':['npx','-y','@modelcontextprotocol/server-brave-search'],"
	    "'env':{'BRAVE_API_KEY':'YOUR_API_KEY_HERE'}}\n"
	    "{'name':'github','kind':'container','transport':'stdio',"
	    "'image':'ghcr.io/github/github-mcp-server:latest','args':[],"
	    "'env':{'GITHUB_PERSONAL_ACCESS_TOKEN':'<YOUR_TOKEN>'},"
	    "'volumes':[]}\n");
}

static void
test_cursor(void)
{
	/* ~/.cursor/mcp.json and .cursor/mcp.json */
	check_file("{\n"
		   "  'mcpServers': {\n"
		   "    'server-name': {\n"
		   "      'command': 'npx',\n"
		   "      'args': ['-y', 'mcp-server'],\n"
		   "      'env': {\n"
		   "        'API_KEY': 'value'\n"
		   "      }\n"
		   "    },\n"
		   "    'python-tool': {\n"
		   "      'command': 'python',\n"
		   "      'args': ['server.py'],\n"
		   "      'cwd': '/home/me/tool',\n"
		   "      'env': { 'ZETA': '1', 'ALPHA': '$(secret.ALPHA)' }\n"
		   "    },\n"
		   "    'remote-server': {\n"
		   "      'url': 'https://api.example.com/mcp',\n"
		   "      'headers': {\n"
		   "        'Authorization': 'Bearer $(secret.API_TOKEN)'\n"
		   "      }\n"
		   "    },\n"
		   "    'legacy-sse': {\n"
		   "      'url': 'http://localhost:3000/sse'\n"
		   "    }\n"
		   "  }\n"
		   "}\n",
	    "{'name':'server-name','kind':'process','transport':'stdio',"
	    "'command':['npx','-y','mcp-server'],'env':{'API_KEY':'value'}}\n"
	    "{'name':'python-tool','kind':'process','transport':'stdio',"
	    "'command':['python','server.py'],"
	    "'env':{'ZETA':'1','ALPHA':'$(secret.ALPHA)'},"
	    "'cwd':'/home/me/tool','secrets':['ALPHA']}\n"
	    "{'name':'remote-server','kind':'remote','transport':'http',"
	    "'url':'https://api.example.com/mcp',"
	    "'headers':{'Authorization':'Bearer $(secret.API_TOKEN)'},"
	    "'secrets':['API_TOKEN']}\n"
	    "{'name':'legacy-sse','kind':'remote','transport':'sse',"
	    "'url':'http://localhost:3000/sse','headers':{}}\n");
}

static void
test_vscode_mcp_json(void)
{
	/* .vscode/mcp.json, with the "inputs" VS Code prompts for */
	check_file("{\n"
		   "  'inputs': [\n"
		   "    {\n"
		   "      'type': 'promptString',\n"
		   "      'id': 'perplexity-key',\n"
		   "      'description': 'Perplexity API Key',\n"
		   "      'password': true\n"
		   "    }\n"
		   "  ],\n"
		   "  'servers': {\n"
		   "    'Perplexity': {\n"
		   "      'type': 'stdio',\n"
		   "      'command': 'npx',\n"
		   "      'args': ['-y', 'server-perplexity-ask'],\n"
		   "      'env': {\n"
		   "        'PERPLEXITY_API_KEY': '${input:perplexity-key}'\n"
		   "      }\n"
		   "    },\n"
		   "    'fetch': {\n"
		   "      'command': 'uvx',\n"
		   "      'args': ['mcp-server-fetch']\n"
		   "    },\n"
		   "    'github': {\n"
		   "      'type': 'http',\n"
		   "      'url': 'https://api.githubcopilot.com/mcp/'\n"
		   "    },\n"
		   "    'old-remote': {\n"
		   "      'type': 'sse',\n"
		   "      'url': 'https://example.com/mcp/sse',\n"
		   "      'headers': { 'X-Api-Key': '$(secret.KEY)' }\n"
		   "    }\n"
		   "  }\n"
		   "}\n",
	    "{'name':'Perplexity','kind':'process','transport':'stdio',"
	    "'command':['npx','-y','server-perplexity-ask'],"
	    "'env':{'PERPLEXITY_API_KEY':'$(secret.perplexity_key)'},"
	    "'secrets':['perplexity_key']}\n"
	    "{'name':'fetch','kind':'process','transport':'stdio',"
	    "'command':['uvx','mcp-server-fetch'],'env':{}}\n"
	    "{'name':'github','kind':'remote','transport':'http',"
	    "'url':'https://api.githubcopilot.com/mcp/','headers':{}}\n"
	    "{'name':'old-remote','kind':'remote','transport':'sse',"
	    "'url':'https://example.com/mcp/sse',"
	    "'headers':{'X-Api-Key':'$(secret.KEY)'},'secrets':['KEY']}\n");
}

static void
test_vscode_settings(void)
{
	/* VS Code settings.json, servers under "mcp" */
	check_file(
	    "{\n"
	    "  'editor.fontSize': 14,\n"
	    "  'mcp': {\n"
	    "    'inputs': [],\n"
	    "    'servers': {\n"
	    "      'memory': {\n"
	    "        'command': 'npx',\n"
	    "        'args': ['-y', '@modelcontextprotocol/server-memory']\n"
	    "      },\n"
	    "      'docs': {\n"
	    "        'type': 'streamableHttp',\n"
	    "        'url': 'https://docs.example.com/api'\n"
	    "      }\n"
	    "    }\n"
	    "  },\n"
	    "  'chat.mcp.enabled': true\n"
	    "}\n",
	    "{'name':'memory','kind':'process','transport':'stdio',"
	    "'command':['npx','-y','@modelcontextprotocol/server-memory'],"
	    "'env':{}}\n"
	    "{'name':'docs','kind':'remote','transport':'http',"
	    "'url':'https://docs.example.com/api','headers':{}}\n");
}

static void
test_file_order_and_mixed(void)
{
	/* Entries keep file order; a bad entry does not spoil the others. */
	check_file("{'mcpServers': {"
		   "'zeta': {'command': 'z'},"
		   "'broken': {'command': 'b', 'args': 'not-a-list'},"
		   "'alpha': {'url': 'https://a.example/mcp'},"
		   "'off': {'command': 'o', 'disabled': true},"
		   "'mid': {'command': 'm'}}}",
	    "{'name':'zeta','kind':'process','transport':'stdio',"
	    "'command':['z'],'env':{}}\n"
	    "{'name':'broken','kind':'invalid','reason':"
	    "'\\'args\\' is a string, not an array of strings'}\n"
	    "{'name':'alpha','kind':'remote','transport':'http',"
	    "'url':'https://a.example/mcp','headers':{}}\n"
	    "{'name':'off','kind':'skipped','reason':'disabled in the file'}\n"
	    "{'name':'mid','kind':'process','transport':'stdio',"
	    "'command':['m'],'env':{}}\n");
	check_file("{'mcpServers': {}}", "");
}

static void
test_inference(void)
{
	static const struct entry_case cases[] = {
		{ "{'command': 'srv'}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv'],'env':{}}" },
		{ "{'url': 'https://h.example/mcp'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/mcp','headers':{}}" },
		{ "{'url': 'https://h.example/v1/mcp/stream?k=1'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/v1/mcp/stream?k=1','headers':{}}" },
		{ "{'url': 'https://h.example/sse'}",
		    "{'name':'x','kind':'remote','transport':'sse',"
		    "'url':'https://h.example/sse','headers':{}}" },
		{ "{'url': 'https://h.example'}",
		    "{'name':'x','kind':'remote','transport':'sse',"
		    "'url':'https://h.example','headers':{}}" },
		/* Only the path counts, not the host or the query. */
		{ "{'url': 'https://mcp.example/events?path=/mcp'}",
		    "{'name':'x','kind':'remote','transport':'sse',"
		    "'url':'https://mcp.example/events?path=/mcp',"
		    "'headers':{}}" },
		/* Windsurf's "serverUrl", and "endpoint". */
		{ "{'serverUrl': 'https://h.example/mcp'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/mcp','headers':{}}" },
		{ "{'endpoint': 'http://127.0.0.1:8080/sse'}",
		    "{'name':'x','kind':'remote','transport':'sse',"
		    "'url':'http://127.0.0.1:8080/sse','headers':{}}" },
		/* Fields of the other kind that say nothing are fine. */
		{ "{'url': 'https://h.example/mcp', 'args': [], 'env': {}}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/mcp','headers':{}}" },
		{ "{'command': 'srv', 'headers': {}}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv'],'env':{}}" },
		/* Members import does not know are ignored. */
		{ "{'command': 'srv', 'autoApprove': ['t'], 'timeout': 60}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv'],'env':{}}" },
	};

	CHECK_ENTRIES(cases);
}

static void
test_explicit_transport(void)
{
	static const struct entry_case cases[] = {
		{ "{'type': 'sse', 'url': 'https://h.example/mcp'}",
		    "{'name':'x','kind':'remote','transport':'sse',"
		    "'url':'https://h.example/mcp','headers':{}}" },
		{ "{'transport': 'http', 'url': 'https://h.example/sse'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/sse','headers':{}}" },
		{ "{'type': 'streamable-http', 'url': 'https://h.example/'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/','headers':{}}" },
		{ "{'transport': 'streamableHttp', 'serverUrl': "
		  "'https://h.example/x'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/x','headers':{}}" },
		{ "{'type': 'stdio', 'command': 'srv', 'args': ['a']}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv','a'],'env':{}}" },
		/* The same value under two aliases is one value. */
		{ "{'url': 'https://h.example/mcp', 'serverUrl': "
		  "'https://h.example/mcp'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/mcp','headers':{}}" },
	};
	static const struct reason_case refused[] = {
		{ "{'type': 'ws', 'url': 'https://h.example/'}",
		    "\"type\" is \"ws\", not one of stdio, http, "
		    "streamable-http, streamableHttp, sse" },
		{ "{'type': 'HTTP', 'url': 'https://h.example/'}",
		    "\"type\" is \"HTTP\", not one of stdio, http, "
		    "streamable-http, streamableHttp, sse" },
		{ "{'type': 'http', 'transport': 'sse', 'url': "
		  "'https://h.example/'}",
		    "both \"type\" and \"transport\" are given" },
		{ "{'type': 'stdio', 'url': 'https://h.example/mcp'}",
		    "\"type\" is \"stdio\", but there is no \"command\"" },
		{ "{'transport': 'http', 'command': 'srv'}",
		    "\"transport\" is \"http\", but there is no \"url\", "
		    "\"serverUrl\" or \"endpoint\"" },
		{ "{'type': 'sse'}",
		    "\"type\" is \"sse\", but there is no \"url\", "
		    "\"serverUrl\" or \"endpoint\"" },
		{ "{}",
		    "there is no \"command\" and no \"url\", \"serverUrl\" or "
		    "\"endpoint\"" },
		{ "{'args': ['a'], 'env': {'A': 'b'}}",
		    "there is no \"command\" and no \"url\", \"serverUrl\" or "
		    "\"endpoint\"" },
		{ "{'command': 'srv', 'url': 'https://h.example/mcp'}",
		    "both \"command\" and \"url\" are given; an entry is one or "
		    "the other" },
		{ "{'type': 'stdio', 'command': 'srv', 'endpoint': "
		  "'https://h.example/mcp'}",
		    "both \"command\" and \"endpoint\" are given; an entry is "
		    "one or the other" },
		{ "{'url': 'https://a.example/', 'serverUrl': "
		  "'https://b.example/'}",
		    "both \"url\" and \"serverUrl\" are given" },
		{ "{'command': 'srv', 'headers': {'A': 'b'}}",
		    "\"headers\" is given, but the entry is a command" },
		{ "{'url': 'https://h.example/mcp', 'args': ['a']}",
		    "\"args\" is given, but the entry is a URL" },
		{ "{'url': 'https://h.example/mcp', 'env': {'A': 'b'}}",
		    "\"env\" is given, but the entry is a URL" },
		{ "{'url': 'https://h.example/mcp', 'cwd': '/'}",
		    "\"cwd\" is given, but the entry is a URL" },
		{ "{'url': 'ws://h.example/mcp'}",
		    "\"url\": URL scheme \"ws\" is not http or https" },
		{ "{'serverUrl': 'localhost:3000/mcp'}",
		    "\"serverUrl\": URL scheme \"localhost\" is not http or "
		    "https" },
		{ "{'url': ''}",
		    "\"url\": URL has no scheme (it should start with "
		    "https://)" },
		{ "{'url': 'https://h.example/{tenant}/mcp'}",
		    "\"url\": URL path contains \"{\", which must be "
		    "percent-encoded" },
	};

	CHECK_ENTRIES(cases);
	CHECK_REASONS(refused);
}

static void
test_disabled(void)
{
	static const struct entry_case cases[] = {
		{ "{'command': 'srv', 'disabled': false}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv'],'env':{}}" },
		{ "{'command': 'srv', 'disabled': true}",
		    "{'name':'x','kind':'skipped','reason':"
		    "'disabled in the file'}" },
		/* A disabled entry is not read further. */
		{ "{'disabled': true, 'args': 42}",
		    "{'name':'x','kind':'skipped','reason':"
		    "'disabled in the file'}" },
		/* mcpd's own entry: mcpd is not a server of itself. */
		{ "{'command': '/usr/bin/mcpctl', 'args': ['-s', '/run/m.sock',"
		  " 'bridge', '--agent', 'default']}",
		    "{'name':'x','kind':'skipped','reason':'mcpd's own entry "
		    "(mcpctl bridge, as mcpctl client-config writes it)'}" },
		{ "{'command': 'mcpctl', 'args': ['bridge']}",
		    "{'name':'x','kind':'skipped','reason':'mcpd's own entry "
		    "(mcpctl bridge, as mcpctl client-config writes it)'}" },
		/* Another program with a bridge argument is a server. */
		{ "{'command': 'mcpctl-like', 'args': ['bridge']}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['mcpctl-like','bridge'],'env':{}}" },
	};
	static const struct reason_case refused[] = {
		{ "{'command': 'srv', 'disabled': 'yes'}",
		    "\"disabled\" is a string, not true or false" },
		{ "{'command': 'srv', 'disabled': 1}",
		    "\"disabled\" is a number, not true or false" },
	};

	CHECK_ENTRIES(cases);
	CHECK_REASONS(refused);
}

static void
test_wrong_types(void)
{
	static const struct reason_case refused[] = {
		{ "'npx server'", "the entry is a string, not an object" },
		{ "null", "the entry is null, not an object" },
		{ "['npx']", "the entry is an array, not an object" },
		{ "{'command': ['npx', '-y']}",
		    "\"command\" is an array, not a string" },
		{ "{'command': 7}", "\"command\" is a number, not a string" },
		{ "{'command': ''}", "\"command\" is empty" },
		{ "{'command': 'npx', 'args': '-y server'}",
		    "\"args\" is a string, not an array of strings" },
		{ "{'command': 'npx', 'args': {'a': 'b'}}",
		    "\"args\" is an object, not an array of strings" },
		{ "{'command': 'srv', 'args': ['--port', 8080]}",
		    "\"args\"[1] is a number, not a string" },
		{ "{'command': 'srv', 'args': [null]}",
		    "\"args\"[0] is null, not a string" },
		{ "{'command': 'srv', 'env': ['A=b']}",
		    "\"env\" is an array, not an object of strings" },
		{ "{'command': 'srv', 'env': {'TOKEN': 'hunter2', 'PORT': "
		  "8080}}",
		    "\"env\".\"PORT\" is a number, not a string" },
		{ "{'command': 'srv', 'env': {'DEBUG': true}}",
		    "\"env\".\"DEBUG\" is a boolean, not a string" },
		{ "{'command': 'srv', 'env': {'A': null}}",
		    "\"env\".\"A\" is null, not a string" },
		{ "{'command': 'srv', 'env': {'': 'v'}}",
		    "\"env\" has an empty name" },
		{ "{'command': 'srv', 'env': {'A=B': 'v'}}",
		    "\"env\" name \"A=B\" holds \"=\"" },
		{ "{'command': 'srv', 'cwd': true}",
		    "\"cwd\" is a boolean, not a string" },
		{ "{'url': {'href': 'https://h.example/'}}",
		    "\"url\" is an object, not a string" },
		{ "{'serverUrl': 5}",
		    "\"serverUrl\" is a number, not a string" },
		{ "{'url': 'https://h.example/mcp', 'headers': 'A: b'}",
		    "\"headers\" is a string, not an object of strings" },
		{ "{'url': 'https://h.example/mcp', 'headers': {'X-N': 1}}",
		    "\"headers\".\"X-N\" is a number, not a string" },
		{ "{'type': 1, 'command': 'srv'}",
		    "\"type\" is a number, not a string" },
		{ "{'transport': null, 'command': 'srv'}",
		    "\"transport\" is null, not a string" },
	};

	CHECK_REASONS(refused);
}

static void
test_docker_run(void)
{
	static const struct entry_case cases[] = {
		/* -e NAME takes the value from "env"; the rest of "env" goes. */
		{ "{'command': 'docker', 'args': ['run', '-i', '--rm', '-e', "
		  "'TOKEN', 'mcp/github'], 'env': {'DOCKER_HOST': "
		  "'unix:///x.sock', 'TOKEN': 'hunter2'}}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'mcp/github:latest','args':[],"
		    "'env':{'TOKEN':'hunter2'},'volumes':[]}" },
		/* Every spelling of -e; values leave the argv. */
		{ "{'command': 'docker', 'args': ['run', '-e', 'A=1', "
		  "'--env', 'B', '--env=C=3', '-eD=4', '-e=E', '-e', 'F=', "
		  "'img'], 'env': {'B': '$(secret.B)', 'E': 'e'}}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],"
		    "'env':{'A':'1','B':'$(secret.B)','C':'3','D':'4','E':'e',"
		    "'F':''},'volumes':[],'secrets':['B']}" },
		/* Flags absorbed; after the image everything is the server's. */
		{ "{'command': 'docker', 'args': ['run', '-it', '-t', "
		  "'--interactive', '--tty', '-ti', 'img:1.2', '--rm', '-e', "
		  "'X=1', '--port', '3000']}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:1.2','args':['--rm','-e','X=1','--port',"
		    "'3000'],'env':{},'volumes':[]}" },
		/* Volumes and the network pass through. */
		{ "{'command': 'docker', 'args': ['run', '-i', '--rm', '-v', "
		  "'/home/me/data:/data', '--volume', 'cache:/cache:ro', "
		  "'--volume=/tmp:/tmp', '-v/a:/b', '--network', 'host', "
		  "'mcp/filesystem', '/data']}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'mcp/filesystem:latest','args':['/data'],'env':{},"
		    "'volumes':['/home/me/data:/data','cache:/cache:ro',"
		    "'/tmp:/tmp','/a:/b'],'network':'host'}" },
		{ "{'command': 'docker', 'args': ['run', '--network=none', "
		  "'img'], 'cwd': '/srv'}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],'env':{},'volumes':[],"
		    "'network':'none','cwd':'/srv'}" },
		/* A docker by path, and podman. */
		{ "{'command': '/usr/local/bin/docker', 'args': ['run', "
		  "'img']}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],'env':{},'volumes':[]}" },
		{ "{'command': 'podman', 'args': ['run', '-i', 'img']}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],'env':{},'volumes':[],"
		    "'runtime':'podman'}" },
		{ "{'command': '/usr/bin/podman', 'args': ['run', 'img']}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],'env':{},'volumes':[],"
		    "'runtime':'podman'}" },
		/* Other docker commands, and other programs, are processes. */
		{ "{'command': 'docker', 'args': ['exec', '-i', 'c', 'srv']}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['docker','exec','-i','c','srv'],'env':{}}" },
		{ "{'command': 'docker'}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['docker'],'env':{}}" },
		{ "{'command': 'my-docker', 'args': ['run', 'img']}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['my-docker','run','img'],'env':{}}" },
		{ "{'command': 'npx', 'args': ['run', 'img']}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['npx','run','img'],'env':{}}" },
	};

	CHECK_ENTRIES(cases);
}

/* A docker run entry with args (in ' form) and its image. */
static void
check_image(const char *image, const char *want)
{
	char *entry, *line;
	struct entry_case c;

	if (asprintf(&entry,
		"{'command': 'docker', 'args': ['run', '-i', '%s']}",
		image) < 0 ||
	    asprintf(&line,
		"{'name':'x','kind':'container','transport':'stdio',"
		"'image':'%s','args':[],'env':{},'volumes':[]}",
		want) < 0)
		abort();
	c.entry = entry;
	c.want = line;
	check_entries(&c, 1);
	free(entry);
	free(line);
}

static void
test_docker_image_latest(void)
{
	check_image("img", "img:latest");
	check_image("img:latest", "img:latest");
	check_image("img:2", "img:2");
	check_image("mcp/fetch", "mcp/fetch:latest");
	check_image("ghcr.io/github/github-mcp-server",
	    "ghcr.io/github/github-mcp-server:latest");
	check_image("ghcr.io/github/github-mcp-server:v0.5.0",
	    "ghcr.io/github/github-mcp-server:v0.5.0");
	/* A registry port is not a tag. */
	check_image("localhost:5000/img", "localhost:5000/img:latest");
	check_image("localhost:5000/team/img",
	    "localhost:5000/team/img:latest");
	check_image("localhost:5000/img:v2", "localhost:5000/img:v2");
	/* A digest names the image exactly. */
	check_image(
	    "img@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "img@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	check_image(
	    "localhost:5000/img:v2@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	    "localhost:5000/img:v2@sha256:"
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
}

/* An image Docker would refuse makes the entry invalid, saying why. */
static void
test_docker_image_refused(void)
{
	json_t *root = json_loads("{\"mcpServers\": {\"x\": {\"command\": "
				  "\"docker\", \"args\": [\"run\", \"-i\", "
				  "\"Bad/Upper\"]}}}",
		   0, NULL),
	       *entries = NULL, *e;
	char *cause = NULL;

	TAP_CHECK_INT(import_parse(root, &entries, &cause), 0);
	e = json_array_get(entries, 0);
	TAP_CHECK(tap_str_eq(json_string_value(json_object_get(e, "kind")),
		      "invalid"),
	    "kind is invalid");
	TAP_CHECK(strstr(json_string_value(json_object_get(e, "reason")),
		      "not an image reference") != NULL,
	    "reason: %s", json_string_value(json_object_get(e, "reason")));
	json_decref(entries);
	json_decref(root);
}

static void
test_docker_refusals(void)
{
	static const struct reason_case refused[] = {
		{ "{'command': 'docker', 'args': ['run', '-i', '--privileged', "
		  "'img']}",
		    "docker run flag --privileged is not supported; supported: "
		    "-i -t --rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '-p', '8080:80', "
		  "'img']}",
		    "docker run flag -p is not supported; supported: -i -t "
		    "--rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '-d', 'img']}",
		    "docker run flag -d is not supported; supported: -i -t "
		    "--rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '-itd', 'img']}",
		    "docker run flag -itd is not supported; supported: -i -t "
		    "--rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '--env-file', "
		  "'.env', 'img']}",
		    "docker run flag --env-file is not supported; supported: "
		    "-i -t --rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '--net', 'host', "
		  "'img']}",
		    "docker run flag --net is not supported; supported: -i -t "
		    "--rm -e/--env -v/--volume --network" },
		/* A refused flag's value is not repeated. */
		{ "{'command': 'docker', 'args': ['run', "
		  "'--label=token=hunter2', 'img']}",
		    "docker run flag --label is not supported; supported: -i "
		    "-t --rm -e/--env -v/--volume --network" },
		{ "{'command': 'docker', 'args': ['run', '--rm=true', 'img']}",
		    "docker run flag --rm takes no value" },
		{ "{'command': 'docker', 'args': ['run', '-i', '-e']}",
		    "docker run flag -e needs a value" },
		{ "{'command': 'docker', 'args': ['run', '--network']}",
		    "docker run flag --network needs a value" },
		{ "{'command': 'docker', 'args': ['run', '--network', 'a', "
		  "'--network=b', 'img']}",
		    "docker run --network is given twice" },
		{ "{'command': 'docker', 'args': ['run', '-e', 'TOKEN', "
		  "'img'], 'env': {'OTHER': 'x'}}",
		    "docker run -e TOKEN: \"env\" gives no value for TOKEN" },
		{ "{'command': 'docker', 'args': ['run', '-e', 'TOKEN', "
		  "'img']}",
		    "docker run -e TOKEN: \"env\" gives no value for TOKEN" },
		{ "{'command': 'docker', 'args': ['run', '-e', '=v', 'img']}",
		    "docker run -e names no variable" },
		{ "{'command': 'docker', 'args': ['run', '-i', '--rm']}",
		    "docker run names no image" },
		{ "{'command': 'docker', 'args': ['run']}",
		    "docker run names no image" },
		{ "{'command': 'docker', 'args': ['run', '-i', '']}",
		    "docker run image is empty" },
		{ "{'command': 'docker', 'args': ['run', 'img'], 'headers': "
		  "{'A': 'b'}}",
		    "\"headers\" is given, but the entry is a command" },
	};

	CHECK_REASONS(refused);
}

static void
test_docker_no_values_leak(void)
{
	/* An entry refused after -e NAME=VALUE: the value is in no field. */
	json_t *root = load("{'mcpServers': {'x': {'command': 'docker', "
			    "'args': ['run', '-e', 'TOKEN=hunter2', '-e', "
			    "'KEY', '--cap-add=ALL', 'img'], "
			    "'env': {'KEY': 's3cr3t'}}}}");
	json_t *entries = NULL;
	char *cause = NULL, *dump;

	TAP_REQUIRE(root != NULL, "test JSON");
	TAP_CHECK_INT(import_parse(root, &entries, &cause), 0);
	dump = json_dumps(entries, JSON_COMPACT);
	TAP_CHECK(strstr(dump, "hunter2") == NULL &&
		strstr(dump, "s3cr3t") == NULL,
	    "a value leaked: %s", dump);
	TAP_CHECK(strstr(dump, "--cap-add is not supported") != NULL,
	    "refused for the flag: %s", dump);
	free(dump);
	json_decref(entries);
	json_decref(root);
}

/* The entry import makes of entry (stolen), named "x"; a new reference. */
static json_t *
import_one(json_t *entry)
{
	json_t *root = json_pack("{s:{s:o}}", "mcpServers", "x", entry);
	json_t *entries = NULL, *e;
	char *cause = NULL;

	TAP_CHECK_INT(import_parse(root, &entries, &cause), 0);
	free(cause);
	e = json_incref(json_array_get(entries, 0));
	json_decref(entries);
	json_decref(root);
	return e;
}

/* Checks that entry (stolen) becomes want (stolen). */
static void
check_json(const char *value, json_t *entry, json_t *want)
{
	json_t *got = import_one(entry);
	char *g = json_dumps(got, JSON_COMPACT);
	char *w = json_dumps(want, JSON_COMPACT);

	TAP_CHECK(json_equal(got, want), "%s:\nexpected %s\ngot      %s", value,
	    tap_str_show(w), tap_str_show(g));
	free(g);
	free(w);
	json_decref(got);
	json_decref(want);
}

/* A value, what it becomes, and the secrets it needs (in ' form). */
struct vars_case {
	const char *value;
	const char *want;
	const char *secrets;
};

/* Adds "secrets" (in ' form) to want unless they are "[]". */
static json_t *
with_secrets(json_t *want, const char *secrets)
{
	if (strcmp(secrets, "[]") != 0)
		json_object_set_new(want, "secrets", load(secrets));
	return want;
}

/* Each value in every field of a process, a remote and a container. */
static void
check_vars(const struct vars_case *c)
{
	const char *v = c->value, *w = c->want;
	char *ev, *ew;

	check_json(v,
	    json_pack("{s:s, s:[s], s:{s:s}}", "command", v, "args", v, "env",
		"E", v),
	    with_secrets(json_pack("{s:s, s:s, s:s, s:[s,s], s:{s:s}}", "name",
			     "x", "kind", "process", "transport", "stdio",
			     "command", w, w, "env", "E", w),
		c->secrets));
	check_json(v,
	    json_pack("{s:s, s:{s:s}}", "url", "https://h.example/mcp",
		"headers", "H", v),
	    with_secrets(json_pack("{s:s, s:s, s:s, s:s, s:{s:s}}", "name", "x",
			     "kind", "remote", "transport", "http", "url",
			     "https://h.example/mcp", "headers", "H", w),
		c->secrets));
	/* In a docker run: -e A=V, -e B with B from "env", -v V, an arg. */
	if (asprintf(&ev, "A=%s", v) < 0 || asprintf(&ew, "A=%s", w) < 0)
		abort();
	check_json(v,
	    json_pack("{s:s, s:[s,s,s,s,s,s,s,s,s], s:{s:s}}", "command",
		"docker", "args", "run", "-e", ev, "-e", "B", "-v", v, "img", v,
		"env", "B", v),
	    with_secrets(json_pack("{s:s, s:s, s:s, s:s, s:[s], s:{s:s,s:s}, "
				   "s:[s]}",
			     "name", "x", "kind", "container", "transport",
			     "stdio", "image", "img:latest", "args", w, "env",
			     "A", w, "B", w, "volumes", w),
		c->secrets));
	free(ev);
	free(ew);
}

static void
test_vars_translated(void)
{
	static const struct vars_case cases[] = {
		/* ${env:NAME} is read here, as VS Code reads its own. */
		{ "${env:GITHUB_TOKEN}", "ghp-1", "[]" },
		{ "${env:a.b_C9}", "v9", "[]" },
		{ "${env:MY-VAR}", "dash", "[]" },
		{ "${env:HOME}", "/home/test-user", "[]" },
		{ "x${env:EMPTY}y", "xy", "[]" },
		/* A value is not read again for variables. */
		{ "${env:NESTED}", "${env:A}$(secret.s)", "['s']" },
		{ "${pathSeparator}${/}", "//", "[]" },
		{ "${userHome}/.config", "/home/test-user/.config", "[]" },
		{ "${input:github-token}", "$(secret.github_token)",
		    "['github_token']" },
		{ "${input:api.key_2}", "$(secret.api.key_2)",
		    "['api.key_2']" },
		/* One '_' for each character, a two-byte one too. */
		{ "${input:cl\xc3\xa9 x/y}", "$(secret.cl__x_y)",
		    "['cl__x_y']" },
		{ "Bearer ${input:tok} for ${env:USER}",
		    "Bearer $(secret.tok) for alice", "['tok']" },
		{ "${input:a}${input:b}:${input:a}",
		    "$(secret.a)$(secret.b):$(secret.a)", "['a','b']" },
		/* mcpd's own references and any other "$" text stay. */
		{ "$(env.X) $(secret.s) $HOME $5 $(weird) {env:A} $",
		    "$(env.X) $(secret.s) $HOME $5 $(weird) {env:A} $",
		    "['s']" },
		{ "$${env:A}", "$a", "[]" },
		/* A "${" without a "}" is text. */
		{ "x${env:A", "x${env:A", "[]" },
		{ "${env:A}-${", "a-${", "[]" },
		{ "${", "${", "[]" },
	};

	setenv("HOME", "/home/test-user", 1);
	setenv("GITHUB_TOKEN", "ghp-1", 1);
	setenv("a.b_C9", "v9", 1);
	setenv("MY-VAR", "dash", 1);
	setenv("EMPTY", "", 1);
	setenv("NESTED", "${env:A}$(secret.s)", 1);
	setenv("USER", "alice", 1);
	setenv("A", "a", 1);
	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		check_vars(&cases[i]);
}

/* A value in "command", then in "headers", is invalid for its reason. */
static void
check_vars_reason(const char *value, const char *why)
{
	char *entry[2], *reason[2];
	struct reason_case c[2];

	if (asprintf(&entry[0], "{'command': '%s'}", value) < 0 ||
	    asprintf(&reason[0], "\"command\" %s", why) < 0 ||
	    asprintf(&entry[1],
		"{'url': 'https://h.example/mcp', 'headers': {'A': '1', "
		"'B': '%s'}}",
		value) < 0 ||
	    asprintf(&reason[1], "\"headers\" %s", why) < 0)
		abort();
	for (size_t i = 0; i < 2; i++) {
		c[i].entry = entry[i];
		c[i].reason = reason[i];
	}
	check_reasons(c, 2);
	for (size_t i = 0; i < 2; i++) {
		free(entry[i]);
		free(reason[i]);
	}
}

/* A working directory is a path: made here, never mcpd's reference. */
static void
test_vars_cwd(void)
{
	static const char why[] = "\"cwd\" uses a variable, but mcpd takes a "
				  "working directory as a path only; edit "
				  "the entry";
	const struct reason_case cases[] = {
		{ "{'command': 'srv', 'cwd': '/p/${input:dir}'}", why },
		{ "{'command': 'srv', 'cwd': '$(env.X)/p'}", why },
	};

	check_reasons(cases, TAP_COUNT(cases));
	setenv("PROJECT", "/srv/project", 1);
	check_json("${env:PROJECT} in cwd",
	    json_pack("{s:s, s:s}", "command", "srv", "cwd", "${env:PROJECT}"),
	    json_pack("{s:s, s:s, s:s, s:[s], s:{}, s:s}", "name", "x", "kind",
		"process", "transport", "stdio", "command", "srv", "env", "cwd",
		"/srv/project"));
	setenv("HOME", "/home/test-user", 1);
	check_json("${userHome} in cwd",
	    json_pack("{s:s, s:s}", "command", "srv", "cwd", "${userHome}/p"),
	    json_pack("{s:s, s:s, s:s, s:[s], s:{}, s:s}", "name", "x", "kind",
		"process", "transport", "stdio", "command", "srv", "env", "cwd",
		"/home/test-user/p"));
}

/*
 * The secret an ${input:ID} becomes is a name mcpctl secret set takes: up
 * to 128 characters, counted after each character it may not hold became
 * one '_' (names_secret_valid); one more and the entry is invalid.
 */
static void
test_vars_input_length(void)
{
	static const char why[] = "uses a ${...} variable, whose secret name "
				  "would be too long: a secret name is 1 to "
				  "128 letters, digits, '_' or '.'";
	char *value, *want, *secrets;
	struct vars_case c;

	for (size_t n = 127; n <= 128; n++) {
		/* n characters, then one of two bytes that becomes '_'. */
		if (asprintf(&value, "${input:%0*d\xc3\xa9}", (int)n, 0) < 0 ||
		    asprintf(&want, "$(secret.%0*d_)", (int)n, 0) < 0 ||
		    asprintf(&secrets, "['%0*d_']", (int)n, 0) < 0)
			abort();
		if (n == 127) {
			c.value = value;
			c.want = want;
			c.secrets = secrets;
			check_vars(&c);
		} else
			check_vars_reason(value, why);
		free(value);
		free(want);
		free(secrets);
	}
	if (asprintf(&value, "${input:%0129d}", 0) < 0)
		abort();
	check_vars_reason(value, why);
	free(value);
}

static void
test_vars_refused(void)
{
	static const struct {
		const char *value;
		const char *why;
	} cases[] = {
		/* Known only for a file in a workspace's .vscode folder. */
		{ "${workspaceFolder}/src",
		    "uses ${workspaceFolder}, which is known only for a file "
		    "in a workspace's .vscode folder; edit the entry" },
		{ "${workspaceFolderBasename}",
		    "uses ${workspaceFolderBasename}, which is known only for "
		    "a file in a workspace's .vscode folder; edit the entry" },
		{ "${input}",
		    "uses ${input}, which only the editor knows; edit the "
		    "entry" },
		{ "${}",
		    "uses ${}, which only the editor knows; edit the entry" },
		/* The first that cannot be translated, after one that can. */
		{ "${env:A} ${config:editor.tabSize}",
		    "uses ${config:editor.tabSize}, which only the editor "
		    "knows; edit the entry" },
		{ "${input:}", "uses ${input:}, which names no input" },
		{ "${env:}", "uses ${env:}, which names no variable" },
		{ "${env:A=B}",
		    "uses a ${...} variable, which names no variable" },
		{ "${env:MCPD_UNSET}",
		    "uses ${env:MCPD_UNSET}, but that variable is not set in "
		    "the environment of mcpctl import (VS Code reads it there "
		    "too); set it and import again" },
		/* What does not look like a name is not repeated. */
		{ "${env:A B}",
		    "uses a ${...} variable, but that variable is not set in "
		    "the environment of mcpctl import (VS Code reads it there "
		    "too); set it and import again" },
		{ "p4${ss w0rd}!",
		    "uses a ${...} variable, which only the editor knows; edit "
		    "the entry" },
		{ "${aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		  "aaaaa}",
		    "uses a ${...} variable, which only the editor knows; edit "
		    "the entry" },
	};

	setenv("A", "a", 1);
	unsetenv("MCPD_UNSET");
	unsetenv("A B");
	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		check_vars_reason(cases[i].value, cases[i].why);
	unsetenv("HOME");
	check_vars_reason("${userHome}/bin/srv",
	    "uses ${userHome}, but HOME is not set");
	setenv("HOME", "", 1);
	check_vars_reason("${userHome}",
	    "uses ${userHome}, but HOME is not set");
	test_vars_cwd();
}

static void
test_vars_where(void)
{
	static const struct entry_case cases[] = {
		/* Translated before the URL is checked, and before aliases
		 * are compared. */
		{ "{'url': 'https://h.example/${input:tenant}/mcp', "
		  "'serverUrl': 'https://h.example/${input:tenant}/mcp'}",
		    "{'name':'x','kind':'remote','transport':'http',"
		    "'url':'https://h.example/$(secret.tenant)/mcp',"
		    "'headers':{},'secrets':['tenant']}" },
		/* Names (keys, the transport) are not values. */
		{ "{'type': 'stdio', 'command': 'srv', 'env': {'${env:A}': "
		  "'b'}}",
		    "{'name':'x','kind':'process','transport':'stdio',"
		    "'command':['srv'],'env':{'${env:A}':'b'}}" },
		/* The env that configured the docker CLI needs no secret. */
		{ "{'command': 'docker', 'args': ['run', '-e', 'A', 'img'], "
		  "'env': {'A': '${input:a}', 'DOCKER_CONFIG': "
		  "'$(secret.dc)'}}",
		    "{'name':'x','kind':'container','transport':'stdio',"
		    "'image':'img:latest','args':[],'env':{'A':'$(secret.a)'},"
		    "'volumes':[],'secrets':['a']}" },
		/* A disabled entry is not read, its variables neither. */
		{ "{'command': '${workspaceFolder}/srv', 'disabled': true}",
		    "{'name':'x','kind':'skipped','reason':"
		    "'disabled in the file'}" },
	};
	json_t *root = load("{'servers': {'x': {'command': 'srv', "
			    "'args': ['${input:k}']}}}"),
	       *entries = NULL, *x;
	char *cause = NULL;

	CHECK_ENTRIES(cases);
	/* The file given is left as it was read. */
	TAP_CHECK_INT(import_parse(root, &entries, &cause), 0);
	x = json_object_get(json_object_get(root, "servers"), "x");
	x = json_array_get(json_object_get(x, "args"), 0);
	TAP_CHECK_STR(json_string_value(x), "${input:k}");
	json_decref(entries);
	json_decref(root);
}

/* Checks that import_parse refuses a root (in ' form) with cause. */
static void
check_root(const char *text, const char *cause_want)
{
	json_t *root = text != NULL ? load(text) : NULL;
	json_t *entries = (json_t *)&entries;
	char *cause = NULL;

	TAP_CHECK_INT(import_parse(root, &entries, &cause), -EINVAL);
	TAP_CHECK_STR(cause, cause_want);
	TAP_CHECK(entries == (json_t *)&entries, "ret_entries was written");
	free(cause);
	json_decref(root);
}

#define SHAPES                                                        \
	"; expected {\"mcpServers\": ...} (Claude Desktop, Cursor), " \
	"{\"servers\": ...} (VS Code .vscode/mcp.json) or {\"mcp\": " \
	"{\"servers\": ...}} (VS Code settings.json)"

static void
test_unknown_roots(void)
{
	check_root("[]", "the file is not a JSON object" SHAPES);
	check_root("'mcpServers'", "the file is not a JSON object" SHAPES);
	check_root(NULL, "the file is not a JSON object" SHAPES);
	check_root("{}", "the file has no MCP servers" SHAPES);
	check_root("{'editor.fontSize': 14}",
	    "the file has no MCP servers" SHAPES);
	check_root("{'mcp': {'inputs': []}}",
	    "the file has no MCP servers" SHAPES);
	/* Zed keeps them elsewhere; not (yet) a shape. */
	check_root("{'context_servers': {'x': {'command': 'srv'}}}",
	    "the file has no MCP servers" SHAPES);
	check_root("{'mcpServers': [{'command': 'srv'}]}",
	    "\"mcpServers\" is an array, not an object of servers");
	check_root("{'servers': null}",
	    "\"servers\" is null, not an object of servers");
	check_root("{'mcp': {'servers': 'x'}}",
	    "\"mcp\".\"servers\" is a string, not an object of servers");
}

/* A file in a workspace's .vscode folder knows ${workspaceFolder}. */
static void
test_vars_workspace(void)
{
	json_t *root = load("{'servers': {'x': {'command': "
			    "'${workspaceFolder}/bin/srv', 'args': "
			    "['${workspaceFolderBasename}'], 'cwd': "
			    "'${workspaceFolder}/data'}}}"),
	       *entries = NULL, *want;
	char *cause = NULL;

	TAP_CHECK_INT(import_parse_in(root, "/home/me/proj", &entries, &cause),
	    0);
	want = json_pack("{s:s, s:s, s:s, s:[s,s], s:{}, s:s}", "name", "x",
	    "kind", "process", "transport", "stdio", "command",
	    "/home/me/proj/bin/srv", "proj", "env", "cwd",
	    "/home/me/proj/data");
	TAP_CHECK(json_equal(json_array_get(entries, 0), want),
	    "the workspace folder is put in every field");
	json_decref(want);
	json_decref(entries);
	json_decref(root);
	free(cause);
}

/* What mcpd/list shows as the endpoint of the params import sends. */
static void
test_endpoint(void)
{
	static const struct {
		const char *params;
		const char *want;
	} cases[] = {
		{ "{'command': ['srv']}", "srv" },
		{ "{'command': ['/bin/srv', '--tools', '2'], 'cwd': '/x'}",
		    "/bin/srv --tools 2" },
		{ "{'command': ['a b', 'a;b', '', '$(env.X)']}",
		    "'a b' 'a;b' '' '$(env.X)'" },
		{ "{'target': 'HTTPS://Example.COM:443'}",
		    "https://example.com/" },
		{ "{'target': 'https://h.example/mcp?', 'headers': {}}",
		    "https://h.example/mcp" },
		{ "{'target': 'img:latest'}", "img:latest" },
		{ "{'target': 'img:1', 'args': ['stdio', 'a b']}",
		    "img:1 stdio 'a b'" },
	};
	json_t *params;
	char *got;

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		params = load(cases[i].params);
		got = import_endpoint(params);
		TAP_CHECK(tap_str_eq(got, cases[i].want),
		    "%s: expected %s, got %s", cases[i].params, cases[i].want,
		    tap_str_show(got));
		free(got);
		json_decref(params);
	}
}

/* Loads that mcpd certainly refuses or fails, and some it may not. */
static void
test_check_load(void)
{
	static const struct {
		const char *params;
		const char *why; /* NULL: nothing to say */
	} cases[] = {
		{ "{'command': ['/bin/sh']}", NULL },
		{ "{'command': ['sh', '-c', 'x']}", NULL },
		{ "{'command': ['mcpd-no-such-program']}",
		    "the command mcpd-no-such-program is not on PATH; install "
		    "it, or give its path" },
		{ "{'command': ['sh'], 'env': {'PATH': '/nowhere'}}",
		    "the command sh is not on PATH; install it, or give its "
		    "path" },
		{ "{'command': ['sh'], 'env': {'PATH': '$(env.P)'}}", NULL },
		{ "{'command': ['$(env.SRV)']}", NULL },
		{ "{'command': ['/nowhere/srv']}",
		    "the command /nowhere/srv is not an executable file" },
		{ "{'command': ['./sh'], 'cwd': '/bin'}", NULL },
		{ "{'command': ['./sh'], 'cwd': '/'}",
		    "the command ./sh is not an executable file" },
		{ "{'command': ['/etc/passwd']}",
		    "the command /etc/passwd is not an executable file" },
		{ "{'target': 'https://mcp.example.com/mcp'}", NULL },
		{ "{'target': 'http://mcp.example.com/mcp'}",
		    "plain http is refused without --allow-local, which allows "
		    "it to loopback addresses only" },
		{ "{'target': 'http://127.0.0.1:8080/mcp', 'allow_local': "
		  "true}",
		    NULL },
		{ "{'target': 'http://localhost:8080/mcp', 'allow_local': "
		  "true}",
		    NULL },
		{ "{'target': 'https://127.0.0.1/mcp'}",
		    "127.0.0.1 is loopback (127.0.0.0/8); --allow-local allows "
		    "it" },
		{ "{'target': 'http://10.1.2.3/mcp', 'allow_local': true}",
		    "10.1.2.3 is private (RFC 1918)" },
		{ "{'target': 'https://u:p@h.example/mcp'}",
		    "credentials in the URL (user:pass@) are refused; send "
		    "them as a header" },
		{ "{'target': 'http://$(secret.host)/mcp'}", NULL },
		{ "{'target': 'img:latest'}", NULL },
	};
	json_t *params;
	char *why = NULL;
	int r;

	setenv("PATH", "/usr/bin:/bin", 1);
	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		params = load(cases[i].params);
		r = import_check_load(params, &why);
		if (cases[i].why == NULL)
			TAP_CHECK(r == 0, "%s: refused: %s", cases[i].params,
			    tap_str_show(why));
		else
			TAP_CHECK(r == -EINVAL && tap_str_eq(why, cases[i].why),
			    "%s: expected %s, got %d %s", cases[i].params,
			    cases[i].why, r, tap_str_show(why));
		free(why);
		why = NULL;
		json_decref(params);
	}
}

static const struct tap_test tests[] = {
	{ "Claude Desktop's claude_desktop_config.json", test_claude_desktop },
	{ "Cursor's mcp.json: commands, URLs, headers, cwd", test_cursor },
	{ "VS Code's .vscode/mcp.json with inputs", test_vscode_mcp_json },
	{ "VS Code's settings.json with mcp.servers", test_vscode_settings },
	{ "file order; a bad entry spoils only itself",
	    test_file_order_and_mixed },
	{ "transport inference; URL aliases", test_inference },
	{ "an explicit transport wins; conflicts and gaps are refused",
	    test_explicit_transport },
	{ "disabled entries, and mcpd's own, are skipped", test_disabled },
	{ "wrong field types name the field", test_wrong_types },
	{ "docker run becomes a container", test_docker_run },
	{ "docker run images Docker refuses are invalid entries",
	    test_docker_image_refused },
	{ "docker run images get an explicit :latest",
	    test_docker_image_latest },
	{ "docker run refusals name the flag", test_docker_refusals },
	{ "docker run values leak into no field", test_docker_no_values_leak },
	{ "roots of no known shape are refused", test_unknown_roots },
	{ "VS Code variables are translated in every value",
	    test_vars_translated },
	{ "an ${input:ID} that makes a secret name past 128 is invalid",
	    test_vars_input_length },
	{ "variables only the editor knows make the entry invalid",
	    test_vars_refused },
	{ "variables: URLs, names, docker env, disabled entries, the file",
	    test_vars_where },
	{ "${workspaceFolder} of a file in a workspace", test_vars_workspace },
	{ "the endpoint mcpd shows for the params import sends",
	    test_endpoint },
	{ "loads that cannot work are flagged before they are sent",
	    test_check_load },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
