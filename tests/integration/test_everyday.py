# SPDX-License-Identifier: ISC
"""Everyday use: nothing is saved that cannot start (a first load that
never became ready takes back the row it saved; a server that once worked
keeps its row when a later start fails; `mcpctl unload --failed` removes
every failed server), and completion never starts a daemon."""

import os
import sys

import pytest

from conftest import MCPCTL, TESTSERVER, breakable_server, find_procs, \
    free_port, kill_all
from test_callflags import complete
from test_persist import restart, store_path, store_rows


def stored(d):
    """The default agent's saved rows ([] when the store was never made)."""
    return store_rows(d) if store_path(d).exists() else []


def load_fails(d, *args):
    r = d.ctl("load", *args, is_json=False, timeout=120)
    assert r.rc == 1, r
    return r.err


def said(err):
    """mcpctl's own message (after the load's progress lines)."""
    return next(line for line in err.splitlines()
                if line.startswith("mcpctl: "))


@pytest.mark.parametrize("args,why", [
    (["--name", "f", "--", "/bin/false"], "exited with status 1"),
    (["--name", "f", "--", "cat"], ""),
    (["--name", "f", "--allow-local", "http://127.0.0.1:{port}/mcp"],
     "Connection refused"),
])
def test_first_load_that_fails_saves_nothing(mcpd, args, why):
    args = [a.format(port=free_port()) for a in args]
    err = load_fails(mcpd, *args)
    assert "cannot load f: " in err and why in err, err
    assert "; nothing was saved" in err, err
    assert "stays saved" not in err, err
    assert mcpd.list() == []
    assert stored(mcpd) == []


def test_first_load_of_a_missing_image_saves_nothing(mcpd, docker_images):
    err = load_fails(mcpd, "--name", "f", "mcpd-test/nosuchimage:latest")
    assert "cannot load f: " in err and "; nothing was saved" in err, err
    assert mcpd.list() == []
    assert stored(mcpd) == []


def test_server_that_once_worked_keeps_its_row(mcpd_factory, tmp_path):
    script, flag = breakable_server(tmp_path)
    d1 = mcpd_factory()
    assert d1.ctl("load", "--name", "w", "--", str(script)).rc == 0
    (row,) = stored(d1)
    flag.touch()
    # A reload that fails keeps it, saved.
    r = d1.ctl("reload", "w", is_json=False)
    assert r.rc == 1, r
    assert stored(d1) == [row]
    # So does a restore that fails at the next start.
    d2 = restart(mcpd_factory, d1)
    d2.wait_row("w", lambda r: r["state"] == "failed", timeout=30)
    assert stored(d2) == [row]
    # And a load of it again, failing, says it stays saved.
    err = load_fails(d2, "--name", "w", "--", str(script))
    assert "its row stays saved and mcpd restores it at its next start" \
        in err, err
    assert stored(d2) == [row]


def test_unload_failed_removes_every_failed_server(mcpd_factory, tmp_path):
    script, flag = breakable_server(tmp_path)
    d1 = mcpd_factory()
    for name in ("a", "b"):
        assert d1.ctl("load", "--name", name, "--", str(script)).rc == 0
    assert d1.ctl("load", "--name", "ok", "--", str(TESTSERVER)).rc == 0
    flag.touch()
    d2 = restart(mcpd_factory, d1)
    for name in ("a", "b"):
        d2.wait_row(name, lambda r: r["state"] == "failed", timeout=30)
    d2.wait_row("ok", lambda r: r["state"] == "ready", timeout=30)
    r = d2.ctl("unload", "--failed", is_json=False)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert len(lines) == 2, r
    assert lines[0].startswith("unloaded a (id ") and \
        lines[0].endswith(", it was not running, removed from the saved "
                          "servers"), lines
    assert lines[1].startswith("unloaded b (id "), lines
    assert [s["name"] for s in d2.list()] == ["ok"]
    assert [row["name"] for row in stored(d2)] == ["ok"]
    # Nothing failed: it says so and succeeds.
    r = d2.ctl("unload", "--failed", is_json=False)
    assert r.rc == 0 and r.out == "no failed servers to unload\n", r
    # --failed takes no target, and not with --all.
    r = d2.ctl("unload", "--failed", "ok", is_json=False)
    assert r.rc == 2 and "--failed takes no TARGET, not 'ok'" in r.err, r
    r = d2.ctl("unload", "--failed", "--all", is_json=False)
    assert r.rc == 2 and "--failed and --all" in r.err, r


