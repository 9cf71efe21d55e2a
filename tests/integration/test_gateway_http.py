# SPDX-License-Identifier: ISC
"""The gateway over Streamable HTTP: mcpd --listen-http on loopback, with
a bearer token per agent, checked Host and Origin (DNS rebinding), and
sessions of its own; the official SDK client's HTTP transport, and raw
requests for what must be refused."""

import json
import re
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import MCPD, NODE, PEERS, free_port, poll
from test_gateway import SDK_CLIENT

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}


@pytest.fixture
def front(mcpd_factory):
    port = free_port()
    # -v: load_everything(settle=True) reads the debug log.
    d = mcpd_factory("-v", "--listen-http", f"127.0.0.1:{port}")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


def post(url, body, token=None, sid=None, headers=None, raw=None,
         timeout=20):
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
        with urllib.request.urlopen(req, timeout=timeout) as r:
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
    # A notification is accepted without an answer: no body, no type.
    st, h, body = post(front.url + "/two", {
        "jsonrpc": "2.0", "method": "notifications/initialized"},
        front.token, sid)
    assert st == 202 and body == "", (st, body)
    assert h["Content-Length"] == "0" and "Content-Type" not in h, h
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
    # A server the agent does not have: 404 with a JSON-RPC error that
    # says the nearest names, and no session is made.
    st, h, body = post(front.url + "/tow", INIT, front.token)
    assert st == 404 and h["Content-Type"] == "application/json", (st, h)
    assert json.loads(body) == {"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32001, "message": "no server tow for agent default; did "
        "you mean two, ts? (mcpctl list shows them; load it first)",
        "data": {"kind": "not-found", "what": "server", "server": "tow"}}}
    assert "Mcp-Session-Id" not in h


MODERN = "2026-07-28"


def modern(method, params=None, id_=7, meta=None, headers=None):
    """A 2026-07-28 request and its headers (override with headers)."""
    m = {"io.modelcontextprotocol/protocolVersion": MODERN,
         "io.modelcontextprotocol/clientCapabilities": {}}
    m.update(meta or {})
    body = {"jsonrpc": "2.0", "id": id_, "method": method,
            "params": dict(params or {}, _meta=m)}
    h = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    name = (params or {}).get("name") or (params or {}).get("uri")
    if name is not None:
        h["Mcp-Name"] = name
    h.update(headers or {})
    return body, {k: v for k, v in h.items() if v is not None}


def test_modern_requests_need_no_session(front):
    front.load_testserver("ts")
    body, h = modern("tools/list")
    st, hd, text = post(front.url, body, front.token, headers=h)
    assert st == 200, text
    assert "Mcp-Session-Id" not in hd
    r = json.loads(text)["result"]
    assert any(t["name"] == "ts__echo" for t in r["tools"])
    # What 2026-07-28 asks of a result: its type, a list's cache hints.
    assert (r["resultType"], r["ttlMs"], r["cacheScope"]) == (
        "complete", 0, "private"), r
    body, h = modern("server/discover")
    r = json.loads(post(front.url, body, front.token, headers=h)[2])["result"]
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcpd"
    # List changes come on subscriptions/listen; no resource updates.
    assert r["capabilities"]["tools"] == {"listChanged": True}, r
    assert "subscribe" not in r["capabilities"]["resources"], r
    # Each refusal is HTTP 400 (404 for a method it lacks), with the id.
    for b, hh, status, code in [
            (dict(body, params={}), h, 400, -32602),
            (body, dict(h, **{"MCP-Protocol-Version": "2025-11-25"}), 400,
             -32020),
            (modern("tools/list")[0], h, 400, -32020),   # Mcp-Method
            (*modern("tools/call", {"name": "ts__echo"},
                     headers={"Mcp-Name": "other"}), 400, -32020),
            (*modern("ping"), 404, -32601),
            (*modern("initialize"), 404, -32601),
            (*modern("resources/subscribe", {"uri": "x://y"}), 404, -32601)]:
        st, _, text = post(front.url, b, front.token, headers=hh)
        e = json.loads(text)
        assert (st, e["error"]["code"], e["id"]) == (status, code, 7), text
    b = modern("tools/list", meta={
        "io.modelcontextprotocol/protocolVersion": "v9"})[0]
    st, _, text = post(front.url, b, front.token, headers={
        "MCP-Protocol-Version": "v9", "Mcp-Method": "tools/list"})
    e = json.loads(text)["error"]
    assert st == 400 and e["code"] == -32022, text
    assert e["data"] == {"supported": [MODERN], "requested": "v9"}, e
    # Nothing to GET or DELETE without sessions.
    req = urllib.request.Request(front.url, method="GET", headers={
        "Authorization": "Bearer " + front.token,
        "MCP-Protocol-Version": MODERN})
    with pytest.raises(urllib.error.HTTPError) as ei:
        urllib.request.urlopen(req, timeout=10)
    assert ei.value.code == 405 and ei.value.headers["Allow"] == "POST"


