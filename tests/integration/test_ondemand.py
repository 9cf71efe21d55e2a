# SPDX-License-Identifier: ISC
"""On demand (issue 26, item 1; doc/lifecycle.md): a server loaded with
--on-demand is started once to keep its lists, then stopped (state idle);
its tools are listed from what was kept; the first call starts it (one
start for many first calls) and it stops again after --idle-stop without a
call; a restart of mcpd keeps it idle. Real peers: server-everything (npm),
the C test server, the SDK client over mcpctl bridge."""

import json
import socket
import subprocess
import threading

import pytest

from conftest import (EVERYTHING_JS, STORAGE, TESTSERVER, TESTSERVER_TOOLS,
                      free_port,
                      cmdline, descendants, direct_tools, everything_cmd,
                      owner_containers, poll, ts_command, wait_gone)
from test_gateway import SdkClient
from test_gateway_http import post, session
from test_remote import Everything

CTL_DAEMON_ERROR = 1    # mcpctl's exit code for an error mcpd answered


def everything_pids(d):
    """server-everything processes under mcpd (there is no other way in)."""
    return [p for p in descendants(d.pid) if str(EVERYTHING_JS) in cmdline(p)]


def load_on_demand(d, command, name, **params):
    params = dict(params, command=[str(a) for a in command], name=name,
                  persist=True, on_demand=True)
    return d.rpc.result("mcpd/load", params, timeout=120)


def wait_idle(d, name, timeout=60.0):
    return d.wait_row(name, lambda r: r["state"] == "idle", timeout=timeout,
                      what=f"{name} to go idle")


@pytest.fixture
def sdk_of():
    clients = []

    def start(d, *bridge_args):
        c = SdkClient(d.sock, *bridge_args)
        clients.append(c)
        return c
    yield start
    for c in clients:
        c.close()


