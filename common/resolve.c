/* SPDX-License-Identifier: ISC */
/* From a registry record or a Docker catalog definition to load params. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "names.h"
#include "resolve.h"
#include "xalloc.h"

#define RESOLVE_NPM_REGISTRY  "https://registry.npmjs.org"
#define RESOLVE_PYPI_REGISTRY "https://pypi.org"

struct resolve_ctx {
	const struct resolve_input *in;
	struct resolve_plan *plan;
};

static const char *
resolve_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static bool
resolve_true(const json_t *obj, const char *key)
{
	return json_is_true(json_object_get(obj, key));
}

static void resolve_note(struct resolve_ctx *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
resolve_note(struct resolve_ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	json_array_append_new(c->plan->notes, json_string(text));
	free(text);
}

/* A required input the user did not give. */
static void
resolve_need(struct resolve_ctx *c, const char *kind, const char *name,
    const char *description, bool is_secret)
{
	json_array_append_new(c->plan->missing,
	    xjson(json_pack("{s:s, s:s, s:s?, s:b}", "kind", kind, "name", name,
		"description", description, "is_secret", is_secret)));
}

/* params[key] (an object, made when absent)[name] = value. */
static void
resolve_set(struct resolve_ctx *c, const char *key, const char *name,
    const char *value)
{
	json_t *obj = json_object_get(c->plan->params, key);

	if (obj == NULL) {
		obj = json_object();
		json_object_set_new(c->plan->params, key, obj);
	}
	json_object_set_new(obj, name, json_string(value));
}

static void resolve_push(json_t *argv, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
resolve_push(json_t *argv, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	xvasprintf(&s, fmt, ap);
	va_end(ap);
	json_array_append_new(argv, json_string(s));
	free(s);
}

/*
 * value with each {id} that variables names replaced by that input's value
 * or default (new string); NULL when one of them has neither: the user
 * has to give the whole value. An {id} variables does not name stays.
 */
static char *
resolve_expand(const char *value, const json_t *variables, bool *ret_needs)
{
	const char *p = value, *open, *close;
	char *out = NULL, *id;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	const json_t *var;

	if (f == NULL)
		return NULL;
	while ((open = strchr(p, '{')) != NULL &&
	    (close = strchr(open, '}')) != NULL) {
		fwrite(p, 1, (size_t)(open - p), f);
		id = xstrndup(open + 1, (size_t)(close - open - 1));
		var = json_object_get(variables, id);
		if (var == NULL) {
			fwrite(open, 1, (size_t)(close - open + 1), f);
		} else if (resolve_str(var, "value") != NULL) {
			fputs(resolve_str(var, "value"), f);
		} else if (resolve_str(var, "default") != NULL) {
			fputs(resolve_str(var, "default"), f);
		} else {
			*ret_needs = true;
			free(id);
			fclose(f);
			free(out);
			return NULL;
		}
		free(id);
		p = close + 1;
	}
	fputs(p, f);
	fclose(f);
	return out;
}

/*
 * One KeyValueInput (an environment variable or a header) into
 * params[key]: the user's value, else the record's fixed value (its
 * {variables} filled in), else its default; a required one without any is
 * missing, an optional one is left out with a note.
 */
static void
resolve_kv(struct resolve_ctx *c, const json_t *kv, const char *key,
    const json_t *user, const char *kind)
{
	const char *name = resolve_str(kv, "name");
	const char *value = resolve_str(kv, "value");
	const char *dflt = resolve_str(kv, "default");
	const char *desc = resolve_str(kv, "description");
	bool is_secret = resolve_true(kv, "isSecret"), needs = false;
	char *expanded;

	if (name == NULL || json_object_get(user, name) != NULL)
		return; /* the user's value is in params already */
	if (value != NULL) {
		expanded = resolve_expand(value,
		    json_object_get(kv, "variables"), &needs);
		if (expanded != NULL) {
			resolve_set(c, key, name, expanded);
			free(expanded);
			return;
		}
	} else if (dflt != NULL && !is_secret) {
		resolve_set(c, key, name, dflt);
		resolve_note(c, "%s %s=%s is the record's default", kind, name,
		    dflt);
		return;
	}
	if (resolve_true(kv, "isRequired") || needs)
		resolve_need(c, kind, name, desc, is_secret);
	else
		resolve_note(c, "optional %s %s is not set%s%s", kind, name,
		    desc != NULL ? ": " : "", desc != NULL ? desc : "");
}

/* The user's --env or --header values go in as they are. */
static void
resolve_given(struct resolve_ctx *c, const json_t *user, const char *key)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)(uintptr_t)user, k, v) {
		resolve_set(c, key, k, json_string_value(v));
		json_array_append_new(c->plan->given, json_string(k));
	}
}