def sse(text):
    """The events of an event stream: [{"id", "retry", "data"}]."""
    events = []
    for block in text.split("\n\n"):
        ev = {}
        for line in block.split("\n"):
            k, _, v = line.partition(":")
            if k in ("id", "retry", "data", "event"):
                ev[k] = v[1:] if v.startswith(" ") else v
        if ev:
            events.append(ev)
    return events


def messages(events):
    return [json.loads(e["data"]) for e in events if e.get("data")]


def test_a_call_is_answered_as_a_stream(front):
    """A tools/call whose client accepts an event stream gets one: a
    priming event (an id to resume from, retry), its progress and log
    messages, then its answer, and the stream ends."""
    front.load_testserver("ts")
    sid = session(front, front.url + "/ts")
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "report", "arguments": {"steps": 2, "ms": 50},
        "_meta": {"progressToken": "tok"}}}
    st, h, text = post(front.url + "/ts", call, front.token, sid)
    assert st == 200 and h["Content-Type"] == "text/event-stream", text
    events = sse(text)
    assert events[0]["retry"] == "1000" and events[0]["data"] == "", events
    stream = events[0]["id"].split("-")[0]
    assert [e["id"] for e in events] == [
        f"{stream}-{n}" for n in range(len(events))], events
    msgs = messages(events)
    assert [m["params"]["progress"] for m in msgs
            if m.get("method") == "notifications/progress"] == [1, 2], msgs
    assert all(m["params"]["progressToken"] == "tok" for m in msgs
               if m.get("method") == "notifications/progress"), msgs
    assert len([m for m in msgs
                if m.get("method") == "notifications/message"]) == 2, msgs
    assert msgs[-1]["id"] == 5 and "reported 2 steps" in \
        msgs[-1]["result"]["content"][0]["text"], msgs
    # A client that takes JSON only gets JSON.
    st, h, text = post(front.url + "/ts", dict(call, id=6), front.token, sid,
                       headers={"Accept": "application/json"})
    assert st == 200 and h["Content-Type"] == "application/json", text
    assert json.loads(text)["id"] == 6


@pytest.mark.parametrize("after", ["60000", "0"])
def test_a_quick_answer_is_one_whole_stream(mcpd_factory, after):
    """An answer that comes before --http-stream-after (50 ms by default;
    a minute here, so that a slow machine cannot make it late) goes as the
    whole event stream in one reply with a length (priming event, then
    the answer's event); with 0 the stream starts at once, chunked."""
    port = free_port()
    args = ["--listen-http", f"127.0.0.1:{port}",
            "--http-stream-after", after]
    d = mcpd_factory(*args)
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    d.load_testserver("ts")
    sid = session(d, d.url + "/ts")
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"message": "hi"}}}
    st, h, text = post(d.url + "/ts", call, d.token, sid)
    assert st == 200 and h["Content-Type"] == "text/event-stream", text
    if after != "0":
        assert h["Content-Length"] == str(len(text.encode())), dict(h)
        assert h["Transfer-Encoding"] is None, dict(h)
    else:
        assert h["Content-Length"] is None, dict(h)
        assert h["Transfer-Encoding"] == "chunked", dict(h)
    events = sse(text)
    stream = events[0]["id"].split("-")[0]
    assert [e["id"] for e in events] == [f"{stream}-0", f"{stream}-1"]
    assert events[0]["data"] == "" and events[0]["retry"] == "1000"
    msgs = messages(events)
    assert msgs == [{"jsonrpc": "2.0", "id": 7, "result": msgs[0]["result"]}]
    assert msgs[0]["result"]["structuredContent"] == {"message": "hi"}


