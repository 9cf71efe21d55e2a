# SPDX-License-Identifier: ISC
"""The audit log (doc/policy.md): one line per call, each outcome exactly,
no interleaving under load, rotation, a disk that cannot be written
(calls go on, or are refused with --audit-required), tokens never logged,
arguments masked."""

import asyncio
import hashlib
import json
import os
import re
import select
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

from conftest import (MCPCTL, NOT_FOUND, OUTCOME_UNKNOWN, STALE_HANDLE,
                      TESTSERVER, free_port, poll, rpc_error_of, run_ctl)

STORAGE = -32007
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def audit_lines(d, name="audit.jsonl"):
    path = d.state / name
    if not path.exists():
        return []
    return [json.loads(l) for l in path.read_text().splitlines()]


def wait_lines(d, n):
    return poll(lambda: (ls := audit_lines(d)) and len(ls) >= n and ls,
                what=f"{n} audit lines")


def stable(rec, exe=str(MCPCTL)):
    """A record without what changes from run to run (the client is
    checked: its exe exact, its pid one that ran)."""
    r = dict(rec)
    assert TIME.match(r.pop("time")), rec
    assert isinstance(r.pop("duration_ms"), (int, float)), rec
    client = r.pop("client")
    assert set(client) == {"pid", "exe"}, rec
    assert client["pid"] > 0 and client["exe"] == exe, rec
    return r


def ts_definition(d, server, tool):
    r = d.rpc.result("mcpd/tools", {"server": server, "tool": tool})
    return r["tools"][0]["definition"]


def call_ctl(d, server, tool, args):
    return run_ctl(d.sock, "call", server, tool, "--args-json", json.dumps(args))


def base(server, tool, definition, args_text, outcome, error=None,
         bytes_out=0):
    return {"agent": "default", "view": None, "method": "tools/call",
            "server": server, "tool": tool, "definition": definition,
            "arguments_digest": (
                None if args_text is None else hashlib.blake2b(
                    args_text.encode(), digest_size=16).hexdigest()),
            "decision": {"rule": None, "by": "default-allow"},
            "outcome": outcome, "error": error,
            "bytes_in": 0 if args_text is None else len(args_text),
            "bytes_out": bytes_out}


