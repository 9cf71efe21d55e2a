# SPDX-License-Identifier: ISC
"""Upgrade in place (issue 26, item 3; DESIGN 15): `mcpctl upgrade
--binary PATH` makes mcpd exec a new binary that adopts its state while
official SDK clients call tools in a loop over `mcpctl bridge` and over
Streamable HTTP (upgrade-client.mjs; bridge-client.mjs for subscriptions
and the log level): no call over the bridge fails, a call over HTTP fails
only when its request met the close of an idle keep-alive connection (and
then it never ran), no server restarts (same pids), mcpd keeps its pid,
and no descriptor or process is left behind. A new binary that fails its
start check, refuses the state's version or cannot adopt the state leaves
mcpd serving as it was."""

import json
import os
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import (MCPCTL, MCPD, NODE, PEERS, descendants, end_client,
                      free_port, poll)
from test_bridge_reconnect import clients  # noqa: F401 (a fixture)
from test_gateway import SDK_CLIENT

HERE = Path(__file__).resolve().parent
LOOP_CLIENT = HERE / "upgrade-client.mjs"
UPGRADES = 10
SERVERS = [f"s{i}" for i in range(4)]
TOOLS = ",".join(f"{s}__echo" for s in SERVERS)
# MCPD_UPGRADE_CHECK's value: the state version mcpd writes (daemon/mcpd.h).
STATE_VERSION = 1

# What the SDK's fetch says of a request sent on a keep-alive connection
# that mcpd closed at the exec (the FIN came first, or the request was
# unread and the close became a reset). HTTP/1.1 lets a server close an
# idle connection at any time; a POST is not retried.
CLOSED_UNDER_A_REQUEST = [
    {"code": None, "message": "fetch failed",
     "cause": {"code": "UND_ERR_SOCKET", "message": "other side closed"}},
    {"code": None, "message": "fetch failed",
     "cause": {"code": "ECONNRESET", "message": "read ECONNRESET"}},
]


class LoopClient:
    """upgrade-client.mjs: the SDK client calling tools in a loop, over
    `mcpctl bridge` or HTTP; its stderr goes to a file."""

    def __init__(self, args, env, tmp_path, name):
        self.name = name
        self.err_path = tmp_path / f"{name}.err"
        self.err_file = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            [NODE, str(LOOP_CLIENT), str(PEERS)] + [str(a) for a in args],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.err_file, text=True)
        assert self.read() == {"connected": True}, self.stderr()

    def read(self):
        line = self.proc.stdout.readline()
        assert line, f"{self.name} ended: {self.stderr()}"
        return json.loads(line)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.read()

    def loop(self, tools=TOOLS):
        assert self.ask(f"loop {tools} {self.name}") == {"looping": True}

    def answers(self):
        return self.ask("count")["answers"]

    def stop(self):
        return self.ask("stop")

    def stderr(self):
        return self.err_path.read_text()

    def close(self):
        end_client(self.proc, "quit")
        self.err_file.close()


@pytest.fixture
def loopers(tmp_path):
    made = []

    def start(d, kind, n=1, first=0):
        """n clients over kind ("bridge" or "http") to d."""
        args = ([MCPCTL, "-s", d.sock, "bridge"] if kind == "bridge" else
                ["--http", d.url, d.token])
        cs = [LoopClient(args, d.env, tmp_path, f"{kind}{first + i}")
              for i in range(n)]
        made.extend(cs)
        return cs
    yield start
    for c in made:
        c.close()


def served_again(cs):
    """Waits until each of cs has been answered again from now on."""
    for c in cs:
        n = c.answers()
        poll(lambda: c.answers() > n, what=f"{c.name} to be answered")


def front(mcpd_factory, *args):
    """mcpd listening on HTTP too, with the default agent's token."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}", *args)
    d.port = port
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


def load_servers(d, tmp_path):
    """The 4 test servers, each logging every message it reads."""
    for name in SERVERS:
        d.load_testserver(name, "--echo-input", "--log-file",
                          tmp_path / f"{name}.log")
    return server_pids(d)


def server_pids(d):
    """Each server's pid, once every server is ready: mcpd answers the
    upgrade while the kept servers' sessions list their tools again, and
    a server is listed with no pid until then."""
    def ready():
        rows = d.list()
        return rows if all(r["state"] == "ready" for r in rows) else None
    rows = poll(ready, what="every server to be ready")
    return {r["name"]: r["pid"] for r in rows}


def calls_run(tmp_path):
    """Counter of the messages of the echo calls the servers ran."""
    run = Counter()
    for name in SERVERS:
        for line in (tmp_path / f"{name}.log").read_text().splitlines():
            if not line.startswith("in: "):
                continue
            msg = json.loads(line[4:])
            if msg.get("method") == "tools/call":
                run[msg["params"]["arguments"]["message"]] += 1
    return run


def new_binary(tmp_path, name="mcpd-new"):
    """A copy of the built mcpd: another file, the same program."""
    path = tmp_path / name
    shutil.copy2(MCPD, path)
    return path


def wrapper(tmp_path, name, body):
    """A script standing in for a new binary."""
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def fds(pid):
    """What each of pid's open descriptors is."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            pass
    return out


