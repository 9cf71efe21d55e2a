# SPDX-License-Identifier: ISC
"""Persistence (DESIGN.md section 6): saved loads come back after a restart
(graceful or kill -9) with the same ids; the store is written with a read
back, and a store that cannot be written (read-only, full, a directory in
the way) fails the load or unload with `storage` and changes nothing; the
per-server gate (a reload queued behind another, calls meanwhile); agents;
a corrupt or newer enabled.json is refused and left alone; the identity key
and did:key; sd_notify readiness, restore status and STOPPING=1.

Every test runs its own daemons on private directories. The tests that
mount (read-only bind mount, a small tmpfs) need root and skip otherwise;
the container parts need a working docker and the test images
(tests/images/build); without them the tests fail, as in CI."""

import json
import os
import re
import select
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import (CONFLICT, breakable_server, owner_containers,
                      EVERYTHING_JS, MCPD,
                      NODE, REPO, STALE_HANDLE, STORAGE, TESTSERVER, cmdline,
                      descendants, free_port, is_alive, poll, process_groups,
                      ts_command,
                      wait_gone, wait_listening)

DID_KEY = re.compile(r"^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$")
CTL_DAEMON_ERROR = 1     # mcpctl's exit status for an error from mcpd



@pytest.fixture
def images(docker_images):
    """The container parts always run: no engine fails the test."""
    return docker_images

# --------------------------------------------------------------------------
# Helpers

def store_path(d):
    return Path(d.state) / "enabled.json"


def store_bytes(d):
    return store_path(d).read_bytes()


def store_rows(d, agent="default"):
    doc = json.loads(store_bytes(d))
    assert doc["version"] == 1, doc
    return doc["agents"].get(agent, [])


def by_name(rows):
    return {r["name"]: r for r in rows}


def did_of(d):
    return d.rpc.result("mcpd/status")["did"]


def restart(mcpd_factory, d, how="shutdown"):
    """Ends d (mcpd/shutdown, SIGTERM or kill -9) and starts a new mcpd on the same
    socket and state dir."""
    if how == "shutdown":
        problems = d.stop()
        assert problems == [], problems
    elif how == "sigterm":
        d.list()
        d.proc.send_signal(signal.SIGTERM)
        assert d.proc.wait(timeout=60) == 0, d.read_stderr()
        wait_gone(d.seen_pids, timeout=15,
                  what="the children of the stopped mcpd")
    else:
        d.list()    # remembers the children, to see them go
        os.kill(d.pid, signal.SIGKILL)
        d.proc.wait(timeout=10)
        wait_gone(d.seen_pids, timeout=15,
                  what="the children of the killed mcpd")
    return mcpd_factory(base=d.base)


def wait_ready(d, names, timeout=90.0, list_all=False):
    """Waits until exactly these names are listed, all ready."""
    want = sorted(names)

    def check():
        rows = d.list(all=True) if list_all else d.list()
        got = sorted(r["name"] for r in rows)
        if got == want and all(r["state"] == "ready" for r in rows):
            return rows
        return None
    return poll(check, timeout=timeout, interval=0.1,
                what=f"servers {want} to be ready")


def storage_error(r):
    """Checks an mcpctl --json failure from mcpd: kind storage."""
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.json is not None, r
    assert r.json["code"] == STORAGE, r
    assert r.json["data"]["kind"] == "storage", r
    return r.json


def text_of(result):
    return [c["text"] for c in result["content"] if c.get("type") == "text"]


# -- docker









# -- mounts (root only)

def need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a read-only bind mount or a tmpfs "
                    "over the state dir")


def sh(*argv):
    p = subprocess.run([str(a) for a in argv], capture_output=True,
                       timeout=60)
    return p.returncode, p.stderr.decode(errors="replace")


@pytest.fixture
def mounts(request, mcpd_factory):
    """mount(argv...) runs mount; at teardown the test's daemons are stopped
    first (they may still use the mount), then everything is unmounted."""
    done = []

    def mount(*args, target):
        rc, err = sh("mount", *args, target)
        if rc != 0 and not done:
            pytest.skip(f"cannot mount here (mount {' '.join(args)}): "
                        f"{err.strip()}")
        assert rc == 0, err
        done.append(Path(target))
    yield mount
    problems = []
    for d in getattr(request.node, "_mcpd_daemons", []):
        problems += d.stop()
    for target in reversed(done):
        rc, err = sh("umount", target)
        if rc != 0:
            sh("umount", "-l", target)
    assert problems == [], problems


# -- server-everything over Streamable HTTP (like test_remote.py)

