# SPDX-License-Identifier: ISC
"""Discovery (issue 13, items 1 and 2): mcpd/registry-search, -catalog,
-info and -versions, and mcpctl search, catalog, info and versions, against
a local HTTPS registry this file runs (Python's http.server behind TLS with
a certificate of the test CA of test_remote.py, given to mcpd with
--ca-file), and the local catalog bundled in data/catalog.json.

The fixture pages are built from the shapes of the registry's contract
(data/registry/openapi.json): conforming records, a record with
`repository: {}` (it lacks the required url and source), one with ten
problems, a cursor that needs escaping, an envelope without servers, a 500,
a redirect, a body that is not JSON, a three-page walk, and publisher text
with ANSI escapes and newlines. Every test says exactly what mcpd answers,
what mcpctl prints, and which requests reached the registry."""

import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import (DENIED, INVALID_PARAMS, MCPCTL, MCPD, NOT_FOUND, REPO,
                      UNAVAILABLE, UPSTREAM, child_env, poll, rpc_error_of,
                      free_port, run_ctl)
from test_remote import Pki

CONTRACT = REPO / "data" / "registry" / "openapi.json"
CATALOG = REPO / "data" / "catalog.json"
OFFICIAL = "io.modelcontextprotocol.registry/official"
# The bundled catalog's names, in its order (read from it: the test below
# checks that mcpd serves each, valid, in that order).
LOCAL_NAMES = [s["server"]["name"] for s in
               json.loads(CATALOG.read_text())["servers"]]
# What a listing that cannot reach the registry adds: the local catalog
# has servers, and --source local lists them.
LOCAL_HINT = (f"; the local catalog has {len(LOCAL_NAMES)} servers: "
              "--source local lists them")


# --------------------------------------------------------------------------
# Records and pages in the contract's shapes

def record(name, version="1.0.0", description="A test server",
           latest=True, status="active", **server):
    """A ServerResponse that conforms to the contract."""
    detail = {"name": name, "description": description, "version": version,
              "repository": {"url": f"https://github.com/{name}",
                             "source": "github"}}
    detail.update(server)
    return {"server": detail,
            "_meta": {OFFICIAL: {"status": status,
                                 "publishedAt": "2025-09-01T10:00:00Z",
                                 "updatedAt": "2025-09-02T11:00:00Z",
                                 "isLatest": latest}}}


def npm_package(identifier, version="1.0.0"):
    return {"registryType": "npm", "identifier": identifier,
            "version": version, "transport": {"type": "stdio"}}


def page(records, next_cursor=None):
    meta = {"count": len(records)}
    if next_cursor is not None:
        meta["nextCursor"] = next_cursor
    return {"servers": records, "metadata": meta}


# A record whose repository is {}: url and source are required.
EMPTY_REPO = record("io.example/empty-repo")
EMPTY_REPO["server"]["repository"] = {}

# A record with ten problems, in the order the validator meets them.
TEN_PROBLEMS = {"server": {
    "name": "Bad Name!",                 # pattern
    # description is missing             # required
    "title": "",                         # minLength
    "repository": {},                    # url, source
    "version": 7,                        # type
    "websiteUrl": 42,                    # type
    "icons": [{}],                       # src
    "packages": [{"registryType": "npm", "identifier": "x",
                  "transport": {"type": "carrier-pigeon"}}],   # anyOf
    "remotes": [{"type": "sse"}],        # anyOf (no url)
}}

WEATHER = record(
    "io.example/weather", "1.2.0",
    "Weather forecasts from the example service",
    title="Weather",
    websiteUrl="https://weather.example.com",
    packages=[dict(npm_package("@example/weather-mcp", "1.2.0"),
                   runtimeHint="npx",
                   environmentVariables=[{
                       "name": "WEATHER_API_KEY", "isRequired": True,
                       "isSecret": True,
                       "description": "Key of the weather service"}])],
    remotes=[{"type": "streamable-http",
              "url": "https://weather.example.com/mcp",
              "headers": [{"name": "Authorization", "isRequired": True,
                           "isSecret": True,
                           "description": "Bearer token"}]},
             {"type": "sse", "url": "https://weather.example.com/sse"}])
CLOCK = record("io.example/clock", "0.3.1", "Tells the time",
               packages=[npm_package("@example/clock-mcp", "0.3.1")])


# --------------------------------------------------------------------------
# The local registry

class Registry:
    """An HTTPS registry on 127.0.0.1: answers are set per path (with its
    query, exactly as mcpd sends it); every request is recorded."""

    def __init__(self, leaf):
        self.answers = {}
        self.requests = []
        self.release = threading.Event()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                registry.requests.append(self.path)
                status, headers, body = registry.answer(self.path)
                if status is None:          # hang until released
                    registry.release.wait(30)
                    return
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*[str(p) for p in leaf])
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket,
                                            server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"https://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)
        self.thread.start()

    def answer(self, path):
        a = self.answers.get(path)
        if a is None:
            return 404, {"Content-Type": "application/json"}, \
                b'{"error":"Server not found"}'
        return a

    def json(self, path, obj, status=200):
        self.answers[path] = (status, {"Content-Type": "application/json"},
                              json.dumps(obj).encode())

    def raw(self, path, body, status=200, headers=None):
        self.answers[path] = (status, headers or {}, body)

    def hang(self, path):
        self.answers[path] = (None, None, None)

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def registry(pki):
    r = Registry(pki.good)
    yield r
    r.close()