def fd_kinds(pid):
    """How many descriptors of each kind (socket, pipe, anon_inode:...,
    a file's path) pid has open."""
    return Counter(f.split(":[")[0] for f in fds(pid))


def open_http_connections(port):
    """mcpd's TCP connections on port that it has not closed yet
    (established, or closed by the client only)."""
    found = 0
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(name) as f:
            next(f)
            for line in f:
                fields = line.split()
                local_port = int(fields[1].rsplit(":", 1)[1], 16)
                if local_port == port and fields[3] in ("01", "08"):
                    found += 1
    return found


def clients_gone(d):
    """Every client has gone (bridges closed their sockets, HTTP clients
    ended their sessions) and mcpd has closed every HTTP connection."""
    return (d.rpc.result("mcpd/clients", {})["clients"] == [] and
            open_http_connections(d.port) == 0)


def exe(pid):
    return os.readlink(f"/proc/{pid}/exe")


def version(d):
    return d.rpc.result("mcpd/status")["version"]


def upgrade(d, binary):
    """mcpctl upgrade to binary, which must succeed; its answer."""
    r = d.ctl("upgrade", "--binary", binary, timeout=120)
    assert r.rc == 0, r
    return r.json


def upgrade_error(d, binary):
    """mcpctl upgrade to binary, which must fail; what mcpctl says."""
    r = d.ctl("upgrade", "--binary", binary, is_json=False, timeout=120)
    assert (r.rc, r.out) == (1, ""), r
    return r.err


def check_http_failures(summaries, run):
    """Each failed HTTP call met the close of its connection and never
    ran; the calls answered ran once each."""
    for s in summaries.values():
        for f in s["failures"]:
            assert f["error"] in CLOSED_UNDER_A_REQUEST, f
            assert run[f["message"]] == 0, f


def phases(summary, first, last):
    """Answers before the first upgrade, during the upgrades, after."""
    ats = summary["answers"]
    return (sum(1 for t in ats if t < first),
            sum(1 for t in ats if first <= t <= last),
            sum(1 for t in ats if t > last))


def test_sixteen_clients_go_on_through_ten_upgrades(mcpd_factory, loopers,
                                                    tmp_path):
    d = front(mcpd_factory)
    pids = load_servers(d, tmp_path)
    binary = new_binary(tmp_path)
    v = version(d)

    # A round first, so that whatever mcpd opens at its first calls is
    # open when the descriptors are counted, with no client connected.
    warm = loopers(d, "bridge", first=8) + loopers(d, "http", first=8)
    for c in warm:
        c.loop()
    served_again(warm)
    for c in warm:
        assert c.stop()["failures"] == []
        c.close()
    poll(lambda: clients_gone(d), what="the warm-up's clients to be gone")
    fds_before = fd_kinds(d.pid)
    kids_before = sorted(descendants(d.pid))

    cs = loopers(d, "bridge", 8) + loopers(d, "http", 8)
    for c in cs:
        c.loop()
    served_again(cs)

    first = time.time() * 1000
    answers = []
    for _ in range(UPGRADES):
        answers.append(upgrade(d, binary))
        # Every client is served by the new process before the next.
        served_again(cs)
    last = time.time() * 1000
    served_again(cs)
    summaries = {c.name: c.stop() for c in cs}
    for c in cs:
        c.close()
    run = calls_run(tmp_path)

    # The figures (pytest -s shows them).
    for kind in ("bridge", "http"):
        ss = [s for n, s in summaries.items() if n.startswith(kind)]
        counts = [phases(s, first, last) for s in ss]
        print(f"{kind}: calls before/during/after the {UPGRADES} upgrades: "
              f"{[sum(c[i] for c in counts) for i in range(3)]}, failed "
              f"{sum(len(s['failures']) for s in ss)}, longest pause "
              f"{max(round(s['longest_gap_ms']) for s in ss)} ms")
    print(f"mcpd's pause_ms: {[a['pause_ms'] for a in answers]}")
    print(f"pids before {pids} and after {server_pids(d)}; mcpd {d.pid}")

    bridge_failures = {n: s["failures"] for n, s in summaries.items()
                       if n.startswith("bridge") and s["failures"]}
    assert bridge_failures == {}
    check_http_failures(summaries, run)
    answered = [f"{n}-{i}" for n, s in summaries.items()
                for i in range(s["calls"])]
    failed = {f["message"] for s in summaries.values()
              for f in s["failures"]}
    assert [m for m in answered if m not in failed and run[m] != 1] == []

    assert answers == [{"from": v, "to": v, "binary": str(binary),
                        "pid": d.pid, "servers": len(SERVERS),
                        "pause_ms": a["pause_ms"],
                        "ready_ms": a["ready_ms"], "not_ready": []}
                       for a in answers]
    assert all(a["ready_ms"] >= a["pause_ms"] for a in answers)
    assert exe(d.pid) == str(binary)
    assert server_pids(d) == pids
    assert sorted(descendants(d.pid)) == kids_before
    poll(lambda: clients_gone(d), what="the clients to be gone")
    assert fd_kinds(d.pid) == fds_before