class Everything:
    def __init__(self, peers):
        assert EVERYTHING_JS.is_file(), (
            f"{EVERYTHING_JS} is missing: run scripts/install-deps "
            f"--test-peers (npm ci in tests/peers)")
        self.port = free_port()
        self.proc = peers([NODE, EVERYTHING_JS, "streamableHttp"],
                          name="everything", env={"PORT": str(self.port)})
        self.proc.wait_output(
            rf"MCP Streamable HTTP Server listening on port {self.port}\b",
            stream="err", timeout=30)
        wait_listening(self.port, proc=self.proc)

    def url(self):
        return f"http://127.0.0.1:{self.port}/mcp"


@pytest.fixture
def everything(peers):
    return Everything(peers)


# --------------------------------------------------------------------------
# 1. A restart restores what was saved, and only that

@pytest.mark.parametrize("how", ["shutdown", "sigterm", "kill9"])
def test_restart_restores_saved_servers(mcpd_factory, everything, images,
                                        container_guard, how):
    d1 = mcpd_factory()
    did = did_of(d1)
    container_guard.append(did)
    loaded = {}
    loaded["proc"] = d1.load(ts_command(), name="proc", persist=True)
    loaded["remote"] = d1.load_url(everything.url(), name="remote",
                                   allow_local=True, persist=True)
    if images:
        loaded["box"] = d1.rpc.result("mcpd/load", {
            "target": "mcpd-test/stdio", "name": "box", "persist": True},
            timeout=120)
    unsaved = d1.load(ts_command("--tools", "2"), name="unsaved")
    assert all(r["persistent"] is True for r in loaded.values()), loaded
    assert unsaved["persistent"] is False
    rows = by_name(store_rows(d1))
    assert sorted(rows) == sorted(loaded)
    for name, r in loaded.items():
        assert rows[name]["id"] == r["id"]
        assert "persist" not in rows[name]["params"]
    saved = store_bytes(d1)
    listed = {r["name"]: r for r in d1.list()}
    assert all(listed[n]["persistent"] is True for n in loaded)
    assert listed["unsaved"]["persistent"] is False

    before = max(r["generation"] for r in d1.list())
    d2 = restart(mcpd_factory, d1, how)
    assert did_of(d2) == did
    rows = wait_ready(d2, loaded)
    for r in rows:
        assert r["id"] == loaded[r["name"]]["id"], r
        assert r["persistent"] is True, r
        # Generations never repeat across restarts: no handle issued
        # before reaches the new connection.
        assert r["generation"] > before, (r, before)
        assert r["restarts"] == 0, r
    # The rows were read, never rewritten.
    assert store_bytes(d2) == saved

    assert d2.call("proc", "echo", {"message": "p"})[
        "structuredContent"] == {"message": "p"}
    assert text_of(d2.call("remote", "echo", {"message": "r"})) == \
        ["Echo: r"]
    if images:
        assert d2.call("box", "echo", {"message": "b"})[
            "structuredContent"] == {"message": "b"}
        # One container, the new daemon's: the old one went with the old
        # daemon (shutdown) or was reaped at start (kill -9).
        poll(lambda: [p for _, p in owner_containers(did)] ==
             [str(d2.pid)], timeout=30, interval=0.5,
             what="only the new daemon's container to be left")
    tools = d2.tools("proc")
    gen = d2.row("proc")["generation"]
    assert {t["handle"] for t in tools if t["name"] == "echo"} == \
        {f"proc.{gen}/echo"}


def test_forced_stop_keeps_the_rows(mcpd_factory, images, container_guard,
                                    tmp_path):
    d1 = mcpd_factory()
    did = did_of(d1)
    container_guard.append(did)
    names = ["p", "slow"]
    log = tmp_path / "slow.log"
    d1.load(ts_command(), name="p", persist=True)
    d1.load(ts_command("--start-delay-ms", "5000", "--log-file", log),
            name="slow", persist=True)
    if images:
        d1.rpc.result("mcpd/load", {"target": "mcpd-test/stdio",
                                    "name": "box", "persist": True},
                      timeout=120)
        names.append("box")
    saved = store_bytes(d1)
    d1.list()
    handshakes = log.read_text().count("mcp-testserver: initialize:")

    def starting():
        return [p for p in descendants(d1.pid)
                if str(log) in (cmdline(p) or [])]
    old = starting()
    with d1.client(timeout=30) as c:
        # A reload in flight (5 s to start) holds the graceful stop: its
        # new process runs.
        c.request("mcpd/reload", {"target": "slow"})
        poll(lambda: set(starting()) - set(old),
             what="the reload's new server process")
        d1.proc.send_signal(signal.SIGTERM)
        poll(lambda: "got signal 15" in d1.read_stderr(),
             what="mcpd to begin its graceful stop")
        d1.proc.send_signal(signal.SIGTERM)
        d1.proc.wait(timeout=30)
    assert "second signal" in d1.read_stderr()
    # The stop did not wait for the reload: its server never got as far as
    # the handshake.
    assert log.read_text().count("mcp-testserver: initialize:") == \
        handshakes, log.read_text()
    wait_gone(d1.seen_pids, timeout=15, what="the servers of the forced stop")
    if images:
        # A removal that the graceful stop began may still be ending in
        # the engine (the forced stop's own `docker rm -f` of it fails
        # with "removal ... is already in progress").
        poll(lambda: owner_containers(did) == [],
             what="the forced stop's containers to go")
    assert store_bytes(d1) == saved
    d2 = mcpd_factory(base=d1.base)
    wait_ready(d2, names)
    assert store_bytes(d2) == saved


