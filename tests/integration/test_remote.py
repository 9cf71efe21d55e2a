# SPDX-License-Identifier: ISC
"""Remote endpoints: mcpd/load of a URL against the real
@modelcontextprotocol/server-everything in streamableHttp mode on loopback,
the server killed and restarted under the daemon's feet, TLS for real (a CA
made here with openssl, socat terminating TLS in front of server-everything),
and the URL policy (literal addresses, DNS answers from a resolver the test
runs, credentials, fragments, plain http, redirects).

Helpers under remote/: dnsserver.py (a tiny UDP DNS server answering the A
and AAAA records it is given) and redirector.py (an HTTP server that answers
3xx, to everything or only to tools/call)."""

import http.client
import json
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from conftest import (DENIED, EVERYTHING_JS, INVALID_PARAMS, NODE,
                      OUTCOME_UNKNOWN, SERVER_ID, TESTSERVER, TIMEOUT, UNAVAILABLE,
                      RpcError, UPSTREAM_CAPABILITIES,
                      free_port, poll, rpc_error_of, wait_listening)

HERE = Path(__file__).resolve().parent
DNSSERVER = HERE / "remote" / "dnsserver.py"
REDIRECTOR = HERE / "remote" / "redirector.py"
SOCAT = shutil.which("socat")
OPENSSL = shutil.which("openssl")


def need(exe, what):
    assert exe, (f"{what} is missing: run scripts/install-deps "
                 f"--test-peers")
    return exe


# --------------------------------------------------------------------------
# server-everything over Streamable HTTP

class Everything:
    """server-everything in streamableHttp mode on 0.0.0.0:port, path /mcp.
    It logs on stdout "Session initialized with ID: X" and "Received session
    termination request for session X"."""

    def __init__(self, peers, port=None):
        assert EVERYTHING_JS.is_file(), (
            f"{EVERYTHING_JS} is missing: run scripts/install-deps "
            f"--test-peers (npm ci in tests/peers)")
        self.peers = peers
        self.port = port or free_port()
        self.proc = None
        self.start()

    def start(self):
        self.proc = self.peers([NODE, EVERYTHING_JS, "streamableHttp"],
                               name="everything",
                               env={"PORT": str(self.port)})
        self.proc.wait_output(
            rf"MCP Streamable HTTP Server listening on port {self.port}\b",
            stream="err")
        wait_listening(self.port, proc=self.proc)
        return self

    def url(self, host="127.0.0.1"):
        return f"http://{host}:{self.port}/mcp"

    def sessions(self):
        return re.findall(r"Session initialized with ID: (\S+)",
                          self.proc.out())

    def terminated(self):
        return re.findall(
            r"Received session termination request for session (\S+)",
            self.proc.out())


@pytest.fixture
def everything(peers):
    return Everything(peers)


class HttpMcp:
    """A direct MCP client over Streamable HTTP (plain http), bypassing mcpd,
    to learn what the server itself says. It waits for the 202 of
    notifications/initialized before it lists, as the TypeScript SDK does."""

    def __init__(self, url):
        u = urlsplit(url)
        self.host, self.port, self.path = u.hostname, u.port, u.path
        self.session = None
        self.next_id = 1

    def post(self, msg):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = "2025-11-25"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=20)
        try:
            conn.request("POST", self.path, json.dumps(msg), headers)
            resp = conn.getresponse()
            body = resp.read().decode()
            sid = resp.getheader("mcp-session-id")
            if sid:
                self.session = sid
            ctype = resp.getheader("content-type") or ""
        finally:
            conn.close()
        if resp.status == 202:
            return []
        assert resp.status == 200, f"HTTP {resp.status}: {body[:500]}"
        if ctype.startswith("application/json"):
            return [json.loads(body)]
        msgs, data = [], []
        for line in body.replace("\r\n", "\n").split("\n"):
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif line == "" and data:
                # A priming event (an id and empty data) carries nothing.
                if "".join(data).strip():
                    msgs.append(json.loads("\n".join(data)))
                data = []
        return msgs

    def request(self, method, params=None):
        id_ = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        for m in self.post(msg):
            if m.get("id") == id_:
                assert "result" in m, f"{method} failed: {m}"
                return m["result"]
        raise AssertionError(f"no answer to {method}")

    def initialize(self):
        # The capabilities mcpd offers (server-everything registers tools
        # that depend on them after initialized).
        result = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": UPSTREAM_CAPABILITIES,
            "clientInfo": {"name": "mcpd-integration-tests",
                           "version": "1"}})
        assert self.post({"jsonrpc": "2.0",
                          "method": "notifications/initialized"}) == []
        return result

    def tools(self):
        tools, cursor = [], None
        while True:
            r = self.request("tools/list", {"cursor": cursor} if cursor
                             else {})
            tools += r["tools"]
            cursor = r.get("nextCursor")
            if cursor is None:
                return tools

    def close(self):
        if not self.session:
            return
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request("DELETE", self.path, headers={
                "Mcp-Session-Id": self.session})
            conn.getresponse().read()
        finally:
            conn.close()