def registry_args(registry, pki, *extra):
    return ("--registry", registry.url, "--registry-allow-local",
            "--ca-file", pki.ca, "--registry-contract", CONTRACT,
            "--catalog", CATALOG) + extra


@pytest.fixture
def reg_mcpd(mcpd_factory, registry, pki):
    """mcpd pointed at the local registry."""
    return mcpd_factory(*registry_args(registry, pki))


def list_path(search=None, limit=20, cursor=None):
    """The exact path and query mcpd asks for a page."""
    q = ""
    if search is not None:
        q += f"search={quote(search, safe='-._~')}&"
    q += f"limit={limit}"
    if cursor is not None:
        q += f"&cursor={quote(cursor, safe='-._~')}"
    return f"/v0.1/servers?{q}&version=latest"


def search_url(registry, search=None, **kw):
    return registry.url + list_path(search, **kw)


# --------------------------------------------------------------------------
# 1. A page: conforming records shown, the others rejected, the cursor kept

def test_search_page_rejects_and_keeps_the_rest_and_the_cursor(
        reg_mcpd, registry):
    body = page([WEATHER, EMPTY_REPO, CLOCK], next_cursor="c2")
    registry.json(list_path("weather"), body)
    r = reg_mcpd.ctl("search", "weather")
    assert r.rc == 0, r
    assert r.json == {
        "source": "official", "registry": registry.url,
        "url": search_url(registry, "weather"),
        "limits": {"problems": 4, "problem_chars": 256,
                   "text_chars": 8192},
        "query": {"search": "weather", "limit": 20, "cursor": None},
        "servers": [WEATHER, CLOCK],
        "rejected_records": [{
            "index": 1, "name": "io.example/empty-repo",
            "problems": [
                {"path": "$.server.repository",
                 "detail": 'missing required property "url"'},
                {"path": "$.server.repository",
                 "detail": 'missing required property "source"'}]}],
        "next_cursor": "c2", "count": 3, "response": body}
    h = reg_mcpd.ctl("search", "weather", is_json=False)
    assert (h.rc, h.err) == (0, ""), h
    assert h.out == f"""registry {registry.url}: 2 servers, 1 record rejected
io.example/weather  1.2.0  active  latest
  "Weather forecasts from the example service"
  package npm @example/weather-mcp@1.2.0 (stdio)
  remote streamable-http https://weather.example.com/mcp
  remote sse https://weather.example.com/sse
io.example/clock  0.3.1  active  latest
  "Tells the time"
  package npm @example/clock-mcp@0.3.1 (stdio)
rejected (they do not conform to the registry's contract):
  [1] io.example/empty-repo
    $.server.repository: missing required property "url"
    $.server.repository: missing required property "source"
next page: --cursor c2
"""
    assert registry.requests == [list_path("weather")] * 2


def test_a_record_with_ten_problems_shows_four(reg_mcpd, registry):
    registry.json(list_path(), page([TEN_PROBLEMS, CLOCK]))
    r = reg_mcpd.ctl("catalog")
    assert r.rc == 0, r
    assert [s["server"]["name"] for s in r.json["servers"]] == \
        ["io.example/clock"]
    assert r.json["rejected_records"] == [{
        "index": 0, "name": "Bad Name!", "omitted": 6,
        "problems": [
            {"path": "$.server",
             "detail": 'missing required property "description"'},
            {"path": "$.server.name",
             "detail": 'does not match the pattern '
                       '"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"'},
            {"path": "$.server.title",
             "detail": "expected at least 1 character, got 0"},
            {"path": "$.server.repository",
             "detail": 'missing required property "url"'}]}]
    assert r.json["next_cursor"] is None
    h = reg_mcpd.ctl("catalog", is_json=False)
    assert h.rc == 0, h
    assert h.out == f"""registry {registry.url}: 1 server, 1 record rejected
io.example/clock  0.3.1  active  latest
  "Tells the time"
  package npm @example/clock-mcp@0.3.1 (stdio)
rejected (they do not conform to the registry's contract):
  [0] "Bad Name!"
    $.server: missing required property "description"
    $.server.name: does not match the pattern "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"
    $.server.title: expected at least 1 character, got 0
    $.server.repository: missing required property "url"
    6 more omitted
"""


@pytest.mark.parametrize("how", ["options", "environment"])
def test_problem_bounds_are_configurable(mcpd_factory, registry, pki, how):
    if how == "options":
        d = mcpd_factory(*registry_args(registry, pki, "--registry-problems",
                                        "2", "--registry-problem-chars",
                                        "24"))
    else:
        d = mcpd_factory(*registry_args(registry, pki),
                         env={"MCPD_REGISTRY_PROBLEMS": "2",
                              "MCPD_REGISTRY_PROBLEM_CHARS": "24"})
    registry.json(list_path(), page([TEN_PROBLEMS]))
    r = d.ctl("catalog")
    assert r.rc == 0, r
    assert r.json["limits"] == {"problems": 2, "problem_chars": 24,
                                "text_chars": 8192}
    assert r.json["rejected_records"] == [{
        "index": 0, "name": "Bad Name!", "omitted": 8,
        "problems": [
            {"path": "$.server",
             "detail": "missing required prop..."},
            {"path": "$.server.name",
             "detail": "does not match the pa..."}]}]


def test_latest_only_a_record_that_is_not_latest_is_rejected(
        reg_mcpd, registry):
    old = record("io.example/old", "0.9.0", latest=False)
    registry.json(list_path("o"), page([old, CLOCK]))
    r = reg_mcpd.ctl("search", "o")
    assert r.rc == 0, r
    assert r.json["servers"] == [CLOCK]
    assert r.json["rejected_records"] == [{
        "index": 0, "name": "io.example/old",
        "problems": [{
            "path": f'$._meta["{OFFICIAL}"].isLatest',
            "detail": "is false, but only the latest version was asked "
                      "for"}]}]


