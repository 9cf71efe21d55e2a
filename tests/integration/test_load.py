# SPDX-License-Identifier: ISC
"""mcpd/load, list, tools, unload and reload against the C test server and
the real @modelcontextprotocol/server-everything over stdio."""

import json
import os
import subprocess
import time

import pytest

from conftest import (MCPCTL, breakable_server, child_env, CONFLICT,
                      EVERYTHING_JS,
                      INVALID_PARAMS, NOT_FOUND, RFC3339_UTC, SERVER_ID,
                      STALE_HANDLE, TESTSERVER, TESTSERVER_TOOLS,
                      UNAVAILABLE, descendants, direct_tools, everything_cmd,
                      group_members, is_alive, pgid_of, poll, process_groups,
                      rpc_error_of, ts_command, wait_gone)


def assert_nothing_running(d):
    """No server process of d is left, and nothing is listed."""
    assert d.list() == []
    poll(lambda: descendants(d.pid) == [] or None, timeout=10,
         what="mcpd's children to end")


def test_load_testserver_then_list(mcpd):
    r = mcpd.load_testserver("ts")
    assert SERVER_ID.match(r["id"]), r
    assert r["name"] == "ts"
    assert r["mode"] == "process"
    assert r["transport"] == "stdio"
    assert str(TESTSERVER) in r["endpoint"]
    assert r["protocol_version"] == "2025-11-25"
    assert r["tools"] == len(TESTSERVER_TOOLS)
    assert isinstance(r["generation"], int)
    assert r["persistent"] is False
    assert r["server_info"] == {"name": "mcp-testserver", "version": "1.0.0"}

    (row,) = mcpd.list()
    assert row["id"] == r["id"]
    assert row["name"] == "ts"
    assert row["agent"] == "default"
    assert row["mode"] == "process"
    assert row["transport"] == "stdio"
    assert row["endpoint"] == r["endpoint"]
    assert row["image"] is None and row["container"] is None
    assert row["state"] == "ready"
    assert row["protocol_version"] == "2025-11-25"
    assert row["tools"] == len(TESTSERVER_TOOLS)
    assert row["generation"] == r["generation"]
    assert row["persistent"] is False
    assert row["restarts"] == 0
    assert row["last_error"] is None
    assert RFC3339_UTC.match(row["since"]), row["since"]
    # The pid is the test server itself, below mcpd, in a process group
    # of its own (not the daemon's).
    pid = row["pid"]
    assert is_alive(pid)
    assert os.readlink(f"/proc/{pid}/exe") == str(TESTSERVER)
    assert pid in descendants(mcpd.pid)
    assert pgid_of(pid) != pgid_of(mcpd.pid)
    assert process_groups(mcpd.pid) == {pgid_of(pid)}

    st = mcpd.rpc.result("mcpd/status")
    assert st["servers"] == {"total": 1, "ready": 1, "idle": 0,
                             "held_tools": 0}


def test_load_everything_then_list(mcpd):
    r = mcpd.load_everything("everything")
    assert r["protocol_version"] == "2025-11-25"
    assert r["server_info"]["name"] == "mcp-servers/everything"
    (row,) = mcpd.list()
    assert row["state"] == "ready"
    tools = mcpd.tools("everything")
    names = [t["name"] for t in tools]
    assert row["tools"] == r["tools"] == len(tools)
    assert len(set(names)) == len(names)
    assert {"echo", "get-structured-content", "get-sum"} <= set(names)


def strip_added(tool):
    return {k: v for k, v in tool.items() if k not in ("server", "handle")}


def test_tools_are_verbatim_testserver(mcpd):
    r = mcpd.load_testserver("ts", "--tools", "3")
    own = direct_tools(ts_command("--tools", "3"))
    got = mcpd.tools("ts")
    assert [strip_added(t) for t in got] == own
    for t in got:
        assert t["server"] == "ts"
        assert t["handle"] == f"ts.{r['generation']}/{t['name']}"
    echo = next(t for t in got if t["name"] == "echo")
    # Fields mcpd does not know are kept too.
    assert echo["x-test-extra"] == {"kept": True}
    assert echo["inputSchema"]["$schema"] == \
        "https://json-schema.org/draft/2020-12/schema"


