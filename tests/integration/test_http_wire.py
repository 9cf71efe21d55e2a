# SPDX-License-Identifier: ISC
"""The HTTP front's own HTTP/1.1 (daemon/httpd-req.c, common/httphead.c),
on real sockets against the real daemon: pipelining, HTTP/1.0, Expect:
100-continue, the refusals it makes itself (each closes its connection
with a JSON-RPC error), chunked bodies, absolute-form targets, a client's
half close, --http-header-timeout, and the chunked framing of a GET
stream. Every read has a deadline: nothing waits a fixed time for an
event."""

import json
import re
import socket
import threading
import time

import pytest

from conftest import INVALID_REQUEST, free_port, poll

# --------------------------------------------------------------------------
# The daemon and its front

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "wire", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

OK = "HTTP/1.1 200 OK"
ACCEPTED = "HTTP/1.1 202 Accepted"
CONTINUE = "HTTP/1.1 100 Continue"


def front_of(mcpd_factory, *args):
    """An mcpd with the HTTP front on a free port and the given options;
    .port and .token (the default agent's) are set."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}", *args)
    d.port = port
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


@pytest.fixture
def front(mcpd_factory):
    return front_of(mcpd_factory)


def http_sessions(d):
    return d.rpc.result("mcpd/status")["http_sessions"]


# --------------------------------------------------------------------------
# Requests, as bytes

def body_of(msg):
    """A message's bytes (compact JSON), or msg when it is bytes already."""
    if isinstance(msg, bytes):
        return msg
    return json.dumps(msg, separators=(",", ":")).encode()


def http_head(d, method="POST", target="/mcp", version="HTTP/1.1",
              sid=None, length=None, accept="application/json", fields=(),
              total_fields=None):
    """A request's head (through its empty line): Host, the token,
    Content-Type, Accept, then Mcp-Session-Id and Content-Length when
    given, then fields; total_fields pads it with X-Pad-<n> fields to
    exactly that many."""
    lines = [f"Host: 127.0.0.1:{d.port}", f"Authorization: Bearer {d.token}",
             "Content-Type: application/json", f"Accept: {accept}"]
    if sid is not None:
        lines.append(f"Mcp-Session-Id: {sid}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    lines += list(fields)
    if total_fields is not None:
        assert total_fields >= len(lines), (total_fields, lines)
        lines += [f"X-Pad-{n}: v" for n in range(total_fields - len(lines))]
    return "\r\n".join([f"{method} {target} {version}"] + lines +
                       ["", ""]).encode()


def post(d, msg, **head):
    """A whole request with msg as its body, by Content-Length (unless
    length=None is given: then the body follows the head as it is)."""
    body = body_of(msg)
    head.setdefault("length", len(body))
    return http_head(d, **head) + body


def ping(id_):
    return {"jsonrpc": "2.0", "id": id_, "method": "ping"}


def pong(id_):
    return {"jsonrpc": "2.0", "id": id_, "result": {}}


def call(id_, tool, arguments):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}


def echoed(id_, message):
    """The answer of the test server's echo, through the gateway."""
    return {"jsonrpc": "2.0", "id": id_, "result": {
        "content": [{"type": "text", "text": message}],
        "structuredContent": {"message": message}}}


def slept(id_, ms):
    """The answer of the test server's sleep_ms, through the gateway."""
    return {"jsonrpc": "2.0", "id": id_, "result": {
        "content": [{"type": "text", "text": f"slept {ms} ms"}]}}


def refusal(message):
    """The body of a refusal of the front's own."""
    return {"jsonrpc": "2.0", "id": None,
            "error": {"code": INVALID_REQUEST, "message": message}}


# --------------------------------------------------------------------------
# Answers, read from a socket

class Matching:
    """Equal to any string the regular expression matches whole."""

    def __init__(self, rx):
        self.rx = re.compile(rx)

    def __eq__(self, other):
        return isinstance(other, str) and bool(self.rx.fullmatch(other))

    def __repr__(self):
        return f"Matching({self.rx.pattern!r})"