# --------------------------------------------------------------------------
# 2. Cursors: escaped on the way out, returned untouched, a 3-page walk

def test_a_cursor_that_needs_escaping_round_trips(reg_mcpd, registry):
    cursor = "c/2+=x y&z?#\u00e9'\"%"
    registry.json(list_path("w"), page([CLOCK], next_cursor=cursor))
    registry.json(list_path("w", cursor=cursor), page([WEATHER]))
    # The exact query mcpd sends for it.
    assert list_path("w", cursor=cursor) == (
        "/v0.1/servers?search=w&limit=20&cursor="
        "c%2F2%2B%3Dx%20y%26z%3F%23%C3%A9%27%22%25&version=latest")
    r = reg_mcpd.ctl("search", "w")
    assert r.rc == 0, r
    assert r.json["next_cursor"] == cursor
    assert r.json["response"]["metadata"]["nextCursor"] == cursor
    h = reg_mcpd.ctl("search", "w", is_json=False)
    assert h.out.endswith(
        "next page: --cursor 'c/2+=x y&z?#\u00e9'\\''\"%'\n"), h
    r2 = reg_mcpd.ctl("search", "w", "--cursor", r.json["next_cursor"])
    assert r2.rc == 0, r2
    assert r2.json["servers"] == [WEATHER]
    assert r2.json["query"] == {"search": "w", "limit": 20,
                                "cursor": cursor}
    assert r2.json["next_cursor"] is None
    assert registry.requests == [list_path("w"), list_path("w"),
                                 list_path("w", cursor=cursor)]


def test_a_cursor_with_control_characters_is_shown_as_a_shell_word(
        reg_mcpd, registry):
    cursor = "a\x1b[31mb\nc'"
    registry.json(list_path("w"), page([CLOCK], next_cursor=cursor))
    h = reg_mcpd.ctl("search", "w", is_json=False)
    assert h.rc == 0, h
    assert h.out.endswith("next page: --cursor $'a\\x1b[31mb\\x0ac\\''\n")
    assert "\x1b" not in h.out


def test_three_page_walk(reg_mcpd, registry):
    recs = [record(f"io.example/s{i}", description=f"Server {i}")
            for i in range(5)]
    registry.json(list_path(limit=2), page(recs[0:2], next_cursor="p2"))
    registry.json(list_path(limit=2, cursor="p2"),
                  page(recs[2:4], next_cursor="p3=="))
    registry.json(list_path(limit=2, cursor="p3=="), page(recs[4:5]))
    names, cursor, pages = [], None, 0
    while True:
        args = ["catalog", "--limit", "2"]
        if cursor is not None:
            args += ["--cursor", cursor]
        r = reg_mcpd.ctl(*args)
        assert r.rc == 0, r
        pages += 1
        names += [s["server"]["name"] for s in r.json["servers"]]
        cursor = r.json["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert names == [f"io.example/s{i}" for i in range(5)]
    assert registry.requests == [list_path(limit=2),
                                 list_path(limit=2, cursor="p2"),
                                 list_path(limit=2, cursor="p3==")]
    assert registry.requests[2] == \
        "/v0.1/servers?limit=2&cursor=p3%3D%3D&version=latest"
    h = reg_mcpd.ctl("catalog", "--limit", "2", "--cursor", "p3==",
                     is_json=False)
    assert h.out == f"""registry {registry.url}: 1 server
io.example/s4  1.0.0  active  latest
  "Server 4"
"""


# --------------------------------------------------------------------------
# 3. Failures are errors, never an empty or partial success

def fail_case(registry, how):
    """Sets the answer of the catalog's first page; returns the expected
    (code, kind, message) of the error."""
    url = search_url(registry)
    path = list_path()
    if how == "no-servers":
        registry.json(path, {"metadata": {"count": 0}})
        return UPSTREAM, "upstream", (
            f"the registry's page from {url} is malformed: it has no "
            f"servers array")
    if how == "500":
        registry.json(path, {"error": "database \x1b[31mdown\x1b[0m\nretry"},
                      status=500)
        return UPSTREAM, "upstream", (
            f"the registry at {url} answered HTTP 500: database "
            f"\\x1b[31mdown\\x1b[0m\\nretry")
    if how == "redirect":
        registry.raw(path, b"", status=302,
                     headers={"Location": registry.url + "/elsewhere"})
        return DENIED, "denied", (
            f"the registry at {url} answered HTTP 302; redirects are "
            f"refused")
    if how == "not-json":
        registry.raw(path, b"<html>oops</html>",
                     headers={"Content-Type": "text/html"})
        return UPSTREAM, "upstream", (
            f"the registry's answer from {url} is not JSON (invalid token "
            f"near '<' at line 1, column 1); it starts "
            f'"<html>oops</html>"')
    if how == "count":
        registry.json(path, {"servers": [CLOCK], "metadata": {"count": 2}})
        return UPSTREAM, "upstream", (
            f"the registry's page from {url} is malformed: pagination "
            f"failed: metadata.count says 2 records but the page holds 1")
    if how == "cursor-type":
        registry.json(path, {"servers": [CLOCK],
                             "metadata": {"nextCursor": 7}})
        return UPSTREAM, "upstream", (
            f"the registry's page from {url} is malformed: its "
            f"metadata.nextCursor is not a string")
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["no-servers", "500", "redirect",
                                 "not-json", "count", "cursor-type"])