def test_tools_are_verbatim_everything(mcpd):
    mcpd.load_everything("everything")
    own = {t["name"]: t for t in direct_tools(everything_cmd())}
    got = {t["name"]: t for t in mcpd.tools("everything")}
    for name in ("echo", "get-structured-content", "get-sum"):
        assert strip_added(got[name]) == own[name]
    assert got["echo"]["inputSchema"] == own["echo"]["inputSchema"]
    assert "outputSchema" in got["get-structured-content"]


def test_tools_of_all_servers_and_unknown_server(mcpd):
    mcpd.load_testserver("a")
    mcpd.load_testserver("b", "--tools", "1")
    tools = mcpd.tools()
    assert sorted(set(t["server"] for t in tools)) == ["a", "b"]
    assert len(tools) == 2 * len(TESTSERVER_TOOLS) + 1
    e = rpc_error_of(mcpd.tools, "nope")
    assert e.code == NOT_FOUND and e.data["kind"] == "not-found"


@pytest.mark.parametrize("by", ["name", "id", "endpoint"])
def test_unload_leaves_no_process(mcpd, by):
    r = mcpd.load_testserver("ts")
    pid = mcpd.row("ts")["pid"]
    pgid = pgid_of(pid)
    u = mcpd.rpc.result("mcpd/unload", {"target": r[by]}, timeout=20)
    assert u == {"id": r["id"], "name": "ts", "stopped_live": True,
                 "removed_saved": False, "container_removed": False}
    # Answered after the process is gone.
    assert not is_alive(pid)
    assert group_members([pgid]) == []
    assert mcpd.list() == []
    assert descendants(mcpd.pid) == []
    e = rpc_error_of(mcpd.rpc.result, "mcpd/unload", {"target": "ts"})
    assert e.code == NOT_FOUND


def test_unload_everything_leaves_no_process(mcpd):
    mcpd.load_everything("everything")
    pid = mcpd.row("everything")["pid"]
    pgid = pgid_of(pid)
    before = descendants(mcpd.pid)
    assert pid in before
    u = mcpd.rpc.result("mcpd/unload", {"target": "everything"}, timeout=20)
    assert u["stopped_live"] is True
    assert not is_alive(pid)
    assert [p for p in before if is_alive(p)] == []
    assert group_members([pgid]) == []
    assert mcpd.list() == []


def test_reload_invalidates_old_handles(mcpd):
    r1 = mcpd.load_testserver("ts")
    pid1 = mcpd.row("ts")["pid"]
    h1 = next(t["handle"] for t in mcpd.tools("ts") if t["name"] == "echo")
    assert mcpd.rpc.result("mcpd/call", {
        "handle": h1, "arguments": {"message": "one"}})[
        "structuredContent"] == {"message": "one"}

    r2 = mcpd.rpc.result("mcpd/reload", {"target": "ts"}, timeout=60)
    assert r2["id"] == r1["id"] and r2["name"] == "ts"
    assert r2["generation"] != r1["generation"]
    assert r2["tools"] == len(TESTSERVER_TOOLS)
    row = mcpd.row("ts")
    assert row["generation"] == r2["generation"]
    assert row["state"] == "ready"
    assert row["pid"] != pid1
    wait_gone([pid1], what="the old generation's process")

    e = rpc_error_of(mcpd.rpc.result, "mcpd/call",
                     {"handle": h1, "arguments": {"message": "x"}})
    assert e.code == STALE_HANDLE
    assert e.data["kind"] == "stale-handle"
    assert e.data["current_generation"] == r2["generation"]

    h2 = next(t["handle"] for t in mcpd.tools("ts") if t["name"] == "echo")
    assert h2 == f"ts.{r2['generation']}/echo" != h1
    assert mcpd.rpc.result("mcpd/call", {
        "handle": h2, "arguments": {"message": "two"}})[
        "structuredContent"] == {"message": "two"}


def test_failed_reload_keeps_the_old_connection(mcpd, tmp_path):
    # A wrapper whose behaviour changes between load and reload.
    script, flag = breakable_server(tmp_path)
    r1 = mcpd.load([script], name="wrapped")
    pid1 = mcpd.row("wrapped")["pid"]
    flag.touch()
    e = rpc_error_of(mcpd.rpc.result, "mcpd/reload", {"target": "wrapped"},
                     timeout=60)
    assert e.code == UNAVAILABLE, e
    row = mcpd.row("wrapped")
    assert row["state"] == "ready"
    assert row["generation"] == r1["generation"]
    assert row["pid"] == pid1 and is_alive(pid1)
    assert mcpd.call("wrapped", "echo", {"message": "still"})[
        "structuredContent"] == {"message": "still"}