BROKEN = ("echo 'broken on purpose' >&2; exit 1",
          "the new binary {path} failed its start check (it exited with "
          "status 1): broken on purpose; mcpd goes on as it is")
READS_NONE = ("MCPD_TEST_UPGRADE_READS=0 exec {mcpd} \"$@\"",
              "the new binary {path} failed its start check (it exited "
              "with status 2): mcpd {version} reads upgrade states of "
              "versions 1 to 0, not {state}; mcpd goes on as it is")


@pytest.mark.parametrize("script,message", [BROKEN, READS_NONE],
                         ids=["exits-at-start", "reads-no-state"])
def test_a_new_binary_that_fails_its_check_changes_nothing(
        mcpd_factory, loopers, tmp_path, script, message):
    d = front(mcpd_factory)
    pids = load_servers(d, tmp_path)
    bad = wrapper(tmp_path, "mcpd-bad", script.format(mcpd=MCPD))
    cs = loopers(d, "bridge") + loopers(d, "http")
    for c in cs:
        c.loop()
    served_again(cs)
    kids = sorted(descendants(d.pid))

    err = upgrade_error(d, bad)
    assert err == "mcpctl: " + message.format(
        path=bad, version=version(d), state=STATE_VERSION) + "\n"
    served_again(cs)
    summaries = {c.name: c.stop() for c in cs}
    # Nothing was drained, nothing closed: not one call failed.
    assert {n: s["failures"] for n, s in summaries.items()} == {
        c.name: [] for c in cs}
    assert exe(d.pid) == str(MCPD)
    assert server_pids(d) == pids
    assert sorted(descendants(d.pid)) == kids
    # Nothing is left of it: an upgrade goes as it would have.
    assert upgrade(d, new_binary(tmp_path))["pid"] == d.pid
    assert server_pids(d) == pids


def test_a_new_binary_that_cannot_adopt_falls_back(mcpd_factory, loopers,
                                                   tmp_path):
    """MCPD_TEST_UPGRADE_REFUSE=1 in the new binary's environment stands
    in for a binary that passes its check and then cannot take the state
    over: no real binary can be made to show that here."""
    d = front(mcpd_factory)
    pids = load_servers(d, tmp_path)
    refusing = wrapper(tmp_path, "mcpd-refusing",
                       f'MCPD_TEST_UPGRADE_REFUSE=1 exec {MCPD} "$@"')
    cs = loopers(d, "bridge") + loopers(d, "http")
    for c in cs:
        c.loop()
    served_again(cs)
    kids = sorted(descendants(d.pid))

    err = upgrade_error(d, refusing)
    assert err == (
        "mcpctl: the new binary could not take the state over "
        "(MCPD_TEST_UPGRADE_REFUSE is set (a test's stand-in for a binary "
        f"that cannot adopt)); mcpd {version(d)} went back to the binary "
        "before, with every server and client\n")
    served_again(cs)
    assert exe(d.pid) == str(MCPD)
    assert server_pids(d) == pids
    assert sorted(descendants(d.pid)) == kids
    # The knob was the new binary's: the next upgrade goes through.
    binary = new_binary(tmp_path)
    assert upgrade(d, binary)["pid"] == d.pid
    assert exe(d.pid) == str(binary)
    served_again(cs)
    summaries = {c.name: c.stop() for c in cs}
    assert summaries["bridge0"]["failures"] == []
    check_http_failures(summaries, calls_run(tmp_path))
    assert server_pids(d) == pids