def test_failures_are_errors(reg_mcpd, registry, how):
    code, kind, message = fail_case(registry, how)
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-catalog", {})
    assert (e.code, e.data["kind"], e.message) == (code, kind, message)
    h = reg_mcpd.ctl("catalog", is_json=False)
    assert (h.rc, h.out) == (1, ""), h
    assert h.err == f"mcpctl: {message}\n"
    # Nothing else was asked: no redirect followed, no retry.
    assert registry.requests == [list_path()] * 2


def test_500_error_data_has_the_registrys_text(reg_mcpd, registry):
    registry.json(list_path(), {"error": "database is down"}, status=500)
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-catalog", {})
    assert e.data == {"kind": "upstream", "status": 500,
                      "registry_error": "database is down"}


def test_the_same_cursor_again_is_a_failed_pagination(reg_mcpd, registry):
    registry.json(list_path(cursor="loop"),
                  page([CLOCK], next_cursor="loop"))
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-catalog",
                     {"cursor": "loop"})
    assert (e.code, e.message) == (UPSTREAM, (
        f"the registry's page from {search_url(registry, cursor='loop')} "
        f"is malformed: pagination failed: the page after the cursor "
        f"given names that same cursor as the next"))


@pytest.mark.parametrize("limit", [0, 101, -1])
def test_limit_out_of_range_is_refused_before_any_request(
        reg_mcpd, registry, limit):
    h = reg_mcpd.ctl("search", "x", "--limit", limit, is_json=False)
    assert (h.rc, h.out) == (2, ""), h
    assert h.err == (f"mcpctl: search: --limit needs a number from 1 to "
                     f"100, not '{limit}'\nsee mcpctl search --help\n")
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-search",
                     {"search": "x", "limit": limit})
    assert (e.code, e.message, e.data) == (
        INVALID_PARAMS, f"limit must be from 1 to 100, not {limit}",
        {"field": "limit"})
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-catalog",
                     {"limit": limit})
    assert e.code == INVALID_PARAMS
    assert registry.requests == []


def test_deadline(mcpd_factory, registry, pki):
    d = mcpd_factory(*registry_args(registry, pki, "--registry-timeout",
                                    "300"))
    registry.hang(list_path())
    # The message names the deadline mcpd kept (the client's own timeout
    # catches one never kept).
    e = rpc_error_of(d.rpc.result, "mcpd/registry-catalog", {})
    assert (e.code, e.message) == (UNAVAILABLE, (
        f"the registry at {search_url(registry)} did not answer within "
        f"300 ms (mcpd --registry-timeout){LOCAL_HINT}"))


def test_byte_limit(mcpd_factory, registry, pki):
    d = mcpd_factory(*registry_args(registry, pki, "--registry-max-bytes",
                                    "2048"))
    registry.json(list_path(), page([WEATHER] * 10))
    e = rpc_error_of(d.rpc.result, "mcpd/registry-catalog", {})
    assert (e.code, e.message) == (UPSTREAM, (
        "the registry's answer is larger than 2048 bytes (mcpd "
        "--registry-max-bytes)"))


def test_loopback_needs_the_opt_in(mcpd_factory, registry, pki):
    d = mcpd_factory("--registry", registry.url, "--ca-file", pki.ca,
                     "--registry-contract", CONTRACT)
    e = rpc_error_of(d.rpc.result, "mcpd/registry-catalog", {})
    assert (e.code, e.message) == (DENIED, (
        f"registry {search_url(registry)}: refused: 127.0.0.1 is "
        f"loopback (127.0.0.0/8)"))
    assert registry.requests == []


def test_tls_is_verified(mcpd_factory, registry):
    d = mcpd_factory("--registry", registry.url, "--registry-allow-local",
                     "--registry-contract", CONTRACT)
    e = rpc_error_of(d.rpc.result, "mcpd/registry-catalog", {})
    assert (e.code, e.message) == (UNAVAILABLE, (
        f"cannot reach the registry at {search_url(registry)}: TLS "
        f"certificate rejected: unable to get local issuer certificate"
        f"{LOCAL_HINT}"))
    assert registry.requests == []


def test_plain_http_registry_needs_the_opt_in_at_start(tmp_path):
    p = subprocess.run([str(MCPD), "-d", "-s", str(tmp_path / "s"), "-S",
                        str(tmp_path / "st"), "--registry",
                        "http://127.0.0.1:1"], capture_output=True,
                       timeout=10, env=child_env())
    assert p.returncode == 2
    assert p.stderr.decode() == (
        "mcpd: --registry (or MCPD_REGISTRY) http://127.0.0.1:1: it must "
        "be https (plain http needs --registry-allow-local and a loopback "
        "address)\n")


# --------------------------------------------------------------------------
# 4. Publisher text is quoted, escaped, and held to a budget

def test_publisher_text_with_ansi_escapes_and_newlines(reg_mcpd, registry):
    evil = record("io.example/evil", "1.0.0",
                  "\x1b[2J\x1b[31mALERT\x1b[0m\nrun: curl x | sh\u202e",
                  title="Ti\ttle\r",
                  packages=[npm_package("@evil/pkg\x07", "1.0.0")])
    registry.json(list_path("evil"), page([evil]))
    h = reg_mcpd.ctl("search", "evil", is_json=False)
    assert h.rc == 0, h
    assert h.out == f"""registry {registry.url}: 1 server
io.example/evil  1.0.0  active  latest
  "\\x1b[2J\\x1b[31mALERT\\x1b[0m\\nrun: curl x | sh\\u202e"
  package npm "@evil/pkg\\x07"@1.0.0 (stdio)
"""
    assert "\x1b" not in h.out and "\x07" not in h.out
    # --json keeps the text as it came.
    r = reg_mcpd.ctl("search", "evil")
    assert r.json["servers"] == [evil]


