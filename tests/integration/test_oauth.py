# SPDX-License-Identifier: ISC
"""OAuth 2.1 for remote servers (issue 14): a login through mcpd's loopback
listener, tokens that survive a restart but never show up in files, logs or
command lines, refresh before expiry and on a 401, a load that gets no
login in time (it fails saying to run mcpctl auth login, which prints the
URL and runs xdg-open), a refresh refused after a restart (listed as
needing login, not retried), logout, and refusals: an
authorization server at a private address, metadata of another issuer, a
token endpoint that redirects, a callback with the wrong state, a second
use of a code, and a callback from a non-loopback peer.

The peer is remote/oauthserver.py: an MCP server that answers 401 without
a live token, and its authorization server, on one loopback port. The test
plays the browser: it polls mcpd/auth-status for the authorization URL,
GETs it (the server approves at once and answers 302), then GETs the
redirect, which is mcpd's listener on 127.0.0.1."""

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import MCPCTL, RpcError, all_procs, cmdline, poll

HERE = Path(__file__).resolve().parent
OAUTHSERVER = HERE / "remote" / "oauthserver.py"


class OAuthServer:
    """remote/oauthserver.py as a peer; what it logged, parsed."""

    def __init__(self, peers, *args):
        self.proc = peers([sys.executable, OAUTHSERVER, *args],
                          name="oauthserver")
        self.port = int(self.proc.wait_output(r"^listening on (\d+)$")
                        .group(1))
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = f"{self.base}/mcp"

    def records(self):
        return [json.loads(line) for line in self.proc.out().splitlines()
                if line.startswith("{")]

    def paths(self):
        return [r["path"] for r in self.records()]

    def token_requests(self, grant=None):
        return [r for r in self.records() if r["path"] == "/token" and
                (grant is None or r.get("grant_type") == grant)]

    def issued(self):
        """Every access and refresh token the server handed out."""
        out = []
        for r in self.token_requests():
            out += list((r.get("issued") or {}).values())
        return out

    def bearers(self):
        return [r.get("bearer") for r in self.records()
                if r["path"] == "/mcp" and r.get("bearer")]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def authorize(url):
    """The browser's first hop: the Location the server redirects to."""
    opener = urllib.request.build_opener(_NoRedirect)
    with pytest.raises(urllib.error.HTTPError) as e:
        opener.open(url, timeout=10)
    assert e.value.code == 302, e.value
    return e.value.headers["Location"]


def get(url):
    """(status, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def auth_status(d, name):
    out = d.ctl("auth", "status", name)
    assert out.rc == 0, out
    return out.json


def wait_auth_url(d, name, timeout=20.0):
    def check():
        out = d.ctl("auth", "status", name)
        return out.rc == 0 and out.json.get("authorization_url")
    return poll(check, timeout=timeout, interval=0.05,
                what=f"an authorization URL for {name}")


class Background:
    """A blocking mcpd request on a connection of its own, in a thread."""

    def __init__(self, d, method, params, timeout=60.0):
        self.result = self.error = None

        def run():
            try:
                with d.client(timeout=timeout) as c:
                    self.result = c.result(method, params, timeout=timeout)
            except RpcError as e:
                self.error = e
        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self, timeout=60.0):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the request did not end"
        return self


def load_params(srv, name="oa", **params):
    params = dict(params, target=srv.url, name=name, allow_local=True)
    params.setdefault("persist", False)
    params.setdefault("timeout_ms", 30000)
    return params


def login_load(d, srv, name="oa", **params):
    """mcpd/load that needs a login, with the browser's part played."""
    bg = Background(d, "mcpd/load", load_params(srv, name, **params))
    url = wait_auth_url(d, name)
    status, body = get(authorize(url))
    assert (status, body) == (
        200, "mcpd: authorization received; mcpd finishes the login, "
        "you may close this window\n")
    bg.join()
    assert bg.error is None, bg.error
    return bg.result, url


@pytest.fixture
def keyed(mcpd_factory):
    """Daemons sharing a base dir and a secret key outside the state dir."""
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    key = base / "config" / "secrets.key"
    key.parent.mkdir(mode=0o700)

    def start():
        return mcpd_factory("--secrets-key", key, base=base)
    return start


def files_bytes(root):
    out = b""
    for p in Path(root).rglob("*"):
        if p.is_file():
            out += p.read_bytes()
    return out