def direct_http_tools(url):
    c = HttpMcp(url)
    try:
        c.initialize()
        return c.tools()
    finally:
        c.close()


def text_of(result):
    return [c["text"] for c in result["content"] if c.get("type") == "text"]


# --------------------------------------------------------------------------
# 1. Load, list, tools, call, unload

def test_load_everything_with_mcpctl_and_unload_by_canonical_endpoint(
        mcpd, everything):
    expected = sorted(t["name"] for t in direct_http_tools(everything.url()))
    assert {"echo", "get-structured-content", "get-sum"} <= set(expected)
    before = set(everything.sessions())

    # A non-canonical spelling: upper-case scheme and host.
    given = f"HTTP://LOCALHOST:{everything.port}/mcp"
    canonical = f"http://localhost:{everything.port}/mcp"
    r = mcpd.ctl("load", "--allow-local", given)
    assert r.rc == 0, r
    j = r.json
    assert SERVER_ID.match(j["id"]), j
    assert j["name"] == "localhost"
    assert j["mode"] == "remote"
    assert j["transport"] == "streamable-http"
    assert j["endpoint"] == canonical
    assert j["protocol_version"] == "2025-11-25"
    assert j["server_info"]["name"] == "mcp-servers/everything"
    assert j["tools"] == len(expected), (
        f"the load counted {j['tools']} tools, server-everything lists "
        f"{len(expected)}: {expected}")
    (session,) = set(everything.sessions()) - before

    rows = mcpd.ctl("list").json["servers"]
    assert len(rows) == 1, rows
    row = rows[0]
    assert row["id"] == j["id"]
    assert row["mode"] == "remote"
    assert row["transport"] == "streamable-http"
    assert row["endpoint"] == canonical
    assert row["state"] == "ready"
    assert row["protocol_version"] == "2025-11-25"
    assert row["tools"] == len(expected)
    assert row["pid"] is None
    assert row["last_error"] is None

    r = mcpd.ctl("tools", "localhost")
    assert r.rc == 0, r
    tools = r.json["tools"]
    assert sorted(t["name"] for t in tools) == expected
    gen = row["generation"]
    assert {t["handle"] for t in tools} == {
        f"localhost.{gen}/{n}" for n in expected}

    r = mcpd.ctl("call", "localhost", "echo", "message=hello over http")
    assert r.rc == 0, r
    assert text_of(r.json) == ["Echo: hello over http"]

    r = mcpd.ctl("call", "localhost", "get-structured-content",
                 "location=Chicago")
    assert r.rc == 0, r
    sc = r.json["structuredContent"]
    assert set(sc) == {"temperature", "conditions", "humidity"}, sc
    assert [json.loads(t) for t in text_of(r.json)] == [sc]

    # Unload with the canonical form of what was given.
    r = mcpd.ctl("unload", canonical)
    assert r.rc == 0, r
    assert r.json["id"] == j["id"] and r.json["name"] == "localhost"
    assert r.json["stopped_live"] is True
    assert mcpd.list() == []
    # The daemon ended the session: server-everything logs each DELETE.
    poll(lambda: session in everything.terminated(), timeout=10,
         what=f"server-everything to log the DELETE of session {session}")


def test_load_everything_raw(mcpd, everything):
    expected = sorted(t["name"] for t in direct_http_tools(everything.url()))
    r = mcpd.load_url(everything.url(), allow_local=True)
    assert r["name"] == "127-0-0-1"
    assert r["mode"] == "remote" and r["transport"] == "streamable-http"
    assert r["endpoint"] == everything.url()
    assert r["tools"] == len(expected)
    assert r["persistent"] is False
    (row,) = mcpd.list()
    assert row["state"] == "ready" and row["tools"] == len(expected)

    tools = mcpd.tools("127-0-0-1")
    assert sorted(t["name"] for t in tools) == expected
    echo = next(t for t in tools if t["name"] == "echo")
    assert echo["server"] == "127-0-0-1"
    res = mcpd.rpc.result("mcpd/call", {
        "handle": echo["handle"], "arguments": {"message": "raw"}})
    assert text_of(res) == ["Echo: raw"]
    res = mcpd.call("127-0-0-1", "get-sum", {"a": 2, "b": 40})
    assert "42" in text_of(res)[0]

    # A remote server has no stderr: its log holds mcpd's own notes, and
    # mcpctl logs says so.
    out = mcpd.rpc.result("mcpd/logs", {"server": "127-0-0-1"})
    assert out["note"] == ("a remote server has no stderr: these lines are "
                           "mcpd's own notes about its connection"), out
    assert [l for l in out["lines"] if not l.startswith("[mcpd ")] == []
    assert any(" connected: generation " in l for l in out["lines"]), out
    c = mcpd.ctl("logs", "127-0-0-1", is_json=False)
    assert c.rc == 0 and "a remote server has no stderr" in c.err, c

    # A second load of the same endpoint is the same server.
    again = mcpd.load_url(everything.url(), allow_local=True)
    assert again["id"] == r["id"] and again["generation"] == r["generation"]
    assert len(everything.sessions()) == 2     # the direct one and mcpd's

    out = mcpd.rpc.result("mcpd/unload", {"target": r["id"]})
    assert out["stopped_live"] is True
    assert mcpd.list() == []
    poll(lambda: set(everything.sessions()) <= set(everything.terminated()),
         timeout=10, what="every session to be ended")