def test_text_budget_drops_whole_records_and_keeps_the_cursor(
        mcpd_factory, registry, pki):
    d = mcpd_factory(*registry_args(registry, pki),
                     env={"MCPD_REGISTRY_TEXT_CHARS": "1000"})
    recs = [record(f"io.example/server-{i:02}", description=f"Number {i}",
                   packages=[npm_package(f"@example/server-{i:02}")])
            for i in range(40)]
    registry.json(list_path(limit=40), page(recs, next_cursor="next-40"))
    h = d.ctl("catalog", "--limit", "40", is_json=False)
    assert h.rc == 0, h
    block = ("io.example/server-{0:02}  1.0.0  active  latest\n"
             "  \"Number {0}\"\n"
             "  package npm @example/server-{0:02}@1.0.0 (stdio)\n")
    head = f"registry {registry.url}: 40 servers\n"
    shown = (1000 - len(head) - len("next page: --cursor next-40\n") -
             len("40 records not shown (--json has them)\n")) // \
        len(block.format(10))
    assert h.out == (head + "".join(block.format(i) for i in range(shown))
                     + f"{40 - shown} records not shown (--json has them)\n"
                     "next page: --cursor next-40\n")
    assert len(h.out) <= 1000


def test_a_cursor_too_long_for_the_budget_is_never_cut(
        mcpd_factory, registry, pki):
    d = mcpd_factory(*registry_args(registry, pki, "--registry-text-chars",
                                    "1000"))
    cursor = "k" * 1500
    registry.json(list_path(), page([CLOCK], next_cursor=cursor))
    h = d.ctl("catalog", is_json=False)
    assert h.out == (f"registry {registry.url}: 1 server\n"
                     "io.example/clock  0.3.1  active  latest\n"
                     '  "Tells the time"\n'
                     "  package npm @example/clock-mcp@0.3.1 (stdio)\n"
                     "next page: the cursor is 1500 characters, too long "
                     "to show here; --json has it (next_cursor)\n")
    assert d.ctl("catalog").json["next_cursor"] == cursor


# --------------------------------------------------------------------------
# 5. info and versions

def test_info_of_a_version_with_build_metadata(reg_mcpd, registry):
    weather = record("io.example/weather", "1.2.0+build.5",
                     WEATHER["server"]["description"],
                     **{k: v for k, v in WEATHER["server"].items()
                        if k not in ("name", "version", "description",
                                     "repository")})
    path = "/v0.1/servers/io.example%2Fweather/versions/1.2.0%2Bbuild.5"
    registry.json(path, weather)
    r = reg_mcpd.ctl("info", "io.example/weather", "1.2.0+build.5")
    assert r.rc == 0, r
    assert r.json == {
        "source": "official", "registry": registry.url,
        "url": registry.url + path, "name": "io.example/weather",
        "version": "1.2.0+build.5",
        "limits": {"problems": 4, "problem_chars": 256,
                   "text_chars": 8192},
        "record": weather, "rejected_records": [], "response": weather}
    h = reg_mcpd.ctl("info", "io.example/weather", "1.2.0+build.5",
                     is_json=False)
    assert (h.rc, h.err) == (0, ""), h
    assert h.out == f"""registry {registry.url}
io.example/weather  1.2.0+build.5  active  latest  published 2025-09-01T10:00:00Z  updated 2025-09-02T11:00:00Z
  title: "Weather"
  "Weather forecasts from the example service"
  repository: https://github.com/io.example/weather (github)
  website: https://weather.example.com
  package npm @example/weather-mcp@1.2.0 (stdio)
    env WEATHER_API_KEY (required, secret): "Key of the weather service"
  remote streamable-http https://weather.example.com/mcp
    header Authorization (required, secret): "Bearer token"
  remote sse https://weather.example.com/sse
"""
    assert registry.requests == [path, path]


def test_info_latest_and_not_found(reg_mcpd, registry):
    path = "/v0.1/servers/io.example%2Fclock/versions/latest"
    registry.json(path, CLOCK)
    r = reg_mcpd.ctl("info", "io.example/clock")
    assert (r.rc, r.json["record"], r.json["version"]) == \
        (0, CLOCK, "latest")
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-info",
                     {"name": "io.example/none", "version": "2.0"})
    assert (e.code, e.message, e.data) == (NOT_FOUND, (
        "the registry has no io.example/none version 2.0: HTTP 404: "
        "Server not found"), {"kind": "not-found", "what": "registry-record",
                              "status": 404,
                              "registry_error": "Server not found"})
    h = reg_mcpd.ctl("info", "io.example/none", is_json=False)
    assert (h.rc, h.out) == (1, ""), h
    assert h.err == (
        "mcpctl: the registry has no io.example/none: HTTP 404: Server not "
        "found\nsee 'mcpctl search WORDS' for names, 'mcpctl versions "
        "NAME' for versions\n")