def test_each_outcome_exactly(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("ts")
    d.load_testserver("modern", "--modern")
    defs = {t: ts_definition(d, "ts", t) for t in ("echo", "fail", "crash")}
    defs["mismatch"] = ts_definition(d, "modern", "mismatch")
    ok = call_ctl(d, "ts", "echo", {"message": "hi"})
    assert ok.rc == 0, ok
    te = call_ctl(d, "ts", "fail", {"message": "no"})
    assert te.rc == 5, te
    # mcpctl call knows the tools itself: the refused call is a raw one.
    with d.client() as c:
        e = rpc_error_of(c.result, "mcpd/call",
                         {"server": "ts", "tool": "nope", "arguments": {}})
    assert e.code == NOT_FOUND, e
    err = call_ctl(d, "modern", "mismatch", {"message": "x"})
    assert err.rc == 1, err
    cr = call_ctl(d, "ts", "crash", {})
    assert cr.rc == 4, cr
    lines = wait_lines(d, 5)
    assert len(lines) == 5, lines
    assert lines[2]["client"]["pid"] == os.getpid(), lines[2]
    recs = [stable(r, os.path.realpath(sys.executable) if i == 2 else
                   str(MCPCTL)) for i, r in enumerate(lines)]
    ok_text = json.dumps({"content": [{"type": "text", "text": "hi"}],
                          "structuredContent": {"message": "hi"}},
                         separators=(",", ":"))
    assert recs[0] == base("ts", "echo", defs["echo"], '{"message":"hi"}', "ok",
                           bytes_out=recs[0]["bytes_out"])
    assert recs[0]["bytes_out"] == len(ok_text), recs[0]
    assert recs[1] == base("ts", "fail", defs["fail"], '{"message":"no"}',
                           "tool-error", bytes_out=recs[1]["bytes_out"])
    assert recs[1]["bytes_out"] > 0
    assert recs[2] == base("ts", "nope", None, None, "refused",
                           {"code": NOT_FOUND, "kind": "not-found"})
    assert recs[3] == base("modern", "mismatch", defs["mismatch"],
                           '{"message":"x"}', "error",
                           {"code": -32020, "kind": "stale-handle"})
    assert recs[4] == base("ts", "crash", defs["crash"], "{}",
                           "outcome-unknown",
                           {"code": OUTCOME_UNKNOWN,
                            "kind": "outcome-unknown"})
    st = os.stat(d.state / "audit.jsonl")
    assert st.st_mode & 0o777 == 0o600
    # mcpctl audit --json gives the lines as they are; the human form one
    # line per call.
    j = run_ctl(d.sock, "audit", "--server", "ts", is_json=False)
    assert j.rc == 0, j
    got = subprocess.run([str(MCPCTL), "-s", str(d.sock), "--json",
                          "audit", "--server", "ts"], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert [json.loads(l)["tool"] for l in got] == ["echo", "fail", "nope",
                                                    "crash"]
    human = j.out.splitlines()
    assert len(human) == 4, j.out
    assert re.match(r"^\S+Z  default  ts  echo  ok  \d+\.\d{3} ms$",
                    human[0]), human
    assert re.match(r"^\S+Z  default  ts  nope  refused \(-32001 not-found\)"
                    r"  \d+\.\d{3} ms$", human[2]), human


async def _hammer(sock, clients, calls):
    async def one(k):
        r, w = await asyncio.open_unix_connection(str(sock))
        for i in range(calls):
            w.write(b'{"jsonrpc":"2.0","id":%d,"method":"mcpd/call",'
                    b'"params":{"server":"ts","tool":"echo",'
                    b'"arguments":{"message":"c%d-%d"}}}\n' % (i, k, i))
            line = await r.readline()
            assert b'"result"' in line, line
        w.close()
    await asyncio.gather(*(one(k) for k in range(clients)))


def test_64_clients_1000_calls_64000_whole_lines(mcpd_factory):
    # One file for all: this is about lines, not rotation.
    d = mcpd_factory("--audit-max-bytes", str(1 << 30))
    d.load_testserver("ts")
    asyncio.run(_hammer(d.sock, 64, 1000))
    text = (d.state / "audit.jsonl").read_text()
    lines = text.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == 64000
    seen = set()
    for l in lines:
        rec = json.loads(l)
        assert rec["outcome"] == "ok" and rec["tool"] == "echo", rec
        seen.add(rec["arguments_digest"])
    assert len(seen) == 64000


def test_rotation_keeps_n_files(mcpd_factory):
    d = mcpd_factory("--audit-max-bytes", "65536", "--audit-files", "3")
    d.load_testserver("ts")
    cl = d.client()
    for i in range(1500):
        cl.result("mcpd/call", {"server": "ts", "tool": "echo",
                                "arguments": {"message": "m%04d" % i}})
    names = sorted(p.name for p in d.state.iterdir()
                   if p.name.startswith("audit.jsonl"))
    assert names == ["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2",
                     "audit.jsonl.3"], names
    size = len(open(d.state / "audit.jsonl.1").readline())
    for n in ("audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"):
        st = os.stat(d.state / n)
        # Each rotated file is full: the next line would not have fit.
        assert 65536 - 2 * size < st.st_size <= 65536, (n, st.st_size)
        assert st.st_mode & 0o777 == 0o600
    # The last call is the current file's last line; none was lost in
    # between: the four files hold consecutive calls.
    msgs = []
    for n in ("audit.jsonl.3", "audit.jsonl.2", "audit.jsonl.1",
              "audit.jsonl"):
        msgs += [json.loads(l)["arguments_digest"]
                 for l in (d.state / n).read_text().splitlines()]
    assert len(msgs) == len(set(msgs))
    assert len(msgs) < 1500


def _tmpfs_daemon(mcpd_factory, *args):
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    (base / "state").mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700",
                    "tmpfs", str(base / "state")], check=True)
    try:
        d = mcpd_factory(*args, base=base)
    except Exception:
        subprocess.run(["umount", "-l", str(base / "state")])
        raise
    return d, base / "state"