def test_unknown_tool_and_bad_arguments_over_http(mcpd, everything):
    mcpd.load_url(everything.url(), allow_local=True)
    e = rpc_error_of(mcpd.call, "127-0-0-1", "no-such-tool")
    assert e.data["kind"] in ("not-found", "upstream"), e
    # A result with isError is a result.
    res = mcpd.call("127-0-0-1", "get-sum", {"a": "x"})
    assert res.get("isError") is True, res


# --------------------------------------------------------------------------
# 2. The server dies and comes back on the same port

def test_server_killed_and_restarted_under_the_daemon(mcpd, everything):
    r = mcpd.load_url(everything.url(), allow_local=True)
    gen = r["generation"]
    assert text_of(mcpd.call("127-0-0-1", "echo", {"message": "a"})) == \
        ["Echo: a"]

    everything.proc.kill(signal.SIGKILL)
    # Nothing listens: the call fails, and says why, long before its 60 s
    # deadline (the client gives up after 30 s).
    e = rpc_error_of(mcpd.call, "127-0-0-1", "echo", {"message": "b"},
                     timeout_ms=60000, timeout=30)
    assert e.code in (OUTCOME_UNKNOWN, UNAVAILABLE), e

    before = set(everything.start().sessions())

    def works():
        try:
            res = mcpd.call("127-0-0-1", "echo", {"message": "c"},
                            timeout_ms=5000, timeout=10)
        except RpcError as err:
            # The call on the lost session, or one while re-initializing.
            assert err.code in (OUTCOME_UNKNOWN, UNAVAILABLE), err
            return None
        return res
    res = poll(works, timeout=20, interval=0.1,
               what="a call to work again after the server came back")
    assert text_of(res) == ["Echo: c"]
    row = mcpd.wait_row("127-0-0-1", lambda r: r["state"] == "ready")
    # The new server did not know mcpd's session: mcpd initialized a new
    # one, once, on the same connection (doc/lifecycle.md), not a restart.
    assert len(set(everything.sessions()) - before) == 1
    assert row["generation"] == gen, row
    assert row["restarts"] == 0, row
    assert row["protocol_version"] == "2025-11-25"
    assert row["tools"] == r["tools"]
    # The same server, the same tools: its handles stay valid.
    tools = mcpd.tools("127-0-0-1")
    assert {t["handle"].split("/")[0] for t in tools} == {
        f"127-0-0-1.{gen}"}
    res = mcpd.rpc.result("mcpd/call", {
        "handle": f"127-0-0-1.{gen}/echo", "arguments": {"message": "d"}})
    assert text_of(res) == ["Echo: d"]


# --------------------------------------------------------------------------
# 3. TLS for real