def test_info_of_a_record_that_does_not_conform(reg_mcpd, registry):
    path = "/v0.1/servers/io.example%2Fempty-repo/versions/latest"
    registry.json(path, EMPTY_REPO)
    r = reg_mcpd.ctl("info", "io.example/empty-repo")
    assert r.rc == 1, r
    assert r.json["record"] is None
    assert r.json["response"] == EMPTY_REPO
    assert r.json["rejected_records"] == [{
        "index": 0, "name": "io.example/empty-repo",
        "problems": [
            {"path": "$.server.repository",
             "detail": 'missing required property "url"'},
            {"path": "$.server.repository",
             "detail": 'missing required property "source"'}]}]
    h = reg_mcpd.ctl("info", "io.example/empty-repo", is_json=False)
    assert h.rc == 1, h
    assert h.out == f"""registry {registry.url}: no conforming record
rejected (they do not conform to the registry's contract):
  [0] io.example/empty-repo
    $.server.repository: missing required property "url"
    $.server.repository: missing required property "source"
"""
    assert h.err == ("mcpctl: the record does not conform to the "
                     "registry's contract; --json has it\n")


def test_info_of_another_name_or_version_is_rejected(reg_mcpd, registry):
    registry.json("/v0.1/servers/io.example%2Fclock/versions/0.3.0", CLOCK)
    r = reg_mcpd.ctl("info", "io.example/clock", "0.3.0")
    assert r.rc == 1, r
    assert r.json["rejected_records"][0]["problems"] == [{
        "path": "$.server.version",
        "detail": 'is "0.3.1", not the version asked for ("0.3.0")'}]
    registry.json("/v0.1/servers/io.example%2Fwatch/versions/latest", CLOCK)
    r = reg_mcpd.ctl("info", "io.example/watch")
    assert r.json["rejected_records"][0]["problems"] == [{
        "path": "$.server.name",
        "detail": 'is "io.example/clock", not the name asked for '
                  '("io.example/watch")'}]


def test_versions(reg_mcpd, registry):
    path = "/v0.1/servers/io.example%2Fclock/versions"
    v030 = record("io.example/clock", "0.3.0", "Tells the time",
                  latest=False, status="deprecated")
    other = record("io.example/other", "1.0.0")
    body = page([CLOCK, v030, other])
    registry.json(path, body)
    r = reg_mcpd.ctl("versions", "io.example/clock")
    assert r.rc == 0, r
    assert (r.json["servers"], r.json["response"]) == ([CLOCK, v030], body)
    assert r.json["rejected_records"] == [{
        "index": 2, "name": "io.example/other", "problems": [{
            "path": "$.server.name",
            "detail": 'is "io.example/other", not the name asked for '
                      '("io.example/clock")'}]}]
    h = reg_mcpd.ctl("versions", "io.example/clock", is_json=False)
    assert h.out == f"""registry {registry.url}: io.example/clock: 2 versions
  0.3.1  active  latest  published 2025-09-01T10:00:00Z  updated 2025-09-02T11:00:00Z
  0.3.0  deprecated  published 2025-09-01T10:00:00Z  updated 2025-09-02T11:00:00Z
rejected (they do not conform to the registry's contract):
  [2] io.example/other
    $.server.name: is "io.example/other", not the name asked for ("io.example/clock")
"""
    assert registry.requests == [path, path]


# --------------------------------------------------------------------------
# 6. The local catalog

def test_local_catalog_is_whole_and_found_by_name_category_capability(
        reg_mcpd, registry):
    r = reg_mcpd.ctl("catalog", "--source", "local")
    assert r.rc == 0, r
    bundled = json.loads(CATALOG.read_text())
    assert r.json == {"source": "local", "catalog": str(CATALOG),
                      "limits": {"problems": 4, "problem_chars": 256,
                                 "text_chars": 8192},
                      "query": {"search": None},
                      "servers": bundled["servers"],
                      "rejected_records": [], "count": len(LOCAL_NAMES)}
    assert len(LOCAL_NAMES) >= 20 and \
        len(set(LOCAL_NAMES)) == len(LOCAL_NAMES), LOCAL_NAMES

    def found(query):
        r = reg_mcpd.ctl("search", "--source", "local", query)
        assert r.rc == 0, r
        return [s["server"]["name"].split("/")[1] for s in r.json["servers"]]
    assert found("MEMORY") == ["server-memory"]                 # name
    assert found("knowledge-graph") == ["server-memory"]        # category
    assert found("prompts") == ["server-everything"]            # capability
    assert found("tools") == [n.split("/")[1] for n in LOCAL_NAMES]
    assert found("nothing-like-it") == []
    h = reg_mcpd.ctl("search", "--source", "local", "filesystem",
                     is_json=False)
    assert h.out == f"""local catalog {CATALOG}: 1 server
io.github.modelcontextprotocol/server-filesystem  2026.8.31
  "MCP server for filesystem access"
  package npm @modelcontextprotocol/server-filesystem@2026.8.31 (stdio)
"""
    h = reg_mcpd.ctl("info", "--source", "local",
                     "io.github.modelcontextprotocol/server-memory",
                     is_json=False)
    assert h.out == f"""local catalog {CATALOG}
io.github.modelcontextprotocol/server-memory  2026.8.31
  title: "Memory"
  "MCP server for enabling memory for Claude through a knowledge graph"
  repository: https://github.com/modelcontextprotocol/servers (github, src/memory)
  website: https://modelcontextprotocol.io
  package npm @modelcontextprotocol/server-memory@2026.8.31 (stdio)
    env MEMORY_FILE_PATH (optional): "Where the knowledge graph is kept (a relative path is taken from the package's directory; default memory.jsonl there)"
"""
    assert registry.requests == []