def test_load_is_idempotent(mcpd):
    r1 = mcpd.load_testserver("ts")
    pid = mcpd.row("ts")["pid"]
    r2 = mcpd.load_testserver("ts")
    assert r2["id"] == r1["id"]
    assert r2["generation"] == r1["generation"]
    (row,) = mcpd.list()
    assert row["pid"] == pid and row["restarts"] == 0
    assert process_groups(mcpd.pid) == {pgid_of(pid)}


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0")
                    if b"=" in kv)


def test_load_with_new_values_applies_them(mcpd):
    """Same target (argv, env names), another env value: the running
    server starts again with it, and calls go on meanwhile; the same values
    again change nothing."""
    r1 = mcpd.load_testserver("ts", env={"MODE": "one"})
    pid1 = mcpd.row("ts")["pid"]
    assert environ_of(pid1)[b"MODE"] == b"one"
    assert "reconfigured" not in r1 and "was_loaded" not in r1

    r2 = mcpd.load_testserver("ts", env={"MODE": "two"})
    assert r2["id"] == r1["id"], r2
    assert r2.get("reconfigured") is True and "was_loaded" not in r2, r2
    assert r2["generation"] == r1["generation"] + 1
    pid2 = mcpd.row("ts")["pid"]
    assert pid2 != pid1
    assert environ_of(pid2)[b"MODE"] == b"two"
    assert mcpd.call("ts", "echo", {"message": "x"})[
        "structuredContent"] == {"message": "x"}
    # The old generation's process is gone (the retired session stops it).
    poll(lambda: not os.path.exists(f"/proc/{pid1}/environ"), timeout=20,
         what="the old process to be stopped")

    r3 = mcpd.load_testserver("ts", env={"MODE": "two"})
    assert r3.get("was_loaded") is True and "reconfigured" not in r3, r3
    assert r3["generation"] == r2["generation"]
    assert mcpd.row("ts")["pid"] == pid2


def test_new_values_that_cannot_start_keep_the_old_connection(mcpd):
    """The start with the new values fails (a server that takes 1.5 s to
    start, given 0.3 s): the old generation keeps serving."""
    slow = ts_command("--start-delay-ms", "1500")
    r1 = mcpd.load(slow, name="ts", env={"MODE": "one"})
    pid1 = mcpd.row("ts")["pid"]
    e = rpc_error_of(mcpd.load, slow, name="ts", env={"MODE": "two"},
                     timeout_ms=300)
    assert e.code == UNAVAILABLE, e
    assert "new settings" in e.message and "keeps serving" in e.message, e
    row = mcpd.row("ts")
    assert row["pid"] == pid1 and row["generation"] == r1["generation"]
    assert mcpd.call("ts", "echo", {"message": "y"})[
        "structuredContent"] == {"message": "y"}


def test_server_count_limit(mcpd_factory):
    d = mcpd_factory("--max-servers", "2")
    d.load_testserver("a")
    d.load_testserver("b", "--tools", "2")
    e = rpc_error_of(d.load, ts_command("--tools", "3"), name="c")
    assert e.code == UNAVAILABLE and e.data["limit"] == 2, e
    assert "--max-servers" in e.message and "unload one" in e.message, e
    assert sorted(r["name"] for r in d.list()) == ["a", "b"]
    assert len(process_groups(d.pid)) == 2
    # A server that is already there is not a new one.
    assert d.load_testserver("a").get("was_loaded") is True
    d.rpc.result("mcpd/unload", {"target": "b"})
    d.load(ts_command("--tools", "3"), name="c")
    assert d.row("c")["state"] == "ready"


def test_name_conflict(mcpd):
    r = mcpd.load_testserver("dup")
    pid = mcpd.row("dup")["pid"]
    e = rpc_error_of(mcpd.load, ts_command("--tools", "2"), name="dup")
    assert e.code == CONFLICT and e.data["kind"] == "conflict"
    assert "dup" in e.message
    (row,) = mcpd.list()
    assert row["id"] == r["id"] and row["pid"] == pid
    assert row["endpoint"] == r["endpoint"] and row["state"] == "ready"
    assert process_groups(mcpd.pid) == {pgid_of(pid)}


