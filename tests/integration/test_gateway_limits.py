# SPDX-License-Identifier: ISC
"""The HTTP front's limits, so that no client locks the others out: HTTP
sessions are counted apart from the socket's clients
(--max-http-sessions), a token that opens too many loses its longest idle
one (--max-http-sessions-per-token), an idle session ends
(--http-session-idle), and a connection that never finishes its request
is closed (--http-header-timeout)."""

import json
import socket
import time

from conftest import free_port, poll
from test_gateway_http import INIT, post

NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def front_of(mcpd_factory, *args):
    """An mcpd with the HTTP front and the given options."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}", *args)
    d.port = port
    d.url = f"http://127.0.0.1:{port}/mcp"
    return d


def token_of(d, agent):
    return d.rpc.result("mcpd/token", {"agent": agent})["token"]


def open_session(d, token):
    """A new session (initialize, no DELETE after it): its id."""
    st, h, body = post(d.url, INIT, token)
    assert st == 200, (st, body)
    return h["Mcp-Session-Id"]


def ping(d, token, sid):
    """The HTTP status and body of a ping in session sid."""
    st, _, body = post(d.url, {"jsonrpc": "2.0", "id": 9, "method": "ping"},
                       token, sid)
    return st, body


def http_sessions(d):
    return d.rpc.result("mcpd/status")["http_sessions"]


NO_SESSION = "no such session: initialize again"


def assert_gone(d, token, sid):
    st, body = ping(d, token, sid)
    assert st == 404, (st, body)
    assert json.loads(body)["error"]["message"] == NO_SESSION, body


def test_session_flood_locks_nobody_out(mcpd_factory):
    """Sessions opened and never ended (a client that reconnects without
    DELETE), far past every limit: each token keeps its latest share, the
    socket's clients and `mcpctl status` are served, and a third token is
    refused only when every session is taken."""
    d = front_of(mcpd_factory, "--max-http-sessions", "16",
                 "--max-http-sessions-per-token", "8", "--max-clients", "4")
    a, b, c = token_of(d, "flood-a"), token_of(d, "flood-b"), \
        token_of(d, "flood-c")
    a_sids = [open_session(d, a) for _ in range(40)]
    b_sids = [open_session(d, b) for _ in range(8)]
    assert http_sessions(d) == 16
    # Each token kept its newest 8; a's first 32 were ended.
    for sid in a_sids[:32]:
        assert_gone(d, a, sid)
    for sid in a_sids[32:] + b_sids:
        assert ping(d, a if sid in a_sids else b, sid)[0] == 200
    # A new session of a token that has its share: served (its oldest
    # goes).
    sid = open_session(d, b)
    assert ping(d, b, sid)[0] == 200
    assert_gone(d, b, b_sids[0])
    assert http_sessions(d) == 16
    # Every session is taken and c has none to give up: refused, exactly.
    st, _, body = post(d.url, INIT, c)
    assert st == 503, (st, body)
    assert json.loads(body)["error"]["message"] == (
        "mcpd has 16 HTTP sessions, its limit; end sessions with DELETE or "
        "raise --max-http-sessions"), body
    # The socket is not the HTTP front's: its clients are served, and
    # status counts both apart.
    r = d.ctl("status", is_json=False)
    assert r.rc == 0, r.err
    assert "http sessions: 16\n" in r.out, r.out
    with d.client() as other:
        assert other.result("mcpd/list")["servers"] == []
        status = other.result("mcpd/status")
        assert status["http_sessions"] == 16
        assert status["clients"] == 2, status    # d.rpc and other
        assert status["limits"]["max_http_sessions"] == 16
        assert status["limits"]["max_http_sessions_per_token"] == 8


def test_idle_session_ends_and_is_unknown(mcpd_factory):
    """A session with nothing in flight and no stream open ends after
    --http-session-idle; one with an open stream stays until the stream
    closes."""
    d = front_of(mcpd_factory, "--http-session-idle", "1000")
    token = token_of(d, "idler")
    idle = open_session(d, token)
    kept = open_session(d, token)
    assert post(d.url, NOTE, token, idle)[0] == 202
    s = open_stream(d, token, kept)
    try:
        poll(lambda: http_sessions(d) == 1, timeout=30,
             what="the idle session to end")
        assert_gone(d, token, idle)
        assert (f"HTTP front: session {idle} of agent idler was idle for "
                f"--http-session-idle (1000 ms): it ends") in d.read_stderr()
        # The one with its stream open is there.
        assert ping(d, token, kept)[0] == 200
    finally:
        s.close()
    # Its stream closed: it is idle, and ends in turn.
    poll(lambda: http_sessions(d) == 0, timeout=30,
         what="the session whose stream closed to end")
    assert_gone(d, token, kept)


def test_per_token_limit_ends_the_longest_idle_of_that_token(mcpd_factory):
    d = front_of(mcpd_factory, "--max-http-sessions-per-token", "3")
    a, b = token_of(d, "agent-a"), token_of(d, "agent-b")
    s1, s2, s3 = (open_session(d, a) for _ in range(3))
    t1 = open_session(d, b)
    # s1 is used again: s2 is now a's longest idle.
    assert ping(d, a, s1)[0] == 200
    s4 = open_session(d, a)
    assert_gone(d, a, s2)
    for token, sid in ((a, s1), (a, s3), (a, s4), (b, t1)):
        assert ping(d, token, sid)[0] == 200, sid
    assert http_sessions(d) == 4
    lines = [line for line in d.read_stderr().splitlines()
             if "--max-http-sessions-per-token" in line]
    assert len(lines) == 1, lines
    assert ("HTTP front: agent agent-a has 3 sessions, its limit "
            f"(--max-http-sessions-per-token): its session {s2}, idle for "
            ) in lines[0], lines


def open_stream(d, token, sid):
    """The session's GET stream, open (its socket)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    s.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
               f"Authorization: Bearer {token}\r\n"
               f"Mcp-Session-Id: {sid}\r\n"
               f"Accept: text/event-stream\r\n\r\n").encode())
    assert s.recv(4096).startswith(b"HTTP/1.1 200 OK\r\n")
    return s