def test_a_broken_stream_is_resumed(front):
    """The client of a call loses its stream: a GET with Last-Event-ID gets
    what it missed, the answer included."""
    front.load_testserver("ts")
    sid = session(front, front.url + "/ts")
    port = int(front.url.split(":")[2].split("/")[0])
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                       "params": {"name": "sleep_ms",
                                  "arguments": {"ms": 800}}}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"POST /mcp/ts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Authorization: Bearer {front.token}\r\n"
                   f"Mcp-Session-Id: {sid}\r\n"
                   f"Content-Type: application/json\r\n"
                   f"Accept: application/json, text/event-stream\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        got = b""
        while b"retry:" not in got:
            got += s.recv(4096)
    m = re.search(rb"\nid: (\d+-0)\n", got)
    assert m, got
    last = m.group(1).decode()
    req = urllib.request.Request(front.url + "/ts", method="GET", headers={
        "Authorization": "Bearer " + front.token, "Mcp-Session-Id": sid,
        "Last-Event-ID": last, "Accept": "text/event-stream"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.headers["Content-Type"] == "text/event-stream"
        events = sse(r.read().decode())        # it ends after the answer
    msgs = messages(events)
    assert msgs[-1]["id"] == 9 and msgs[-1]["result"]["content"][0][
        "text"] == "slept 800 ms", events
    assert events[-1]["id"] == last.replace("-0", "-1"), events
    # That stream is over: its id again opens the session's stream (there
    # is nothing to resume), and a second one is refused.
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/event-stream"
        with pytest.raises(urllib.error.HTTPError) as ei:
            urllib.request.urlopen(req, timeout=10)
        assert ei.value.code == 409


def test_modern_calls_stream_what_they_ask_for(front):
    """2026-07-28: a call's progress comes on its own stream; its log
    messages only at the level its _meta asks for; no stream, no id
    (nothing to resume), when nothing comes before the answer."""
    front.load_testserver("ts")
    args = {"name": "ts__report", "arguments": {"steps": 2, "ms": 50}}
    body, h = modern("tools/call", dict(args, _meta={}), meta={})
    body["params"]["_meta"]["progressToken"] = "p"
    st, hd, text = post(front.url, body, front.token, headers=h)
    assert st == 200 and hd["Content-Type"] == "text/event-stream", text
    events = sse(text)
    assert not any("id" in e for e in events), events
    msgs = messages(events)
    assert [m["method"] for m in msgs[:-1]] == ["notifications/progress"] * 2
    assert msgs[-1]["result"]["content"][0]["text"].startswith("reported")
    body, h = modern("tools/call", args, meta={
        "io.modelcontextprotocol/logLevel": "info"})
    msgs = messages(sse(post(front.url, body, front.token, headers=h)[2]))
    assert [m.get("method") for m in msgs[:-1]] == [
        "notifications/message"] * 2, msgs
    body, h = modern("tools/call", {"name": "ts__echo",
                                    "arguments": {"message": "m"}})
    st, hd, text = post(front.url, body, front.token, headers=h)
    assert hd["Content-Type"] == "application/json", text
    assert json.loads(text)["result"]["resultType"] == "complete"


def test_a_modern_client_that_goes_cancels(front, tmp_path):
    """2026-07-28: a client that closes its connection before the answer
    cancels its request (the server gets notifications/cancelled)."""
    log = tmp_path / "ts.log"
    front.load_testserver("ts", "--log-file", log)
    port = int(front.url.split(":")[2].split("/")[0])
    body, h = modern("tools/call", {"name": "ts__sleep_ms",
                                    "arguments": {"ms": 60000}})
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in h.items())
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall((f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                   f"Authorization: Bearer {front.token}\r\n{head}"
                   f"Content-Type: application/json\r\n"
                   f"Accept: application/json, text/event-stream\r\n"
                   f"Content-Length: {len(data)}\r\n\r\n").encode() + data)
        poll(lambda: log.exists() and "sleep_ms" in log.read_text(),
             timeout=10, what="the call to reach the server")
    # Long before the call's 60 s would end.
    poll(lambda: "client cancelled" in log.read_text(), timeout=30,
         what="notifications/cancelled at the server")


def test_listen_http_is_loopback_only(tmp_path):
    p = subprocess.run([str(MCPD), "-d", "-s", str(tmp_path / "s.sock"),
                        "-S", str(tmp_path / "state"), "--listen-http",
                        "0.0.0.0:0"], capture_output=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 1, p
    assert "0.0.0.0 is not a loopback address" in p.stderr.decode(), p
    assert not (tmp_path / "s.sock").exists()


def test_a_paused_session_keeps_every_request(mcpd_factory):
    """The front hands a session's lines to its control client in-process;
    a client at --max-client-requests takes no more, so the front puts
    them in the client's input, and the client reads them once it
    resumes: none is lost, each gets its own answer."""
    import threading
    port = free_port()
    d = mcpd_factory("--max-client-requests", "2", "--listen-http",
                     f"127.0.0.1:{port}")
    d.load_testserver("ts")
    d.url = url = f"http://127.0.0.1:{port}/mcp/ts"
    d.token = token = d.rpc.result("mcpd/token", {})["token"]
    sid = session(d)
    assert post(url, {"jsonrpc": "2.0",
                      "method": "notifications/initialized"},
                token, sid)[0] == 202
    answers = {}

    def call(n, name, args):
        status, _, body = post(url, {
            "jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": name, "arguments": args}}, token, sid,
            headers={"Accept": "application/json"}, timeout=60)
        answers[n] = (status, json.loads(body))

    def http_calls():
        rows = d.rpc.result("mcpd/clients", {})["clients"]
        return [r["calls"] for r in rows if r["kind"] == "http"]

    threads = [threading.Thread(target=call, args=(n, "sleep_ms",
                                                   {"ms": 1500}))
               for n in (10, 11)]
    for t in threads:
        t.start()
    # Both sleeps are in the gateway: the client is at its limit.
    poll(lambda: http_calls() == [2], what="two calls in flight")
    later = [threading.Thread(target=call, args=(n, "echo",
                                                 {"message": f"m{n}"}))
             for n in (12, 13)]
    for t in later:
        t.start()
    for t in threads + later:
        t.join(timeout=90)
    for n in (12, 13):
        status, msg = answers[n]
        assert status == 200, answers
        assert msg["id"] == n, msg
        assert "result" in msg, answers
        assert msg["result"]["content"][0]["text"] == f"m{n}", msg
    for n in (10, 11):
        assert answers[n][0] == 200 and "result" in answers[n][1], answers
    # The session goes on (its lines through the socketpair from now on).
    call(14, "echo", {"message": "after"})
    assert answers[14][1]["result"]["content"][0]["text"] == "after"
    assert http_calls() == [5]


def open_stream(d, sid):
    """The session's GET stream on a connection of its own: the socket,
    once its headers came."""
    port = int(d.url.split(":")[2].split("/")[0])
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
               f"Authorization: Bearer {d.token}\r\n"
               f"Mcp-Session-Id: {sid}\r\n"
               f"Accept: text/event-stream\r\n\r\n").encode())
    got = b""
    while b"\r\n\r\n" not in got:
        got += s.recv(4096)
    assert got.startswith(b"HTTP/1.1 200 "), got
    return s, got.split(b"\r\n\r\n", 1)[1]