def test_completion_never_starts_mcpd(tmp_path):
    """Tab after `mcpctl call ` with no mcpd running: no daemon, no state
    directory, no socket."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": str(tmp_path / "home"),
           "XDG_RUNTIME_DIR": str(tmp_path / "run"),
           "XDG_STATE_HOME": str(tmp_path / "state")}
    m = str(MCPCTL)
    try:
        for words in ([m, "call", ""], [m, "unload", ""], [m, "logs", ""],
                      [m, "call", "srv", "tool", "--"]):
            complete(words, env)
        assert find_procs(str(tmp_path)) == []
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    finally:
        # What a faulty completion started is not left running.
        kill_all(find_procs(str(tmp_path)))


@pytest.mark.parametrize("args", [
    ["call", "server-memroy", "echo", "message=x"], ["tools", "server-memroy"],
    ["logs", "server-memroy"], ["inspect", "server-memroy"],
    ["unload", "server-memroy"], ["reload", "server-memroy"],
    ["wait", "server-memroy"]])
def test_a_mistyped_server_name_gets_the_nearest(mcpd, args):
    mcpd.load_testserver("server-memory")
    mcpd.load_testserver("other")
    r = mcpd.ctl(*args, is_json=False)
    assert (r.rc, r.out) == (1, ""), r
    first = r.err.splitlines()[0]
    if args[0] == "wait":
        assert first == "mcpctl: no server server-memroy; did you mean " \
            "server-memory?", r.err
    else:
        assert first == "mcpctl: no server server-memroy for agent " \
            "default; did you mean server-memory?", r.err
    # Nothing near: no suggestion.
    r = mcpd.ctl(args[0], "zzzzzzzz", *args[2:], is_json=False)
    assert r.rc == 1 and "did you mean" not in r.err, r
    assert [s["name"] for s in mcpd.list()] == ["server-memory", "other"]


def test_a_program_that_echoes_is_said_not_to_speak_mcp(mcpd):
    err = load_fails(mcpd, "--name", "c", "--", "cat")
    assert said(err) == (
        "mcpctl: cannot load c: the program does not speak MCP: it sent "
        "mcpd's own server/discover request back instead of answering it "
        "(it echoes its input, as cat does); nothing was saved"), err


def test_a_wrappers_signal_status_is_named(mcpd):
    err = load_fails(mcpd, "--name", "w", "--", "sh", "-c",
                     "sleep 100 & kill -9 $!; wait $!")
    assert said(err) == (
        "mcpctl: cannot load w: the server exited with status 137 (128 + 9: "
        "a wrapper saying its child was killed by signal 9, Killed); "
        "nothing was saved"), err


# A stdio MCP server with no tools that gives argv[1] as its instructions.
INSTRUCTED = r'''
import json, sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "instructed", "version": "1"},
                  "instructions": sys.argv[1]}
    elif msg["method"] == "tools/list":
        result = {"tools": []}
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {
            "code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}),
          flush=True)
'''

SELF = ("The tools of every MCP server mcpd runs for this agent, named "
        "<server>__<tool>; _meta[\"io.mcpd/server\"] says whose.")


def load_instructed(d, tmp_path, name, text):
    script = tmp_path / "instructed.py"
    script.write_text(INSTRUCTED)
    d.load([sys.executable, str(script), text], name=name)


def initialize_instructions(d, servers=None):
    c = d.client(timeout=30)
    if servers is not None:
        c.result("mcpd/hello", {"servers": servers})
    r = c.result("initialize", {"protocolVersion": "2025-06-18",
                                "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
    c.close()
    return r.get("instructions")


def test_servers_instructions_reach_the_agent(mcpd, tmp_path):
    load_instructed(mcpd, tmp_path, "alpha", "Use alpha for A.\nAlways.")
    mcpd.load_testserver("ts")
    load_instructed(mcpd, tmp_path, "beta", "Beta does B.")
    assert initialize_instructions(mcpd) == (
        SELF + "\n\n## alpha\n\nUse alpha for A.\nAlways."
        "\n\n## beta\n\nBeta does B.")
    # One server in view: its own words, unchanged; none, none.
    assert initialize_instructions(mcpd, ["alpha"]) == \
        "Use alpha for A.\nAlways."
    assert initialize_instructions(mcpd, ["ts"]) is None
    # mcpctl inspect shows them.
    r = mcpd.ctl("inspect", "alpha", is_json=False)
    assert "instructions:\n  Use alpha for A.\n  Always.\n" in r.out, r
    assert mcpd.ctl("inspect", "alpha").json["instructions"] == \
        "Use alpha for A.\nAlways."
    assert mcpd.ctl("inspect", "ts").json["instructions"] is None


def test_instructions_are_bounded(mcpd_factory, tmp_path):
    d = mcpd_factory("--max-instructions", "256")
    # 1000 bytes of two-byte characters: cut between characters.
    load_instructed(d, tmp_path, "alpha", "é" * 500)
    load_instructed(d, tmp_path, "beta", "b" * 50)
    got = initialize_instructions(d)
    # alpha gets half of 256 (128 bytes: 64 characters), beta what is left.
    assert got == (SELF + "\n\n## alpha\n\n" + "é" * 64 +
                   "\n[cut by mcpd: 872 more bytes; `mcpctl inspect alpha` "
                   "shows them all]\n\n## beta\n\n" + "b" * 50), got
    # One server: cut the same way at the whole bound.
    assert initialize_instructions(d, ["alpha"]) == (
        "é" * 128 + "\n[cut by mcpd: 744 more bytes; `mcpctl inspect "
        "alpha` shows them all]")
    r = d.ctl("inspect", "alpha")
    assert r.json["instructions"] == "é" * 500