def test_load_of_missing_command_fails_clearly(mcpd, tmp_path):
    missing = "/nonexistent/mcpd-test/mcp-nothing"
    e = rpc_error_of(mcpd.load, [missing], name="nothing", persist=True)
    assert e.code == NOT_FOUND and e.data == {"kind": "not-found",
                                              "what": "command"}, e
    assert e.message == (f"cannot run {missing}: No such file or "
                         f"directory; nothing was saved or started"), e
    assert not (mcpd.state / "enabled.json").exists()
    assert_nothing_running(mcpd)
    # Not executable, or a directory: the same, before anything is saved.
    for path, why in ((tmp_path / "plain", "Permission denied"),
                      (tmp_path, "Is a directory")):
        if path != tmp_path:
            path.write_text("#!/bin/sh\n")
        e = rpc_error_of(mcpd.load, [str(path)], name="nothing",
                         persist=True)
        assert e.code == NOT_FOUND, e
        assert e.message == (f"cannot run {path}: {why}; nothing was "
                             f"saved or started"), e
    assert not (mcpd.state / "enabled.json").exists()
    assert mcpd.list() == []


def test_load_target_shapes_are_checked(mcpd):
    # A target that is no URL is an image reference, checked like Docker
    # does before anything starts (tests/integration/test_docker.py runs
    # real ones).
    for bad in ["Alpine:3.20", "alpine: 3.20", " alpine", "alpine:"]:
        e = rpc_error_of(mcpd.rpc.result, "mcpd/load", {"target": bad})
        assert e.code == INVALID_PARAMS, bad
        assert e.data["field"] == "target", bad
    e = rpc_error_of(mcpd.rpc.result, "mcpd/load",
                     {"target": "https://127.0.0.1/mcp",
                      "command": [str(TESTSERVER)]})
    assert e.code == INVALID_PARAMS
    assert_nothing_running(mcpd)


@pytest.mark.parametrize("args, words", [
    (["--protocol-version", "1999-01-01"], ["1999-01-01"]),
    (["--repeat-cursor"], ["cursor"]),
    (["--protocol-version", "2024-10-07"], ["2024-10-07"]),
])
def test_load_fails_on_bad_handshake(mcpd, args, words):
    e = rpc_error_of(mcpd.load_testserver, "bad", *args)
    assert e.code == UNAVAILABLE and e.data["kind"] == "unavailable", e
    for w in words:
        assert w in e.message.lower(), e.message
    # The server's stderr comes with the error.
    assert any("initialize" in line for line in e.data["stderr"]), e.data
    assert_nothing_running(mcpd)


def test_load_deadline(mcpd):
    e = rpc_error_of(mcpd.load_testserver, "slow", "--start-delay-ms",
                     "30000", timeout_ms=500)
    assert e.code == UNAVAILABLE, e
    msg = e.message.lower()
    assert "500 ms" in msg or "time" in msg or "deadline" in msg, e.message
    assert_nothing_running(mcpd)


@pytest.mark.parametrize("switch", ["--garbage", "--early-notify"])
def test_misbehaving_server_still_loads(mcpd, switch):
    r = mcpd.load_testserver("odd", switch)
    assert r["tools"] == len(TESTSERVER_TOOLS)
    assert mcpd.call("odd", "echo", {"message": "ok"})[
        "structuredContent"] == {"message": "ok"}
    assert mcpd.row("odd")["state"] == "ready"


def parse_answer(lines, request_id):
    prefix = f"client answered {request_id}: "
    for line in lines:
        if line.startswith(prefix):
            return json.loads(line[len(prefix):])
    return None


def test_server_requests_are_answered(mcpd):
    mcpd.load_testserver("pinger", "--ping-client")
    lines = mcpd.wait_log(
        "pinger", lambda ls: parse_answer(ls, "srv-1") and
        parse_answer(ls, "srv-2"), what="answers to ping and roots/list")
    ping = parse_answer(lines, "srv-1")
    assert ping["id"] == "srv-1" and ping["result"] == {}
    # No call raised it and no gateway session declares roots: none.
    assert parse_answer(lines, "srv-2") == {
        "jsonrpc": "2.0", "id": "srv-2", "result": {"roots": []}}
    assert mcpd.row("pinger")["state"] == "ready"


def test_pagination_gives_every_tool(mcpd):
    r = mcpd.load_testserver("paged", "--tools", "20", "--page-size", "3")
    want = TESTSERVER_TOOLS + [f"t{i}" for i in range(20)]
    assert r["tools"] == len(want)
    assert [t["name"] for t in mcpd.tools("paged")] == want


