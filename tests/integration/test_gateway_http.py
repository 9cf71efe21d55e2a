# SPDX-License-Identifier: ISC
"""The gateway over Streamable HTTP: mcpd --listen-http on loopback, with
a bearer token per agent, checked Host and Origin (DNS rebinding), and
sessions of its own; the official SDK client's HTTP transport, and raw
requests for what must be refused."""

import json
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import MCPD, NODE, PEERS, poll, ts_command
from test_gateway import SDK_CLIENT

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def front(mcpd_factory):
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


def post(url, body, token=None, sid=None, headers=None, raw=None):
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    if token:
        h["Authorization"] = "Bearer " + token
    if sid:
        h["Mcp-Session-Id"] = sid
    h.update(headers or {})
    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def raw_status(d, length):
    """The status of a POST that announces a body of length bytes (and
    sends none: mcpd must answer from the headers alone)."""
    port = int(d.url.split(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Authorization: Bearer {d.token}\r\n"
                   f"Content-Type: application/json\r\n"
                   f"Content-Length: {length}\r\n\r\n").encode())
        line = s.makefile("rb").readline().decode()
    return int(line.split()[1])


def session(d, url=None):
    status, headers, body = post(url or d.url, INIT, d.token)
    assert status == 200, (status, body)
    sid = headers["Mcp-Session-Id"]
    assert len(sid) == 32, sid
    return sid


