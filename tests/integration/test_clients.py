# SPDX-License-Identifier: ISC
"""mcpctl clients (mcpd/clients): the MCP sessions connected to mcpd, a
bridge's, an HTTP session's and a socket client's, with their agent,
kind, peer, start, calls and view; a session that ends goes from the list
(issue 22, item 9)."""

import http.client
import json
import os
import subprocess
import time
from datetime import datetime, timezone

import pytest

from conftest import MCPCTL, Client, free_port, poll

ISO_MS = "%Y-%m-%dT%H:%M:%S.%fZ"


def initialize(name, version):
    return {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": version}}


def echo(tools, i):
    """tools/call of the testserver's echo, by the name tools/list gave
    it (bare in a one-server view, else with the server's prefix)."""
    names = [t["name"] for t in tools["tools"]
             if t["name"] == "echo" or t["name"].endswith("echo")]
    assert len(names) == 1, tools
    return {"name": names[0], "arguments": {"message": f"m{i}"}}


def ms_of(text):
    t = datetime.strptime(text, ISO_MS).replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000 + 0.5)


def now_ms():
    return time.time_ns() // 1_000_000


class Bridge:
    """mcpctl bridge started by this process, spoken to over its stdio."""

    def __init__(self, d, *args):
        self.p = subprocess.Popen(
            [str(MCPCTL), "-s", str(d.sock), "bridge"] + list(args),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=d.env)
        self.next_id = 1

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid,
                                       "method": method,
                                       "params": params}).encode() + b"\n")
        self.p.stdin.flush()
        msg = json.loads(self.p.stdout.readline())
        assert msg.get("id") == rid and "result" in msg, msg
        return msg["result"]

    def close(self):
        self.p.stdin.close()
        assert self.p.wait(timeout=20) == 0, self.p.stderr.read()
        self.p.stdout.close()
        self.p.stderr.close()


