# SPDX-License-Identifier: ISC
"""Housekeeping a daily user expects (issue 22, item 9): `mcpctl disable`
stops a server and keeps its saved row, marked disabled (not started at
the next start, listed as disabled, no tools, calls refused); `mcpctl
enable` starts it again from that row; `mcpctl rename` renames a server
(its row, its tools in agents' sessions, its container) without a restart.

Every test runs its own daemons on private directories. The read-only
state dir needs root (a bind mount); the container test needs a running
Docker engine and skips, saying so, when `docker info` fails."""

import subprocess

import pytest

from conftest import (CONFLICT, DOCKER, INVALID_PARAMS, MCPCTL, NOT_FOUND,
                      STORAGE, TESTSERVER_TOOLS, UNAVAILABLE, descendants,
                      is_alive, owner_containers, poll, ts_command, wait_gone)
from test_callflags import complete
from test_persist import (mounts, need_root, restart, sh,  # noqa: F401
                          store_bytes, store_rows)

CTL_DAEMON_ERROR = 1     # mcpctl's exit status for an error from mcpd


def ctl_ok(d, *args):
    r = d.ctl(*args)
    assert r.rc == 0, r
    return r.json


def ctl_error(d, *args, code):
    """An mcpctl --json failure from mcpd with this code: its error."""
    r = d.ctl(*args)
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.json is not None and r.json["code"] == code, r
    return r.json


def load_saved(d, name, *args):
    return ctl_ok(d, "load", "--name", name, "--", *ts_command(*args))


def gateway_session(d):
    """A raw MCP session on the socket (the gateway, agent default)."""
    return d.mcp_session()


def tool_names(c):
    return sorted(t["name"] for t in c.result("tools/list")["tools"])


def wait_list_changed(c, timeout=30.0):
    """Reads until notifications/tools/list_changed (kept or new)."""
    def seen():
        return any(m.get("method") == "notifications/tools/list_changed"
                   for m in c.other)
    while not seen():
        msg = c.read_message(timeout)
        assert msg is not None, "mcpd closed the session"
        c.other.append(msg)


# --------------------------------------------------------------------------
# disable / enable

def test_disable_keeps_the_row_and_enable_starts_it_again(mcpd_factory):
    d = mcpd_factory()
    loaded = load_saved(d, "ts")
    pid = d.row("ts")["pid"]
    assert is_alive(pid)

    r = ctl_ok(d, "disable", "ts")
    assert r["disabled"] is True and r["stopped_live"] is True, r
    wait_gone([pid], what="the disabled server's process")
    row = d.row("ts")
    assert row["state"] == "disabled", row
    assert row["id"] == loaded["id"] and row["pid"] is None, row
    assert row["tools"] == 0 and row["persistent"] is True, row
    human = d.ctl("list", is_json=False)
    assert human.rc == 0, human
    line = [ln for ln in human.out.splitlines() if ln.split()[:1] == ["ts"]]
    assert len(line) == 1 and "disabled" in line[0].split(), human
    assert [t for t in d.tools() if t["server"] == "ts"] == []
    [saved] = store_rows(d)
    assert saved["disabled"] is True and saved["name"] == "ts", saved

    # A call (and any command naming it) says how to start it.
    e = ctl_error(d, "call", "ts", "echo", "message=x", code=UNAVAILABLE)
    assert e["message"] == "server ts is disabled; mcpctl enable ts starts it", e
    # Disabling again changes nothing.
    before = store_bytes(d)
    r = d.ctl("disable", "ts", is_json=False)
    assert r.rc == 0, r
    assert r.out == "ts is already disabled; nothing was changed\n", r
    assert store_bytes(d) == before

    # Not started at the next start, still listed as disabled.
    d2 = restart(mcpd_factory, d)
    row = d2.row("ts")
    assert row["state"] == "disabled" and row["pid"] is None, row
    assert descendants(d2.pid) == []

    r = ctl_ok(d2, "enable", "ts")
    assert r["name"] == "ts" and r["id"] == loaded["id"], r
    assert r["tools"] == len(TESTSERVER_TOOLS), r
    row = d2.row("ts")
    assert row["state"] == "ready" and is_alive(row["pid"]), row
    assert "disabled" not in store_rows(d2)[0]
    assert d2.call("ts", "echo", {"message": "back"})[
        "structuredContent"] == {"message": "back"}
    before = store_bytes(d2)
    r = d2.ctl("enable", "ts", is_json=False)
    assert r.rc == 0, r
    assert r.out == "ts is already enabled; nothing was changed\n", r
    assert store_bytes(d2) == before

    # The cleared mark is what the next start reads.
    d3 = restart(mcpd_factory, d2)
    d3.wait_row("ts", lambda r: r["state"] == "ready",
                what="the enabled server to be restored")