def assert_hidden(tokens, d, stderr_texts):
    """No token in the state dir, mcpd's stderr, or any command line."""
    assert tokens
    state = files_bytes(d.state)
    for t in tokens:
        assert t.encode() not in state, f"{t} is in the state dir"
        for text in stderr_texts:
            assert t not in text, f"{t} is in mcpd's stderr"
        for pid in all_procs():
            args = cmdline(pid) or []
            assert not any(t in a for a in args), \
                f"{t} is on the command line of {pid}: {args}"


# --------------------------------------------------------------------------
# A login, a restart, the secrets, logout

def test_login_restart_reuses_tokens_never_shown_and_logout_removes(
        keyed, peers):
    srv = OAuthServer(peers)
    d1 = keyed()
    result, url = login_load(d1, srv, persist=True)
    assert (result["name"], result["tools"], result["protocol_version"]) == \
        ("oa", 1, "2025-06-18")
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert q["code_challenge_method"] == ["S256"]
    assert q["resource"] == [srv.url]
    assert q["scope"] == ["mcp"]
    assert q["redirect_uri"][0].startswith("http://127.0.0.1:")
    assert d1.call("oa", "whoami")["content"][0]["text"] == "ok"
    (code,) = srv.token_requests("authorization_code")
    access = code["issued"]["access_token"]
    st = auth_status(d1, "oa")
    assert (st["state"], st["issuer"], st["scope"], st["has_refresh_token"],
            st["registration"]) == \
        ("authorized", srv.base, "mcp", True, "dynamic")
    assert access not in json.dumps(st)
    assert d1.row("oa")["auth"] == "authorized"
    assert d1.stop() == []

    d2 = keyed()
    poll(lambda: (d2.row("oa") or {}).get("state") == "ready", timeout=20,
         what="oa restored")
    assert d2.call("oa", "whoami")["content"][0]["text"] == "ok"
    # The same token: no new token request, no new login.
    assert len(srv.token_requests()) == 1
    assert srv.paths().count("/authorize") == 1
    assert srv.bearers()[-1] == access
    assert_hidden(srv.issued(), d2,
                  [d1.read_stderr(), d2.read_stderr()])

    out = d2.ctl("auth", "logout", "oa")
    assert out.rc == 0 and out.json == {"server": "oa", "removed": True}, out
    secrets = d2.ctl("secret", "list", "--all")
    assert secrets.rc == 0, secrets
    assert not [n for n in secrets.json["names"] if n.endswith(".oauth")]
    assert auth_status(d2, "oa")["state"] == "none"
    # Without a token the server refuses; the call says how to log in.
    out = d2.ctl("call", "oa", "whoami", "--timeout", "1500")
    assert out.rc == 1, out
    assert "needs authorization: open http://" in out.json["message"], out
    assert "mcpctl auth login oa" in out.json["message"], out
    out = d2.ctl("auth", "logout", "oa")
    assert out.json == {"server": "oa", "removed": False}, out


def test_token_is_refreshed_before_it_expires(mcpd_factory, peers):
    srv = OAuthServer(peers, "--expires-in", "4")
    d = mcpd_factory()
    login_load(d, srv)
    time.sleep(3)   # within half its life of the end: refreshed first
    assert d.call("oa", "whoami")["content"][0]["text"] == "ok"
    (refresh,) = srv.token_requests("refresh_token")
    assert refresh["resource"] == srv.url
    assert srv.bearers()[-1] == refresh["issued"]["access_token"]
    assert srv.paths().count("/authorize") == 1


def test_refresh_on_401(mcpd_factory, peers):
    srv = OAuthServer(peers)
    d = mcpd_factory()
    login_load(d, srv)
    assert get(srv.base + "/revoke-access") == (204, "")
    # The call's 401 is followed by a refresh, and the call goes again.
    assert d.call("oa", "whoami")["content"][0]["text"] == "ok"
    (refresh,) = srv.token_requests("refresh_token")
    assert srv.bearers()[-1] == refresh["issued"]["access_token"]
    assert srv.paths().count("/authorize") == 1
    assert auth_status(d, "oa")["state"] == "authorized"