/*
 * One Argument into argv: positional (its value), or named ("--flag" or
 * "--flag=value"). A required one without a value is missing: mcpctl
 * load has no way to give arguments, only the command form has.
 */
static void
resolve_arg(struct resolve_ctx *c, const json_t *arg, json_t *argv)
{
	const char *type = resolve_str(arg, "type");
	const char *name = resolve_str(arg, "name");
	const char *hint = resolve_str(arg, "valueHint");
	const char *value = resolve_str(arg, "value");
	const char *dflt = resolve_str(arg, "default");
	const char *label;
	bool is_named = type != NULL && strcmp(type, "named") == 0;
	bool needs = false;
	char *expanded = NULL;

	label = is_named && name != NULL ? name :
	    hint != NULL		 ? hint :
					   "(positional)";
	if (value != NULL)
		expanded = resolve_expand(value,
		    json_object_get(arg, "variables"), &needs);
	else if (dflt != NULL)
		expanded = xstrdup(dflt);
	if (expanded == NULL && is_named && value == NULL &&
	    !resolve_true(arg, "isRequired") && hint == NULL) {
		/* A named argument with no value at all: a flag. */
		json_array_append_new(argv, json_string(name));
		return;
	}
	if (expanded == NULL) {
		if (resolve_true(arg, "isRequired") || needs)
			resolve_need(c, "argument", label,
			    resolve_str(arg, "description"), false);
		else
			resolve_note(c, "optional argument %s is left out",
			    label);
		return;
	}
	if (is_named && name != NULL)
		resolve_push(argv, "%s=%s", name, expanded);
	else
		json_array_append_new(argv, json_string(expanded));
	free(expanded);
}

static void
resolve_args(struct resolve_ctx *c, const json_t *args, json_t *argv)
{
	const json_t *arg;
	size_t i;

	json_array_foreach(args, i, arg)
		resolve_arg(c, arg, argv);
}

static void
resolve_plan_init(struct resolve_plan *p)
{
	memset(p, 0, sizeof *p);
	p->params = xjson(json_object());
	p->missing = xjson(json_array());
	p->notes = xjson(json_array());
	p->given = xjson(json_array());
}

void
resolve_plan_clear(struct resolve_plan *p)
{
	json_decref(p->params);
	json_decref(p->missing);
	json_decref(p->notes);
	json_decref(p->given);
	memset(p, 0, sizeof *p);
}

/* A resolution ends: the plan is cleared on failure (r < 0), else named. */
static int
resolve_plan_end(struct resolve_plan *p, const char *name, int r)
{
	char *server;

	if (r < 0) {
		resolve_plan_clear(p);
		return r;
	}
	if ((server = resolve_server_name(name)) != NULL)
		json_object_set_new(p->params, "name", json_string(server));
	free(server);
	return 0;
}