def test_restored_server_whose_row_went_is_not_restored(mcpd_factory):
    d1 = mcpd_factory()
    d1.load(ts_command("--start-delay-ms", "4000"), name="slow",
            persist=True)
    d1.load(ts_command(), name="fast", persist=True)
    doc = json.loads(store_bytes(d1))
    d2 = restart(mcpd_factory, d1)
    # While slow is still starting, its row is removed by hand.
    doc["agents"]["default"] = [r for r in doc["agents"]["default"]
                                if r["name"] != "slow"]
    tmp = store_path(d2).with_name("edit.tmp")
    tmp.write_text(json.dumps(doc))
    os.rename(tmp, store_path(d2))
    edited = store_bytes(d2)
    # The edit came in time: slow is not ready yet.
    slow = d2.row("slow")
    assert slow is not None and slow["state"] != "ready", slow
    # Its recheck before ready finds no row: it is dropped.
    poll(lambda: d2.row("slow") is None, timeout=30, interval=0.1,
         what="slow to be dropped at its recheck")
    wait_ready(d2, ["fast"])
    assert store_bytes(d2) == edited
    poll(lambda: len(process_groups(d2.pid)) == 1 or None, timeout=10,
         what="only fast's process group to be left")


def test_saved_load_that_fails_at_restore_stays_listed(mcpd_factory,
                                                      tmp_path):
    script, flag = breakable_server(tmp_path)
    d1 = mcpd_factory()
    r = d1.load([script], name="wrapped", persist=True)
    flag.touch()
    d2 = restart(mcpd_factory, d1)
    row = d2.wait_row("wrapped", lambda r: r["state"] == "failed",
                      timeout=30)
    assert row["id"] == r["id"] and row["persistent"] is True, row
    assert "7" in row["last_error"], row
    poll(lambda: "row stays saved" in d2.read_stderr() and
         "mcpctl unload" in d2.read_stderr(), timeout=10,
         what="the restore failure to say how to remove the row")
    flag.unlink()
    out = d2.ctl("reload", "wrapped")
    assert out.rc == 0, out
    assert d2.row("wrapped")["state"] == "ready"
    out = d2.ctl("unload", "wrapped")
    assert out.rc == 0 and out.json["removed_saved"] is True, out
    assert store_rows(d2) == []


def test_a_server_is_its_name(mcpd_factory):
    """Two instances of one command under two names are two servers (the
    id comes from agent and name); the same name and target again is the
    running server; a name taken by another target is a conflict naming
    it, and changes nothing; an endpoint that several servers share is
    refused as ambiguous, listing their names."""
    d1 = mcpd_factory()
    a = d1.ctl("load", "--name", "acct-a", "--env", "ACCOUNT=a", "--",
               TESTSERVER)
    assert a.rc == 0, a
    pid_a = d1.row("acct-a")["pid"]
    b = d1.ctl("load", "--name", "acct-b", "--env", "ACCOUNT=b", "--",
               TESTSERVER)
    assert b.rc == 0, b
    assert "was_loaded" not in b.json and "reconfigured" not in b.json, b
    assert a.json["id"] != b.json["id"]
    assert d1.row("acct-a")["pid"] == pid_a        # not restarted
    assert environ_of(pid_a)["ACCOUNT"] == "a"
    assert environ_of(d1.row("acct-b")["pid"])["ACCOUNT"] == "b"
    # The same name and target again: the running server.
    again = d1.ctl("load", "--name", "acct-a", "--env", "ACCOUNT=a", "--",
                   TESTSERVER)
    assert again.rc == 0 and again.json.get("was_loaded") is True, again
    assert again.json["id"] == a.json["id"]
    # A name that another target holds.
    e = d1.rpc.error("mcpd/load", {"command": [str(TESTSERVER), "--tools",
                                               "2"], "name": "acct-a"})
    assert e["code"] == CONFLICT and e["data"]["kind"] == "conflict", e
    assert e["data"]["endpoint"] == str(TESTSERVER), e
    assert "the name acct-a is taken by a server that runs" in e["message"]
    assert d1.row("acct-a")["pid"] == pid_a
    # Both run the same command: its endpoint names neither alone.
    e = d1.rpc.error("mcpd/unload", {"target": str(TESTSERVER)})
    assert e["code"] == CONFLICT, e
    assert sorted(e["data"]["names"]) == ["acct-a", "acct-b"], e
    assert len(d1.list()) == 2
    # Saved under their ids, and back under them after a restart.
    assert sorted((r["name"], r["id"]) for r in store_rows(d1)) == sorted(
        [("acct-a", a.json["id"]), ("acct-b", b.json["id"])])
    d2 = restart(mcpd_factory, d1)
    rows = wait_ready(d2, ["acct-a", "acct-b"], timeout=30)
    assert sorted((r["name"], r["id"]) for r in rows) == sorted(
        [("acct-a", a.json["id"]), ("acct-b", b.json["id"])])