def test_on_demand_server_is_listed_without_running(mcpd, sdk_of):
    want = [f"everything__{t['name']}" for t in direct_tools(everything_cmd())]
    assert len(want) == 17, want
    load_on_demand(mcpd, everything_cmd(), "everything")
    row = wait_idle(mcpd, "everything")
    assert row["pid"] is None, row
    assert row["on_demand"] is True and row["idle_stop_ms"] == 600000, row
    assert any(ln.endswith("] idle: stopped once its lists were kept; the "
                           "next call starts it")
               for ln in mcpd.logs("everything")), mcpd.logs("everything")
    assert row["tools"] == 17, row
    wait_gone(set(everything_pids(mcpd)), what="server-everything to exit")
    gen = row["generation"]
    c = sdk_of(mcpd)
    assert sorted(c.ask("tools")["tools"]) == sorted(want)
    # Listing (tools, prompts, resources) never starts it.
    assert c.ask("prompts")["prompts"], "its kept prompts are listed"
    assert c.ask("resources")["resources"], "its kept resources are listed"
    assert c.ask("templates")["templates"], "its kept templates are listed"
    row = mcpd.row("everything")
    assert row["state"] == "idle" and row["generation"] == gen, row
    assert everything_pids(mcpd) == []
    assert mcpd.rpc.result("mcpd/status")["servers"] == {
        "total": 1, "ready": 0, "idle": 1, "held_tools": 0}
    # Its instructions (server-everything gives some) are kept too.
    with mcpd.client() as raw:
        init = raw.result("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}})
    assert "everything" in init.get("instructions", ""), init
    # mcpctl list says so too.
    out = mcpd.ctl("list", is_json=False).out
    line = [ln for ln in out.splitlines() if ln.startswith("everything ")]
    assert line and " idle " in line[0], out


def test_sixteen_first_calls_share_one_start_then_idle_stop(mcpd):
    load_on_demand(mcpd, everything_cmd(), "everything", idle_stop_ms=2000)
    gen = wait_idle(mcpd, "everything")["generation"]
    wait_gone(set(everything_pids(mcpd)), what="server-everything to exit")
    sessions = [mcpd.mcp_session() for _ in range(16)]
    results = [None] * 16

    def call(i):
        results[i] = sessions[i].result("tools/call", {
            "name": "everything__echo",
            "arguments": {"message": f"first {i}"}}, timeout=120)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, r in enumerate(results):
        assert r["content"][0]["text"] == f"Echo: first {i}", r
    # One start: one generation more, one process.
    row = mcpd.row("everything")
    assert row["generation"] == gen + 1, row
    assert len(everything_pids(mcpd)) == 1, everything_pids(mcpd)
    pid = everything_pids(mcpd)[0]
    # No call for --idle-stop: it stops (the sessions stay open).
    row = wait_idle(mcpd, "everything")
    assert row["pid"] is None, row
    wait_gone({pid}, what="the idle server-everything to exit")
    r = sessions[0].result("tools/list", {})
    assert len(r["tools"]) == 17
    r = sessions[0].result("tools/call", {
        "name": "everything__echo", "arguments": {"message": "again"}},
        timeout=120)
    assert r["content"][0]["text"] == "Echo: again", r
    for s in sessions:
        s.close()


def test_mcpctl_call_and_prompts_get_start_an_idle_server(mcpd):
    load_on_demand(mcpd, everything_cmd(), "everything")
    wait_idle(mcpd, "everything")
    # mcpd/call (mcpctl call) starts it as the gateway does.
    r = mcpd.ctl("call", "everything", "echo", "message=from mcpctl")
    assert r.rc == 0, r
    assert r.json["content"][0]["text"] == "Echo: from mcpctl", r.json
    row = mcpd.row("everything")
    assert row["state"] == "ready" and isinstance(row["pid"], int), row
    assert row["stops_in_ms"] is not None and \
        0 < row["stops_in_ms"] <= 600000, row
    out = mcpd.ctl("list", is_json=False).out
    assert "ready, stops in 10m" in out, out


def test_a_handle_listed_while_idle_calls_it(mcpd):
    load_on_demand(mcpd, everything_cmd(), "everything")
    gen = wait_idle(mcpd, "everything")["generation"]
    handle = [t["handle"] for t in mcpd.tools("everything")
              if t["name"] == "echo"][0]
    assert handle == f"everything.{gen}/echo", handle
    r = mcpd.rpc.result("mcpd/call", {"handle": handle,
                                      "arguments": {"message": "by handle"}},
                        timeout=120)
    assert r["content"][0]["text"] == "Echo: by handle", r
    assert mcpd.row("everything")["generation"] == gen + 1


def test_prompts_get_waits_for_the_start(mcpd, sdk_of):
    load_on_demand(mcpd, everything_cmd(), "everything")
    wait_idle(mcpd, "everything")
    c = sdk_of(mcpd)
    names = [p["name"] for p in c.ask("prompts")["prompts"]]
    simple = [n for n in names if n.endswith("simple-prompt")]
    assert simple, names
    r = c.ask(f"prompt {simple[0]} {{}}")
    assert r["messages"][0]["content"]["type"] == "text", r
    assert mcpd.row("everything")["state"] == "ready"


def test_restart_of_mcpd_keeps_it_idle_with_its_tools(mcpd_factory, sdk_of):
    d = mcpd_factory()
    load_on_demand(d, everything_cmd(), "everything")
    wait_idle(d, "everything")
    assert d.stop() == []
    d2 = mcpd_factory(base=d.base)
    row = d2.row("everything")
    assert row["state"] == "idle" and row["pid"] is None, row
    assert row["tools"] == 17 and row["on_demand"] is True, row
    assert everything_pids(d2) == []
    c = sdk_of(d2)
    assert len(c.ask("tools")["tools"]) == 17
    assert c.ask("changed 300") == {"changed": 0}
    r = c.ask('call everything__echo {"message":"after a restart"}')
    assert r["result"]["content"][0]["text"] == "Echo: after a restart", r
    # The same lists: starting it told no session anything.
    assert c.ask("changed 1000") == {"changed": 0}


def test_tools_changed_while_idle_send_list_changed_once(mcpd, sdk_of,
                                                         tmp_path):
    # The spec stays the same; what the server lists comes from a file.
    ntools = tmp_path / "ntools"
    ntools.write_text("1")
    cmd = ["/bin/sh", "-c", f'exec {TESTSERVER} --tools "$(cat {ntools})"']
    load_on_demand(mcpd, cmd, "ts", idle_stop_ms=1000)
    wait_idle(mcpd, "ts")
    c = sdk_of(mcpd)
    tools = c.ask("tools")["tools"]
    assert sorted(tools) == sorted(
        [f"ts__{t}" for t in TESTSERVER_TOOLS] + ["ts__t0"]), tools
    ntools.write_text("3")
    assert c.ask("changed 200") == {"changed": 0}
    r = c.ask('call ts__echo {"message":"wake"}')
    assert r["result"]["structuredContent"] == {"message": "wake"}, r
    assert c.ask("changed 20000") == {"changed": 1}
    assert c.ask("changed 1500") == {"changed": 0}, "twice at the first"
    # New tools of a known server are held (pinned definitions,
    # test_pins.py), idle or not, until they are accepted.
    tools = c.ask("tools")["tools"]
    assert "ts__t0" in tools and "ts__t2" not in tools, tools
    wait_idle(mcpd, "ts")
    tools = c.ask("tools")["tools"]
    assert "ts__t0" in tools and "ts__t2" not in tools, tools
    r = mcpd.ctl("accept", "ts")
    assert r.rc == 0, r
    assert c.ask("changed 20000") == {"changed": 1}
    tools = c.ask("tools")["tools"]
    assert {"ts__t0", "ts__t1", "ts__t2"} <= set(tools), tools
    # Once: it stops and starts again with the same lists, and says nothing.
    wait_idle(mcpd, "ts")
    r = c.ask('call ts__t2 {}')
    assert "result" in r, r
    assert c.ask("changed 1000") == {"changed": 0}, "\n".join(mcpd.logs("ts"))


def test_set_switches_and_a_read_only_state_dir_changes_nothing(mcpd):
    mcpd.load(ts_command(), name="ts", persist=True)
    pid = mcpd.row("ts")["pid"]
    rows = (mcpd.state / "enabled.json").read_bytes()
    subprocess.run(["mount", "--bind", str(mcpd.state), str(mcpd.state)],
                   check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(mcpd.state)],
                       check=True)
        r = mcpd.ctl("set", "ts", "on-demand", "--idle-stop", "1s")
        assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == STORAGE, r
        assert r.json["message"].startswith(
            "cannot save the saved row of ts: "), r
        assert "Read-only file system" in r.json["message"], r
        assert r.json["message"].endswith("; nothing was changed"), r
    finally:
        subprocess.run(["umount", str(mcpd.state)], check=True)
    assert (mcpd.state / "enabled.json").read_bytes() == rows
    row = mcpd.row("ts")
    assert row["on_demand"] is False and row["state"] == "ready", row
    assert row["pid"] == pid, row
    # Saved now: it goes idle after its second, and always starts it.
    r = mcpd.ctl("set", "ts", "on-demand", "--idle-stop", "1s")
    assert r.rc == 0 and r.json["on_demand"] is True, r
    assert r.json["idle_stop_ms"] == 1000, r
    saved = json.loads((mcpd.state / "enabled.json").read_text())
    params = [row["params"] for rows in saved["agents"].values()
              for row in rows if row["name"] == "ts"][0]
    assert params["on_demand"] is True and params["idle_stop_ms"] == 1000
    wait_idle(mcpd, "ts")
    wait_gone({pid}, what="the idle test server to exit")
    r = mcpd.ctl("set", "ts", "always")
    assert r.rc == 0 and r.json["on_demand"] is False, r
    row = mcpd.wait_row("ts", lambda r: r["state"] == "ready")
    assert isinstance(row["pid"], int) and row["stops_in_ms"] is None, row