char *
resolve_server_name(const char *name)
{
	const char *last = strrchr(name, '/');
	char out[NAMES_MAX + 1];
	size_t n = 0;

	for (const char *p = last != NULL ? last + 1 : name;
	     *p != '\0' && n < NAMES_MAX; p++)
		if (isascii((unsigned char)*p) &&
		    (isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
			out[n++] = *p;
		else if (n > 0 && out[n - 1] != '-')
			out[n++] = '-';
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = '\0';
	return names_valid(out) ? xstrdup(out) : NULL;
}

/* Top-level domains a registry namespace (a reversed domain) starts with. */
static const char *const resolve_tlds[] = { "com", "org", "net", "edu", "gov",
	"dev", "app", "xyz", "tech", "cloud", "info", "biz", "page", "site",
	"online", "tools", "run", "software", "codes", "systems", "space",
	"world", "network", "digital", "studio", "company", "works", NULL };

/* The namespace's first label is a top-level domain: 2 letters or known. */
static bool
resolve_is_tld(const char *label, size_t len)
{
	char lower[16];

	if (len == 2 && isalpha((unsigned char)label[0]) &&
	    isalpha((unsigned char)label[1]))
		return true;
	if (len >= sizeof lower)
		return false;
	for (size_t i = 0; i < len; i++)
		lower[i] = (char)tolower((unsigned char)label[i]);
	lower[len] = '\0';
	for (size_t i = 0; resolve_tlds[i] != NULL; i++)
		if (strcmp(lower, resolve_tlds[i]) == 0)
			return true;
	return false;
}

bool
resolve_is_registry_name(const char *word)
{
	const char *at = strchr(word, '@'), *slash = strchr(word, '/');
	size_t base = at != NULL ? (size_t)(at - word) : strlen(word);
	size_t ns = slash != NULL ? (size_t)(slash - word) : 0;

	if (slash == NULL || ns == 0 || ns + 1 >= base ||
	    memchr(slash + 1, '/', base - ns - 1) != NULL ||
	    memchr(word, '.', ns) == NULL || memchr(word, ':', base) != NULL)
		return false;
	if (at != NULL &&
	    (at[1] == '\0' || strchr(at + 1, '@') != NULL ||
		strncmp(at + 1, "sha256:", 7) == 0))
		return false;
	for (size_t i = 0; i < base; i++) {
		char c = word[i];

		if (!isascii((unsigned char)c) ||
		    !(isalnum((unsigned char)c) || c == '.' || c == '-' ||
			(i > ns && c == '_') || i == ns))
			return false;
	}
	/* With @VERSION it is no image; else the reversed domain says so. */
	return at != NULL || resolve_is_tld(word, strcspn(word, "."));
}

/* ---- registry records ---- */

/* The package's transport: stdio when it names none. */
static bool
resolve_is_stdio(const json_t *pkg)
{
	const char *t = resolve_str(json_object_get(pkg, "transport"), "type");

	return t == NULL || strcmp(t, "stdio") == 0;
}

static bool
resolve_is_runnable(const json_t *pkg)
{
	const char *type = resolve_str(pkg, "registryType");

	return type != NULL && resolve_is_stdio(pkg) &&
	    resolve_str(pkg, "identifier") != NULL &&
	    (strcmp(type, "npm") == 0 || strcmp(type, "pypi") == 0 ||
		strcmp(type, "oci") == 0);
}

static bool
resolve_is_remote(const json_t *remote)
{
	const char *type = resolve_str(remote, "type");

	return type != NULL && resolve_str(remote, "url") != NULL &&
	    (strcmp(type, "streamable-http") == 0 || strcmp(type, "sse") == 0);
}

/* What a record offers, for an error: "packages nuget (stdio); no remote". */
static char *
resolve_offers(const json_t *detail)
{
	const json_t *v;
	char *out = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&out, &len);
	const char *sep = "";

	if (f == NULL)
		return xstrdup("?");
	fputs("packages: ", f);
	json_array_foreach(json_object_get(detail, "packages"), i, v) {
		const char *t = resolve_str(json_object_get(v, "transport"),
		    "type");

		fprintf(f, "%s%s (%s)", sep,
		    resolve_str(v, "registryType") != NULL ?
			resolve_str(v, "registryType") :
			"?",
		    t != NULL ? t : "stdio");
		sep = ", ";
	}
	if (*sep == '\0')
		fputs("none", f);
	fputs("; remotes: ", f);
	sep = "";
	json_array_foreach(json_object_get(detail, "remotes"), i, v) {
		fprintf(f, "%s%s %s", sep,
		    resolve_str(v, "type") != NULL ? resolve_str(v, "type") :
						     "?",
		    resolve_str(v, "url") != NULL ? resolve_str(v, "url") :
						    "?");
		sep = ", ";
	}
	if (*sep == '\0')
		fputs("none", f);
	fclose(f);
	return out;
}

static void
resolve_env_vars(struct resolve_ctx *c, const json_t *pkg)
{
	const json_t *kv;
	size_t i;

	json_array_foreach(json_object_get(pkg, "environmentVariables"), i, kv)
		resolve_kv(c, kv, "env", c->in->env, "env");
}

/* pkg@version for npm, pkg==version for pypi, the bare name without one. */
static void
resolve_spec(json_t *argv, const json_t *pkg, const char *sep)
{
	const char *id = resolve_str(pkg, "identifier");
	const char *version = resolve_str(pkg, "version");

	if (version != NULL && *version != '\0')
		resolve_push(argv, "%s%s%s", id, sep, version);
	else
		json_array_append_new(argv, json_string(id));
}

/*
 * A package run by a launcher: argv (its launcher, taken) with the
 * record's runtime arguments, the registry flag when the record names
 * another registry than the default, the package at its version, then the
 * package arguments.
 */
static int
resolve_launcher(struct resolve_ctx *c, const json_t *pkg, json_t *argv,
    const char *registry, const char *registry_flag, const char *at,
    const char *kind)
{
	const char *base = resolve_str(pkg, "registryBaseUrl");
	size_t len = strlen(registry);
	bool is_default = base == NULL ||
	    (strncmp(base, registry, len) == 0 &&
		(strcmp(base + len, "") == 0 || strcmp(base + len, "/") == 0));

	resolve_args(c, json_object_get(pkg, "runtimeArguments"), argv);
	if (!is_default)
		resolve_push(argv, "%s=%s", registry_flag, base);
	resolve_spec(argv, pkg, at);
	resolve_args(c, json_object_get(pkg, "packageArguments"), argv);
	json_object_set_new(c->plan->params, "command", argv);
	resolve_env_vars(c, pkg);
	c->plan->kind = kind;
	return 0;
}

static int
resolve_npm(struct resolve_ctx *c, const json_t *pkg)
{
	return resolve_launcher(c, pkg, json_pack("[ss]", "npx", "-y"),
	    RESOLVE_NPM_REGISTRY, "--registry", "@", "npm");
}

static int
resolve_pypi(struct resolve_ctx *c, const json_t *pkg, char **cause)
{
	if (c->in->has_program != NULL && !c->in->has_program("uvx"))
		return errors_cause(cause, -ENOTSUP,
		    "the pypi package %s runs with uvx, which is not on PATH: install uv (https://docs.astral.sh/uv/), or load another way (mcpctl load -- CMD)",
		    resolve_str(pkg, "identifier"));
	return resolve_launcher(c, pkg, json_pack("[s]", "uvx"),
	    RESOLVE_PYPI_REGISTRY, "--index-url", "==", "pypi");
}

/* docker run flags of a record: env, volumes, network; the rest refused. */
static int
resolve_docker_flags(struct resolve_ctx *c, const json_t *pkg, char **cause)
{
	static const char *const absorbed[] = { "-i", "--interactive", "--rm",
		"-t", "--tty", "--init", NULL };
	json_t *flags = json_array(), *v;
	const char *w, *eq;
	size_t i;
	int r = 0;

	resolve_args(c, json_object_get(pkg, "runtimeArguments"), flags);
	for (i = 0; r == 0 && i < json_array_size(flags); i++) {
		char *flag, *value = NULL;
		bool is_absorbed = false;

		w = json_string_value(json_array_get(flags, i));
		eq = strchr(w, '=');
		flag = eq != NULL ? xstrndup(w, (size_t)(eq - w)) : xstrdup(w);
		if (eq != NULL)
			value = xstrdup(eq + 1);
		else if (flag[0] == '-' && i + 1 < json_array_size(flags) &&
		    json_string_value(json_array_get(flags, i + 1))[0] != '-')
			value = xstrdup(json_string_value(json_array_get(flags,
			    ++i)));
		for (size_t k = 0; absorbed[k] != NULL; k++)
			is_absorbed |= strcmp(flag, absorbed[k]) == 0;
		if (is_absorbed && value == NULL) {
			/* mcpd runs docker run -i (or -d) itself. */
		} else if ((strcmp(flag, "-e") == 0 ||
			       strcmp(flag, "--env") == 0) &&
		    value != NULL && strchr(value, '=') != NULL) {
			char *k = xstrndup(value, strcspn(value, "="));

			if (json_object_get(c->in->env, k) == NULL)
				resolve_set(c, "env", k,
				    strchr(value, '=') + 1);
			free(k);
		} else if ((strcmp(flag, "-v") == 0 ||
			       strcmp(flag, "--volume") == 0) &&
		    value != NULL) {
			if ((v = json_object_get(c->plan->params, "volumes")) ==
			    NULL) {
				v = json_array();
				json_object_set_new(c->plan->params, "volumes",
				    v);
			}
			json_array_append_new(v, json_string(value));
		} else if (strcmp(flag, "--network") == 0 && value != NULL) {
			json_object_set_new(c->plan->params, "network",
			    json_string(value));
		} else {
			r = errors_cause(cause, -ENOTSUP,
			    "the oci package %s needs the docker run flag %s, which mcpd does not pass (only -e, -v and --network)",
			    resolve_str(pkg, "identifier"), w);
		}
		free(flag);
		free(value);
	}
	json_decref(flags);
	return r;
}

static int
resolve_oci(struct resolve_ctx *c, const json_t *pkg, char **cause)
{
	const char *id = resolve_str(pkg, "identifier");
	const char *version = resolve_str(pkg, "version");
	const char *slash = strrchr(id, '/');
	json_t *args = json_array();
	bool has_tag = strchr(slash != NULL ? slash : id, ':') != NULL ||
	    strchr(id, '@') != NULL;
	int r;

	if (has_tag || version == NULL || *version == '\0')
		json_object_set_new(c->plan->params, "target", json_string(id));
	else {
		char *image;

		xasprintf(&image, "%s:%s", id, version);
		json_object_set_new(c->plan->params, "target",
		    json_string(image));
		free(image);
	}
	if ((r = resolve_docker_flags(c, pkg, cause)) < 0) {
		json_decref(args);
		return r;
	}
	resolve_args(c, json_object_get(pkg, "packageArguments"), args);
	if (json_array_size(args) > 0)
		json_object_set_new(c->plan->params, "args", args);
	else
		json_decref(args);
	resolve_env_vars(c, pkg);
	c->plan->kind = "oci";
	return 0;
}

/* An https URL: the only remotes a record may make mcpd reach. */
static int
resolve_check_https(const char *url, const char *what, char **cause)
{
	if (strncasecmp(url, "https://", 8) != 0)
		return errors_cause(cause, -ENOTSUP,
		    "%s's remote %s is not https: mcpd loads catalog and registry remotes over HTTPS only",
		    what, url);
	if (strchr(url, '{') != NULL)
		return errors_cause(cause, -ENOTSUP,
		    "%s's remote URL %s has {placeholders}, which mcpctl load cannot fill in",
		    what, url);
	return 0;
}

static int
resolve_remote(struct resolve_ctx *c, const json_t *remote, const char *what,
    char **cause)
{
	const char *url = resolve_str(remote, "url");
	const json_t *kv;
	size_t i;
	int r;

	if ((r = resolve_check_https(url, what, cause)) < 0)
		return r;
	json_object_set_new(c->plan->params, "target", json_string(url));
	json_object_set_new(c->plan->params, "transport",
	    json_string(resolve_str(remote, "type")));
	resolve_given(c, c->in->headers, "headers");
	json_array_foreach(json_object_get(remote, "headers"), i, kv)
		resolve_kv(c, kv, "headers", c->in->headers, "header");
	c->plan->kind = "remote";
	return 0;
}

int
resolve_registry(const json_t *record, const struct resolve_input *in,
    struct resolve_plan *ret, char **cause)
{
	const json_t *detail = json_object_get(record, "server"), *v;
	const json_t *pkg = NULL, *remote = NULL;
	struct resolve_ctx c = { in, ret };
	const char *name;
	char *offers;
	size_t i;
	int r;

	if (!json_is_object(detail))
		detail = record;
	if ((name = resolve_str(detail, "name")) == NULL)
		return errors_cause(cause, -EINVAL,
		    "the record has no server name (server.name)");
	json_array_foreach(json_object_get(detail, "packages"), i, v)
		if (pkg == NULL && resolve_is_runnable(v))
			pkg = v;
	json_array_foreach(json_object_get(detail, "remotes"), i, v)
		if (remote == NULL && resolve_is_remote(v))
			remote = v;
	if (pkg == NULL && remote == NULL) {
		offers = resolve_offers(detail);
		r = errors_cause(cause, -ENOTSUP,
		    "%s offers nothing mcpd runs (npm, pypi or oci packages over stdio; streamable-http or sse remotes): %s",
		    name, offers);
		free(offers);
		return r;
	}
	if (in->prefer_remote && remote == NULL)
		return errors_cause(cause, -ENOTSUP,
		    "%s has no streamable-http or sse remote", name);
	resolve_plan_init(ret);
	if (remote != NULL && (in->prefer_remote || pkg == NULL)) {
		r = resolve_remote(&c, remote, name, cause);
	} else {
		const char *type = resolve_str(pkg, "registryType");

		resolve_given(&c, in->env, "env");
		if (strcmp(type, "npm") == 0)
			r = resolve_npm(&c, pkg);
		else if (strcmp(type, "pypi") == 0)
			r = resolve_pypi(&c, pkg, cause);
		else
			r = resolve_oci(&c, pkg, cause);
	}
	return resolve_plan_end(ret, name, r);
}

/* ---- Docker catalog definitions ---- */

/* The configuration a "{{server.key}}" template refers to is required. */
static bool
resolve_config_required(const json_t *entry, const char *value)
{
	const char *open = strstr(value, "{{"), *dot, *end;
	const json_t *cfg, *req;
	size_t i, j;

	if (open == NULL || (end = strstr(open, "}}")) == NULL)
		return false;
	open += 2;
	while (*open == ' ')
		open++;
	if ((dot = memchr(open, '.', (size_t)(end - open))) == NULL)
		return false;
	json_array_foreach(json_object_get(entry, "config"), i, cfg) {
		const char *cname = resolve_str(cfg, "name");

		if (cname == NULL || strlen(cname) != (size_t)(dot - open) ||
		    strncmp(cname, open, (size_t)(dot - open)) != 0)
			continue;
		json_array_foreach(json_object_get(cfg, "required"), j, req) {
			const char *key = json_string_value(req);
			size_t klen = key != NULL ? strlen(key) : 0;

			if (klen > 0 && strncmp(dot + 1, key, klen) == 0 &&
			    strchr(" |}", dot[1 + klen]) != NULL)
				return true;
		}
	}
	return false;
}

static void
resolve_docker_env(struct resolve_ctx *c, const json_t *entry)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(entry, "env"), i, v) {
		const char *name = resolve_str(v, "name");
		const char *value = resolve_str(v, "value");

		if (name == NULL || json_object_get(c->in->env, name) != NULL)
			continue;
		if (value != NULL && strstr(value, "{{") == NULL) {
			resolve_set(c, "env", name, value);
		} else if (value != NULL &&
		    resolve_config_required(entry, value)) {
			resolve_need(c, "env", name, value, false);
		} else {
			resolve_note(c,
			    "optional env %s is not set (the catalog fills it from its configuration %s)",
			    name, value != NULL ? value : "");
		}
	}
	/* A secret reaches the server as an environment variable. */
	json_array_foreach(json_object_get(entry, "secrets"), i, v) {
		const char *env = resolve_str(v, "env");

		if (env != NULL && json_object_get(c->in->env, env) == NULL &&
		    json_object_get(json_object_get(c->plan->params, "env"),
			env) == NULL)
			resolve_need(c, "env", env, resolve_str(v, "name"),
			    true);
	}
}