def test_list_changed_grows_the_tool_count(mcpd):
    mcpd.load_testserver("ts")
    gen = mcpd.row("ts")["generation"]
    mcpd.call("ts", "notify_changed")
    row = mcpd.wait_row("ts", lambda r: r["tools"] == len(TESTSERVER_TOOLS) + 1,
                        what="the tool count to grow")
    assert row["generation"] == gen     # same connection, fresh listing
    names = [t["name"] for t in mcpd.tools("ts")]
    assert "extra_1" in names
    # A new tool on a known server is held until accepted (test_pins.py).
    assert mcpd.rpc.result("mcpd/accept", {"server": "ts"})["accepted"] == \
        ["extra_1"]
    handle = next(t["handle"] for t in mcpd.tools("ts")
                  if t["name"] == "extra_1")
    assert mcpd.rpc.result("mcpd/call", {
        "handle": handle, "arguments": {"message": "new"}})[
        "structuredContent"] == {"message": "new"}


def test_stderr_lines_show_in_logs(mcpd):
    mcpd.load_testserver("ts")
    mcpd.call("ts", "stderr", {"lines": 5, "text": "marker-logs"})
    want = [f"marker-logs {i}" for i in range(5)]
    lines = mcpd.wait_log("ts", lambda ls: all(w in ls for w in want),
                          what="the marker lines")
    assert [l for l in lines if l.startswith("marker-logs")] == want
    # stdout never leaks into the stderr ring.
    assert not any('"jsonrpc"' in l for l in lines)
    two = mcpd.logs("ts", lines=2)
    assert two == mcpd.logs("ts")[-2:]
    e = rpc_error_of(mcpd.logs, "nope")
    assert e.code == NOT_FOUND


def next_notification(c, method, timeout=10.0):
    """The next notification of method on client c (others are kept)."""
    deadline = time.monotonic() + timeout
    while True:
        for i, m in enumerate(c.other):
            if m.get("method") == method:
                return c.other.pop(i)
        left = deadline - time.monotonic()
        assert left > 0, f"no {method} notification in {timeout} s"
        msg = c.read_message(timeout=left)
        assert msg is not None, f"the connection closed before {method}"
        c.other.append(msg)


def write_stderr(d, server, lines, text):
    """Has the test server write lines to stderr, and waits until mcpd has
    them (stderr is its own pipe: the call's answer may come first)."""
    d.call(server, "stderr", {"lines": lines, "text": text}, timeout=60)
    d.wait_log(server, lambda ls: f"{text} {lines - 1}" in ls,
               timeout=30)


def test_logs_follow(mcpd):
    """mcpd/logs with follow: the last lines, then each new one, as
    mcpd/log notifications of the request; unload answers it."""
    mcpd.load_testserver("ts")
    write_stderr(mcpd, "ts", 2, "before")
    # Each line comes with the time mcpd read it, as mcpd/logs gives it.
    when = mcpd.rpc.result("mcpd/logs", {"server": "ts", "lines": 1})[
        "times"][0]
    with mcpd.client(timeout=30) as c:
        rid = c.request("mcpd/logs", {"server": "ts", "lines": 1,
                                      "follow": True})
        first = next_notification(c, "mcpd/log")
        assert first["params"] == {"server": "ts", "line": "before 1",
                                   "time": when, "request": rid}, first
        mcpd.call("ts", "stderr", {"lines": 3, "text": "after"})
        got = [next_notification(c, "mcpd/log")["params"]["line"]
               for _ in range(3)]
        assert got == ["after 0", "after 1", "after 2"]
        mcpd.rpc.result("mcpd/unload", {"target": "ts"})
        r = c.response(rid, timeout=10)
        assert r["result"]["ended"] == "the server was unloaded", r
        assert r["result"]["server"] == "ts"


def test_logs_follow_of_a_client_that_went(mcpd):
    mcpd.load_testserver("ts")
    write_stderr(mcpd, "ts", 1, "first")
    c = mcpd.client(timeout=10)
    c.request("mcpd/logs", {"server": "ts", "follow": True})
    next_notification(c, "mcpd/log")
    c.close()
    # Lines go on; the daemon drops the follower and serves others.
    write_stderr(mcpd, "ts", 50, "x")
    with mcpd.client(timeout=30) as c2:
        c2.request("mcpd/logs", {"server": "ts", "lines": 1,
                                 "follow": True})
        assert next_notification(c2, "mcpd/log")["params"]["line"] == \
            "x 49"
    assert mcpd.call("ts", "echo", {"message": "ok"})[
        "structuredContent"] == {"message": "ok"}


