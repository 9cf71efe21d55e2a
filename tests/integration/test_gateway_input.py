# SPDX-License-Identifier: ISC
"""The gateway (DESIGN 11) given what it must refuse or bound: tool names
that must be cut or that collide (the same names on every run), clients
that never read, bodies and messages over the limit, modern notifications
over HTTP, and addresses --listen-http must refuse. Tokens, Host, Origin,
the 17 MiB Content-Length and a bridge whose mcpd stops are in
test_gateway_http.py, test_gateway_v2.py and test_bridge.py.

The servers are the C test server and, where the test needs tool names or
notifications no real server has, a small scripted MCP server (as
test_callflags.py does)."""

import json
import os
import re
import socket
import subprocess
import sys

import pytest

from conftest import IS_SANITIZED, MCPCTL, MCPD, MiB, free_port, poll
from test_control import proc_status_kb, wait_quiet
from test_gateway import raw_session
from test_gateway_http import INIT, post

# A scripted stdio MCP server: its tools are named by the JSON list in
# argv[1]; calling one answers its name; tool "spam" first sends
# arguments.n log messages (notifications/message) of arguments.size bytes.
SCRIPTED_SERVER = r'''
import json, sys

NAMES = json.loads(sys.argv[1])


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, id_ = msg["method"], msg["id"]
    params = msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "scripted", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [
            {"name": n, "inputSchema": {"type": "object"}}
            for n in NAMES]}})
    elif method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") == "spam":
            for _ in range(args.get("n", 1)):
                send({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info",
                                 "data": "x" * args.get("size", 1)}})
        send({"jsonrpc": "2.0", "id": id_, "result": {"content": [
            {"type": "text", "text": params.get("name")}]}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
'''


@pytest.fixture
def scripted(tmp_path):
    """scripted(names): the command of a scripted server with those
    tools."""
    script = tmp_path / "scripted-server.py"
    script.write_text(SCRIPTED_SERVER)

    def command(names):
        return [sys.executable, str(script), json.dumps(names)]
    return command


# --------------------------------------------------------------------------
# Tool names

# The tools of server "names", the name each gets in a scope of many
# servers (<server>__<tool>), and in a scope of that server alone. The
# suffixes are FNV-1a of "names NUL tool" (then "NUL 1" for a second try),
# worked out apart: get.item and get_item collide once '.' is '_', and the
# cut name of get.item (names__get_item_889c04) is a tool's own name, so
# get.item is hashed again (6a32c7); 87 characters are cut to 57; é is two
# bytes of UTF-8, two '_'.
NAMES = [
    ("get.item", "names__get_item_6a32c7", "get_item_6a32c7"),
    ("get_item", "names__get_item_d04aef", "get_item_d04aef"),
    ("x" * 80, "names__" + "x" * 50 + "_58a25d", "x" * 57 + "_58a25d"),
    ("café", "names__caf__", "caf__"),
    ("get_item_889c04", "names__get_item_889c04", "get_item_889c04"),
    ("plain-name", "names__plain-name", "plain-name"),
]
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def shown_names(d, servers=None):
    """The names a raw MCP session of d sees for the tools of server
    "names", the tool each is for (_meta), and the tool each one calls."""
    with raw_session(d, servers=servers) as c:
        tools = [t for t in c.result("tools/list")["tools"]
                 if t["_meta"]["io.mcpd/server"] == "names"]
        names = [t["name"] for t in tools]
        called = [c.result("tools/call", {"name": n, "arguments": {}})[
            "content"][0]["text"] for n in names]
        origin = [t["_meta"]["io.mcpd/tool"] for t in tools]
    return names, origin, called