def _fill(state):
    """The tmpfs full: a file takes every byte left."""
    with open(state / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as e:
            assert e.errno == 28, e


@pytest.mark.parametrize("required", [False, True])
def test_full_state_dir(mcpd_factory, required):
    """A state dir that cannot take the log's lines. A read-only remount
    is what the kernel refuses while mcpd holds files there open for
    writing (EBUSY), so the test fills a small tmpfs instead (ENOSPC):
    the same path, a write that fails."""
    args = ("--audit-required",) if required else ()
    d, state = _tmpfs_daemon(mcpd_factory, *args)
    try:
        d.load_testserver("ts", "--echo-input")
        # Filled before the log's first line: audit.jsonl has no page of
        # tmpfs yet that a line could still fit in.
        _fill(state)
        for i in range(3):
            if required:
                e = rpc_error_of(d.call, "ts", "echo", {"message": "x"})
                assert e.code == STORAGE, e
                assert e.message == (
                    "the audit log cannot be written (No space left on "
                    "device) and mcpd runs with --audit-required, so the "
                    "call to ts was refused; nothing was sent; see mcpctl "
                    "status"), e
            else:
                assert d.call("ts", "echo", {"message": "x%d" % i})[
                    "structuredContent"] == {"message": "x%d" % i}
        st = run_ctl(d.sock, "status", is_json=False)
        want = ("calls are refused: --audit-required" if required
                else "calls go on unrecorded")
        assert re.search(
            r"^audit: \S+/audit.jsonl cannot be written since \S+Z: "
            r"No space left on device \(3 records lost; " + re.escape(want)
            + r"\)$", st.out, re.M), st.out
        warn = ("audit: cannot write %s/audit.jsonl: No space left on "
                "device; %s until it can be written (logged again when it "
                "can)" % (state, "calls are refused (--audit-required)"
                          if required else "calls go on unrecorded"))
        assert d.read_stderr().count(warn) == 1, d.read_stderr()
        (state / "filler").unlink()
        d.call("ts", "echo", {"message": "after"})
        assert d.read_stderr().count(
            "audit: %s/audit.jsonl is written again; 3 records were lost"
            % state) == 1, d.read_stderr()
        # The server read one call (after), or all four.
        calls = [l for l in d.logs("ts")
                 if l.startswith("in: ") and '"tools/call"' in l]
        assert len(calls) == (1 if required else 4), calls
        recs = audit_lines(d)
        if required:
            assert [r["outcome"] for r in recs] == ["admitted", "ok"], recs
        else:
            assert [r["outcome"] for r in recs] == ["ok"], recs
        assert "audit: /" in run_ctl(d.sock, "status", is_json=False).out
    finally:
        d.stop()
        subprocess.run(["umount", "-l", str(state)])


def test_token_never_logged(mcpd_factory):
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.load_testserver("ts")
    token = d.rpc.result("mcpd/token", {})["token"]
    url = f"http://127.0.0.1:{port}/mcp"

    def post(body, sid=None):
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "Authorization": f"Bearer {token}",
             "MCP-Protocol-Version": "2025-06-18"}
        if sid:
            h["Mcp-Session-Id"] = sid
        req = urllib.request.Request(url, json.dumps(body).encode(), h)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.headers.get("Mcp-Session-Id"), r.read()
    sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18",
                              "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
          "params": {"name": "ts__echo", "arguments": {"message": token}}},
         sid)
    rec = wait_lines(d, 1)[0]
    want = "tok-" + hashlib.blake2b(token.encode(),
                                    digest_size=6).hexdigest()
    assert rec["client"] == {"token": want}, rec
    assert rec["tool"] == "echo" and rec["outcome"] == "ok", rec
    assert token.encode() not in (d.state / "audit.jsonl").read_bytes()