def test_rows_of_the_old_id_rule_keep_their_ids(mcpd_factory):
    """Rows saved before servers were identified by name carry ids made
    from the target: they restore under those ids, a load of the same
    name and target is that server, and unload by the old id works."""
    d1 = mcpd_factory()
    d1.load(ts_command(), name="legacy", persist=True)
    assert d1.stop() == []
    doc = json.loads((d1.state / "enabled.json").read_bytes())
    (row,) = doc["agents"]["default"]
    row["id"] = "0123456789ab"      # what the old rule would have made
    (d1.state / "enabled.json").write_text(json.dumps(doc, indent=2) + "\n")
    d2 = mcpd_factory(base=d1.base)
    (r,) = wait_ready(d2, ["legacy"])
    assert r["id"] == "0123456789ab", r
    again = d2.load(ts_command(), name="legacy", persist=True)
    assert again["id"] == "0123456789ab" and again.get("was_loaded"), again
    assert [x["id"] for x in store_rows(d2)] == ["0123456789ab"]
    out = d2.ctl("unload", "0123456789ab")
    assert out.rc == 0 and out.json["removed_saved"] is True, out
    assert store_rows(d2) == []


def test_a_saved_row_that_cannot_be_restored_can_be_unloaded(mcpd_factory):
    """Two saved rows of one agent with the same name (what an edit by hand
    may write): the second cannot be restored under that name. mcpctl unload
    of its id must still remove its row (else it fails at every start and
    only an edit of the file removes it); the other one is untouched."""
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    state = base / "state"
    state.mkdir(mode=0o700)
    d0 = mcpd_factory(base=base)
    r1 = d0.load(ts_command(), name="dup", persist=True)
    r2 = d0.load(ts_command("--tools", "2"), name="other", persist=True)
    assert d0.stop() == []
    doc = json.loads((state / "enabled.json").read_bytes())
    for row in doc["agents"]["default"]:
        row["name"] = row["params"]["name"] = "dup"
    (state / "enabled.json").write_text(json.dumps(doc, indent=2) + "\n")
    d = mcpd_factory(base=base)
    poll(lambda: "restore of dup (agent default) failed" in
         d.read_stderr(), timeout=30, what="the second restore to fail")
    (row,) = wait_ready(d, ["dup"])
    assert row["id"] == r1["id"]
    out = d.ctl("unload", r2["id"])
    assert out.rc == 0, out
    assert out.json["removed_saved"] is True, out
    assert out.json["stopped_live"] is False, out
    assert [r["id"] for r in store_rows(d)] == [r1["id"]]
    assert d.row("dup")["state"] == "ready"


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.decode(errors="replace").split("=", 1)
                    for kv in f.read().split(b"\0") if b"=" in kv)


def test_saved_env_value_is_restored_but_not_in_the_file(mcpd_factory):
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    key = base / "config" / "secrets.key"
    key.parent.mkdir(mode=0o700)
    d1 = mcpd_factory("--secrets-key", key, base=base)
    value = "s3cret-value-of-the-test"
    r = d1.load(ts_command(), name="ts", persist=True,
                env={"MCPD_IT_VAR": value})
    assert environ_of(d1.row("ts")["pid"])["MCPD_IT_VAR"] == value
    assert value.encode() not in store_bytes(d1)
    (row,) = store_rows(d1)
    assert row["params"]["env"]["MCPD_IT_VAR"].startswith("$(secret."), row
    assert d1.stop() == []
    d2 = mcpd_factory("--secrets-key", key, base=base)
    (row,) = wait_ready(d2, ["ts"])
    assert row["id"] == r["id"]
    assert environ_of(row["pid"])["MCPD_IT_VAR"] == value
    out = d2.ctl("unload", "ts")
    assert out.rc == 0 and out.json["removed_saved"] is True, out