def test_tool_names_cut_and_collisions_are_the_same_on_every_run(
        mcpd_factory, scripted):
    tools = [t for t, _, _ in NAMES]
    runs = []
    for _ in range(2):
        # A daemon of its own each time: nothing is remembered between.
        d = mcpd_factory()
        d.load_testserver("ts")
        d.load(scripted(tools), name="names")
        names, origin, called = shown_names(d)
        assert list(zip(origin, names)) == [(t, many)
                                            for t, many, _ in NAMES]
        # Each name calls the tool it was given for.
        assert called == tools
        with raw_session(d) as c:
            every = [t["name"] for t in c.result("tools/list")["tools"]]
        assert all(VALID.match(n) for n in every), every
        assert len(set(every)) == len(every), every
        # One server in scope: its names as given, cut and hashed alike.
        names, origin, called = shown_names(d, servers=["names"])
        assert names == [one for _, _, one in NAMES], names
        assert origin == tools and called == tools
        runs.append(every + names)
        assert d.stop() == []
    assert runs[0] == runs[1]


# --------------------------------------------------------------------------
# Clients that never read

# A client that does not read makes mcpd hold at most --max-client-output
# more than the idle daemon (one that has served a call of a few such log
# messages), and a quarter of that for what is in flight (a message being
# read, parsed and written): the log messages total twelve times the
# bound, so that holding a second copy anywhere fails.
OUT = 8 * MiB
SPAM_N, SPAM_SIZE, WARM_N = 400, 256 * 1024, 8


def spam_call(d, scripted):
    """Loads the scripted server as "spam"; (its pid, the tools/call that
    makes it send SPAM_N log messages of SPAM_SIZE bytes)."""
    d.load(scripted(["spam"]), name="spam")
    return d.row("spam")["pid"], spam_msg(2, SPAM_N)


def spam_msg(id_, n):
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call",
            "params": {"name": "spam__spam",
                       "arguments": {"n": n, "size": SPAM_SIZE}}}


def read_until(s, buf, done):
    """Reads s into buf until done(buf); the bytes read."""
    while not done(buf):
        chunk = s.recv(1 << 20)
        assert chunk, f"mcpd closed the connection after {len(buf)} bytes"
        buf += chunk
    return buf


def assert_bounded(d, idle, what):
    """VmHWM of d grew by at most 1.25 x OUT above idle (KiB)."""
    hwm = proc_status_kb(d.pid, "VmHWM")
    print(f"\nmcpd VmHWM after {SPAM_N * SPAM_SIZE // MiB} MiB of log "
          f"messages to {what}: {hwm} KiB, {hwm - idle} KiB above the idle "
          f"daemon's {idle} KiB (--max-client-output {OUT // 1024} KiB)")
    # Under AddressSanitizer the heap keeps a quarantine of freed memory:
    # the plain build's run checks it.
    if not IS_SANITIZED:
        assert hwm - idle <= 1.25 * OUT // 1024, (hwm, idle)


def test_socket_client_that_never_reads_is_bounded(mcpd_factory, scripted):
    """An MCP session on the socket that reads nothing while its call
    sends 100 MiB of log messages: mcpd holds a bounded part of them
    (--max-client-output), answers others meanwhile, and the call's answer
    still comes."""
    mcpd = mcpd_factory("--max-client-output", str(OUT))
    pid, call = spam_call(mcpd, scripted)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(str(mcpd.sock))
    try:
        for msg in (INIT, {"jsonrpc": "2.0",
                           "method": "notifications/initialized"}):
            s.sendall(json.dumps(msg).encode() + b"\n")
        # A call of a few log messages, read: the daemon's idle size is
        # that of one that has served such messages.
        s.sendall(json.dumps(spam_msg(3, WARM_N)).encode() + b"\n")
        s.settimeout(30)
        buf = read_until(s, b"", lambda b: b'"id":3,"result"' in b)
        assert buf.count(b"notifications/message") == WARM_N
        wait_quiet(mcpd.pid, quiet=0.5)
        idle = proc_status_kb(mcpd.pid, "VmHWM")
        s.sendall(json.dumps(call).encode() + b"\n")
        poll(lambda: proc_io_wchar(pid) >= SPAM_N * SPAM_SIZE, timeout=60,
             what="the server to send every log message")
        wait_quiet(mcpd.pid, quiet=0.5)
        with mcpd.client() as other:
            assert other.result("mcpd/list", timeout=5)[
                "servers"][0]["name"] == "spam"
        assert_bounded(mcpd, idle, "a client that does not read")
        # Now it reads: the call's answer, after what mcpd kept.
        s.settimeout(30)
        msgs, buf = [], b""
        while not any(m.get("id") == 2 for m in msgs):
            chunk = s.recv(1 << 20)
            assert chunk, f"mcpd closed the connection after {len(msgs)}"
            buf += chunk
            *lines, buf = buf.split(b"\n")
            msgs += [json.loads(line) for line in lines]
        answer = next(m for m in msgs if m.get("id") == 2)
        assert answer["result"] == {"content": [
            {"type": "text", "text": "spam"}]}, answer
        notes = [m for m in msgs if m.get("method") ==
                 "notifications/message"]
        assert 0 < len(notes) < SPAM_N, len(notes)
    finally:
        s.close()