def test_subscriptions_and_the_log_level_go_on(mcpd_factory, clients,
                                               tmp_path):
    log = tmp_path / "conf.log"
    uri = "test://watched-resource"
    d = mcpd_factory()
    d.load_testserver("conf", "--conformance", "--log-file", log)
    pid = server_pids(d)["conf"]
    watcher = clients(d.sock, env=d.env)
    other = clients(d.sock, env=d.env)
    assert watcher.ask("subscribe", uri=uri) == {"result": {}}
    assert watcher.ask("level", level="error") == {"result": {}}

    upgrade(d, new_binary(tmp_path))
    assert server_pids(d) == {"conf": pid}
    r = watcher.ask("call", name="conf__test_update_resource")
    assert r["result"]["content"][0]["text"] == f"{uri} updated", r
    poll(lambda: watcher.ask("seen")["updated"] == [uri],
         what="the update after the upgrade")
    # The session's level is error: the tool's info message is held back;
    # a session that set none gets it.
    r = watcher.ask("call", name="conf__test_logging_tool")
    assert r["result"]["content"][0]["text"] == "logged one message", r
    r = other.ask("call", name="conf__test_logging_tool")
    assert r["result"]["content"][0]["text"] == "logged one message", r
    poll(lambda: other.ask("seen")["messages"] == ["info"],
         what="the other session's log message")
    seen = watcher.ask("seen")
    # Nothing changed: nothing was announced.
    assert (seen["messages"], seen["changed"], seen["closed"]) == (
        [], {"tools": 0, "prompts": 0, "resources": 0}, False), seen


def test_logs_follow_ends_with_the_reason(mcpd_factory, tmp_path):
    d = mcpd_factory()
    d.load_testserver("ts")
    p = subprocess.Popen([MCPCTL, "-s", d.sock, "logs", "-f", "ts"],
                         env=d.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        # Following: the lines so far are printed first.
        assert p.stdout.readline().startswith(
            "mcp-testserver: initialize: client wants ")
        upgrade(d, new_binary(tmp_path))
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=10)
    assert (p.returncode, err) == (
        0, "mcpctl: stopped following ts: mcpd is being upgraded in place; "
        "follow again to go on\n")
    # Its log says the process was kept, and it is followed again.
    r = d.ctl("logs", "ts", is_json=False)
    assert r.rc == 0 and "] upgrade: its process is kept\n" in r.out, r


def user_manager():
    """Why no systemd user manager can be used here, or None."""
    with open("/proc/1/comm") as f:
        init = f.read().strip()
    if init != "systemd":
        return f"no systemd here (PID 1 is {init})"
    if shutil.which("systemctl") is None:
        return "no systemctl"
    p = subprocess.run(["systemctl", "--user", "is-system-running"],
                       capture_output=True, text=True, timeout=30)
    if p.stdout.strip() not in ("running", "degraded"):
        return (f"no systemd user manager (systemctl --user "
                f"is-system-running: {p.stdout.strip() or p.stderr.strip()})")
    return None


def test_systemctl_reload_upgrades_in_place():
    why = user_manager()
    if why is not None:
        pytest.skip(f"{why}: systemctl --user reload mcpd (an upgrade in "
                    f"place through the unit's ExecReload=, which keeps no "
                    f"descriptor in systemd's fd store: doc/lifecycle.md) "
                    f"needs a user manager")
    unit = (Path(__file__).resolve().parents[2] / "systemd" /
            "mcpd.service").read_text()
    assert "ExecReload=" in unit, (
        "systemd/mcpd.service has no ExecReload=: systemctl --user reload "
        "mcpd does not upgrade mcpd in place")


def test_an_http_client_hears_list_changed_after_an_upgrade(mcpd_factory,
                                                             tmp_path):
    """The session's GET stream closes at the exec; the SDK opens it
    again, and what the session is told meanwhile comes on it."""
    d = front(mcpd_factory)
    d.load_testserver("ts")
    c = subprocess.Popen([NODE, str(SDK_CLIENT), str(PEERS), "--http",
                          d.url, d.token], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=d.env)
    try:
        def ask(line):
            c.stdin.write(line + "\n")
            c.stdin.flush()
            return json.loads(c.stdout.readline())
        assert "ts__echo" in ask("tools")["tools"]
        upgrade(d, new_binary(tmp_path))
        r = ask('call ts__echo {"message":"after"}')
        assert r["result"]["structuredContent"] == {"message": "after"}, r
        d.load_testserver("more", "--tools", "1")
        assert ask("changed 10000")["changed"] == 1
        assert "more__t0" in ask("tools")["tools"]
    finally:
        c.stdin.write("quit\n")
        c.stdin.close()
        c.wait(timeout=10)