@pytest.mark.parametrize("args,field", [
    (("catalog", "--source", "local", "--limit", "5"), "limit"),
    (("search", "--source", "local", "x", "--cursor", "c"), "cursor"),
])
def test_local_catalog_refuses_limit_and_cursor(reg_mcpd, registry, args,
                                                field):
    h = reg_mcpd.ctl(*args, is_json=False)
    assert (h.rc, h.out) == (1, ""), h
    assert h.err == ("mcpctl: the local catalog is answered whole: limit "
                     "and cursor apply to the official registry only\n")
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-catalog",
                     {"source": "local", field: 5 if field == "limit"
                      else "c"})
    assert (e.code, e.data) == (INVALID_PARAMS, {"field": field})
    assert registry.requests == []


def test_local_never_overrides_official_and_errors_never_fall_back(
        reg_mcpd, registry):
    name = "io.github.modelcontextprotocol/server-memory"
    path = "/v0.1/servers/io.github.modelcontextprotocol%2Fserver-memory" \
        "/versions/latest"
    official = record(name, "9.9.9", "The registry's own record")
    registry.json(path, official)
    by_default = reg_mcpd.ctl("info", name)
    assert (by_default.json["source"], by_default.json["record"]) == \
        ("official", official)
    assert reg_mcpd.ctl("info", name, "--source", "any").json["record"] == \
        official
    local = reg_mcpd.ctl("info", name, "--source", "local").json
    assert (local["source"], local["record"]["server"]["version"]) == \
        ("local", "2026.8.31")
    # Only "no such server" lets the local catalog answer "any".
    del registry.answers[path]
    r = reg_mcpd.ctl("info", name, "--source", "any")
    assert r.rc == 0, r
    assert (r.json["source"], r.json["record"]["server"]["version"],
            r.json["official"]) == ("local", "2026.8.31", {
                "status": 404, "registry_error": "Server not found"})
    registry.json(path, {"error": "overloaded"}, status=503)
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-info",
                     {"name": name, "source": "any"})
    assert (e.code, e.message) == (UPSTREAM, (
        f"the registry at {registry.url}{path} answered HTTP 503: "
        f"overloaded"))
    # search goes to the registry unless told otherwise.
    registry.json(list_path("memory"), page([official]))
    assert reg_mcpd.ctl("search", "memory").json["servers"] == [official]
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-info",
                     {"name": "io.example/none", "source": "any"})
    assert (e.code, e.message) == (NOT_FOUND, (
        f"the registry has no such server and the local catalog "
        f"{CATALOG} has no io.example/none"))


def test_a_local_catalog_record_is_validated_too(mcpd_factory, registry, pki,
                                                 tmp_path):
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps(page([CLOCK, EMPTY_REPO])))
    d = mcpd_factory("--registry", registry.url, "--registry-contract",
                     CONTRACT, "--catalog", catalog)
    r = d.ctl("catalog", "--source", "local")
    assert (r.json["servers"], r.json["rejected_records"][0]["index"]) == \
        ([CLOCK], 1)


# --------------------------------------------------------------------------
# 7. Help and completion

def test_help_and_completion(reg_mcpd):
    from test_callflags import complete
    h = reg_mcpd.ctl("--help", is_json=False)
    for cmd in ("search QUERY", "catalog [--limit N]", "info NAME",
                "versions NAME"):
        assert f"\n  {cmd}" in h.out, h.out
    env = dict(reg_mcpd.env, MCPD_SOCKET=str(reg_mcpd.sock))
    m = str(MCPCTL)
    assert complete([m, "sea"], env)[0] == ["search"]
    assert complete([m, "search", "--source", ""], env)[0] == \
        ["local", "official"]
    assert complete([m, "info", "--source", ""], env)[0] == \
        ["any", "local", "official"]
    assert complete([m, "info", "io.github.modelcontextprotocol/server-m"],
                    env)[0] == ["io.github.modelcontextprotocol/server-memory"]
    assert complete([m, "catalog", "--"], env)[0] == \
        ["--cursor", "--help", "--limit", "--source"]


# --------------------------------------------------------------------------
# 8. A request whose client goes, or is cancelled, or meets a shutdown

def test_a_client_that_goes_or_cancels_leaves_nothing_waiting(
        reg_mcpd, registry):
    registry.hang(list_path())
    with reg_mcpd.client() as c:
        c.request("mcpd/registry-catalog", {})
        poll(lambda: registry.requests == [list_path()], what="the GET")
    with reg_mcpd.client() as c:
        id_ = c.request("mcpd/registry-catalog", {})
        poll(lambda: len(registry.requests) == 2, what="the second GET")
        c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id_}})
        # A cancelled request gets no answer; the next one does.
        registry.json(list_path("x"), page([CLOCK]))
        r = c.result("mcpd/registry-search", {"search": "x"})
        assert r["servers"] == [CLOCK]
        assert c.kept == {}
    assert reg_mcpd.proc.poll() is None


def test_shutdown_with_a_request_in_flight(reg_mcpd, registry):
    registry.hang(list_path())
    c = reg_mcpd.client()
    id_ = c.request("mcpd/registry-catalog", {})
    poll(lambda: registry.requests == [list_path()], what="the GET")
    with reg_mcpd.client() as s:
        assert s.result("mcpd/shutdown", timeout=20) == {}
    # The request in flight is answered (as failed) or dropped with its
    # connection; mcpd exits either way, and at once.
    try:
        resp = c.response(id_, timeout=10)
        assert resp["error"]["code"] == UNAVAILABLE, resp
    except ConnectionError:
        pass
    c.close()
    assert reg_mcpd.proc.wait(timeout=10) == 0


