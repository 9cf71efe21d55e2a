# SPDX-License-Identifier: ISC
"""The control socket: framing, errors, socket mode, peer credentials,
oversized lines and pipelining (doc/control-protocol.md, Framing)."""

import errno
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import (DEFAULT_MAX_MESSAGE, DENIED, INVALID_PARAMS,
                      INVALID_REQUEST, METHOD_NOT_FOUND, MiB, PARSE_ERROR,
                      IS_SANITIZED, UNAVAILABLE, poll, socket_mode)


def test_hello_names_daemon_and_agent(mcpd):
    r = mcpd.rpc.result("mcpd/hello", {})
    assert r["protocol"] == 1
    assert r["daemon"]["pid"] == mcpd.pid
    assert isinstance(r["daemon"]["version"], str) and r["daemon"]["version"]
    assert r["daemon"]["did"].startswith("did:key:z")
    assert r["agent"]["name"] == "default"
    assert r["agent"]["did"].startswith("did:key:")

    with mcpd.client() as c:
        r2 = c.result("mcpd/hello", {"agent": "alice",
                                     "client": {"name": "t", "version": "1"}})
    assert r2["agent"]["name"] == "alice"
    assert r2["daemon"]["did"] == r["daemon"]["did"]
    assert r2["agent"]["did"].startswith("did:key:")
    assert r2["agent"]["did"] != r["agent"]["did"]


def test_status_reports_paths_and_limits(mcpd):
    r = mcpd.rpc.result("mcpd/status")
    assert r["pid"] == mcpd.pid
    assert r["socket"] == str(mcpd.sock)
    assert r["state_dir"] == str(mcpd.state)
    assert r["servers"] == {"total": 0, "ready": 0, "idle": 0,
                            "held_tools": 0}
    assert r["clients"] >= 1
    assert r["limits"]["max_message"] == DEFAULT_MAX_MESSAGE
    assert r["limits"]["max_client_requests"] == 64
    assert r["limits"]["max_client_output"] == 2 * DEFAULT_MAX_MESSAGE
    assert "max_client_queue" not in r["limits"]
    assert r["limits"]["log_lines"] == 1000
    assert isinstance(r["uptime_s"], (int, float)) and r["uptime_s"] >= 0


def test_socket_is_0600(mcpd):
    assert socket_mode(mcpd.sock) == 0o600
    assert os.stat(mcpd.sock).st_uid == os.getuid()


PEER_SCRIPT = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(json.dumps({"connect_errno": e.errno}))
    sys.exit(0)
data = b""
try:
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    end = "eof"
except socket.timeout:
    end = "timeout"
except ConnectionResetError:
    end = "reset"