def test_bad_idle_stop_is_refused(mcpd):
    r = mcpd.ctl("load", "--on-demand", "--idle-stop", "soon", "--",
                 *ts_command())
    assert r.rc == 2, r
    assert "--idle-stop needs a duration such as 500ms, 30s, 10m or 2h" \
        in r.err, r
    err = mcpd.rpc.error("mcpd/load", {"command": ts_command(),
                                       "idle_stop_ms": -1})
    assert err["data"]["field"] == "idle_stop_ms", err
    assert mcpd.list() == []
    r = mcpd.ctl("load", "--on-demand", "--idle-stop", "1500ms",
                 "--no-persist", "--name", "ts", "--", *ts_command(),
                 is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[-1] == (
        "on demand: it stops once its lists are kept (state idle) and the "
        "first call starts it; it stops again after 1500ms without a "
        "call"), r
    r = mcpd.ctl("set", "ts", "on-demand", is_json=False)
    assert r.out == ("ts runs on demand: it stops after 10m without a call\n"
                     "(not saved: it was loaded with --no-persist)\n"), r


def test_idle_container_server_leaves_no_container(mcpd, docker_images,
                                                   container_guard):
    did = mcpd.rpc.result("mcpd/status")["did"]
    container_guard.append(did)
    mcpd.rpc.result("mcpd/load", {"target": "mcpd-test/stdio", "name": "box",
                                  "on_demand": True, "idle_stop_ms": 1000},
                    timeout=120)
    wait_idle(mcpd, "box", timeout=120)
    # docker rm -f runs as it goes idle: wait for its end.
    mcpd.wait_row("box", lambda r: r["container"] is None, timeout=60,
                  what="the idle server's container record to go")
    assert owner_containers(did) == []
    r = mcpd.call("box", "echo", {"message": "in a container"},
                  timeout=120)
    assert r["structuredContent"] == {"message": "in a container"}, r
    assert len(owner_containers(did)) == 1
    wait_idle(mcpd, "box", timeout=120)
    mcpd.wait_row("box", lambda r: r["container"] is None, timeout=60,
                  what="the container to go at the idle stop")
    assert owner_containers(did) == []


def test_unsaved_on_demand_server_keeps_its_lists_in_memory(mcpd):
    """--no-persist: nothing is written, but it still goes idle listed."""
    mcpd.load(ts_command(), name="ts", on_demand=True, idle_stop_ms=1000)
    row = wait_idle(mcpd, "ts")
    assert row["persistent"] is False and row["pid"] is None, row
    assert not (mcpd.state / "kept").exists()
    names = sorted(t["name"] for t in mcpd.tools("ts"))
    assert names == sorted(TESTSERVER_TOOLS), names
    r = mcpd.call("ts", "echo", {"message": "unsaved"})
    assert r["structuredContent"] == {"message": "unsaved"}, r


def test_a_resource_subscription_keeps_it_running(mcpd):
    load_on_demand(mcpd, everything_cmd(), "everything", idle_stop_ms=1000)
    wait_idle(mcpd, "everything")
    s = mcpd.mcp_session()
    uri = s.result("resources/list", {})["resources"][0]["uri"]
    assert mcpd.row("everything")["state"] == "idle"
    s.result("resources/subscribe", {"uri": uri}, timeout=120)
    # Its idle time passes with the subscription: it says so, and runs.
    mcpd.wait_log("everything", lambda lines: any(
        "not stopped after 1000 ms: in use" in ln for ln in lines),
        what="the idle check to find the subscription")
    row = mcpd.row("everything")
    assert row["state"] == "ready" and isinstance(row["pid"], int), row
    s.result("resources/unsubscribe", {"uri": uri})
    row = wait_idle(mcpd, "everything")
    assert row["pid"] is None, row
    s.close()


def test_idle_remote_server_holds_no_session(mcpd, peers):
    remote = Everything(peers)
    mcpd.load_url(remote.url(), name="remote", allow_local=True,
                  on_demand=True, idle_stop_ms=1000, timeout=120)
    wait_idle(mcpd, "remote")
    # Its session with the server is ended (DELETE), not left open.
    poll(lambda: remote.terminated() == remote.sessions()[:1] and
         len(remote.sessions()) == 1, timeout=30,
         what="the remote session to be terminated")
    r = mcpd.call("remote", "echo", {"message": "remote"}, timeout=120)
    assert r["content"][0]["text"] == "Echo: remote", r
    assert len(remote.sessions()) == 2
    wait_idle(mcpd, "remote")
    poll(lambda: remote.terminated() == remote.sessions(), timeout=30,
         what="the second remote session to be terminated")


def test_an_open_get_stream_keeps_it_running(mcpd_factory):
    """An HTTP session that sees the server and has its GET stream open
    waits for what the server may say: a use, as a subscription is."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    load_on_demand(d, ts_command(), "ts", idle_stop_ms=1000)
    wait_idle(d, "ts")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    sid = session(d, d.url + "/ts")
    stream = socket.create_connection(("127.0.0.1", port), timeout=30)
    stream.sendall((f"GET /mcp/ts HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                    f"Authorization: Bearer {d.token}\r\n"
                    f"Mcp-Session-Id: {sid}\r\n"
                    "Accept: text/event-stream\r\n\r\n").encode())
    assert stream.makefile("rb").readline().startswith(b"HTTP/1.1 200")
    # A call wakes it; with the stream open, its idle time passes in use.
    st, _, body = post(d.url + "/ts", {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"message": "w"}}},
        d.token, sid, headers={"Accept": "application/json"})
    assert st == 200 and json.loads(body)["result"]["structuredContent"] \
        == {"message": "w"}, body
    d.wait_log("ts", lambda lines: any(
        "not stopped after 1000 ms: in use" in ln for ln in lines),
        what="the idle check to find the open stream")
    assert d.row("ts")["state"] == "ready"
    stream.close()
    row = wait_idle(d, "ts")
    assert row["pid"] is None, row