# RFC 9110 5.6.7 (IMF-fixdate).
DATE = Matching(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d "
                r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                r"\d{4} \d\d:\d\d:\d\d GMT")
SESSION_ID = Matching(r"[0-9a-f]{32}")


STREAM_HEADERS = {"Date": DATE, "Content-Type": "text/event-stream",
                  "Cache-Control": "no-cache", "X-Accel-Buffering": "no",
                  "Transfer-Encoding": "chunked"}
# The first event of a session's first call stream: its id, the retry.
PRIMING = b"id: 1-0\nretry: 1000\ndata: \n\n"


def event(msg, event_id=None):
    """An event of an event stream that carries msg."""
    head = f"id: {event_id}\n".encode() if event_id is not None else b""
    return head + b"event: message\ndata: " + body_of(msg) + b"\n\n"


def json_headers(body, **more):
    """The headers of a JSON answer of body's bytes."""
    return dict({"Date": DATE, "Content-Type": "application/json",
                 "Content-Length": str(len(body))}, **more)


class Wire:
    """One client connection to the front. What comes back is read with a
    deadline; a response is its status line, its header fields and its
    body (by Content-Length, chunked to its last chunk, or to the close)."""

    def __init__(self, d, timeout=20.0):
        self.sock = socket.create_connection(("127.0.0.1", d.port),
                                             timeout=timeout)
        self.timeout = timeout
        self.buf = bytearray()
        self.is_eof = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sock.close()

    def send(self, data):
        self.sock.settimeout(self.timeout)
        self.sock.sendall(data)

    def _more(self, deadline):
        """Reads what comes into buf; False at the end of the stream."""
        while not self.is_eof:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"mcpd sent nothing more in time; buffered: "
                    f"{bytes(self.buf)[:300]!r}")
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            if data:
                self.buf += data
                return True
            self.is_eof = True
        return False

    def _take(self, n, deadline):
        while len(self.buf) < n:
            if not self._more(deadline):
                raise AssertionError(
                    f"mcpd closed the connection {n - len(self.buf)} bytes "
                    f"short; buffered: {bytes(self.buf)[:300]!r}")
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def _take_through(self, sep, deadline):
        while (at := self.buf.find(sep)) < 0:
            if not self._more(deadline):
                raise AssertionError(
                    f"mcpd closed the connection before {sep!r}; buffered: "
                    f"{bytes(self.buf)[:300]!r}")
        return self._take(at + len(sep), deadline)

    def head(self):
        """The status line and the header fields (each once) of the next
        response."""
        deadline = time.monotonic() + self.timeout
        text = self._take_through(b"\r\n\r\n", deadline)[:-4].decode()
        status, *lines = text.split("\r\n")
        headers = {}
        for line in lines:
            name, sep, value = line.partition(": ")
            assert sep and name not in headers, (line, text)
            headers[name] = value
        return status, headers

    def chunk(self):
        """The data of the next chunk (b"" for the last one, whose trailer
        must be empty), its framing checked."""
        deadline = time.monotonic() + self.timeout
        size = self._take_through(b"\r\n", deadline)[:-2]
        assert re.fullmatch(rb"[0-9a-fA-F]+", size), size
        data = self._take(int(size, 16) + 2, deadline)
        assert data.endswith(b"\r\n"), data
        return data[:-2]

    def response(self):
        """(status line, headers, body) of the next response."""
        status, headers = self.head()
        if status.split()[1].startswith("1"):
            return status, headers, b""     # interim: no body
        if "Content-Length" in headers:
            deadline = time.monotonic() + self.timeout
            return status, headers, self._take(
                int(headers["Content-Length"]), deadline)
        if headers.get("Transfer-Encoding") == "chunked":
            chunks = []
            while (data := self.chunk()) != b"":
                chunks.append(data)
            return status, headers, b"".join(chunks)
        return status, headers, self._rest()    # HTTP/1.0: to the close

    def _rest(self, timeout=None):
        """All that comes until mcpd closes the connection (a reset is a
        failure: the front never closes with bytes of a client unread)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while self._more(deadline):
            pass
        rest = bytes(self.buf)
        self.buf.clear()
        return rest

    def closed(self, timeout=None):
        """Waits until mcpd closes the connection, with nothing more
        sent."""
        rest = self._rest(timeout)
        assert rest == b"", rest[:300]

    def nothing_buffered(self):
        assert self.buf == b"" and not self.is_eof, (bytes(self.buf),
                                                     self.is_eof)


def raw(d, data):
    """(status line, headers, body) of the one request data, on a
    connection of its own."""
    with Wire(d) as w:
        w.send(data)
        return w.response()


def session(d):
    """A new 2025 session at /mcp, initialized: its id."""
    status, headers, body = raw(d, post(d, INIT))
    assert status == OK, (status, body)
    sid = headers["Mcp-Session-Id"]
    assert raw(d, post(d, INITIALIZED, sid=sid)) == (
        ACCEPTED, {"Date": DATE, "Content-Length": "0"}, b"")
    return sid


def assert_json(answer, expected, **more_headers):
    """answer is a 200 with expected as its JSON body."""
    status, headers, body = answer
    assert status == OK, answer
    assert json.loads(body) == expected, body
    assert headers == json_headers(body, **more_headers), headers


# --------------------------------------------------------------------------
# One request at a time, in order

def test_pipelined_requests_are_answered_in_order(front):
    """Two requests in one write on a keep-alive connection: the second
    waits for the first's answer, although it would be answered first (a
    300 ms call, then a ping): both on that connection, ids 1 then 2."""
    front.load_testserver("ts")
    sid = session(front)
    with Wire(front) as w:
        w.send(post(front, call(1, "ts__sleep_ms", {"ms": 300}), sid=sid) +
               post(front, ping(2), sid=sid))
        assert_json(w.response(), slept(1, 300))
        assert_json(w.response(), pong(2))
        w.nothing_buffered()


def test_pipelined_requests_past_a_requests_worth_are_all_served(
        mcpd_factory):
    """A 300 ms call, then 2000 pings (650 KB, far more than a head and a
    body at --max-message 4096) written while it is held: the front stops
    reading at a request's worth and goes on after; each is answered, in
    order, on that connection."""
    d = front_of(mcpd_factory, "--max-message", "4096")
    d.load_testserver("ts")
    sid = session(d)
    n = 2000
    pings = b"".join(post(d, ping(i), sid=sid) for i in range(1, n + 1))
    # More than the front reads at once (256 KiB) past a request's worth:
    # some is still unread in the kernel when it stops reading.
    assert len(pings) > 256 * 1024 + 64 * 1024 + 4096, len(pings)
    with Wire(d) as w:
        w.send(post(d, call(0, "ts__sleep_ms", {"ms": 300}), sid=sid))
        # Sent from a descriptor of its own, so that its writes and the
        # reads below do not share a timeout.
        with w.sock.dup() as sender:
            sender.settimeout(60)
            t = threading.Thread(target=sender.sendall, args=(pings,))
            t.start()
            try:
                assert_json(w.response(), slept(0, 300))
                for i in range(1, n + 1):
                    assert_json(w.response(), pong(i))
            finally:
                t.join(timeout=60)
        w.nothing_buffered()


# --------------------------------------------------------------------------
# HTTP/1.0

def test_http_1_0_closes_unless_kept_alive(front):
    """HTTP/1.0 without Connection: the answer says Connection: close and
    mcpd closes after it; with Connection: keep-alive the answer says
    keep-alive and the connection carries a second request."""
    sid = session(front)
    with Wire(front) as w:
        w.send(post(front, ping(1), sid=sid, version="HTTP/1.0"))
        assert_json(w.response(), pong(1), Connection="close")
        w.closed()
    keep = ["Connection: keep-alive"]
    with Wire(front) as w:
        w.send(post(front, ping(2), sid=sid, version="HTTP/1.0",
                    fields=keep))
        assert_json(w.response(), pong(2), Connection="keep-alive")
        w.send(post(front, ping(3), sid=sid, version="HTTP/1.0",
                    fields=keep))
        assert_json(w.response(), pong(3), Connection="keep-alive")
        w.nothing_buffered()


def test_an_http_1_0_stream_ends_with_the_close(front):
    """HTTP/1.0 has no chunked coding: a call's event stream (begun after
    --http-stream-after, the call takes 300 ms) comes without framing,
    with Connection: close although the request asked to keep it alive,
    and its close ends it."""
    front.load_testserver("ts")
    sid = session(front)
    with Wire(front) as w:
        w.send(post(front, call(7, "ts__sleep_ms", {"ms": 300}), sid=sid,
                    version="HTTP/1.0", fields=["Connection: keep-alive"],
                    accept="application/json, text/event-stream"))
        status, headers, body = w.response()
    unframed = {k: v for k, v in STREAM_HEADERS.items()
                if k != "Transfer-Encoding"}
    assert (status, headers) == (OK, dict(unframed, Connection="close"))
    assert body == PRIMING + event(slept(7, 300), "1-1")


# --------------------------------------------------------------------------
# Expect: 100-continue

def test_expect_100_continue_is_answered_before_the_body(front):
    """A head with Expect: 100-continue and no body yet: mcpd answers
    100 Continue (a status line, no field) while the body has not been
    sent; then the body, and the real answer."""
    front.load_testserver("ts")
    sid = session(front)
    message = "m" * 2000
    body = body_of(call(5, "ts__echo", {"message": message}))
    with Wire(front) as w:
        w.send(http_head(front, sid=sid, length=len(body),
                         fields=["Expect: 100-continue"]))
        assert w.response() == (CONTINUE, {}, b"")
        w.nothing_buffered()
        w.send(body)
        assert_json(w.response(), echoed(5, message))
        w.nothing_buffered()


# --------------------------------------------------------------------------
# The front's own refusals

def spaced_colon(d):
    return post(d, INIT, fields=["X-Spaced : 1"])


def two_lengths(d):
    return post(d, INIT, fields=[f"Content-Length: {len(body_of(INIT))}"])


def gzipped(d):
    return post(d, INIT, length=None, fields=["Transfer-Encoding: gzip"])


def endless_head(d):
    """One 70,000-byte field value and no empty line."""
    head = http_head(d, length=len(body_of(INIT)),
                     fields=["X-Big: " + "a" * 70000])
    assert head.endswith(b"a\r\n\r\n")
    return head[:-4]


REFUSALS = [
    pytest.param(lambda d: post(d, INIT, method="PUT"),
                 "HTTP/1.1 405 Method Not Allowed",
                 {"Allow": "GET, POST, DELETE"},
                 "MCP takes POST, GET and DELETE", id="put"),
    pytest.param(lambda d: post(d, INIT, version="HTTP/2.0"),
                 "HTTP/1.1 505 HTTP Version Not Supported", {},
                 "this is HTTP/1.1", id="http-2.0"),
    pytest.param(spaced_colon, "HTTP/1.1 400 Bad Request", {},
                 "the request is not HTTP/1.1", id="space-before-colon"),
    pytest.param(two_lengths, "HTTP/1.1 400 Bad Request", {},
                 "the request is not HTTP/1.1", id="two-content-lengths"),
    pytest.param(gzipped, "HTTP/1.1 501 Not Implemented", {},
                 "a body can come chunked or with Content-Length only",
                 id="transfer-encoding-gzip"),
    pytest.param(lambda d: post(d, INIT, total_fields=101),
                 "HTTP/1.1 431 Request Header Fields Too Large", {},
                 "the request's header fields are too many or too long",
                 id="101-fields"),
    pytest.param(endless_head,
                 "HTTP/1.1 431 Request Header Fields Too Large", {},
                 "the request's header fields are too many or too long",
                 id="head-over-64KiB"),
]


@pytest.mark.parametrize("make,status,fields,why", REFUSALS)
def test_a_refusal_closes_with_a_jsonrpc_error(front, make, status, fields,
                                               why):
    """An initialize the front cannot take as HTTP: its exact status (and
    Allow for a 405), a JSON-RPC error with id null that says why, and the
    connection closed; no session is made, and the next initialize (with
    100 header fields, the most a head may have) is served. (The Date
    header of these: test_refusals_carry_a_date.)"""
    with Wire(front) as w:
        w.send(make(front))
        status_got, headers, body = w.response()
        w.closed()
    assert status_got == status, (status_got, body)
    assert json.loads(body) == refusal(why), body
    headers.pop("Date", None)
    assert headers == dict(fields, **{
        "Content-Type": "application/json",
        "Content-Length": str(len(body)), "Connection": "close"}), headers
    assert http_sessions(front) == 0
    status_got, headers, body = raw(front, post(front, INIT,
                                                total_fields=100))
    assert status_got == OK, body
    assert headers == json_headers(body, **{"Mcp-Session-Id": SESSION_ID})
    assert http_sessions(front) == 1


def test_refusals_carry_a_date(front):
    """Every 4xx refusal says when it was made (RFC 9110 6.6.1), as the
    front's answers to requests it serves do."""
    for make in (lambda d: post(d, INIT, method="PUT"), spaced_colon,
                 lambda d: post(d, INIT, total_fields=101)):
        status, headers, _ = raw(front, make(front))
        assert status.split()[1].startswith("4"), status
        assert headers.get("Date") == DATE, (status, headers)