def test_load_without_login_fails_then_auth_login_opens_browser(
        mcpd_factory, peers, tmp_path):
    srv = OAuthServer(peers)
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key")
    out = d.ctl("load", "--allow-local", "--name", "oa", "--timeout", "1500",
                srv.url)
    assert out.rc == 1, out
    assert "cannot load oa: " in out.json["message"], out
    assert "needs authorization: open http://127.0.0.1:" in \
        out.json["message"], out
    assert "or run `mcpctl auth login oa`" in out.json["message"], out
    row = d.row("oa")
    assert (row["state"], row["auth"], row["persistent"]) == \
        ("failed", "pending", True), row
    human = d.ctl("list", is_json=False)
    assert human.rc == 0 and " needs-login " in human.out, human
    # auth login shows the pending URL and runs xdg-open with it.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    opened = tmp_path / "opened"
    (bindir / "xdg-open").write_text(
        f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {opened}\n")
    (bindir / "xdg-open").chmod(0o755)
    env = dict(d.env, PATH=f"{bindir}:{d.env.get('PATH', '/usr/bin:/bin')}",
               DISPLAY=":99")
    proc = subprocess.Popen(
        [str(MCPCTL), "-s", str(d.sock), "auth", "login", "oa"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    url = poll(lambda: opened.exists() and opened.read_text().strip(),
               timeout=15, what="xdg-open to run")
    assert url == auth_status(d, "oa")["authorization_url"]
    assert get(authorize(url))[0] == 200
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, (out, err)
    assert f"open this URL in a browser:\n\n  {url}\n" in err, err
    assert out.startswith("logged in; reloaded oa (id "), out
    assert d.row("oa")["state"] == "ready"
    assert d.call("oa", "whoami")["content"][0]["text"] == "ok"


def test_refused_refresh_after_restart_is_listed_as_needing_login(
        keyed, peers):
    srv = OAuthServer(peers, "--expires-in", "4", "--refresh-fails")
    d1 = keyed()
    _, first = login_load(d1, srv, persist=True)
    assert d1.stop() == []
    time.sleep(4.5)
    d2 = keyed()
    row = poll(lambda: (r := d2.row("oa")) and r["state"] == "failed" and r,
               timeout=20, what="oa to fail")
    assert row["auth"] == "needs-login", row
    assert "mcpctl auth login oa" in row["last_error"], row
    assert "its refresh token was refused" in row["last_error"], row
    time.sleep(3)   # not retried in a loop
    row = d2.row("oa")
    assert (row["state"], row["restarts"]) == ("failed", 0), row
    assert len(srv.token_requests("refresh_token")) == 1
    assert srv.paths().count("/authorize") == 1

    bg = Background(d2, "mcpd/auth-login", {"server": "oa"})
    url = wait_auth_url(d2, "oa")
    # A fresh port and state for each attempt.
    assert callback_parts(url)[0] != callback_parts(first)[0]
    assert callback_parts(url)[1] != callback_parts(first)[1]
    assert get(authorize(url))[0] == 200
    bg.join()
    assert bg.error is None, bg.error
    assert (bg.result["name"], bg.result["tools"]) == ("oa", 1)
    assert d2.row("oa")["state"] == "ready"
    assert d2.call("oa", "whoami")["content"][0]["text"] == "ok"


# --------------------------------------------------------------------------
# Refusals

def load_error(d, srv, timeout=30.0):
    with pytest.raises(RpcError) as e:
        d.rpc.result("mcpd/load", load_params(srv), timeout=timeout)
    return e.value


def test_authorization_server_at_private_address_is_refused(mcpd, peers):
    srv = OAuthServer(peers, "--as-url", "http://10.1.2.3:8080")
    err = load_error(mcpd, srv)
    assert err.data["kind"] == "unavailable", err
    assert ("authorization of oa failed: http://10.1.2.3:8080/.well-known/"
            "oauth-authorization-server: refused: 10.1.2.3 is private "
            "(RFC 1918)") in err.message, err
    assert "(RFC 1918) (" not in err.message, err
    assert srv.paths() == ["/mcp", "/.well-known/oauth-protected-resource/mcp",
                           "/mcp"]


def test_metadata_of_another_issuer_is_not_used(mcpd, peers):
    srv = OAuthServer(peers, "--issuer", "https://attacker.example")
    err = load_error(mcpd, srv)
    assert (f"the authorization server metadata at {srv.base}/.well-known/"
            f"oauth-authorization-server names the issuer "
            f"https://attacker.example, not {srv.base}") in err.message, err
    assert not {"/register", "/authorize", "/token"} & set(srv.paths())


def test_token_endpoint_redirect_is_not_followed(mcpd, peers):
    trap = socket.socket()
    trap.bind(("127.0.0.1", 0))
    trap.listen(4)
    trap.setblocking(False)
    target = f"http://127.0.0.1:{trap.getsockname()[1]}/steal"
    srv = OAuthServer(peers, "--token-redirect", target)
    bg = Background(mcpd, "mcpd/load", load_params(srv))
    assert get(authorize(wait_auth_url(mcpd, "oa")))[0] == 200
    bg.join()
    assert bg.error is not None
    assert (f"{srv.base}/token answered HTTP 307, a redirect to {target}; "
            f"mcpd never follows redirects") in bg.error.message, bg.error
    with pytest.raises(BlockingIOError):
        trap.accept()
    trap.close()


def callback_parts(url):
    q = {k: v[0] for k, v in urllib.parse.parse_qs(
        urllib.parse.urlsplit(url).query).items()}
    return q["redirect_uri"], q["state"]


def test_callback_with_another_state_is_refused(mcpd, peers):
    srv = OAuthServer(peers)
    bg = Background(mcpd, "mcpd/load", load_params(srv))
    url = wait_auth_url(mcpd, "oa")
    redirect, state = callback_parts(url)
    status, body = get(redirect + "?code=forged&state=not-" + state)
    assert (status, body) == (400, "mcpd: refused: the state does not match "
                              "this login attempt; start again with mcpctl "
                              "auth login\n")
    # The attempt goes on: the real answer still works.
    assert get(authorize(url))[0] == 200
    bg.join()
    assert bg.error is None and bg.result["tools"] == 1, bg.error
    assert len(srv.token_requests()) == 1


def test_second_use_of_a_code_is_refused(mcpd, peers):
    srv = OAuthServer(peers)
    bg = Background(mcpd, "mcpd/load", load_params(srv))
    location = authorize(wait_auth_url(mcpd, "oa"))
    assert get(location)[0] == 200
    bg.join()
    assert bg.error is None, bg.error
    # One use: the listener's port is closed.
    with pytest.raises(urllib.error.URLError) as e:
        urllib.request.urlopen(location, timeout=5)
    assert isinstance(e.value.reason, ConnectionRefusedError), e.value
    assert len(srv.token_requests("authorization_code")) == 1


def non_loopback_address():
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True,
                         text=True, check=True).stdout
    addrs = [line.split()[3].split("/")[0] for line in out.splitlines()]
    addrs = [a for a in addrs if not a.startswith("127.")]
    assert addrs, "this test needs a non-loopback IPv4 address on the machine"
    return addrs[0]


def test_callback_from_a_non_loopback_peer_is_refused(mcpd, peers):
    """Linux lets a socket bound to the machine's own non-loopback address
    connect to 127.0.0.1: the listener sees that address as its peer."""
    srv = OAuthServer(peers)
    bg = Background(mcpd, "mcpd/load", load_params(srv))
    url = wait_auth_url(mcpd, "oa")
    redirect, state = callback_parts(url)
    port = urllib.parse.urlsplit(redirect).port
    s = socket.socket()
    s.bind((non_loopback_address(), 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /callback?code=x&state={state} HTTP/1.1\r\n"
              f"Host: 127.0.0.1:{port}\r\n\r\n".encode())
    reply = b""
    while b"\r\n\r\n" not in reply or not reply.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        reply += chunk
    s.close()
    assert reply.startswith(b"HTTP/1.1 403 "), reply
    assert reply.endswith(b"mcpd: refused: the authorization response must "
                          b"come from this machine\n"), reply
    assert get(authorize(url))[0] == 200
    bg.join()
    assert bg.error is None and bg.result["tools"] == 1, bg.error


def test_bash_completion_of_auth(mcpd, peers):
    from test_callflags import complete
    srv = OAuthServer(peers)
    login_load(mcpd, srv)
    env = dict(mcpd.env, MCPD_SOCKET=str(mcpd.sock))
    m = str(MCPCTL)
    assert complete([m, "aut"], env)[0] == ["auth"]
    assert complete([m, "auth", ""], env)[0] == ["login", "logout", "status"]
    assert complete([m, "auth", "login", "o"], env)[0] == ["oa"]
    assert complete([m, "auth", "--timeout", "5", "logout", ""], env)[0] == \
        ["oa"]
    assert complete([m, "auth", "--"], env)[0] == \
        ["--help", "--no-browser", "--timeout"]
    got = complete([m, "load", "--oauth"], env)[0]
    assert got == ["--oauth-client-id", "--oauth-client-secret",
                   "--oauth-issuer"], got
