/* SPDX-License-Identifier: ISC */
/* URL parsing: strict http and https endpoints, their canonical form. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "url.h"

#define URL_HOST_MAX  253 /* bytes of a host name, without a trailing dot */
#define URL_LABEL_MAX 63

static uint16_t
url_default_port(const char *scheme)
{
	return strcmp(scheme, "https") == 0 ? 443 : 80;
}

/* A copy of n bytes of s, lower-cased; NULL when out of memory. */
static char *
url_strndup_lower(const char *s, size_t n)
{
	char *copy = strndup(s, n);

	for (size_t i = 0; copy != NULL && i < n; i++)
		copy[i] = tolower((unsigned char)copy[i]);
	return copy;
}

/* Spaces, control characters and non-ASCII bytes are refused anywhere. */
static int
url_check_bytes(const char *text, char **cause)
{
	for (const unsigned char *s = (const unsigned char *)text; *s != '\0';
	     s++) {
		if (*s == ' ')
			return errors_cause(cause, -EINVAL,
			    "URL contains a space");
		if (*s < 0x20 || *s == 0x7f)
			return errors_cause(cause, -EINVAL,
			    "URL contains a control character");
		if (*s >= 0x80)
			return errors_cause(cause, -EINVAL,
			    "URL contains a non-ASCII byte (percent-encode it)");
	}
	return 0;
}

static bool
url_span_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* scheme ":" "//" (RFC 3986 3.1); *rest points after the "//". */
static int
url_parse_scheme(const char *text, struct url *u, const char **rest,
    char **cause)
{
	size_t n = 0;

	if (isalpha((unsigned char)text[0]))
		n = strspn(text,
		    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
	if (n == 0 || text[n] != ':')
		return errors_cause(cause, -EINVAL,
		    "URL has no scheme (it should start with https://)");
	if (!url_span_is(text, n, "http") && !url_span_is(text, n, "https"))
		return errors_cause(cause, -EINVAL,
		    "URL scheme \"%.*s\" is not http or https", (int)n, text);
	if ((u->scheme = url_strndup_lower(text, n)) == NULL)
		return -ENOMEM;
	u->port = url_default_port(u->scheme);
	if (strncmp(text + n + 1, "//", 2) != 0)
		return errors_cause(cause, -EINVAL,
		    "URL has no host (\"//\" must follow \"%s:\")", u->scheme);
	*rest = text + n + 3;
	return 0;
}

/* RFC 3986 unreserved and sub-delims characters. */
static bool
url_is_plain(char c)
{
	return c != '\0' &&
	    (isalnum((unsigned char)c) || strchr("-._~!$&'()*+,;=", c) != NULL);
}

/*
 * Checks that n bytes of s are plain characters, characters of extra or
 * %XX escapes; what names the component in the message.
 */
static int
url_check_component(const char *s, size_t n, const char *extra,
    const char *what, char **cause)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%') {
			if (n - i < 3 || !isxdigit((unsigned char)s[i + 1]) ||
			    !isxdigit((unsigned char)s[i + 2]))
				return errors_cause(cause, -EINVAL,
				    "URL %s has a malformed percent-escape",
				    what);
			i += 2;
		} else if (!url_is_plain(s[i]) && strchr(extra, s[i]) == NULL)
			return errors_cause(cause, -EINVAL,
			    "URL %s contains \"%c\", which must be percent-encoded",
			    what, s[i]);
	}
	return 0;
}

/* The port after the colon; empty means the default (RFC 3986 3.2.3). */
static int
url_parse_port(const char *s, size_t n, struct url *u, char **cause)
{
	unsigned long port = 0;

	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return errors_cause(cause, -EINVAL,
			    "URL port \"%.*s\" is not a number", (int)n, s);
		if (port <= UINT16_MAX)
			port = port * 10 + (s[i] - '0');
	}
	if (port < 1 || port > UINT16_MAX)
		return errors_cause(cause, -EINVAL,
		    "URL port \"%.*s\" is out of range (1 to 65535)", (int)n,
		    s);
	u->port = port;
	u->has_explicit_port = true;
	return 0;
}

/* Labels of 1 to 63 bytes, 253 bytes in all; s has no trailing dot. */
static int
url_check_labels(const char *s, size_t n, char **cause)
{
	size_t label = 0;

	if (n > URL_HOST_MAX)
		return errors_cause(cause, -EINVAL,
		    "URL host is longer than %d bytes", URL_HOST_MAX);
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			label++;
			continue;
		}
		if (label == 0)
			return errors_cause(cause, -EINVAL,
			    "URL host has an empty label");
		if (label > URL_LABEL_MAX)
			return errors_cause(cause, -EINVAL,
			    "URL host has a label longer than %d bytes",
			    URL_LABEL_MAX);
		label = 0;
	}
	return 0;
}

/* A registered name (or a numeric IPv4 form, a name here too). */
static int
url_parse_name(const char *s, size_t n, struct url *u, char **cause)
{
	int r;

	if (memchr(s, '%', n) != NULL)
		return errors_cause(cause, -EINVAL,
		    "URL host must not be percent-encoded");
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.' && s[i] != '-')
			return errors_cause(cause, -EINVAL,
			    "URL host must not contain \"%c\"", s[i]);
	if (n > 0 && s[n - 1] == '.')
		n--;
	if (n == 0)
		return errors_cause(cause, -EINVAL, "URL has an empty host");
	if ((r = url_check_labels(s, n, cause)) < 0)
		return r;
	if ((u->host = url_strndup_lower(s, n)) == NULL)
		return -ENOMEM;
	return 0;
}