def test_a_refusal_is_closed_without_a_reset_while_the_body_comes(
        mcpd_factory):
    """A POST whose Content-Length is over --max-message is refused (413)
    as soon as its head came. The client has sent part of its body and
    sends more after it read the refusal: the front reads and drops it (up
    to a request's worth, within --http-header-timeout), and closes when
    the client closes, so the client sees an orderly close. Had the front
    closed at once, the kernel would answer the later bytes with a reset,
    which loses the refusal to a client that is still sending."""
    front = front_of(mcpd_factory, "--max-message", "65536")
    with Wire(front) as w:
        w.send(http_head(front, length=65537) + b"x" * 10000)
        status, headers, got = w.response()
        assert status == "HTTP/1.1 413 Content Too Large", (status, got)
        assert json.loads(got) == refusal("the body is over --max-message")
        assert headers["Connection"] == "close", headers
        w.send(b"x" * 50000)
        w.sock.shutdown(socket.SHUT_WR)
        w.closed()
        assert w.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0
    assert http_sessions(front) == 0

def refused_and_shut(d):
    """A connection whose POST (Content-Length over --max-message, 65536)
    was refused with 413 and whose front shut its side down: its Wire,
    and its "address:port"."""
    w = Wire(d)
    w.send(http_head(d, length=65537))
    status, _, got = w.response()
    assert status == "HTTP/1.1 413 Content Too Large", (status, got)
    w.closed()
    return w, "%s:%d" % w.sock.getsockname()