def test_enable_counts_against_max_servers(mcpd_factory):
    d = mcpd_factory("--max-servers", "1")
    load_saved(d, "ts")
    ctl_ok(d, "disable", "ts")
    load_saved(d, "other")
    before = store_bytes(d)
    e = ctl_error(d, "enable", "ts", code=UNAVAILABLE)
    assert e["message"] == (
        "mcpd already has 1 servers, its limit; unload one, or start mcpd "
        "with a higher --max-servers"), e
    assert d.row("ts")["state"] == "disabled"
    assert store_bytes(d) == before


def test_mistyped_names_get_did_you_mean(mcpd_factory):
    d = mcpd_factory()
    load_saved(d, "ts")
    load_saved(d, "parked")
    ctl_ok(d, "disable", "parked")
    before = store_bytes(d)
    for args in (("disable", "tss"), ("enable", "tss"),
                 ("rename", "tss", "new")):
        e = ctl_error(d, *args, code=NOT_FOUND)
        assert e["message"] == \
            "no server tss for agent default; did you mean ts?", e
    # A disabled server's name is suggested too.
    e = ctl_error(d, "enable", "parkd", code=NOT_FOUND)
    assert e["message"] == \
        "no server parkd for agent default; did you mean parked?", e
    assert store_bytes(d) == before
    # A view of a disabled server says so (mcpctl bridge --server parked).
    r = d.ctl("bridge", "--server", "parked", is_json=False)
    assert r.rc == CTL_DAEMON_ERROR, r
    assert ("no server parked for agent default; it is disabled: mcpctl "
            "enable parked starts it") in r.err, r


def test_disable_on_a_read_only_state_dir_changes_nothing(mcpd_factory,
                                                          mounts):
    need_root()
    d = mcpd_factory()
    load_saved(d, "ts")
    pid = d.row("ts")["pid"]
    before = store_bytes(d)
    mounts("--bind", d.state, target=d.state)
    rc, err = sh("mount", "-o", "remount,bind,ro", d.state)
    assert rc == 0, err

    e = ctl_error(d, "disable", "ts", code=STORAGE)
    assert e["data"]["kind"] == "storage", e
    assert e["message"].startswith(
        "cannot mark the saved row of ts disabled: "), e
    assert "Read-only file system" in e["message"], e
    assert e["message"].endswith(
        "; nothing was changed and it keeps running"), e
    row = d.row("ts")
    assert row["state"] == "ready" and row["pid"] == pid, row
    assert store_bytes(d) == before
    assert d.call("ts", "echo", {"message": "x"})["structuredContent"] == \
        {"message": "x"}

    # A rename that cannot be saved keeps the old name everywhere.
    e = ctl_error(d, "rename", "ts", "renamed", code=STORAGE)
    assert e["message"].startswith("cannot rename the saved row of ts: "), e
    assert e["message"].endswith("; nothing was changed"), e
    assert "Read-only file system" in e["message"], e
    assert d.row("renamed") is None and d.row("ts")["pid"] == pid
    assert store_bytes(d) == before


# --------------------------------------------------------------------------
# rename

def test_rename_keeps_it_running_and_agents_see_the_new_names(mcpd_factory):
    d = mcpd_factory()
    loaded = load_saved(d, "ts")
    load_saved(d, "other", "--tools", "1")
    pid = d.row("ts")["pid"]
    c = gateway_session(d)
    assert "ts__echo" in tool_names(c)

    r = ctl_ok(d, "rename", "ts", "renamed")
    assert r == {"id": loaded["id"], "name": "renamed", "old_name": "ts",
                 "persistent": True}, r
    wait_list_changed(c)
    names = tool_names(c)
    assert "renamed__echo" in names, names
    assert not any(n.startswith("ts__") for n in names), names
    r = c.result("tools/call", {"name": "renamed__echo",
                                "arguments": {"message": "hi"}})
    assert r["structuredContent"] == {"message": "hi"}, r
    c.close()
    assert d.row("ts") is None
    row = d.row("renamed")
    assert row["pid"] == pid and row["state"] == "ready", row
    assert sorted(r["name"] for r in store_rows(d)) == ["other", "renamed"]

    # The new name is what the next start restores, with the same id.
    d2 = restart(mcpd_factory, d)
    row = d2.wait_row("renamed", lambda r: r["state"] == "ready",
                      what="the renamed server to be restored")
    assert row["id"] == loaded["id"], row
    assert d2.row("ts") is None
    # The name it left is free again, for a server of its own.
    again = load_saved(d2, "ts")
    assert again["id"] != loaded["id"], again
    assert sorted(r["name"] for r in store_rows(d2)) == \
        ["other", "renamed", "ts"]