def test_sdk_client_over_http(front, docker_images, container_guard):
    front.load_testserver("ts")
    # A container too: the test server's image (tests/images).
    container_guard.append(front.rpc.result("mcpd/status")["did"])
    front.rpc.result("mcpd/load", {"target": "mcpd-test/stdio",
                                   "name": "box", "persist": False},
                     timeout=120)
    c = subprocess.Popen([NODE, str(SDK_CLIENT), str(PEERS), "--http",
                          front.url, front.token], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    try:
        def ask(line):
            c.stdin.write(line + "\n")
            c.stdin.flush()
            return json.loads(c.stdout.readline())
        assert "ts__echo" in ask("tools")["tools"]
        r = ask('call ts__echo {"message":"over http"}')
        assert r["result"]["structuredContent"] == {"message": "over http"}
        r = ask('call box__echo {"message":"to a container"}')
        assert r["result"]["structuredContent"] == {
            "message": "to a container"}, r
        # Progress and list_changed come on the session's GET stream.
        r = ask('progress ts__report {"steps":2,"ms":100}')
        assert r["progress"] == [[1, 2], [2, 2]], r
        front.load_testserver("more", "--tools", "1")
        assert ask("changed 10000")["changed"] >= 1
        assert "more__t0" in ask("tools")["tools"]
    finally:
        c.stdin.write("quit\n")
        c.stdin.close()
        c.wait(timeout=10)


def test_tokens_hosts_and_origins(front):
    front.load_testserver("ts")
    st, h, body = post(front.url, INIT)
    assert st == 401 and h["WWW-Authenticate"] == 'Bearer realm="mcpd"'
    assert "mcpctl token" in body
    assert post(front.url, INIT, "0" * 64)[0] == 401
    st, _, body = post(front.url, INIT, front.token,
                       headers={"Host": "evil.example.com"})
    assert st == 403 and "loopback" in body, body
    st, _, body = post(front.url, INIT, front.token,
                       headers={"Origin": "http://evil.example"})
    assert st == 403 and "origin" in body, body
    ok = post(front.url, INIT, front.token,
              headers={"Origin": "http://localhost:3000"})
    assert ok[0] == 200
    # Another agent's token serves that agent's servers, none of these.
    other = front.rpc.result("mcpd/token", {"agent": "other"})["token"]
    assert other != front.token
    st, h, _ = post(front.url, INIT, other)
    sid = h["Mcp-Session-Id"]
    st, _, body = post(front.url, {"jsonrpc": "2.0", "id": 2,
                                   "method": "tools/list"}, other, sid)
    assert json.loads(body)["result"]["tools"] == [], body
    # ... and that session is not this agent's.
    assert post(front.url, {"jsonrpc": "2.0", "id": 3,
                            "method": "tools/list"}, front.token,
                sid)[0] == 404
    # Revoked: refused from then on.
    r = front.rpc.result("mcpd/token", {"agent": "other", "revoke": True})
    assert r == {"agent": "other", "revoked": True}
    assert post(front.url, INIT, other)[0] == 401
    # mcpctl status says where the front is.
    st = front.ctl("status", is_json=False)
    assert f"http: {front.url} (its token: mcpctl token)" in st.out, st
    assert front.rpc.result("mcpd/status")["http"] == front.url
    # mcpctl token: the same token, and where to send it.
    out = front.ctl("token", is_json=False)
    assert out.rc == 0 and out.out == front.token + "\n", out
    assert f"to {front.url} (agent default)" in out.err, out
    # The tokens file is the user's alone.
    mode = (front.state / "http-tokens.json").stat().st_mode & 0o777
    assert mode == 0o600, oct(mode)


def test_sessions_paths_and_limits(front):
    front.load_testserver("ts")
    front.load_testserver("two", "--tools", "1")
    # No session, unknown session, then one that works.
    st, _, body = post(front.url, {"jsonrpc": "2.0", "id": 1,
                                   "method": "tools/list"}, front.token)
    assert st == 400 and "initialize first" in body, body
    assert post(front.url, {"jsonrpc": "2.0", "id": 1,
                            "method": "tools/list"}, front.token,
                "f" * 32)[0] == 404
    # /mcp/<server>: that server alone, names as it gives them.
    sid = session(front, front.url + "/two")
    st, _, body = post(front.url + "/two", {"jsonrpc": "2.0", "id": 2,
                                            "method": "tools/list"},
                       front.token, sid)
    names = [t["name"] for t in json.loads(body)["result"]["tools"]]
    assert "t0" in names and not any("__" in n for n in names), names
    # A pretty-printed body (newlines inside) is one message all the same.
    st, _, body = post(front.url + "/two", None, front.token, sid, raw=(
        b'{\n  "jsonrpc": "2.0",\n  "id": 9,\n  "method": "ping"\n}\n'))
    assert st == 200 and json.loads(body) == {
        "jsonrpc": "2.0", "id": 9, "result": {}}, (st, body)
    # A notification is accepted without an answer.
    st, _, body = post(front.url + "/two", {
        "jsonrpc": "2.0", "method": "notifications/initialized"},
        front.token, sid)
    assert st == 202 and body == "", (st, body)
    # DELETE ends it.
    req = urllib.request.Request(front.url + "/two", method="DELETE",
                                 headers={"Authorization":
                                          "Bearer " + front.token,
                                          "Mcp-Session-Id": sid})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
    assert post(front.url + "/two", {"jsonrpc": "2.0", "id": 3,
                                     "method": "tools/list"}, front.token,
                sid)[0] == 404
    # Bodies over --max-message, batches and garbage are refused.
    assert raw_status(front, 17 * 1024 * 1024) == 413
    assert post(front.url, None, front.token, raw=b"[{}]")[0] == 400
    assert post(front.url, None, front.token, raw=b"not json")[0] == 400
    assert post(front.url.replace("/mcp", "/other"), INIT,
                front.token)[0] == 404


def test_modern_requests_need_no_session(front):
    front.load_testserver("ts")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    st, h, body = post(front.url, {"jsonrpc": "2.0", "id": 7,
                                   "method": "tools/list",
                                   "params": {"_meta": meta}},
                       front.token, headers={
                           "MCP-Protocol-Version": "2026-07-28"})
    assert st == 200, body
    assert "Mcp-Session-Id" not in h
    tools = json.loads(body)["result"]["tools"]
    assert any(t["name"] == "ts__echo" for t in tools)


def test_listen_http_is_loopback_only(tmp_path):
    p = subprocess.run([str(MCPD), "-d", "-s", str(tmp_path / "s.sock"),
                        "-S", str(tmp_path / "state"), "--listen-http",
                        "0.0.0.0:0"], capture_output=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 1, p
    assert "0.0.0.0 is not a loopback address" in p.stderr.decode(), p
    assert not (tmp_path / "s.sock").exists()