print(json.dumps({"data": data.decode("utf-8", "replace"), "end": end}))
"""


def run_as_nobody(sock):
    p = subprocess.run(
        [sys.executable, "-c", PEER_SCRIPT, str(sock)], user=65534,
        group=65534, extra_groups=[], capture_output=True, timeout=30,
        stdin=subprocess.DEVNULL, cwd="/")
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)


@pytest.mark.skipif(os.geteuid() != 0,
                    reason="needs root to run a client under another uid")
def test_peer_of_other_uid_is_refused(mcpd):
    # The socket directory is 0700 and the socket 0600: the kernel refuses.
    got = run_as_nobody(mcpd.sock)
    assert got == {"connect_errno": errno.EACCES}

    # Opened up on purpose: mcpd itself must refuse the peer's uid.
    for d in (mcpd.base, mcpd.run_dir):
        os.chmod(d, 0o755)
    os.chmod(mcpd.sock, 0o666)
    got = run_as_nobody(mcpd.sock)
    assert "connect_errno" not in got, got
    assert got["end"] in ("eof", "reset"), (
        f"mcpd kept the refused peer's connection open: {got}")
    lines = [json.loads(l) for l in got["data"].splitlines() if l.strip()]
    assert len(lines) == 1, got
    assert lines[0]["error"]["code"] == DENIED
    assert lines[0]["error"]["data"]["kind"] == "denied"
    assert "result" not in lines[0]

    # And the daemon's own user still gets through.
    assert mcpd.rpc.result("mcpd/status")["pid"] == mcpd.pid


def test_malformed_json_gets_parse_error_and_client_goes_on(mcpd):
    with mcpd.client() as c:
        c.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
        msg = c.read_message()
        assert msg["error"]["code"] == PARSE_ERROR
        assert msg["id"] is None
        c.send_raw(b"\x00\xff garbage\n")
        msg = c.read_message()
        assert msg["error"]["code"] == PARSE_ERROR
        # The same connection still works.
        assert c.result("mcpd/status")["pid"] == mcpd.pid


def test_batch_is_invalid_request(mcpd):
    with mcpd.client() as c:
        c.send([{"jsonrpc": "2.0", "id": 1, "method": "mcpd/status"}])
        msg = c.read_message()
        assert msg["error"]["code"] == INVALID_REQUEST
        assert "result" not in msg
        assert c.result("mcpd/status")["pid"] == mcpd.pid


@pytest.mark.parametrize("msg, want_id", [
    ({"jsonrpc": "2.0", "id": 7}, 7),
    ({"jsonrpc": "2.0", "id": 8, "method": 5}, 8),
    ({"id": 9, "method": "mcpd/status"}, 9),
    ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "mcpd/status"}, None),
    ("just a string", None),
])
def test_invalid_request_object(mcpd, msg, want_id):
    with mcpd.client() as c:
        c.send(msg)
        got = c.read_message()
        assert got["error"]["code"] == INVALID_REQUEST, got
        assert got["id"] == want_id
        assert c.result("mcpd/status")["pid"] == mcpd.pid


def test_unknown_method(mcpd):
    with mcpd.client() as c:
        for method in ("mcpd/frobnicate", "frobnicate"):
            resp = c.call(method, {})
            assert resp["error"]["code"] == METHOD_NOT_FOUND, resp
        assert c.result("mcpd/status")["pid"] == mcpd.pid


@pytest.mark.parametrize("method, params, field", [
    ("mcpd/load", {"command": "mcp-testserver"}, "command"),
    ("mcpd/load", {"command": []}, "command"),
    ("mcpd/load", {"command": ["/bin/true"], "name": "bad name!"}, "name"),
    ("mcpd/load", {"command": ["/bin/true"], "persist": "yes"}, "persist"),
    ("mcpd/load", {"command": ["/bin/true"], "bogus": 1}, "bogus"),
    ("mcpd/list", {"bogus": True}, "bogus"),
    ("mcpd/unload", {}, "target"),
    ("mcpd/logs", {"server": 5}, "server"),
    ("mcpd/logs", {"server": "x", "lines": "many"}, "lines"),
    ("mcpd/call", {"server": "x", "tool": "y", "timeout_ms": "soon"},
     "timeout_ms"),
    ("mcpd/call", {"server": "x", "tool": "y", "arguments": [1]},
     "arguments"),
    ("mcpd/hello", {"agent": 42}, "agent"),
])
def test_bad_params_name_the_field(mcpd, method, params, field):
    err = mcpd.rpc.error(method, params)
    assert err["code"] == INVALID_PARAMS, err
    assert err["data"]["field"] == field, err
    assert field in err["message"], err
    # Nothing was started by a refused load.
    assert mcpd.list() == []


def test_crlf_and_string_ids(mcpd):
    with mcpd.client() as c:
        c.send_raw(b'{"jsonrpc":"2.0","id":"abc","method":"mcpd/status"}\r\n')
        msg = c.read_message()
        assert msg["id"] == "abc"
        assert msg["result"]["pid"] == mcpd.pid


def test_client_notifications_are_ignored(mcpd):
    with mcpd.client() as c:
        c.send({"jsonrpc": "2.0", "method": "mcpd/status"})
        c.send({"jsonrpc": "2.0", "method": "mcpd/shutdown"})
        c.send({"jsonrpc": "2.0", "id": 1, "method": "mcpd/status"})
        msg = c.read_message()
        assert msg["id"] == 1 and msg["result"]["pid"] == mcpd.pid
    # The shutdown notification did not stop it.
    assert mcpd.proc.poll() is None
    assert mcpd.rpc.result("mcpd/status")["pid"] == mcpd.pid


def test_pipelined_requests_in_one_write(mcpd):
    with mcpd.client() as c:
        lines = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": i, "method": m}).encode() +
            b"\n" for i, m in ((10, "mcpd/status"), (11, "mcpd/list"),
                               (12, "mcpd/hello")))
        c.send_raw(lines)
        assert "pid" in c.response(10)["result"]
        assert c.response(11)["result"] == {"servers": []}
        assert c.response(12)["result"]["protocol"] == 1


def expect_oversize_close(c, limit):
    msgs = c.wait_closed(timeout=10)
    assert len(msgs) == 1, msgs
    err = msgs[0]["error"]
    assert msgs[0]["id"] is None
    assert err["code"] == INVALID_REQUEST
    assert err["data"]["limit"] == limit
    assert "kind" not in err["data"]


def test_oversized_line_closes_only_that_client(mcpd_factory):
    limit = 65536
    d = mcpd_factory("--max-message", str(limit))
    assert d.rpc.result("mcpd/status")["limits"]["max_message"] == limit
    other = d.client()
    big = d.client()
    try:
        # A line under the limit is fine.
        ok = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "mcpd/status",
                         "params": {}}).encode()
        pad = b" " * (limit - 1000 - len(ok))
        big.send_raw(ok[:-1] + pad + b"}\n")
        assert big.response(1)["result"]["pid"] == d.pid

        line = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "mcpd/hello",
                           "params": {"agent": "x" * (limit + 10)}})
        try:
            big.send_raw(line.encode() + b"\n")
        except (BrokenPipeError, ConnectionResetError):
            pass    # mcpd may close before it has read it all
        expect_oversize_close(big, limit)

        # The client that was connected all along still works, and so
        # does a new one.
        assert other.result("mcpd/status")["pid"] == d.pid
        with d.client() as c:
            assert c.result("mcpd/list") == {"servers": []}
    finally:
        other.close()
        big.close()


def test_oversized_line_without_newline_is_not_buffered(mcpd_factory):
    limit = 65536
    d = mcpd_factory("--max-message", str(limit))
    with d.client() as big:
        try:
            # Four times the limit and never a newline: mcpd must give up
            # on the line instead of waiting for its end.
            for _ in range(4):
                big.send_raw(b"[" * limit)
        except (BrokenPipeError, ConnectionResetError):
            pass
        expect_oversize_close(big, limit)
    assert d.rpc.result("mcpd/status")["pid"] == d.pid


def test_32_clients_pipelining_500_calls_each(mcpd):
    nclients, ncalls = 32, 500
    mcpd.load_testserver("ts")
    socks, pending, out, inbuf = [], {}, {}, {}
    sel = selectors.DefaultSelector()
    try:
        for ci in range(nclients):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(mcpd.sock))
            s.setblocking(False)
            socks.append(s)
            # Ids repeat across clients on purpose: each connection has its
            # own id space; the message tells which call an answer is for.
            reqs = []
            for i in range(ncalls):
                reqs.append(json.dumps({
                    "jsonrpc": "2.0", "id": i, "method": "mcpd/call",
                    "params": {"server": "ts", "tool": "echo",
                               "arguments": {"message": f"c{ci}-{i}"}}}))
            out[s] = ("\n".join(reqs) + "\n").encode()
            inbuf[s] = bytearray()
            pending[s] = {i: f"c{ci}-{i}" for i in range(ncalls)}
            sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, ci)
        deadline = time.monotonic() + 120
        bad = []
        while any(pending.values()):
            left = deadline - time.monotonic()
            assert left > 0, (
                f"unanswered after 120 s: "
                f"{sum(len(p) for p in pending.values())} calls")
            for key, ev in sel.select(min(left, 1.0)):
                s = key.fileobj
                if ev & selectors.EVENT_WRITE and out[s]:
                    n = s.send(out[s])
                    out[s] = out[s][n:]
                    if not out[s]:
                        sel.modify(s, selectors.EVENT_READ, key.data)
                if ev & selectors.EVENT_READ:
                    chunk = s.recv(1 << 20)
                    assert chunk, f"mcpd closed client {key.data}"
                    inbuf[s] += chunk
                    *lines, rest = inbuf[s].split(b"\n")
                    inbuf[s] = bytearray(rest)
                    for line in lines:
                        msg = json.loads(line)
                        want = pending[s].pop(msg.get("id"), None)
                        if want is None:
                            bad.append((key.data, "unexpected id", msg))
                        elif msg.get("result", {}).get(
                                "structuredContent") != {"message": want}:
                            bad.append((key.data, want, msg))
        assert not bad, bad[:5]
    finally:
        sel.close()
        for s in socks:
            s.close()
    row = mcpd.row("ts")
    assert row["state"] == "ready" and row["restarts"] == 0


# --------------------------------------------------------------------------
# Per-client bounds, clients that go, and the client limit (issue 10)

def proc_status_kb(pid, key):
    """A VmRSS/VmHWM-like field of /proc/PID/status, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {key} in /proc/{pid}/status")