def test_rename_refuses_a_taken_or_invalid_name(mcpd_factory):
    d = mcpd_factory()
    load_saved(d, "ts")
    load_saved(d, "other", "--tools", "1")
    load_saved(d, "parked")
    ctl_ok(d, "disable", "parked")
    before, rows = store_bytes(d), d.list()
    for taken in ("other", "parked"):
        e = ctl_error(d, "rename", "ts", taken, code=CONFLICT)
        assert e["message"] == (f"the name {taken} is taken by another "
                                f"server; nothing was changed"), e
    e = ctl_error(d, "rename", "ts", "no/slash", code=INVALID_PARAMS)
    assert e["message"] == (
        "no/slash is not a valid server name: a name must match "
        "[A-Za-z0-9][A-Za-z0-9_-]{0,62}; nothing was changed"), e
    # mcpd's own name (its gateway tools are mcpd__...), in any case.
    for own in ("mcpd", "MCPD"):
        e = ctl_error(d, "rename", "ts", own, code=INVALID_PARAMS)
        assert e["message"] == (
            "the name mcpd is mcpd's own (its tools are mcpd__find_tools "
            "and mcpd__call_tool); nothing was changed"), e
    e = ctl_error(d, "load", "--name", "Mcpd", "--", *ts_command(),
                  code=INVALID_PARAMS)
    assert e["message"] == (
        "mcpd/load: the name mcpd is mcpd's own (its tools are "
        "mcpd__find_tools and mcpd__call_tool); choose another with "
        "--name"), e
    assert store_bytes(d) == before
    assert d.list() == rows

    # A disabled server is renamed in its row, and enabled by that name.
    r = ctl_ok(d, "rename", "parked", "stored")
    assert r["name"] == "stored" and r["old_name"] == "parked", r
    assert d.row("stored")["state"] == "disabled"
    ctl_ok(d, "enable", "stored")
    assert d.row("stored")["state"] == "ready"


def test_completion_offers_server_names(mcpd_factory):
    d = mcpd_factory()
    load_saved(d, "ts")
    load_saved(d, "parked")
    ctl_ok(d, "disable", "parked")
    env = dict(d.env, MCPD_SOCKET=str(d.sock))
    m = str(MCPCTL)
    for cmd in ("disable", "enable", "rename"):
        assert complete([m, cmd, ""], env) == (["parked", "ts"], "")
    assert complete([m, "enable", "pa"], env) == (["parked"], "")
    # rename OLD NEW: NEW is a new name, nothing to offer.
    assert complete([m, "rename", "ts", ""], env) == ([], "")
    assert complete([m, "enable", "--"], env) == (["--help", "--timeout"],
                                                  "")


# --------------------------------------------------------------------------
# a container server

def docker_reachable():
    try:
        p = subprocess.run([DOCKER, "info", "--format", "{{.ServerVersion}}"],
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=60)
    except OSError as e:
        return f"no docker CLI: {e}"
    return None if p.returncode == 0 else \
        f"no Docker engine answers `docker info`: {p.stderr.strip()}"


@pytest.mark.parametrize("image,phase", [("mcpd-test/http", "mcp"),
                                         ("mcpd-test/stdio", "probe")])
def test_container_disable_rename_enable(mcpd_factory, container_guard,
                                         request, image, phase):
    why = docker_reachable()
    if why is not None:
        pytest.skip(why)
    request.getfixturevalue("docker_images")
    d = mcpd_factory()
    did = d.rpc.result("mcpd/status")["did"]
    container_guard.append(did)
    ctl_ok(d, "load", "--name", "web", "--timeout", "120000", image)
    old = f"rax-{phase}-web-{d.pid}"
    poll(lambda: [n for n, _ in owner_containers(did)] == [old],
         what=f"container {old}")

    # docker rename: the same container under the new name, not a restart.
    r = ctl_ok(d, "rename", "web", "site")
    new = f"rax-{phase}-site-{d.pid}"
    assert r["container"] == new, r
    assert [n for n, _ in owner_containers(did)] == [new]
    row = d.row("site")
    assert row["state"] == "ready" and row["generation"] == 1, row
    assert row["container"]["name"] == new, row
    assert d.call("site", "echo", {"message": "x"})["structuredContent"] == \
        {"message": "x"}

    r = ctl_ok(d, "disable", "site")
    assert r["container_removed"] is True, r
    assert owner_containers(did) == []
    assert d.row("site")["state"] == "disabled"

    ctl_ok(d, "enable", "site")
    poll(lambda: [n for n, _ in owner_containers(did)] == [new],
         what=f"container {new} to be back")
    assert d.row("site")["state"] == "ready"