class Pki:
    """A test CA and leaf certificates, made with the openssl CLI."""

    def __init__(self, d):
        self.d = Path(d)
        need(OPENSSL, "openssl")
        self.ca = self.d / "ca.pem"
        self._run("req", "-x509", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes",
                  "-keyout", self.d / "ca.key", "-out", self.ca,
                  "-days", "2", "-subj", "/CN=mcpd test CA",
                  "-addext", "basicConstraints=critical,CA:TRUE",
                  "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        # openssl 3.0 x509 has no -not_before: "openssl ca" sets the dates.
        (self.d / "index.txt").write_text("")
        (self.d / "serial").write_text("1000\n")
        (self.d / "ca.cnf").write_text(
            "[ca]\ndefault_ca = test_ca\n[test_ca]\n"
            f"database = {self.d}/index.txt\nnew_certs_dir = {self.d}\n"
            f"serial = {self.d}/serial\ndefault_md = sha256\n"
            "policy = any\nunique_subject = no\n"
            "[any]\ncommonName = supplied\n")
        self.serial = 1
        local = "subjectAltName=DNS:localhost,IP:127.0.0.1"
        self.good = self.leaf("good", local)
        self.wrong = self.leaf("wrong", "subjectAltName=DNS:wrong.example")
        self.expired = self.leaf("expired", local,
                                 start="20200101000000Z",
                                 end="20200201000000Z")

    def _run(self, *args):
        p = subprocess.run([OPENSSL] + [str(a) for a in args],
                           capture_output=True, timeout=60)
        assert p.returncode == 0, (
            f"openssl {args[0]} failed: {p.stderr.decode()[-2000:]}")

    def leaf(self, name, ext, start=None, end=None):
        key, csr = self.d / f"{name}.key", self.d / f"{name}.csr"
        pem, extfile = self.d / f"{name}.pem", self.d / f"{name}.ext"
        extfile.write_text(ext + "\nbasicConstraints=CA:FALSE\n"
                           "extendedKeyUsage=serverAuth\n")
        self._run("req", "-newkey", "ec", "-pkeyopt",
                  "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                  "-out", csr, "-subj", f"/CN={name}")
        self.serial += 1
        if start is None:
            self._run("x509", "-req", "-in", csr, "-CA", self.ca,
                      "-CAkey", self.d / "ca.key", "-set_serial",
                      str(self.serial), "-days", "2",
                      "-extfile", extfile, "-out", pem)
        else:
            self._run("ca", "-batch", "-config", self.d / "ca.cnf",
                      "-cert", self.ca, "-keyfile", self.d / "ca.key",
                      "-in", csr, "-out", pem, "-notext",
                      "-startdate", start, "-enddate", end,
                      "-extfile", extfile)
        return pem, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def tls_front(peers, leaf, backend_port, below=65536):
    """socat terminating TLS with leaf (pem, key) in front of a port (one
    under below)."""
    need(SOCAT, "socat")
    port = free_port(below)
    pem, key = leaf
    p = peers([SOCAT, f"OPENSSL-LISTEN:{port},reuseaddr,fork,"
               f"cert={pem},key={key},verify=0",
               f"TCP:127.0.0.1:{backend_port}"], name="socat")
    wait_listening(port, proc=p)
    return port


def mapped_libraries(pid):
    """The file names of the shared libraries mapped into pid."""
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1].rsplit("/", 1)[-1] for line in f
                if ".so" in line}


def test_tls_with_the_test_ca(mcpd_factory, peers, everything, pki):
    expected = direct_http_tools(everything.url())
    port = tls_front(peers, pki.good, everything.port)
    d = mcpd_factory("--ca-file", pki.ca)
    # OpenSSL is loaded by the first TLS connection, not at start.
    assert not any(lib.startswith(("libssl", "libcrypto"))
                   for lib in mapped_libraries(d.pid)), \
        sorted(mapped_libraries(d.pid))
    r = d.ctl("load", "--allow-local", f"https://localhost:{port}/mcp")
    assert r.rc == 0, r
    assert any(lib.startswith("libssl") for lib in mapped_libraries(d.pid))
    assert r.json["endpoint"] == f"https://localhost:{port}/mcp"
    assert r.json["protocol_version"] == "2025-11-25"
    assert r.json["tools"] == len(expected), (
        f"the load counted {r.json['tools']} tools, server-everything "
        f"lists {len(expected)}")
    r2 = d.ctl("call", "localhost", "echo", "message=through TLS")
    assert r2.rc == 0, r2
    assert text_of(r2.json) == ["Echo: through TLS"]
    # The leaf names 127.0.0.1 too: an IP literal is verified against it.
    r3 = d.ctl("load", "--allow-local", "--name", "by-ip",
               f"https://127.0.0.1:{port}/mcp")
    assert r3.rc == 0, r3
    assert {row["name"]: row["state"] for row in d.list()} == {
        "localhost": "ready", "by-ip": "ready"}
    assert d.ctl("unload", f"https://localhost:{port}/mcp").rc == 0
    assert d.ctl("unload", "by-ip").rc == 0


@pytest.mark.parametrize("case,reason", [
    ("wrong-name", "Hostname mismatch"),
    ("unknown-ca", "unable to get local issuer certificate"),
    ("expired", "certificate has expired"),
])
def test_tls_refusals(mcpd_factory, peers, everything, pki, case, reason):
    leaf = {"wrong-name": pki.wrong, "expired": pki.expired}.get(
        case, pki.good)
    port = tls_front(peers, leaf, everything.port)
    d = (mcpd_factory() if case == "unknown-ca" else
         mcpd_factory("--ca-file", pki.ca))
    before = len(everything.sessions())
    r = d.ctl("load", "--no-persist", "--allow-local", "--timeout", "10000",
              f"https://localhost:{port}/mcp")
    assert r.rc != 0, r
    e = rpc_error_of(d.load_url, f"https://localhost:{port}/mcp",
                     allow_local=True, timeout_ms=10000, timeout=15)
    assert e.data["kind"] == "unavailable", e
    assert "TLS certificate rejected" in e.message, e
    # OpenSSL's reason, in whatever case this OpenSSL spells it.
    assert reason.lower() in e.message.lower(), e
    assert reason.lower() in r.err.lower(), r
    assert d.list() == []
    # No MCP message reached the server behind the terminator.
    assert len(everything.sessions()) == before