def proc_io(pid, key):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            k, v = line.split(":")
            if k == key:
                return int(v)
    return 0


def wait_quiet(pid, key="wchar", quiet=1.0, timeout=30.0):
    """Waits until pid has not written for quiet seconds."""
    last, since = proc_io(pid, key), time.monotonic()
    deadline = since + timeout
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = proc_io(pid, key)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
    raise AssertionError(f"process {pid} kept writing for {timeout} s")


def test_never_reading_client_is_bounded_and_gets_every_answer(mcpd):
    ncalls, size = 1000, MiB
    mcpd.load_testserver("ts")
    ts_pid = mcpd.row("ts")["pid"]
    rss0 = proc_status_kb(mcpd.pid, "VmRSS")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(mcpd.sock))
    reqs = b"".join(json.dumps({
        "jsonrpc": "2.0", "id": i, "method": "mcpd/call",
        "params": {"server": "ts", "tool": "big",
                   "arguments": {"bytes": size}}}).encode() + b"\n"
        for i in range(ncalls))
    # mcpd stops reading this client: the rest of the write may block.
    writer = threading.Thread(target=s.sendall, args=(reqs,), daemon=True)
    writer.start()
    try:
        # Until the server has answered everything mcpd let through.
        poll(lambda: proc_io(ts_pid, "wchar") > size, timeout=60,
             what="the server to answer a call")
        wait_quiet(ts_pid)
        # The daemon still answers another client while this one is
        # blocked (the timeout only ends a hang).
        with mcpd.client() as other:
            r = other.result("mcpd/call", {
                "server": "ts", "tool": "echo",
                "arguments": {"message": "meanwhile"}}, timeout=30)
            assert r["structuredContent"] == {"message": "meanwhile"}
        held_rss = proc_status_kb(mcpd.pid, "VmRSS")
        held_hwm = proc_status_kb(mcpd.pid, "VmHWM")
        print(f"\nmcpd RSS before {rss0} KiB; while the client does not "
              f"read: VmRSS {held_rss} KiB, VmHWM {held_hwm} KiB")
        # Under AddressSanitizer the heap keeps a quarantine of freed
        # memory (256 MiB): RSS says nothing of mcpd there, and the plain
        # build's run of this test checks it.
        if not IS_SANITIZED:
            assert held_hwm < 100 * 1024, (held_rss, held_hwm)

        # Now it reads: every answer comes, each exactly once and whole.
        s.settimeout(30)
        buf, got, want = bytearray(), {}, "x" * size
        while len(got) < ncalls:
            chunk = s.recv(4 << 20)
            assert chunk, f"mcpd closed after {len(got)} answers"
            buf += chunk
            start = 0
            while True:
                nl = buf.find(b"\n", start)
                if nl < 0:
                    break
                msg = json.loads(buf[start:nl])
                start = nl + 1
                assert msg["id"] not in got, msg["id"]
                assert "result" in msg, str(msg)[:300]
                assert msg["result"]["content"][0]["text"] == want
                got[msg["id"]] = True
            del buf[:start]
        assert sorted(got) == list(range(ncalls))
        assert not buf
        writer.join(timeout=10)
        assert not writer.is_alive()
        end_hwm = proc_status_kb(mcpd.pid, "VmHWM")
        print(f"after all {ncalls} answers: VmRSS "
              f"{proc_status_kb(mcpd.pid, 'VmRSS')} KiB, VmHWM {end_hwm} KiB")
        if not IS_SANITIZED:
            assert end_hwm < 100 * 1024, end_hwm
    finally:
        s.close()
    assert mcpd.row("ts")["restarts"] == 0