def test_logs_follow_of_a_client_too_slow_to_read(mcpd_factory):
    """A follower that does not read while the server writes 2 MB of
    stderr is ended (its output would grow without bound), saying so;
    the daemon goes on."""
    d = mcpd_factory("--max-message", "65536")
    d.load_testserver("ts")
    with d.client(timeout=30) as c:
        rid = c.request("mcpd/logs", {"server": "ts", "lines": 1,
                                      "follow": True})
        d.call("ts", "stderr", {"lines": 20000, "text": "y" * 100},
               timeout=60)
        r = c.response(rid, timeout=30)
        assert "too slowly" in r["result"]["ended"], r
    assert d.call("ts", "echo", {"message": "ok"})[
        "structuredContent"] == {"message": "ok"}


def test_logs_follow_ends_at_shutdown(mcpd):
    mcpd.load_testserver("ts")
    write_stderr(mcpd, "ts", 1, "first")
    with mcpd.client(timeout=30) as c:
        rid = c.request("mcpd/logs", {"server": "ts", "follow": True})
        next_notification(c, "mcpd/log")
        mcpd.rpc.result("mcpd/shutdown", timeout=30)
        r = c.response(rid, timeout=30)
        assert r["result"]["ended"] == "mcpd is shutting down", r
    assert mcpd.proc.wait(timeout=30) == 0


def test_mcpctl_logs_follow(mcpd):
    mcpd.load_testserver("ts")
    write_stderr(mcpd, "ts", 1, "first")
    p = subprocess.Popen([str(MCPCTL), "-s", str(mcpd.sock), "logs", "-f",
                          "-n", "1", "ts"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=child_env(), text=True)
    try:
        assert p.stdout.readline() == "first 0\n"
        mcpd.call("ts", "stderr", {"lines": 2, "text": "live"})
        assert p.stdout.readline() == "live 0\n"
        assert p.stdout.readline() == "live 1\n"
        mcpd.rpc.result("mcpd/unload", {"target": "ts"})
        out, err = p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert out == ""
    assert err == "mcpctl: stopped following ts: the server was unloaded\n"


def test_environment_is_minimal_plus_spec(mcpd_factory):
    d = mcpd_factory(env={"MCPD_IT_LEAK": "must-not-reach-servers"})
    d.load_everything("ev", env={"MCPD_IT_VAR": "from-load"})
    r = d.call("ev", "get-env")
    env = json.loads(r["content"][0]["text"])
    assert env["MCPD_IT_VAR"] == "from-load"
    assert "MCPD_IT_LEAK" not in env
    allowed = {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG",
               "MCPD_IT_VAR"}
    assert set(env) <= allowed, sorted(set(env) - allowed)


def test_agents_are_separate(mcpd):
    with mcpd.client() as alice:
        alice.result("mcpd/hello", {"agent": "alice"})
        alice.result("mcpd/load", {"command": [str(TESTSERVER)],
                                   "name": "ts"}, timeout=60)
        assert [r["name"] for r in alice.result("mcpd/list")["servers"]] == \
            ["ts"]
        # The default agent sees none of alice's servers by default...
        assert mcpd.list() == []
        rows = mcpd.list(all=True)
        assert [(r["name"], r["agent"]) for r in rows] == [("ts", "alice")]
        e = rpc_error_of(mcpd.call, "ts", "echo", {"message": "x"})
        assert e.code == NOT_FOUND
        # ...and may use the same name for its own server.
        mcpd.load_testserver("ts")
        rows = mcpd.list(all=True)
        assert sorted(r["agent"] for r in rows) == ["alice", "default"]
        assert len(process_groups(mcpd.pid)) == 2
        assert alice.result("mcpd/call", {
            "server": "ts", "tool": "echo",
            "arguments": {"message": "a"}})["structuredContent"] == \
            {"message": "a"}


def test_everything_package_is_installed():
    # Fails loudly (never skips) when the npm peers are missing.
    assert EVERYTHING_JS.is_file(), \
        "run scripts/install-deps --test-peers"