static int
resolve_docker_image(struct resolve_ctx *c, const json_t *entry, char **cause)
{
	const char *image = resolve_str(entry, "image");
	const char *name = resolve_str(entry, "name");
	const json_t *v;
	json_t *args = json_array(), *volumes = json_array();
	size_t i;

	if (image == NULL) {
		json_decref(args);
		json_decref(volumes);
		return errors_cause(cause, -EINVAL,
		    "the catalog's definition %s has no image", name);
	}
	json_object_set_new(c->plan->params, "target", json_string(image));
	json_array_foreach(json_object_get(entry, "command"), i, v)
		if (json_is_string(v))
			json_array_append_new(args,
			    json_string(json_string_value(v)));
	json_array_foreach(json_object_get(entry, "volumes"), i, v)
		if (json_is_string(v) &&
		    strstr(json_string_value(v), "{{") == NULL)
			json_array_append_new(volumes,
			    json_string(json_string_value(v)));
		else if (json_is_string(v))
			resolve_note(c,
			    "volume %s is left out: the catalog fills it from its configuration (give one with -v)",
			    json_string_value(v));
	if (json_array_size(args) > 0)
		json_object_set(c->plan->params, "args", args);
	if (json_array_size(volumes) > 0)
		json_object_set(c->plan->params, "volumes", volumes);
	json_decref(args);
	json_decref(volumes);
	if (resolve_true(entry, "disableNetwork"))
		json_object_set_new(c->plan->params, "network",
		    json_string("none"));
	resolve_given(c, c->in->env, "env");
	resolve_docker_env(c, entry);
	c->plan->kind = "image";
	return 0;
}