class SniProbe:
    """A TLS listener (python ssl) that records the SNI of each client
    hello, then completes the handshake with the good leaf and closes."""

    def __init__(self, leaf):
        self.names = []
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(str(leaf[0]), str(leaf[1]))
        ctx.sni_callback = lambda sock, name, c: self.names.append(name)
        self.ctx = ctx
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(5)
            try:
                with self.ctx.wrap_socket(conn, server_side=True) as s:
                    s.recv(1)
            except (OSError, ssl.SSLError):
                pass
            finally:
                conn.close()

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.mark.parametrize("host,sni", [("localhost", "localhost"),
                                      ("127.0.0.1", None)])
def test_tls_sends_sni_for_names_only(mcpd_factory, pki, host, sni):
    probe = SniProbe(pki.good)
    try:
        d = mcpd_factory("--ca-file", pki.ca)
        rpc_error_of(d.load_url, f"https://{host}:{probe.port}/mcp",
                     allow_local=True, timeout_ms=5000, timeout=30)
        poll(lambda: probe.names, what="a client hello")
        assert probe.names[0] == sni, probe.names
    finally:
        probe.close()


# --------------------------------------------------------------------------
# 4. Policy

class Tap:
    """A loopback listener that counts the connections it gets (each is
    closed at once, in a thread), where none must arrive."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            if select.select([self.sock], [], [], 0.05)[0]:
                conn, _ = self.sock.accept()
                conn.close()
                self.count += 1

    def connections(self, wait=0.0):
        """The connections seen, after a grace of wait seconds for any
        that would come late."""
        if wait:
            self.thread.join(timeout=wait)
        return self.count

    def close(self):
        self.stopping = True
        self.thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def tap():
    t = Tap()
    yield t
    t.close()


class Dns:
    def __init__(self, peers, zone):
        self.proc = peers([sys.executable, DNSSERVER] +
                          [f"{k}={','.join(v)}" for k, v in zone.items()],
                          name="dns")
        self.port = int(self.proc.wait_output(r"^listening on (\d+)$")
                        .group(1))

    def queries(self, name):
        return re.findall(rf"^query {re.escape(name)} (\d+)$",
                          self.proc.out(), re.M)


ZONE = {
    "lo.test": ["127.0.0.1"],
    "mixed.test": ["127.0.0.1", "93.184.216.34"],
    "mixed6.test": ["127.0.0.1", "2606:4700:4700::1111"],
    "mixed-private.test": ["10.1.2.3", "93.184.216.34"],
    "private.test": ["10.1.2.3"],
    "metadata.test": ["169.254.169.254"],
    "cgnat.test": ["100.64.1.2"],
    "mapped.test": ["::ffff:10.1.2.3"],
    "mapped-lo.test": ["::ffff:127.0.0.1"],
    "public.test": ["93.184.216.34"],
    "ula.test": ["fd12:3456::1"],
}


@pytest.fixture
def dns(peers):
    return Dns(peers, ZONE)


@pytest.fixture
def policy_mcpd(mcpd_factory, dns):
    return mcpd_factory("--dns-server", f"127.0.0.1:{dns.port}")


def denied(d, url, allow_local=False):
    """The error of a load that the policy must refuse (a refusal, not
    the load's deadline passing)."""
    e = rpc_error_of(d.load_url, url, allow_local=allow_local,
                     timeout_ms=5000, timeout=30)
    assert e.code == DENIED and e.data["kind"] == "denied", e
    assert d.list() == []
    return e


@pytest.mark.parametrize("url,allow_local,words", [
    ("https://127.0.0.1/mcp", False, ["127.0.0.1", "loopback"]),
    ("https://10.0.0.1/mcp", False, ["10.0.0.1", "private"]),
    ("https://10.0.0.1/mcp", True, ["10.0.0.1", "private"]),
    ("https://192.168.1.1/mcp", False, ["private"]),
    ("https://169.254.169.254/latest/meta-data/", False,
     ["169.254.169.254", "link-local"]),
    ("https://100.64.0.1/mcp", False, ["carrier-grade NAT"]),
    ("https://224.0.0.1/mcp", False, ["multicast"]),
    ("https://0.0.0.0/mcp", False, ["unspecified"]),
    ("https://[::1]/mcp", False, ["loopback"]),
    ("https://[fe80::1]/mcp", False, ["link-local"]),
    ("https://[fd00::1]/mcp", False, ["private"]),
    ("https://[::ffff:10.0.0.1]/mcp", False, ["private", "10.0.0.1"]),
    ("https://[::ffff:169.254.169.254]/mcp", False, ["link-local"]),
    ("https://[64:ff9b::a00:1]/mcp", False, ["private", "10.0.0.1"]),
    # Literal forms the resolver libraries accept, judged by what they mean.
    ("https://2130706433/mcp", False, ["127.0.0.1", "loopback"]),
    ("https://0177.0.0.1/mcp", False, ["127.0.0.1", "loopback"]),
    ("https://0x7f.1/mcp", False, ["127.0.0.1", "loopback"]),
    ("https://127.1/mcp", False, ["127.0.0.1", "loopback"]),
    ("https://0xa9fea9fe/mcp", False, ["169.254.169.254", "link-local"]),
    ("https://012.0.0.1/mcp", False, ["10.0.0.1", "private"]),
])
def test_non_public_literal_addresses_are_denied(policy_mcpd, url,
                                                 allow_local, words):
    e = denied(policy_mcpd, url, allow_local)
    for w in words:
        assert w in e.message, e


@pytest.mark.parametrize("make_url,allow_local,words", [
    (lambda p: f"https://user:pass@lo.test:{p}/mcp", True,
     ["credentials", "user:pass@"]),
    (lambda p: f"https://token@lo.test:{p}/mcp", True, ["credentials"]),
    (lambda p: f"https://lo.test:{p}/mcp#frag", True, ["fragment"]),
    (lambda p: f"http://lo.test:{p}/mcp", False, ["only https"]),
    (lambda p: f"http://127.0.0.1:{p}/mcp", False, ["only https"]),
])
def test_url_rules_are_checked_before_anything(policy_mcpd, dns, tap,
                                               make_url, allow_local,
                                               words):
    """Credentials, fragments, plain http without the opt-in: refused
    without a DNS query and without a connection."""
    e = denied(policy_mcpd, make_url(tap.port), allow_local)
    for w in words:
        assert w in e.message, e
    assert dns.queries("lo.test") == []
    assert tap.connections(wait=0.2) == 0


def test_plain_http_to_a_public_address_is_denied(policy_mcpd, dns):
    e = denied(policy_mcpd, "http://public.test/mcp", allow_local=True)
    assert "plain http" in e.message and "loopback" in e.message, e
    assert dns.queries("public.test")
    e = denied(policy_mcpd, "http://93.184.216.34/mcp", allow_local=True)
    assert "plain http" in e.message and "loopback" in e.message, e


@pytest.mark.parametrize("host,allow_local,words", [
    ("lo.test", False, ["127.0.0.1", "loopback"]),
    ("mixed.test", False, ["mixes public and non-public", "127.0.0.1",
                           "93.184.216.34"]),
    ("mixed.test", True, ["mixes public and non-public"]),
    ("mixed6.test", True, ["mixes public and non-public",
                           "2606:4700:4700::1111"]),
    ("mixed-private.test", False, ["mixes public and non-public",
                                   "10.1.2.3"]),
    ("private.test", False, ["10.1.2.3", "private"]),
    ("metadata.test", False, ["169.254.169.254", "link-local"]),
    ("cgnat.test", False, ["100.64.1.2", "carrier-grade NAT"]),
    ("mapped.test", True, ["::ffff:10.1.2.3", "private"]),
    ("mapped-lo.test", False, ["::ffff:127.0.0.1", "loopback"]),
    ("ula.test", False, ["fd12:3456::1", "private"]),
])
def test_dns_answers_are_judged_and_nothing_reaches_the_target(
        policy_mcpd, dns, tap, host, allow_local, words):
    e = denied(policy_mcpd, f"https://{host}:{tap.port}/mcp", allow_local)
    for w in words:
        assert w in e.message, e
    # The resolver under test was asked (A and AAAA).
    assert dns.queries(host), dns.proc.out()
    # Any loopback answer would have reached the tap: nothing did.
    assert tap.connections(wait=0.2) == 0


def test_dns_loopback_with_opt_in_reaches_the_target(policy_mcpd, dns, tap):
    """The control of the test above: with --allow-local and an answer
    that is only loopback, the connection goes to the tap."""
    e = rpc_error_of(policy_mcpd.load_url,
                     f"https://lo.test:{tap.port}/mcp", allow_local=True,
                     timeout_ms=3000, timeout=10)
    assert e.code != DENIED, e
    assert dns.queries("lo.test")
    assert tap.connections() >= 1


def test_dns_name_of_a_loopback_server_loads(policy_mcpd, everything):
    r = policy_mcpd.ctl("load", "--allow-local",
                        f"http://LO.test:{everything.port}/mcp")
    assert r.rc == 0, r
    assert r.json["name"] == "lo-test"
    assert r.json["endpoint"] == f"http://lo.test:{everything.port}/mcp"
    r = policy_mcpd.ctl("call", "lo-test", "echo", "message=by name")
    assert text_of(r.json) == ["Echo: by name"]


def test_unknown_host_is_unavailable(policy_mcpd):
    e = rpc_error_of(policy_mcpd.load_url, "https://nx.test/mcp",
                     timeout_ms=5000, timeout=10)
    assert e.code == UNAVAILABLE, e
    assert "resolve" in e.message, e
    assert policy_mcpd.list() == []


@pytest.mark.parametrize("url", [
    "https://", "https:///mcp", "https://exa mple.com/mcp",
    "https://[::1/mcp", "https://example.com:99999/mcp",
    "https://example.com:-1/mcp",
])
def test_bad_urls_are_invalid_params(mcpd, url):
    e = rpc_error_of(mcpd.load_url, url)
    assert e.code == INVALID_PARAMS, e
    assert e.data.get("field") == "target", e
    assert mcpd.list() == []


def test_mcpctl_refusal_exit_and_message(mcpd):
    r = mcpd.ctl("load", "https://169.254.169.254/latest/meta-data/")
    assert r.rc != 0, r
    assert "169.254.169.254" in r.err and "link-local" in r.err, r
    r = mcpd.ctl("load", "https://user:hunter2@example.com/mcp")
    assert r.rc != 0 and "credentials" in r.err, r
    assert "hunter2" not in r.err + r.out, r
    assert "hunter2" not in mcpd.read_stderr()


class Redirector:
    def __init__(self, peers, location, status=302, on_call=False,
                 slow_initialized_ms=0):
        argv = [sys.executable, REDIRECTOR, location, str(status)]
        if on_call:
            argv.append("--on-call")
        if slow_initialized_ms:
            argv += ["--slow-initialized", str(slow_initialized_ms)]
        self.proc = peers(argv, name="redirector")
        self.port = int(self.proc.wait_output(r"^listening on (\d+)$")
                        .group(1))
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def requests(self):
        return [json.loads(line) for line in self.proc.out().splitlines()
                if line.startswith("{")]


@pytest.mark.parametrize("status", [302, 307, 308])
def test_redirect_on_initialize_fails_the_load(mcpd, peers, tap, status):
    # Following the redirect would reach the tap.
    red = Redirector(peers, f"http://127.0.0.1:{tap.port}/mcp", status)
    e = rpc_error_of(mcpd.load_url, red.url, allow_local=True,
                     timeout_ms=5000, timeout=10)
    assert "redirects are refused" in e.message, e
    assert str(status) in e.message, e
    assert mcpd.list() == []
    assert tap.connections(wait=0.2) == 0
    assert red.requests(), "the redirector got no request"
    assert e.data["kind"] == "denied", (
        f"a 3xx on the handshake is reported as {e.data['kind']}: {e}")


def test_redirect_on_a_call_is_denied_and_not_followed(mcpd, peers, tap):
    red = Redirector(peers, f"http://127.0.0.1:{tap.port}/mcp", 307,
                     on_call=True)
    r = mcpd.load_url(red.url, allow_local=True,
                      headers={"X-Api-Key": "sekrit-123",
                               "Authorization": "Bearer tok-456"})
    assert r["tools"] == 1 and r["protocol_version"] == "2025-06-18"
    e = rpc_error_of(mcpd.call, "127-0-0-1", "echo", {"message": "x"})
    assert e.code == DENIED and e.data["kind"] == "denied", e
    assert "redirects are refused" in e.message, e
    assert tap.connections(wait=0.2) == 0
    calls = [q for q in red.requests() if q["rpc"] == "tools/call"]
    assert len(calls) == 1, red.requests()      # not re-sent
    # The server stays usable.
    assert mcpd.row("127-0-0-1")["state"] == "ready"

    # Headers: the configured ones on every request; the session id and
    # the protocol version on every request after initialize.
    reqs = red.requests()
    for q in reqs:
        assert q["headers"].get("x-api-key") == "sekrit-123", q
        assert q["headers"].get("authorization") == "Bearer tok-456", q
    posts = [q for q in reqs if q["verb"] == "POST"]
    init = [i for i, q in enumerate(posts) if q["rpc"] == "initialize"]
    assert init, posts
    for q in posts[init[0] + 1:]:
        assert q["headers"].get("mcp-session-id") == "redirector-session-1", q
        assert q["headers"].get("mcp-protocol-version") == "2025-06-18", q
    # Secrets are not logged nor listed.
    mcpd.rpc.result("mcpd/unload", {"target": "127-0-0-1"})
    assert any(q["verb"] == "DELETE" for q in red.requests())
    text = mcpd.read_stderr() + json.dumps(mcpd.list())
    assert "sekrit-123" not in text and "tok-456" not in text


def test_load_with_new_headers_connects_again_with_them(mcpd, peers, tap):
    red = Redirector(peers, f"http://127.0.0.1:{tap.port}/mcp", 307,
                     on_call=True)
    r1 = mcpd.load_url(red.url, allow_local=True,
                       headers={"X-Api-Key": "key-1"})
    r2 = mcpd.load_url(red.url, allow_local=True,
                       headers={"X-Api-Key": "key-2"})
    assert r2["id"] == r1["id"] and r2.get("reconfigured") is True, r2
    assert r2["generation"] == r1["generation"] + 1
    inits = [q for q in red.requests() if q["rpc"] == "initialize"]
    assert [q["headers"].get("x-api-key") for q in inits] == \
        ["key-1", "key-2"], inits
    r3 = mcpd.load_url(red.url, allow_local=True,
                       headers={"X-Api-Key": "key-2"})
    assert r3.get("was_loaded") is True and \
        r3["generation"] == r2["generation"], r3


def client_connections(port):
    """Established TCP connections to 127.0.0.1:port, seen from the client
    side (the remote address is that port)."""
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[3] == "01" and \
                    fields[2] == f"0100007F:{port:04X}":
                n += 1
    return n


def http_testserver(peers, *args):
    http = peers([TESTSERVER, "--http", "0", *args], name="http")
    port = int(http.wait_output(r"listening on http://127\.0\.0\.1:(\d+)/mcp",
                                stream="err").group(1))
    return http, port


def test_requests_in_flight_to_a_remote_server_are_capped(mcpd_factory,
                                                          peers):
    """--max-http-requests 3: 20 calls at once open at most 3 connections
    (plus the listening stream), the others wait their turn, and every
    call is answered."""
    d = mcpd_factory("--max-http-requests", "3")
    http, port = http_testserver(peers)
    d.load_url(f"http://127.0.0.1:{port}/mcp", name="ts", allow_local=True)
    seen = []
    done = threading.Event()

    def sample():
        while not done.is_set():
            seen.append(client_connections(port))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with d.client(timeout=60) as c:
            ids = [c.request("mcpd/call", {
                "server": "ts", "tool": "sleep_ms",
                "arguments": {"ms": 300}}) for _ in range(20)]
            answers = [c.response(i, timeout=60) for i in ids]
    finally:
        done.set()
        sampler.join()
    for a in answers:
        assert a.get("result", {}).get("content") == \
            [{"type": "text", "text": "slept 300 ms"}], a
    most = max(seen)
    assert 2 <= most <= 4, f"{most} connections at once"


def test_a_call_that_expires_while_waiting_is_never_sent(mcpd_factory,
                                                         peers):
    d = mcpd_factory("--max-http-requests", "1")
    http, port = http_testserver(peers)
    d.load_url(f"http://127.0.0.1:{port}/mcp", name="ts", allow_local=True)
    with d.client(timeout=60) as c:
        slow = c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 1500}})
        late = c.request("mcpd/call", {"server": "ts", "tool": "stderr",
                                       "arguments": {"lines": 1,
                                                     "text": "late-ran"},
                                       "timeout_ms": 300})
        e = c.response(late, timeout=30)
        # Never sent, so it did not run: timeout, not outcome-unknown.
        assert e["error"]["code"] == TIMEOUT, e
        assert e["error"]["data"]["kind"] == "timeout", e
        assert "it did not run" in e["error"]["message"], e
        assert c.response(slow, timeout=30)["result"]["content"] == \
            [{"type": "text", "text": "slept 1500 ms"}]
    # The slot is free: a new call goes, and the late one never ran.
    assert d.call("ts", "echo", {"message": "after"})[
        "structuredContent"] == {"message": "after"}
    time.sleep(0.3)
    assert "late-ran" not in http.err()


def test_tools_are_listed_after_initialized_was_accepted(mcpd, peers, tap):
    """Over HTTP each message is its own exchange: a client that lists
    before the server has taken notifications/initialized (its 202) races
    it. server-everything registers tools on initialized, and so does this
    server, slowly: the list must have them."""
    red = Redirector(peers, f"http://127.0.0.1:{tap.port}/mcp", 307,
                     on_call=True, slow_initialized_ms=300)
    r = mcpd.load_url(red.url, allow_local=True)
    assert r["tools"] == 1, (r, [(q["verb"], q["rpc"])
                                 for q in red.requests()])
    assert [t["name"] for t in mcpd.tools("127-0-0-1")] == ["echo"]


def test_connection_refused_is_reported_as_such(mcpd):
    port = free_port()      # nobody listens there
    for url in (f"http://127.0.0.1:{port}/mcp",
                f"https://127.0.0.1:{port}/mcp"):
        e = rpc_error_of(mcpd.load_url, url, allow_local=True,
                         timeout_ms=5000, timeout=10)
        assert e.code == UNAVAILABLE, e
        assert "refused" in e.message.lower(), e
        assert "(null)" not in e.message, e
        assert mcpd.list() == []