def reset_at_last(w, data, timeout=20):
    """Sends data (again and again) until the connection is reset: the
    front closed it, and the kernel answers what comes after."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            w.sock.sendall(data)
            w.sock.settimeout(0.05)
            if w.sock.recv(1) == b"":
                continue        # the front's shutdown, seen again
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            return
    raise AssertionError("the front never closed the connection")


def test_a_refused_client_that_never_closes_is_closed_in_time(
        mcpd_factory):
    """After a refusal, a client that neither sends nor closes is closed
    by the front after --http-header-timeout (1000 ms), and mcpd says so
    (debug)."""
    d = front_of(mcpd_factory, "-v", "--max-message", "65536",
                 "--http-header-timeout", "1000")
    w, peer = refused_and_shut(d)
    with w:
        poll(lambda: f"HTTP front: {peer} did not close within "
             "--http-header-timeout after its refusal: its connection is "
             "closed" in d.read_stderr(), timeout=20,
             what="mcpd to close the connection")
        reset_at_last(w, b"x")


def test_a_refused_client_that_sends_on_is_closed_after_a_request(
        mcpd_factory):
    """After a refusal, the front drops at most a request's worth (64 KiB
    of head and --max-message, 65536) of what still comes; past it, it
    closes (--http-header-timeout is an hour here, so that is not what
    closes it)."""
    d = front_of(mcpd_factory, "-v", "--max-message", "65536",
                 "--http-header-timeout", "3600000")
    w, peer = refused_and_shut(d)
    with w:
        reset_at_last(w, b"x" * 65536)
        poll(lambda: f"HTTP front: {peer} sent over a request's worth "
             "after its refusal: its connection is closed" in
             d.read_stderr(), timeout=10, what="mcpd to say why it closed")


# --------------------------------------------------------------------------
# Bodies and targets

def chunked(body, sizes):
    """body in chunks of sizes (the rest in the last): the second chunk's
    size line has an extension, the third's is upper-case hex, and a
    trailer field follows the last chunk."""
    out, at = [], 0
    for n, size in enumerate(sizes + [len(body) - sum(sizes)]):
        piece = body[at:at + size]
        at += size
        line = {1: f"{size:x};x=1", 2: f"{size:X}"}.get(n, f"{size:x}")
        out.append(line.encode() + b"\r\n" + piece + b"\r\n")
    assert at == len(body)
    return b"".join(out) + b"0\r\nX-Trailer: t\r\n\r\n"


def test_a_chunked_body_is_served_as_the_same_body_with_a_length(front):
    """A POST whose body comes chunked (four chunks, an extension on one,
    a trailer field) gets the answer the same body with Content-Length
    gets, to the byte (but for Date)."""
    front.load_testserver("ts")
    sid = session(front)
    message = "in pieces: " + "z" * 300
    body = body_of(call(6, "ts__echo", {"message": message}))
    framed = chunked(body, [1, 200, 43])
    by_length = raw(front, post(front, body, sid=sid))
    by_chunks = raw(front, http_head(
        front, sid=sid, fields=["Transfer-Encoding: chunked"]) + framed)
    assert_json(by_length, echoed(6, message))
    assert_json(by_chunks, echoed(6, message))
    assert by_chunks[0::2] == by_length[0::2]
    assert {k: v for k, v in by_chunks[1].items() if k != "Date"} == {
        k: v for k, v in by_length[1].items() if k != "Date"}


def test_an_absolute_form_target_is_served_as_its_path(front):
    """POST http://127.0.0.1:PORT/mcp is /mcp: its initialize is answered
    as one with the path alone is, and its session is one of /mcp."""
    target = f"http://127.0.0.1:{front.port}/mcp"
    status, headers, body = raw(front, post(front, INIT, target=target))
    _, _, reference = raw(front, post(front, INIT))
    assert status == OK, body
    assert headers == json_headers(body, **{"Mcp-Session-Id": SESSION_ID})
    assert body == reference
    assert json.loads(body)["result"]["serverInfo"]["name"] == "mcpd"
    assert_json(raw(front, post(front, ping(2),
                                sid=headers["Mcp-Session-Id"])), pong(2))


# --------------------------------------------------------------------------
# A client's half close

def test_a_half_closed_client_gets_its_answer(front):
    """A 2025 call, then shutdown(SHUT_WR) before its answer (a 300 ms
    sleep): the whole answer comes, then mcpd closes."""
    front.load_testserver("ts")
    sid = session(front)
    with Wire(front) as w:
        w.send(post(front, call(3, "ts__sleep_ms", {"ms": 300}), sid=sid))
        w.sock.shutdown(socket.SHUT_WR)
        assert_json(w.response(), slept(3, 300))
        w.closed()


def test_a_stream_whose_client_shuts_down_its_writing_is_kept_to_resume(
        front):
    """HTTP cannot tell a half close from a close: a 2025 call's event
    stream whose client shuts down its writing side (the priming event
    came, after --http-stream-after) is taken for its client's going. Its
    connection ends without the answer, which is kept: a GET with
    Last-Event-ID gets it, then the stream's end (doc/gateway.md)."""
    front.load_testserver("ts")
    sid = session(front)
    with Wire(front) as w:
        w.send(post(front, call(4, "ts__sleep_ms", {"ms": 1000}), sid=sid,
                    accept="application/json, text/event-stream"))
        assert w.head() == (OK, STREAM_HEADERS)
        assert w.chunk() == PRIMING
        w.sock.shutdown(socket.SHUT_WR)
        w.closed()
    with Wire(front) as w:
        w.send(http_head(front, method="GET", sid=sid,
                         accept="text/event-stream",
                         fields=["Last-Event-ID: 1-0"]))
        assert w.head() == (OK, STREAM_HEADERS)
        assert w.chunk() == event(slept(4, 1000), "1-1")
        assert w.chunk() == b""