def test_arguments_masked(mcpd_factory):
    d = mcpd_factory("--audit-arguments")
    d.load_testserver("ts")
    subprocess.run([str(MCPCTL), "-s", str(d.sock), "secret", "set", "pw"],
                   input=b"hunter2-secret", check=True, capture_output=True)
    d.call("ts", "echo", {"message": "hunter2-secret"})
    d.call("ts", "add", {"a": 1, "b": 2})
    recs = wait_lines(d, 2)
    assert recs[0]["arguments"] == {"message": "***"}, recs[0]
    assert recs[1]["arguments"] == {"a": 1, "b": 2}, recs[1]
    assert b"hunter2" not in (d.state / "audit.jsonl").read_bytes()


def test_audit_off(mcpd_factory):
    d = mcpd_factory("--audit", "off")
    d.load_testserver("ts")
    d.call("ts", "echo", {"message": "x"})
    assert not (d.state / "audit.jsonl").exists()
    r = run_ctl(d.sock, "audit", is_json=False)
    assert r.rc == 1 and r.err == (
        "mcpctl: the audit log is off (mcpd runs with --audit off)\n"), r


def mcp_session(d):
    return d.mcp_session()


def test_gateway_prompts_resources_and_refusals(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("conf", "--conformance")
    d.load_testserver("ts")
    me = os.path.realpath(sys.executable)
    with mcp_session(d) as c:
        c.result("prompts/get", {"name": "conf__test_simple_prompt"})
        c.result("resources/read", {"uri": "test://template/7/data"})
        c.error("resources/read", {"uri": "test://nowhere"})
        c.error("prompts/get", {"name": "conf__nope"})
        c.result("tools/list")
        c.result("tools/call", {"name": "ts__echo",
                                "arguments": {"message": "hi"}})
        c.error("tools/call", {"name": "ts__nope", "arguments": {}})
    recs = [stable(r, me) for r in wait_lines(d, 6)]
    short = [(r["method"], r["server"], r["tool"], r["outcome"], r["error"],
              r["arguments_digest"], r["definition"]) for r in recs]
    assert short == [
        ("prompts/get", "conf", "test_simple_prompt", "ok", None, None,
         None),
        ("resources/read", "conf", "test://template/7/data", "ok", None,
         None, None),
        ("resources/read", None, "test://nowhere", "refused",
         {"code": -32602, "kind": None}, None, None),
        ("prompts/get", None, "conf__nope", "refused",
         {"code": -32602, "kind": None}, None, None),
        ("tools/call", "ts", "echo", "ok", None,
         hashlib.blake2b(b'{"message":"hi"}', digest_size=16).hexdigest(),
         ts_definition(d, "ts", "echo")),
        ("tools/call", None, "ts__nope", "refused",
         {"code": -32602, "kind": None}, None, None),
    ], short
    assert all(r["bytes_out"] > 0 for r in recs[:2]), recs


def test_follow_across_rotation(mcpd_factory):
    d = mcpd_factory("--audit-max-bytes", "65536", "--audit-files", "2")
    d.load_testserver("ts")
    f = subprocess.Popen([str(MCPCTL), "-s", str(d.sock), "--json", "audit",
                          "-f", "--server", "ts"], stdout=subprocess.PIPE,
                         bufsize=0)
    out = b""

    def printed(n):
        nonlocal out
        while out.count(b"\n") < n:
            ready, _, _ = select.select([f.stdout], [], [], 30)
            assert ready, "mcpctl audit -f printed %d of %d" % (
                out.count(b"\n"), n)
            out += os.read(f.stdout.fileno(), 65536)

    try:
        cl = d.client()
        # Batches of less than a file, each printed before the next: a
        # follower that sleeps between looks sees each rotation (a log
        # that rotates past --audit-files while it sleeps loses lines).
        n = 0
        for batch in range(5):
            for i in range(n, n + 150):
                cl.result("mcpd/call", {"server": "ts", "tool": "echo",
                                        "arguments": {"message": "f%04d" % i}})
            n += 150
            printed(n)
        assert (d.state / "audit.jsonl.2").exists()
        got = [json.loads(l) for l in out.decode().splitlines()]
        want = [hashlib.blake2b(b'{"message":"f%04d"}' % i,
                                digest_size=16).hexdigest()
                for i in range(n)]
        assert [r["arguments_digest"] for r in got] == want
    finally:
        f.kill()
        f.wait()


def test_bridge_client_is_the_bridge(mcpd_factory):
    """A bridge's calls (relayed, as by default, or served by mcpd on the
    pipes it was handed) are recorded with the pid and executable of the
    bridge, and its agent."""
    d = mcpd_factory()
    d.load_testserver("ts")
    p = subprocess.Popen([str(MCPCTL), "-s", str(d.sock), "bridge",
                          "--agent", "default"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, bufsize=0)
    try:
        def send(msg):
            p.stdin.write(json.dumps(msg).encode() + b"\n")

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "b", "version": "1"}}})
        assert json.loads(p.stdout.readline())["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "ts__echo",
                         "arguments": {"message": "via bridge"}}})
        assert json.loads(p.stdout.readline())["id"] == 2
        rec = wait_lines(d, 1)[0]
        assert rec["client"] == {"pid": p.pid, "exe": str(MCPCTL)}, rec
        assert (rec["agent"], rec["server"], rec["tool"], rec["outcome"]) \
            == ("default", "ts", "echo", "ok"), rec
    finally:
        p.stdin.close()
        p.wait(timeout=30)