static int
resolve_docker_remote(struct resolve_ctx *c, const json_t *entry, char **cause)
{
	const json_t *remote = json_object_get(entry, "remote");
	const char *url = resolve_str(remote, "url");
	const char *transport = resolve_str(remote, "transport_type");
	const char *name = resolve_str(entry, "name"), *k;
	json_t *v;
	int r;

	if (url == NULL && (url = resolve_str(entry, "sseEndpoint")) != NULL)
		transport = "sse";
	if (url == NULL)
		return errors_cause(cause, -EINVAL,
		    "the catalog's remote %s has no URL", name);
	if ((r = resolve_check_https(url, name, cause)) < 0)
		return r;
	if (transport == NULL || strcmp(transport, "http") == 0 ||
	    strcmp(transport, "streamable") == 0)
		transport = "streamable-http";
	if (strcmp(transport, "streamable-http") != 0 &&
	    strcmp(transport, "sse") != 0)
		return errors_cause(cause, -ENOTSUP,
		    "the catalog's remote %s speaks %s, which mcpd does not",
		    name, transport);
	json_object_set_new(c->plan->params, "target", json_string(url));
	json_object_set_new(c->plan->params, "transport",
	    json_string(transport));
	resolve_given(c, c->in->headers, "headers");
	json_object_foreach(json_object_get(remote, "headers"), k, v) {
		const char *value = json_string_value(v);

		if (value == NULL || json_object_get(c->in->headers, k) != NULL)
			continue;
		/* ${SECRET_ENV} and {{config}} are the user's to give. */
		if (strstr(value, "${") != NULL || strstr(value, "{{") != NULL)
			resolve_need(c, "header", k, value,
			    strstr(value, "${") != NULL);
		else
			resolve_set(c, "headers", k, value);
	}
	if (json_array_size(json_object_get(json_object_get(entry, "oauth"),
		"providers")) > 0 &&
	    json_object_get(c->in->headers, "Authorization") == NULL)
		resolve_note(c,
		    "%s signs in with OAuth, which mcpd does not do: give a token with --header 'Authorization=Bearer TOKEN'",
		    name);
	c->plan->kind = "remote";
	return 0;
}

int
resolve_docker(const json_t *entry, const struct resolve_input *in,
    struct resolve_plan *ret, char **cause)
{
	const char *name = resolve_str(entry, "name");
	const char *type = resolve_str(entry, "type");
	struct resolve_ctx c = { in, ret };
	int r;

	if (name == NULL)
		return errors_cause(cause, -EINVAL,
		    "the catalog's definition has no name");
	if (type == NULL)
		type = json_object_get(entry, "remote") != NULL ? "remote" :
								  "server";
	if (strcmp(type, "server") != 0 && strcmp(type, "remote") != 0)
		return errors_cause(cause, -ENOTSUP,
		    "%s is a %s definition of the catalog (%s), not an MCP server mcpd can run",
		    name, type,
		    strcmp(type, "poci") == 0 ?
			"its tools run as one-shot containers" :
			"an unknown type");
	resolve_plan_init(ret);
	if (strcmp(type, "remote") == 0)
		r = resolve_docker_remote(&c, entry, cause);
	else
		r = resolve_docker_image(&c, entry, cause);
	return resolve_plan_end(ret, name, r);
}