# --------------------------------------------------------------------------
# 9. Where the data is found without options

INSTALLED = Path("/usr/local/share/mcpd")


def test_data_is_found_beside_the_build_and_an_install(mcpd_factory,
                                                       tmp_path):
    # From build/: the source tree's data/ (unless installed by default).
    d = mcpd_factory()
    r = d.ctl("catalog", "--source", "local")
    assert r.rc == 0, r
    expect = INSTALLED / "catalog.json"
    assert r.json["catalog"] == str(expect if expect.exists() else CATALOG)
    assert r.json["count"] == len(json.loads(Path(r.json["catalog"])
                                             .read_text())["servers"])
    assert r.json["rejected_records"] == []
    # Installed under another prefix than the one compiled in.
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "share" / "mcpd" / "registry").mkdir(parents=True)
    shutil.copy(MCPD, prefix / "bin" / "mcpd")
    shutil.copy(CATALOG, prefix / "share" / "mcpd" / "catalog.json")
    shutil.copy(CONTRACT, prefix / "share" / "mcpd" / "registry")
    sock = tmp_path / "s.sock"
    p = subprocess.Popen([str(prefix / "bin" / "mcpd"), "-d", "-s",
                          str(sock), "-S", str(tmp_path / "state")],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=child_env(),
                         start_new_session=True)
    try:
        poll(lambda: sock.exists(), what="the copy of mcpd to listen")
        r = run_ctl(sock, "catalog", "--source", "local", env=child_env())
        assert r.rc == 0, r
        expect = INSTALLED / "catalog.json"
        assert r.json["catalog"] == str(
            expect if expect.exists() else
            prefix / "share" / "mcpd" / "catalog.json")
        assert run_ctl(sock, "shutdown", env=child_env()).rc == 0
        assert p.wait(timeout=15) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_names_and_versions_longer_than_the_contract_are_refused(
        reg_mcpd, registry):
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-info",
                     {"name": "a/" + "b" * 199})
    assert (e.code, e.message, e.data) == (
        INVALID_PARAMS, "name is longer than the registry allows (200 "
        "characters)", {"field": "name"})
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-info",
                     {"name": "a/b", "version": "1" * 256})
    assert (e.code, e.data) == (INVALID_PARAMS, {"field": "version"})
    e = rpc_error_of(reg_mcpd.rpc.result, "mcpd/registry-versions",
                     {"name": "a/" + "b" * 199})
    assert (e.code, e.data) == (INVALID_PARAMS, {"field": "name"})
    assert registry.requests == []


def test_local_catalog_takes_short_names(reg_mcpd, registry):
    """load/info --source local take the last part of a name (with or
    without its "server-"), when one record has it."""
    for short in ("memory", "server-memory",
                  "io.github.modelcontextprotocol/server-memory"):
        r = reg_mcpd.ctl("info", "--source", "local", short)
        assert r.rc == 0, r
        assert r.json["name"] == \
            "io.github.modelcontextprotocol/server-memory", r.json
    r = reg_mcpd.ctl("load", "--source", "local", "playwright-mcp",
                     "--dry-run")
    assert r.rc == 0, r
    assert r.json["params"]["command"][:3] == [
        "npx", "-y", "@playwright/mcp@0.0.83"], r.json
    r = reg_mcpd.ctl("info", "--source", "local", "memroy", is_json=False)
    assert r.rc == 1 and r.err.startswith(
        f"mcpctl: the local catalog {CATALOG} has no memroy\n"), r
    assert registry.requests == []


def test_the_local_packages_are_the_peers_tested(reg_mcpd):
    """Each catalog package that the tests install (tests/peers) names
    the very package and version npm installed."""
    lock = json.loads((REPO / "tests" / "peers" /
                       "package-lock.json").read_text())["packages"]
    checked = 0
    for rec in json.loads(CATALOG.read_text())["servers"]:
        for pkg in rec["server"]["packages"]:
            got = lock.get(f"node_modules/{pkg['identifier']}")
            if pkg["registryType"] != "npm" or got is None:
                continue
            assert got["version"] == pkg["version"], (pkg, got)
            checked += 1
    assert checked >= 1


@pytest.mark.parametrize("args,hint", [
    (("search", "memory"), "; the local catalog has 1 server matching "
     "memory: --source local lists it"),
    (("info", "io.github.modelcontextprotocol/server-memory"),
     "; the local catalog has io.github.modelcontextprotocol/server-memory: "
     "--source local uses it"),
    (("load", "io.github.modelcontextprotocol/server-memory", "--dry-run"),
     "; the local catalog has io.github.modelcontextprotocol/server-memory: "
     "--source local uses it"),
    (("search", "nothing-like-it"), None),
])
def test_an_unreachable_registry_names_the_local_catalog(mcpd_factory,
                                                         args, hint):
    """The registry cannot be reached: one line that says so, and names
    --source local when the local catalog has a match; it never answers
    from the local catalog by itself."""
    port = free_port()
    d = mcpd_factory("--registry", f"https://127.0.0.1:{port}",
                     "--registry-allow-local", "--catalog", CATALOG)
    r = d.ctl(*args, is_json=False)
    assert (r.rc, r.out) == (1, ""), r
    (line,) = r.err.splitlines()
    assert line.startswith(f"mcpctl: cannot reach the registry at "
                           f"https://127.0.0.1:{port}/v0.1/servers"), line
    if hint is None:
        assert line.endswith(": Connection refused"), line
    else:
        assert line.endswith(": Connection refused" + hint), line
    assert d.list() == []