/* "[" IPv6address "]" [":" port], kept in its RFC 5952 form. */
static int
url_parse_ipv6(const char *s, size_t n, struct url *u, char **cause)
{
	const char *close = memchr(s, ']', n);
	char text[INET6_ADDRSTRLEN], canon[INET6_ADDRSTRLEN];
	struct in6_addr addr;
	size_t len;

	if (close == NULL)
		return errors_cause(cause, -EINVAL,
		    "URL IPv6 literal has no closing \"]\"");
	len = close - (s + 1);
	if (memchr(s + 1, '%', len) != NULL)
		return errors_cause(cause, -EINVAL,
		    "URL IPv6 literal has a zone identifier, which is not allowed");
	if (len < sizeof text) {
		memcpy(text, s + 1, len);
		text[len] = '\0';
	}
	/* inet_pton takes hex digits, ":" and a dotted IPv4 tail only. */
	if (len >= sizeof text || inet_pton(AF_INET6, text, &addr) != 1 ||
	    inet_ntop(AF_INET6, &addr, canon, sizeof canon) == NULL)
		return errors_cause(cause, -EINVAL,
		    "URL IPv6 literal \"%.*s\" is not valid",
		    (int)(close - s + 1), s);
	if ((u->host = strdup(canon)) == NULL)
		return -ENOMEM;
	u->is_ipv6_literal = true;
	if (close + 1 == s + n)
		return 0;
	if (close[1] != ':')
		return errors_cause(cause, -EINVAL,
		    "URL has characters after the IPv6 literal");
	return url_parse_port(close + 2, s + n - (close + 2), u, cause);
}

/* Hex digits, dots and two colons or more: an IPv6 address unbracketed. */
static bool
url_is_bare_ipv6(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);

	/* The span ends before "/", "?", "#" or NUL, none of them in the set. */
	return strspn(s, "0123456789abcdefABCDEF:.") == n && colon != NULL &&
	    memchr(colon + 1, ':', s + n - (colon + 1)) != NULL;
}

/* [userinfo "@"] host [":" port]; *rest points after it. */
static int
url_parse_authority(const char *s, struct url *u, const char **rest,
    char **cause)
{
	size_t n = strcspn(s, "/?#"), host_len, port_len;
	const char *at = memrchr(s, '@', n), *host = s, *colon;
	int r;

	*rest = s + n;
	if (at != NULL) {
		u->has_userinfo = true;
		if ((r = url_check_component(s, at - s, ":", "userinfo",
			 cause)) < 0)
			return r;
		host = at + 1;
	}
	host_len = s + n - host;
	if (host_len > 0 && host[0] == '[')
		return url_parse_ipv6(host, host_len, u, cause);
	if ((colon = memchr(host, ':', host_len)) == NULL)
		return url_parse_name(host, host_len, u, cause);
	port_len = host + host_len - (colon + 1);
	if (url_is_bare_ipv6(host, host_len))
		return errors_cause(cause, -EINVAL,
		    "URL IPv6 literal must be in brackets");
	if ((r = url_parse_name(host, colon - host, u, cause)) < 0)
		return r;
	return url_parse_port(colon + 1, port_len, u, cause);
}

/* path ["?" query] ["#" fragment]. */
static int
url_parse_tail(const char *s, struct url *u, char **cause)
{
	size_t n = strcspn(s, "?#");
	int r;

	if ((r = url_check_component(s, n, "/:@", "path", cause)) < 0)
		return r;
	if ((u->path = n > 0 ? strndup(s, n) : strdup("/")) == NULL)
		return -ENOMEM;
	s += n;
	if (*s == '?') {
		n = strcspn(++s, "#");
		if ((r = url_check_component(s, n, "/?:@", "query", cause)) < 0)
			return r;
		if (n > 0 && (u->query = strndup(s, n)) == NULL)
			return -ENOMEM;
		s += n;
	}
	if (*s == '#') {
		u->has_fragment = true;
		s++;
		return url_check_component(s, strlen(s), "/?:@", "fragment",
		    cause);
	}
	return 0;
}

int
url_parse(const char *text, struct url *ret, char **cause)
{
	struct url u;
	const char *rest = text;
	int r;

	memset(&u, 0, sizeof u);
	if ((r = url_check_bytes(text, cause)) < 0 ||
	    (r = url_parse_scheme(text, &u, &rest, cause)) < 0 ||
	    (r = url_parse_authority(rest, &u, &rest, cause)) < 0 ||
	    (r = url_parse_tail(rest, &u, cause)) < 0) {
		if (r == -ENOMEM && cause != NULL)
			*cause = NULL;
		url_free(&u);
		return r;
	}
	*ret = u;
	return 0;
}

/* scheme://host[:port], then the path and query when asked. */
static char *
url_format(const struct url *u, bool with_path)
{
	char port[8] = "";
	bool has_query = with_path && u->query != NULL;
	char *s;

	if (u->port != url_default_port(u->scheme))
		snprintf(port, sizeof port, ":%u", u->port);
	if (asprintf(&s, "%s://%s%s%s%s%s%s%s", u->scheme,
		u->is_ipv6_literal ? "[" : "", u->host,
		u->is_ipv6_literal ? "]" : "", port, with_path ? u->path : "",
		has_query ? "?" : "", has_query ? u->query : "") < 0)
		return NULL;
	return s;
}

char *
url_canonical(const struct url *u)
{
	return url_format(u, true);
}

char *
url_origin(const struct url *u)
{
	return url_format(u, false);
}

void
url_free(struct url *u)
{
	if (u == NULL)
		return;
	free(u->scheme);
	free(u->host);
	free(u->path);
	free(u->query);
	memset(u, 0, sizeof *u);
}