def test_per_token_limit_ends_no_busy_session(mcpd_factory):
    """A token whose sessions all have a stream open cannot make one more
    (ending one would cut it off); another token still can."""
    d = front_of(mcpd_factory, "--max-http-sessions-per-token", "2")
    a, b = token_of(d, "busy-a"), token_of(d, "busy-b")
    sids = [open_session(d, a) for _ in range(2)]
    streams = [open_stream(d, a, sid) for sid in sids]
    try:
        st, _, body = post(d.url, INIT, a)
        assert st == 503, (st, body)
        assert json.loads(body)["error"]["message"] == (
            "agent busy-a has 2 HTTP sessions, its limit, each with a "
            "request in flight or a stream open; end one with DELETE or "
            "raise --max-http-sessions-per-token"), body
        for sid in sids:
            assert ping(d, a, sid)[0] == 200
        assert ping(d, b, open_session(d, b))[0] == 200
        assert http_sessions(d) == 3
    finally:
        for s in streams:
            s.close()


def test_incomplete_requests_are_closed(mcpd_factory):
    """Connections that send half a header, or headers and part of a
    body, are closed after --http-header-timeout; a whole request is then
    served."""
    d = front_of(mcpd_factory, "--http-header-timeout", "1000")
    token = token_of(d, "slow")
    half = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
            "Authorization: Bear").encode()
    part = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{d.port}\r\n"
            f"Authorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
            '{"jsonrpc":').encode()
    conns = []
    try:
        for i in range(200):
            s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
            conns.append(s)
            s.sendall(half if i % 2 == 0 else part)
            s.setblocking(False)
        closed = set()

        def all_closed():
            for i, s in enumerate(conns):
                if i in closed:
                    continue
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    data = b""
                if data == b"" or data.startswith(b"HTTP/1.1 "):
                    closed.add(i)
            return len(closed) == len(conns)
        poll(all_closed, timeout=60, interval=0.2,
             what="mcpd to close every incomplete request")
        assert len(closed) == 200
    finally:
        for s in conns:
            s.close()
    assert ping(d, token, open_session(d, token))[0] == 200


def test_a_long_answer_and_a_quiet_stream_outlast_the_header_timeout(
        mcpd_factory):
    """--http-header-timeout is for requests still coming: a call that
    takes longer is answered, and a stream with nothing to say stays
    open."""
    d = front_of(mcpd_factory, "--http-header-timeout", "1000")
    d.load_testserver("ts")
    token = d.rpc.result("mcpd/token", {})["token"]   # ts is its agent's
    sid = open_session(d, token)
    assert post(d.url, NOTE, token, sid)[0] == 202
    s = open_stream(d, token, sid)
    try:
        st, _, body = post(d.url, {
            "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "ts__sleep_ms", "arguments": {"ms": 2500}}},
            token, sid, headers={"Accept": "application/json"})
        assert st == 200 and "error" not in json.loads(body), body
        # The stream said nothing for the whole call: still open.
        time.sleep(0.5)
        s.setblocking(False)
        try:
            data = s.recv(4096)
        except BlockingIOError:
            data = None
        assert data is None, data
    finally:
        s.close()