# --------------------------------------------------------------------------
# 2. A store that cannot be written fails with storage and changes nothing

def assert_nothing_new(d, before_rows, before_bytes, groups, needle):
    """Only the servers of before are listed and running; the file is
    intact byte for byte."""
    rows = d.list()
    assert [(r["name"], r["id"], r["persistent"]) for r in rows] == \
        [(r["name"], r["id"], r["persistent"]) for r in before_rows]
    assert store_bytes(d) == before_bytes
    assert process_groups(d.pid) == groups
    assert [p for p in descendants(d.pid)
            if needle in (cmdline(p) or [])] == []


def load_second(d):
    return d.ctl("load", "--name", "second", "--", TESTSERVER, "--tools",
                 "7")


def test_read_only_state_dir(mcpd_factory, mounts):
    need_root()
    d = mcpd_factory()
    r = d.load(ts_command(), name="ts", persist=True)
    before_rows, before = d.list(), store_bytes(d)
    groups = process_groups(d.pid)
    mounts("--bind", d.state, target=d.state)
    rc, err = sh("mount", "-o", "remount,bind,ro", d.state)
    assert rc == 0, err
    assert not os.access(d.state, os.W_OK)

    e = storage_error(load_second(d))
    assert "Read-only file system" in e["message"], e
    assert "nothing was saved" in e["message"], e
    assert_nothing_new(d, before_rows, before, groups, "--tools")

    # An unload that cannot remove the row changes nothing either.
    e = storage_error(d.ctl("unload", "ts"))
    assert "Read-only file system" in e["message"], e
    row = d.row("ts")
    assert row["state"] == "ready" and row["persistent"] is True, row
    assert row["id"] == r["id"]
    assert process_groups(d.pid) == groups
    assert store_bytes(d) == before
    assert d.call("ts", "echo", {"message": "x"})["structuredContent"] == \
        {"message": "x"}

    # Writable again: both work.
    rc, err = sh("mount", "-o", "remount,bind,rw", d.state)
    assert rc == 0, err
    out = d.ctl("unload", "ts")
    assert out.rc == 0, out
    assert out.json["removed_saved"] is True, out
    assert store_rows(d) == []