def proc_io_wchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


@pytest.fixture
def front(mcpd_factory):
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.port = port
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


def test_http_stream_that_is_never_read_is_bounded(mcpd_factory, scripted):
    """A session's GET stream that is never read while a call sends twelve
    times --max-client-output of log messages to it: mcpd holds at most
    that bound more than it did idle, and the call's answer comes."""
    port = free_port()
    front = mcpd_factory("--listen-http", f"127.0.0.1:{port}",
                         "--max-client-output", str(OUT))
    front.port = port
    front.url = f"http://127.0.0.1:{port}/mcp"
    front.token = front.rpc.result("mcpd/token", {})["token"]
    pid, call = spam_call(front, scripted)
    st, h, body = post(front.url, INIT, front.token)
    assert st == 200, body
    sid = h["Mcp-Session-Id"]
    assert post(front.url, {"jsonrpc": "2.0",
                            "method": "notifications/initialized"},
                front.token, sid)[0] == 202
    # The session's stream: read for a first call, then not any more.
    s = socket.create_connection(("127.0.0.1", front.port), timeout=10)
    try:
        s.sendall((f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{front.port}\r\n"
                   f"Authorization: Bearer {front.token}\r\n"
                   f"Mcp-Session-Id: {sid}\r\n"
                   f"Accept: text/event-stream\r\n\r\n").encode())
        s.settimeout(30)
        # A call of a few log messages, read from the stream: the
        # daemon's idle size is that of one that has served such messages.
        st, _, body = post(front.url, spam_msg(3, WARM_N), front.token, sid,
                           headers={"Accept": "application/json"})
        assert st == 200, body
        buf = read_until(s, b"", lambda b: b.count(b"event: message") ==
                         WARM_N and b.endswith(b"\n\n\r\n"))
        assert buf.startswith(b"HTTP/1.1 200 OK\r\n"), buf[:200]
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        wait_quiet(front.pid, quiet=0.5)
        idle = proc_status_kb(front.pid, "VmHWM")
        # The call is answered on its POST (JSON only: it takes no event
        # stream), the log messages go to the session's stream.
        # Its answer comes after 100 MiB of log messages: under the
        # sanitizers that takes some 15 s of the build's own slowness.
        st, _, body = post(front.url, call, front.token, sid,
                           headers={"Accept": "application/json"},
                           timeout=90)
        assert st == 200 and json.loads(body)["result"] == {"content": [
            {"type": "text", "text": "spam"}]}, body
        assert proc_io_wchar(pid) >= SPAM_N * SPAM_SIZE
        wait_quiet(front.pid, quiet=0.5)
        assert_bounded(front, idle, "an HTTP stream that is not read")
    finally:
        s.close()


# --------------------------------------------------------------------------
# Over the limit, and what is left behind