def test_client_limits_in_status_and_options(mcpd_factory):
    d = mcpd_factory("--max-client-requests", "3",
                     "--max-client-output", "100000")
    limits = d.rpc.result("mcpd/status")["limits"]
    assert limits["max_client_requests"] == 3
    assert limits["max_client_output"] == 100000
    d.load_testserver("ts")
    # Ten slow calls at once, three at a time: all are answered.
    with d.client() as c:
        ids = [c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 300}})
               for _ in range(10)]
        t0 = time.monotonic()
        for i in ids:
            r = c.response(i, timeout=20)
            assert r["result"]["content"][0]["text"] == "slept 300 ms"
        # Four rounds of at most three: at least 1.2 s.
        assert time.monotonic() - t0 >= 1.1
    sleeps = [l for l in d.logs("ts") if l.startswith("sleep_ms ")]
    assert len(sleeps) == 10


def cancelled_ids(d, server="ts"):
    return [l for l in d.logs(server) if l.startswith("client cancelled ")]


def test_client_gone_mid_call_frees_its_slot_and_cancels(mcpd_factory):
    d = mcpd_factory("--max-clients", "1")
    # The one slot may still hold the start's probe for a moment.
    d._rpc = poll(lambda: status_client(d), what="a free slot")
    d.load_testserver("ts")
    d.rpc.close()               # the slot is for the clients below
    d._rpc = None
    a = poll(lambda: status_client(d), what="a free slot")
    a.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                            "arguments": {"ms": 30000}})
    # The server has the call: it logged its upstream id.
    line = poll(lambda: [l for l in a.result(
        "mcpd/logs", {"server": "ts"})["lines"]
        if l.startswith("sleep_ms ")], what="the sleep_ms line")[0]
    upstream_id = line.split()[1].rstrip(":")
    a.close()
    # Its slot is freed: a new client is served, not refused (once mcpd
    # has read a's end, which may come after b's connection).
    with poll(lambda: status_client(d), what="a's slot to be freed") as b:
        assert b.result("mcpd/status")["pid"] == d.pid
        # The call was cancelled upstream, with its id and a reason.
        got = poll(lambda: [l for l in b.result(
            "mcpd/logs", {"server": "ts"})["lines"]
            if l.startswith("client cancelled ")], what="the cancellation")
        assert got == [f"client cancelled {upstream_id} "
                       f"(the client that asked has gone)"]
        # The server goes on serving.
        r = b.result("mcpd/call", {"server": "ts", "tool": "echo",
                                   "arguments": {"message": "next"}})
        assert r["structuredContent"] == {"message": "next"}
        row = b.result("mcpd/list")["servers"][0]
        assert row["state"] == "ready" and row["restarts"] == 0