# --------------------------------------------------------------------------
# --http-header-timeout

def test_an_idle_keep_alive_connection_is_closed(mcpd_factory):
    """After an answer, a connection that sends nothing for
    --http-header-timeout (1000 ms) is closed by mcpd, not before, and
    mcpd says so (debug)."""
    d = front_of(mcpd_factory, "-v", "--http-header-timeout", "1000")
    with Wire(d) as w:
        peer = "%s:%d" % w.sock.getsockname()
        w.send(post(d, INIT))
        status, headers, body = w.response()
        answered = time.monotonic()
        assert status == OK, body
        w.closed(timeout=20)
        idle = time.monotonic() - answered
    assert idle >= 0.8, idle
    poll(lambda: f"HTTP front: {peer} sent no whole request for "
         "--http-header-timeout: its connection is closed" in
         d.read_stderr(), timeout=10, what="mcpd to log the close")


def test_a_slow_head_within_the_timeout_is_served(mcpd_factory):
    """--http-header-timeout 2000: a keep-alive connection idle for 1.2 s
    after an answer, then a request whose head comes in pieces over 1.2 s
    (split inside its lines and inside its last CRLF CRLF): the request's
    own time is under the timeout (the idle time is not added to it), so
    it is answered, and the connection serves on."""
    d = front_of(mcpd_factory, "--http-header-timeout", "2000")
    sid = session(d)
    request = post(d, ping(2), sid=sid)
    end = request.index(b"\r\n\r\n")
    cuts = [5, request.index(b"Authorization") + 20, end + 1, end + 3]
    pieces = [request[a:b] for a, b in zip([0] + cuts, cuts + [None])]
    assert b"".join(pieces) == request and len(pieces) == 5
    with Wire(d) as w:
        w.send(post(d, ping(1), sid=sid))
        assert_json(w.response(), pong(1))
        time.sleep(1.2)             # idle, within the timeout
        for n, piece in enumerate(pieces):
            if n > 0:
                time.sleep(0.3)     # the slow client
            w.send(piece)
        assert_json(w.response(), pong(2))
        w.send(post(d, ping(3), sid=sid))
        assert_json(w.response(), pong(3))
        w.nothing_buffered()


# --------------------------------------------------------------------------
# A GET stream

LIST_CHANGED = ["notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed"]


def test_a_get_stream_is_chunked_and_hears_list_changed(front):
    """A session's GET stream: chunked event-stream headers, then, while
    the client sends nothing, a server loaded for the agent comes as
    three list_changed notifications, one event per chunk, each chunk's
    size line exact."""
    sid = session(front)
    with Wire(front) as w:
        w.send(http_head(front, method="GET", sid=sid,
                         accept="text/event-stream"))
        assert w.head() == (OK, STREAM_HEADERS)
        w.nothing_buffered()
        front.load_testserver("ts")
        got = [w.chunk() for _ in LIST_CHANGED]
        assert got == [event({"jsonrpc": "2.0", "method": m})
                       for m in LIST_CHANGED], got
        w.nothing_buffered()