def test_chunked_body_over_max_message_is_refused(mcpd_factory):
    """A body without Content-Length (chunked) past --max-message: 413,
    and no session is made."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}", "--max-message",
                     "4096")
    token = d.rpc.result("mcpd/token", {})["token"]
    clients = d.rpc.result("mcpd/status")["clients"]
    body = json.dumps(dict(INIT, params=dict(
        INIT["params"], clientInfo={"name": "x" * 8000,
                                    "version": "1"}))).encode()
    req = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
           f"Authorization: Bearer {token}\r\n"
           "Content-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\n"
           "Transfer-Encoding: chunked\r\n\r\n").encode()
    for i in range(0, len(body), 1000):
        req += f"{len(body[i:i + 1000]):x}\r\n".encode() + \
            body[i:i + 1000] + b"\r\n"
    req += b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(req)
        status = s.makefile("rb").readline().decode()
    assert status.split()[1] == "413", status
    assert d.rpc.result("mcpd/status")["clients"] == clients
    # The same at its size is served.
    st, _, _ = post(f"http://127.0.0.1:{port}/mcp", INIT, token)
    assert st == 200


@pytest.mark.parametrize("way", [
    ("--reconnect-timeout", "0"), ("--relay", "--reconnect-timeout", "0"),
    ()], ids=["attached", "relayed", "reconnecting"])
def test_bridge_message_over_max_message(mcpd_factory, way):
    """A client's message over --max-message through mcpctl bridge: mcpd
    says so (id null) and closes that connection; the bridge says why and
    exits 1 (a reconnecting one too: the fault is the client's); mcpd
    serves on. Attached (mcpd holds the pipes) or relayed, the same
    words."""
    d = mcpd_factory("--max-message", "4096")
    p = subprocess.Popen(
        [str(MCPCTL), "-s", str(d.sock), "bridge", *way],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=d.env)
    try:
        p.stdin.write(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "ping",
            "params": {"pad": "x" * 5000}}).encode() + b"\n")
        p.stdin.flush()
        assert json.loads(p.stdout.readline()) == {
            "jsonrpc": "2.0", "id": None, "error": {
                "code": -32600,
                "message": "message longer than the limit of 4096 bytes; "
                           "closing the connection",
                "data": {"limit": 4096}}}
        # stdin stays open: the bridge ends because mcpd closed.
        assert p.wait(timeout=10) == 1
        assert p.stderr.read().decode() == (
            "mcpctl: mcpd closed the connection: message longer than the "
            "limit of 4096 bytes; closing the connection\n")
        assert p.stdout.read() == b""
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert d.rpc.result("mcpd/status")["pid"] == d.pid


def test_modern_notifications_over_http_leave_nothing_behind(front):
    clients = front.rpc.result("mcpd/status")["clients"]
    fds = len(os.listdir(f"/proc/{front.pid}/fd"))
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    for i in range(20):
        st, _, body = post(front.url, {
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": i, "_meta": meta}}, front.token,
            headers={"MCP-Protocol-Version": "2026-07-28",
                     "Mcp-Method": "notifications/cancelled"})
        assert (st, body) == (202, ""), (st, body)
    poll(lambda: front.rpc.result("mcpd/status")["clients"] == clients,
         timeout=30, what="the one-request sessions to end")
    assert len(os.listdir(f"/proc/{front.pid}/fd")) <= fds


@pytest.mark.parametrize("addr,host", [("[::]:0", "::"),
                                       ("192.0.2.1:8750", "192.0.2.1")])
def test_listen_http_refuses_other_addresses(tmp_path, addr, host):
    """Any address but a loopback one, IPv6 too, is refused at start (the
    0.0.0.0 case is test_gateway_http.py's)."""
    p = subprocess.run([str(MCPD), "-d", "-s", str(tmp_path / "s.sock"),
                        "-S", str(tmp_path / "state"), "--listen-http",
                        addr], capture_output=True, timeout=20,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 1, p
    assert f"{host} is not a loopback address" in p.stderr.decode(), p
    assert not (tmp_path / "s.sock").exists()