def status_client(d):
    """A connected client that mcpd served, or None if it refused it."""
    c = d.client()
    try:
        c.request("mcpd/status", id_="probe")
        msg = c.read_message()
    except OSError:
        msg = None
    if msg is not None and msg.get("id") == "probe" and "result" in msg:
        return c
    c.close()
    return None


def test_half_closed_client_still_gets_its_answers(mcpd):
    mcpd.load_testserver("ts")
    with mcpd.client() as c:
        slow = c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 1000}})
        big = c.request("mcpd/call", {"server": "ts", "tool": "big",
                                      "arguments": {"bytes": 2 * MiB}})
        c.sock.shutdown(socket.SHUT_WR)
        msgs = c.wait_closed(timeout=20)
    by_id = {m["id"]: m for m in msgs}
    assert sorted(by_id) == sorted([slow, big]), msgs
    assert by_id[slow]["result"]["content"][0]["text"] == "slept 1000 ms"
    assert len(by_id[big]["result"]["content"][0]["text"]) == 2 * MiB
    assert cancelled_ids(mcpd) == []


def refusal_of(d):
    """The one line mcpd sends a client it turns away, then EOF."""
    with d.client() as c:
        msgs = c.wait_closed(timeout=10)
    assert len(msgs) == 1, msgs
    assert msgs[0]["id"] is None and "result" not in msgs[0]
    return msgs[0]["error"]