def stream_methods(s, got, want):
    """The methods of the notifications on stream s until want came."""
    while got.count(b"\ndata: ") < want:
        got += s.recv(65536)
    return [json.loads(line[6:])["method"]
            for line in got.decode().split("\n") if line.startswith("data: ")]


def close_seen(s):
    """Closes s and waits until mcpd closed its end too: the client's end
    is then in TIME_WAIT (FIN_WAIT2 while mcpd has not seen the close)."""
    port = f"{s.getsockname()[1]:04X}"
    s.close()

    def state():
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                local, remote, st = line.split()[1:4]
                if local.endswith(":" + port):
                    return st
        return None
    poll(lambda: state() in ("06", None), what="mcpd to close its end")


LIST_CHANGED = ["notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed"]


def test_notifications_wait_for_the_next_get_stream(front):
    """A session whose GET stream closed (an upgrade, a blip: the SDK
    opens it again after the retry time) hears what changed meanwhile on
    its next one, each list_changed once however often it changed."""
    sid = session(front)
    status, _, _ = post(front.url, {"jsonrpc": "2.0",
                                    "method": "notifications/initialized"},
                        front.token, sid)
    assert status == 202
    s, got = open_stream(front, sid)
    close_seen(s)
    front.load_testserver("a")
    front.load_testserver("b")
    s, got = open_stream(front, sid)
    with s:
        assert stream_methods(s, got, 3) == LIST_CHANGED
        # Nothing more was kept: what comes next is what happens now.
        front.ctl("unload", "b")
        assert stream_methods(s, b"", 3) == LIST_CHANGED