class HttpSession:
    """One MCP session over mcpd's HTTP front, on one kept connection."""

    def __init__(self, d, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port,
                                               timeout=20)
        self.conn.connect()
        self.local = self.conn.sock.getsockname()
        self.token = d.rpc.result("mcpd/token", {})["token"]
        self.sid = None
        self.next_id = 1

    def send(self, method, body_method, params):
        h = {"Content-Type": "application/json",
             "Accept": "application/json, text/event-stream",
             "Authorization": "Bearer " + self.token}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        body = None
        if body_method is not None:
            body = json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                               "method": body_method, "params": params})
            self.next_id += 1
        self.conn.request(method, "/mcp", body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read().decode()
        assert r.status == 200, (r.status, data)
        if self.sid is None:
            self.sid = r.headers["Mcp-Session-Id"]
        return data

    def close(self):
        self.send("DELETE", None, None)
        self.conn.close()


def clients(d):
    return d.rpc.result("mcpd/clients", {})["clients"]


def by_kind(rows):
    kinds = {}
    for r in rows:
        assert r["kind"] not in kinds, rows
        kinds[r["kind"]] = r
    return kinds


def test_bridge_http_and_socket_sessions_are_listed(mcpd_factory):
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.load_testserver("ts")
    me, my_exe = os.getpid(), os.readlink("/proc/self/exe")
    before = now_ms()

    b = Bridge(d, "--server", "ts")
    b.request("initialize", initialize("pytest-bridge", "2"))
    bt = b.request("tools/list", {})
    for i in range(3):
        b.request("tools/call", echo(bt, i))

    s = Client(d.sock)
    s.result("initialize", initialize("pytest-socket", "1"))
    st = s.result("tools/list", {})
    for i in range(2):
        s.result("tools/call", echo(st, i))

    h = HttpSession(d, port)
    h.send("POST", "initialize", initialize("pytest-http", "5"))
    h.send("POST", "tools/call", echo(st, 0))
    after = now_ms()

    got = by_kind(clients(d))
    assert sorted(got) == ["bridge", "http", "socket"], got
    for row in got.values():
        assert before <= ms_of(row["since"]) <= after, row
        assert isinstance(row["age_s"], int) and row["age_s"] >= 0, row
        assert row["agent"] == "default", row
    # The bridge: its own pid (the socket's peer), and the process that
    # started it, this one, with its program.
    bridge = got["bridge"]
    assert {k: bridge[k] for k in ("client", "pid", "client_pid",
                                   "client_exe", "calls", "view")} == {
        "client": "pytest-bridge 2", "pid": b.p.pid, "client_pid": me,
        "client_exe": my_exe, "calls": 3, "view": ["ts"]}, bridge
    sock = got["socket"]
    assert {k: sock[k] for k in ("client", "pid", "exe", "calls",
                                 "view")} == {
        "client": "pytest-socket 1", "pid": me, "exe": my_exe, "calls": 2,
        "view": None}, sock
    web = got["http"]
    assert {k: web[k] for k in ("client", "session", "remote", "calls",
                                "view")} == {
        "client": "pytest-http 5", "session": h.sid[:8],
        "remote": f"127.0.0.1:{h.local[1]}", "calls": 1, "view": None}, web
    assert "pid" not in web, web

    # Calls count as they come.
    b.request("tools/call", echo(bt, 9))
    assert by_kind(clients(d))["bridge"]["calls"] == 4

    # The human table: a row each, the bridge's client named by its pid.
    r = d.ctl("clients", "-w", is_json=False)
    assert r.rc == 0, r
    rows = r.out.splitlines()
    assert rows[0].split() == ["AGENT", "KIND", "CLIENT", "PEER", "SINCE",
                               "AGE", "CALLS", "VIEW"], r.out
    bridge_row = [l for l in rows if " bridge " in l]
    assert len(bridge_row) == 1, r.out
    assert f"pid {me} ({my_exe})" in bridge_row[0], r.out
    assert bridge_row[0].split()[-2:] == ["4", "ts"], r.out
    assert any(f"127.0.0.1:{h.local[1]} session {h.sid[:8]}..." in l
               for l in rows), r.out
    # Connections of mcpctl commands are counted, not listed: d.rpc's and
    # that of the mcpctl that asks.
    assert rows[-1] == "2 connections of mcpctl commands (this one " \
        "included)", r.out

    # A session that ends goes from the list.
    b.close()
    poll(lambda: "bridge" not in by_kind(clients(d)),
         what="the closed bridge's session to go")
    s.close()
    poll(lambda: "socket" not in by_kind(clients(d)),
         what="the closed socket session to go")
    h.close()
    poll(lambda: clients(d) == [], what="the deleted HTTP session to go")
    r = d.ctl("clients", is_json=False)
    assert r.out == "no MCP sessions are connected; 2 connections of " \
        "mcpctl commands (this one included)\n", r


def test_a_relayed_bridge_is_a_bridge_too(mcpd):
    """--relay: the bridge copies the messages itself; its session is
    still the bridge's, with its client's pid."""
    mcpd.load_testserver("ts")
    b = Bridge(mcpd, "--relay", "--agent", "default")
    b.request("initialize", initialize("relayed", "1"))
    b.request("tools/call", echo(b.request("tools/list", {}), 1))
    rows = clients(mcpd)
    assert [(r["kind"], r["pid"], r["client_pid"], r["calls"], r["view"])
            for r in rows] == [("bridge", b.p.pid, os.getpid(), 1, None)], \
        rows
    b.close()
    poll(lambda: clients(mcpd) == [], what="the relayed bridge to go")


@pytest.mark.parametrize("parent", [
    {"pid": 0}, {"pid": "1"}, {"exe": ""}, {"exe": "x" * 4097}, 7])
def test_hello_refuses_a_bad_client_parent(mcpd, parent):
    with mcpd.client() as c:
        e = c.error("mcpd/hello", {"agent": "a1", "client": {
            "name": "mcpctl bridge", "version": "0", "parent": parent}})
        assert e["code"] == -32602, e
        assert e["data"] == {"field": "client.parent"}, e
        assert e["message"] == 'client.parent must be {"pid": a pid, ' \
            '"exe": a path of at most 4096 bytes}, each optional', e
        # Nothing changed: still the default agent, and no bridge.
        assert c.result("mcpd/hello", {})["agent"]["name"] == "default"
    assert clients(mcpd) == []