def test_full_file_system(mcpd_factory, mounts):
    need_root()
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    state = base / "state"
    state.mkdir(mode=0o700)
    mounts("-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs",
           target=state)
    d = mcpd_factory(base=base)
    d.load(ts_command(), name="ts", persist=True)
    before_rows, before = d.list(), store_bytes(d)
    groups = process_groups(d.pid)
    filler = state / "filler"
    with open(filler, "wb", buffering=0) as f:
        for size in (4096, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as err:
                assert err.errno == 28, err     # ENOSPC
    assert filler.stat().st_size > 0

    e = storage_error(load_second(d))
    assert "No space left on device" in e["message"], e
    assert_nothing_new(d, before_rows, before, groups, "--tools")
    assert not (state / "enabled.json.tmp").exists()

    # The same load works once there is room.
    filler.unlink()
    out = load_second(d)
    assert out.rc == 0, out
    assert out.json["persistent"] is True
    assert sorted(by_name(store_rows(d))) == ["second", "ts"]


def test_directory_in_the_way(mcpd):
    mcpd.load(ts_command(), name="ts", persist=True)
    before_rows, before = mcpd.list(), store_bytes(mcpd)
    groups = process_groups(mcpd.pid)
    blocker = store_path(mcpd).with_name("enabled.json.tmp")
    blocker.mkdir()
    (blocker / "keep").write_text("not mcpd's")

    e = storage_error(load_second(mcpd))
    assert "enabled.json.tmp" in e["message"], e
    assert_nothing_new(mcpd, before_rows, before, groups, "--tools")
    # What is in the way is left alone.
    assert (blocker / "keep").read_text() == "not mcpd's"

    e = storage_error(mcpd.ctl("unload", "ts"))
    assert mcpd.row("ts")["state"] == "ready"
    assert store_bytes(mcpd) == before


# --------------------------------------------------------------------------
# 3. The gate: jobs of one server in order, calls never wait on it

def test_gate_orders_reloads_and_calls_go_on(mcpd):
    r = mcpd.load(ts_command("--start-delay-ms", "3000"), name="slow",
                  timeout=60)
    mcpd.load(ts_command(), name="other")
    assert r["generation"] == 1
    h1 = f"slow.{r['generation']}/echo"
    pid1 = mcpd.row("slow")["pid"]
    with mcpd.client(timeout=60) as a, mcpd.client(timeout=60) as b, \
            mcpd.client(timeout=60) as c:
        t0 = time.monotonic()
        first = a.request("mcpd/reload", {"target": "slow"})
        # The second is sent once the first has started its process.
        poll(lambda: [p for p in descendants(mcpd.pid) if p != pid1 and
                      "--start-delay-ms" in (cmdline(p) or [])],
             what="the first reload's server process")
        second = b.request("mcpd/reload", {"target": "slow"})
        # Meanwhile: the old generation serves, and so does the other.
        for i in range(5):
            res = c.result("mcpd/call", {"handle": h1,
                                         "arguments": {"message": str(i)}})
            assert res["structuredContent"] == {"message": str(i)}
            res = c.result("mcpd/call", {"server": "other", "tool": "add",
                                         "arguments": {"a": i, "b": 1}})
            assert res["structuredContent"] == {"sum": i + 1}
        # ... all before the first reload's answer.
        assert not a.buf and not select.select([a.sock], [], [], 0)[0], (
            f"the first reload answered before the calls were done "
            f"({time.monotonic() - t0:.2f} s)")
        row = mcpd.row("slow")
        assert row["state"] == "ready" and row["generation"] == 1, row
        assert row["pid"] == pid1

        r1 = a.response(first, timeout=60)
        t1 = time.monotonic()
        assert "result" in r1, r1
        assert r1["result"]["generation"] == 2
        # The first reload switched: the old handle is stale now, the
        # second reload is still waiting for its own (3 s) start.
        e = c.error("mcpd/call", {"handle": h1,
                                  "arguments": {"message": "late"}})
        assert e["code"] == STALE_HANDLE, e
        h2 = "slow.2/echo"
        assert c.result("mcpd/call", {"handle": h2, "arguments": {
            "message": "two"}})["structuredContent"] == {"message": "two"}
        r2 = b.response(second, timeout=60)
        t2 = time.monotonic()
        assert "result" in r2, r2
        assert r2["result"]["generation"] == 3
        assert t2 - t1 >= 2.5, (
            f"the second reload answered {t2 - t1:.2f} s after the first: "
            f"it did not wait its turn")
    assert t1 - t0 >= 2.5
    row = mcpd.row("slow")
    assert row["generation"] == 3 and row["state"] == "ready"
    wait_gone([pid1], what="the first generation's process")


# --------------------------------------------------------------------------
# 4. Agents

def test_agents_load_the_same_target(mcpd_factory):
    d1 = mcpd_factory()
    ids = {}
    for agent in ("alice", "bob"):
        out = d1.ctl("--agent", agent, "load", "--name", "ts", "--",
                     TESTSERVER)
        assert out.rc == 0, out
        assert out.json["persistent"] is True
        ids[agent] = out.json["id"]
    assert ids["alice"] != ids["bob"]
    for agent in ("alice", "bob"):
        rows = d1.ctl("--agent", agent, "list").json["servers"]
        assert [(r["name"], r["id"], r["agent"]) for r in rows] == \
            [("ts", ids[agent], agent)]
    assert d1.ctl("list").json["servers"] == []     # the default agent's
    rows = d1.ctl("list", "--all").json["servers"]
    assert sorted((r["agent"], r["id"]) for r in rows) == \
        sorted(ids.items())
    doc = json.loads(store_bytes(d1))
    assert sorted(doc["agents"]) == ["alice", "bob"]
    for agent in ("alice", "bob"):
        assert [r["id"] for r in doc["agents"][agent]] == [ids[agent]]

    # A reload of alice's leaves bob's alone.
    pids = {r["agent"]: r["pid"] for r in d1.list(all=True)}
    out = d1.ctl("--agent", "alice", "reload", "ts")
    assert out.rc == 0, out
    assert out.json["generation"] == 2
    rows = {r["agent"]: r for r in d1.list(all=True)}
    assert rows["alice"]["generation"] == 2
    assert rows["alice"]["pid"] != pids["alice"]
    assert rows["bob"]["generation"] == 1 and rows["bob"]["pid"] == \
        pids["bob"]

    d2 = restart(mcpd_factory, d1)
    rows = wait_ready(d2, ["ts", "ts"], list_all=True)
    assert sorted((r["agent"], r["id"]) for r in rows) == \
        sorted(ids.items())
    for agent in ("alice", "bob"):
        out = d2.ctl("--agent", agent, "call", "ts", "echo",
                     f"message={agent}")
        assert out.rc == 0, out
        assert out.json["structuredContent"] == {"message": agent}

    # Unloading bob's leaves alice's, running and saved.
    out = d2.ctl("--agent", "bob", "unload", "ts")
    assert out.rc == 0, out
    assert out.json["removed_saved"] is True
    assert out.json["id"] == ids["bob"]
    rows = d2.list(all=True)
    assert [(r["agent"], r["state"]) for r in rows] == [("alice", "ready")]
    doc = json.loads(store_bytes(d2))
    assert list(doc["agents"]) == ["alice"]


# --------------------------------------------------------------------------
# 6. A corrupt store, or one of a newer version, is refused and left alone

CORRUPT = {
    "truncated": (b'{\n  "version": 1,\n  "agents": {\n    "default": [\n',
                  "is corrupt"),
    "not-json": (b"\x00\x01 this is not json\n", "is corrupt"),
    "row-without-id": (b'{"version": 1, "agents": {"default": '
                       b'[{"name": "x", "params": {"command": ["/bin/true"]'
                       b'}}]}}\n', "is corrupt"),
    "newer": (b'{"version": 2, "agents": {"default": [{"id": '
              b'"0123456789ab", "name": "ts", "mode": "process", '
              b'"params": {"command": ["' + str(TESTSERVER).encode() +
              b'"], "name": "ts"}}]}, "future": true}\n',
              "written by a newer mcpd"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_refused_store_is_left_alone(mcpd_factory, case):
    content, words = CORRUPT[case]
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    state = base / "state"
    state.mkdir(mode=0o700)
    path = state / "enabled.json"
    path.write_bytes(content)
    os.chmod(path, 0o600)
    d = mcpd_factory(base=base)
    poll(lambda: words in d.read_stderr() and str(path) in
         d.read_stderr(), timeout=10,
         what="mcpd to log that it refuses the store")
    assert "nothing is restored" in d.read_stderr()
    assert d.list() == []

    e = storage_error(d.ctl("load", "--name", "ts", "--", TESTSERVER))
    assert str(path) in e["message"] and words in e["message"], e
    assert d.list() == [] and descendants(d.pid) == []
    assert path.read_bytes() == content

    out = d.ctl("load", "--no-persist", "--name", "ts", "--", TESTSERVER)
    assert out.rc == 0, out
    assert out.json["persistent"] is False
    assert d.call("ts", "echo", {"message": "x"})["structuredContent"] == \
        {"message": "x"}
    out = d.ctl("unload", "ts")
    assert out.rc == 0, out
    assert out.json["removed_saved"] is False
    assert path.read_bytes() == content
    assert d.stop() == []
    assert path.read_bytes() == content


# --------------------------------------------------------------------------
# 7. Identity

def test_identity_key_mode_and_did_key(mcpd_factory):
    # The known-vector check of the did:key encoding is a unit test.
    unit = REPO / "tests" / "unit" / "test-identity.c"
    assert unit.is_file() and "vector_did" in unit.read_text()

    d1 = mcpd_factory()
    out = d1.ctl("status")
    assert out.rc == 0, out
    did = out.json["did"]
    assert DID_KEY.match(did), did
    key = Path(d1.state) / "identity.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert d1.stop() == []

    key.chmod(0o644)
    p = subprocess.run([str(MCPD), "-d", "-s", str(d1.sock), "-S",
                        str(d1.state)], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                            "HOME": os.environ.get("HOME", "/root")})
    err = (p.stdout + p.stderr).decode(errors="replace")
    assert p.returncode != 0, err
    assert str(key) in err and "0600" in err and "0644" in err, err
    assert "chmod 600" in err, err
    assert not d1.sock.exists()
    assert stat.S_IMODE(key.stat().st_mode) == 0o644     # not "fixed"

    key.chmod(0o600)
    d2 = mcpd_factory(base=d1.base)
    assert d2.ctl("status").json["did"] == did


# --------------------------------------------------------------------------
# 8. sd_notify

class NotifySocket:
    """A unix datagram socket that collects what mcpd says to systemd."""

    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.msgs = []

    def drain(self, timeout):
        self.sock.settimeout(timeout)
        try:
            while True:
                data = self.sock.recv(65536)
                for line in data.decode(errors="replace").split("\n"):
                    if line:
                        self.msgs.append(line)
                self.sock.settimeout(0.01)
        except (socket.timeout, BlockingIOError):
            pass
        return self.msgs

    def wait(self, pred, timeout=30.0, what="a notify message"):
        return poll(lambda: [m for m in self.drain(0.05) if pred(m)],
                    timeout=timeout, interval=0.01, what=what)

    def close(self):
        self.sock.close()


def test_sd_notify_ready_restore_status_stopping(mcpd_factory, tmp_path):
    script, flag = breakable_server(tmp_path)
    d1 = mcpd_factory()
    d1.load(ts_command(), name="a", persist=True)
    d1.load(ts_command("--tools", "2"), name="b", persist=True)
    d1.load([script], name="c", persist=True)
    assert d1.stop() == []
    flag.touch()        # c fails at its restore
    ns = NotifySocket(Path(d1.base) / "notify.sock")
    try:
        d2 = mcpd_factory(base=d1.base, env={"NOTIFY_SOCKET": ns.path})
        ns.wait(lambda m: m == "READY=1", what="READY=1")
        done = ns.wait(lambda m: m.startswith("STATUS=restored"),
                       what="the restore status")
        assert done == [f"STATUS=restored 3 saved servers, 1 failed; "
                        f"listening on {d2.sock}"], ns.msgs
        progress = [m for m in ns.msgs
                    if m.startswith("STATUS=restoring saved servers")]
        assert progress and progress[0] == (
            "STATUS=restoring saved servers: 0 of 3 done, 0 failed"), \
            ns.msgs
        assert ns.msgs.index(progress[0]) < ns.msgs.index(done[0])
        assert ns.msgs.index("READY=1") < ns.msgs.index(done[0])
        rows = {r["name"]: r["state"] for r in d2.list()}
        assert rows == {"a": "ready", "b": "ready", "c": "failed"}, rows
        assert "STOPPING=1" not in ns.msgs
        assert d2.stop() == []
        ns.wait(lambda m: m == "STOPPING=1", timeout=10, what="STOPPING=1")
        assert ns.msgs.index("READY=1") < ns.msgs.index("STOPPING=1")
    finally:
        ns.close()


def test_one_daemon_per_state_dir(mcpd_factory, tmp_path):
    """A second mcpd on a state dir that a live daemon holds refuses to
    start, naming the holder; it reaps nothing and restores nothing, so
    the first daemon's servers keep running, once each."""
    d1 = mcpd_factory()
    d1.load(ts_command(), name="only", persist=True)
    pid = d1.row("only")["pid"]
    sock = tmp_path / "second.sock"
    p = subprocess.run([str(MCPD), "-d", "-s", str(sock), "-S",
                        str(d1.state)], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    err = p.stderr.decode()
    assert p.returncode == 1, (p.returncode, err)
    # It says where the holder listens, and how to use that one.
    assert (f"another mcpd (pid {d1.pid}, listening on {d1.sock}) holds "
            f"the state directory {d1.state}") in err, err
    assert f"use it (mcpctl -s {d1.sock})" in err, err
    assert not sock.exists()
    assert is_alive(pid)
    assert [r["name"] for r in d1.list()] == ["only"]
    assert d1.row("only")["pid"] == pid
    # The second daemon started no copy of the server, reaped nothing.
    assert "only:" not in err and "restor" not in err, err
    # Once the first has stopped, the state dir can be taken again.
    assert d1.stop() == []
    d2 = mcpd_factory(base=d1.base)
    wait_ready(d2, ["only"])


def test_a_handle_from_before_a_restart_is_stale(mcpd_factory):
    """x.1/echo was issued for the process before the restart; after it,
    it must not reach the new process (generations start again above
    every one an earlier run issued), also for a server loaded again by
    hand under the same name."""
    d1 = mcpd_factory()
    saved = d1.load(ts_command(), name="saved", persist=True)
    again = d1.load(ts_command("--tools", "3"), name="again")
    old = [f"saved.{saved['generation']}/echo",
           f"again.{again['generation']}/echo"]
    d2 = restart(mcpd_factory, d1)
    wait_ready(d2, ["saved"])
    d2.load(ts_command("--tools", "3"), name="again")
    for handle in old:
        e = d2.rpc.error("mcpd/call", {"handle": handle,
                                       "arguments": {"message": "x"}})
        assert e["code"] == STALE_HANDLE, (handle, e)
        assert e["data"]["kind"] == "stale-handle", e
    for r in d2.list():
        assert r["generation"] > max(saved["generation"],
                                     again["generation"]), r
    # mcpctl call --help on a stale handle fails as the call does.
    for args in ([old[0], "--help"], [old[0], "message=x"]):
        out = d2.ctl("call", *args, is_json=False)
        assert out.rc == 1 and out.out == "", out
        assert f"the handle belongs to generation {saved['generation']} " \
            "of saved" in out.err, out