def test_a_line_over_the_bound_is_cut(mcpd_factory):
    """A record longer than 65536 bytes (here its kept arguments) loses
    its arguments and says cut; its digest still covers them."""
    d = mcpd_factory("--audit-arguments")
    d.load_testserver("ts")
    big = "y" * 100000
    d.call("ts", "echo", {"message": big})
    d.call("ts", "echo", {"message": "small"})
    raw = (d.state / "audit.jsonl").read_bytes().split(b"\n")
    assert raw[-1] == b"" and len(raw) == 3, len(raw)
    assert len(raw[0]) + 1 <= 65536
    first, second = json.loads(raw[0]), json.loads(raw[1])
    assert "arguments" not in first and first["cut"] is True, first
    assert first["arguments_digest"] == hashlib.blake2b(
        json.dumps({"message": big}, separators=(",", ":")).encode(),
        digest_size=16).hexdigest()
    assert first["bytes_in"] == 100000 + len('{"message":""}')
    assert second["arguments"] == {"message": "small"} and \
        "cut" not in second, second


def test_digest_of_arguments_as_written(mcpd_factory):
    """A plain call's arguments go upstream as the client wrote them; the
    digest is still of their canonical text (keys sorted, compact, escapes
    and numbers as jansson writes them), and text that already is
    canonical is hashed as it is (no parse): each form gets the digest of
    the canonical one."""
    d = mcpd_factory()
    d.load_testserver("ts")
    written = [
        '{"message":"hi"}',
        '{ "message" : "hi" }',
        '{"z":1,"message":"hi"}',
        '{"message":"a\\"b\\u00e9\\/"}',
        '{"message":"m","n":-0}',
        '{"message":"m","x":2.50}',
        '{"message":"m","n":-12,"o":{"z":true,"y":[1,{"b":null,"a":false}]}}',
        '{"message":"m","o":{"b":{},"a":[]},"p":[[],{}]}',
        '{"a":"\u00e9","message":"m"}',
    ]
    with d.client() as c:
        for i, w in enumerate(written):
            c.send_raw(('{"jsonrpc":"2.0","id":"w%d","method":"mcpd/call",'
                        '"params":{"server":"ts","tool":"echo",'
                        '"arguments":%s}}\n' % (i, w)).encode())
            c.response("w%d" % i)
    recs = wait_lines(d, len(written))
    assert len(recs) == len(written), recs
    for w, rec in zip(written, recs):
        canon = json.dumps(json.loads(w), sort_keys=True, ensure_ascii=False,
                           separators=(",", ":")).encode()
        assert (rec["arguments_digest"], rec["bytes_in"]) == (
            hashlib.blake2b(canon, digest_size=16).hexdigest(),
            len(canon)), (w, canon, rec)