def test_client_beyond_max_clients_gets_one_error(mcpd_factory):
    d = mcpd_factory("--max-clients", "2")
    d.rpc.close()
    d._rpc = None
    first = poll(lambda: status_client(d), what="a first client")
    second = status_client(d)
    try:
        assert second is not None
        assert first.result("mcpd/status")["clients"] == 2
        err = refusal_of(d)
        assert err == {"code": UNAVAILABLE,
                       "message": "mcpd has 2 clients, its limit; close one "
                                  "or raise --max-clients",
                       "data": {"kind": "unavailable", "limit": 2}}
        # The two still work; once one goes, a new one gets in.
        assert second.result("mcpd/list") == {"servers": []}
        second.close()
        third = poll(lambda: status_client(d), what="the freed slot")
        third.close()
    finally:
        first.close()
        if second is not None:
            second.close()


def open_fds(pid):
    return {int(n) for n in os.listdir(f"/proc/{pid}/fd")}


def test_low_nofile_fits_max_clients(mcpd_factory):
    d = mcpd_factory(nofile=(100, 100))
    assert ("--max-clients lowered from 256 to 18 to fit RLIMIT_NOFILE 100"
            in d.read_stderr())
    assert d.rpc.result("mcpd/status")["limits"]["max_clients"] == 18
    clients = [d.rpc]
    try:
        while len(clients) < 18:
            c = status_client(d)
            assert c is not None, f"refused at {len(clients)} clients"
            clients.append(c)
        err = refusal_of(d)
        assert err["code"] == UNAVAILABLE
        assert err["data"] == {"kind": "unavailable", "limit": 18}
        assert err["message"] == ("mcpd has 18 clients, its limit; close "
                                  "one or raise --max-clients")
    finally:
        for c in clients[1:]:
            c.close()
    assert poll(lambda: d.rpc.result("mcpd/status")["clients"] == 1,
                what="the clients to go")


def test_client_beyond_the_descriptors_gets_an_answer(mcpd):
    poll(lambda: mcpd.rpc.result("mcpd/status")["clients"] == 1,
         what="the start's probe connection to go")
    # Every descriptor below the soft limit is taken: the next accept
    # fails with EMFILE. The client is answered all the same.
    fds = open_fds(mcpd.pid)
    lowest_free = min(set(range(len(fds) + 1)) - fds)
    soft, hard = resource.prlimit(mcpd.pid, resource.RLIMIT_NOFILE)
    resource.prlimit(mcpd.pid, resource.RLIMIT_NOFILE, (lowest_free, hard))
    try:
        err = refusal_of(mcpd)
        assert err == {
            "code": UNAVAILABLE,
            "message": f"mcpd has 1 clients and no file descriptor left "
                       f"(RLIMIT_NOFILE {lowest_free}); close a client or "
                       f"raise the limit",
            "data": {"kind": "unavailable", "clients": 1}}
        # And again: the spare descriptor came back.
        assert refusal_of(mcpd) == err
        assert mcpd.rpc.result("mcpd/status")["pid"] == mcpd.pid
    finally:
        resource.prlimit(mcpd.pid, resource.RLIMIT_NOFILE, (soft, hard))
    with mcpd.client() as c:
        assert c.result("mcpd/status")["clients"] == 2


def nofile_of(pid):
    """(soft, hard) RLIMIT_NOFILE of pid, from /proc/PID/limits."""
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                soft, hard = line.split()[3:5]
                return int(soft), int(hard)
    raise AssertionError(f"no open files limit for {pid}")


def test_nofile_raised_to_hard_limit_and_servers_get_the_old_one(
        mcpd_factory):
    d = mcpd_factory(nofile=(100, 400))
    assert nofile_of(d.pid) == (400, 400)
    assert ("--max-clients lowered from 256 to 168 to fit RLIMIT_NOFILE 400"
            in d.read_stderr())
    assert d.rpc.result("mcpd/status")["limits"]["max_clients"] == 168
    d.load_testserver("ts")
    assert nofile_of(d.row("ts")["pid"]) == (100, 400)
