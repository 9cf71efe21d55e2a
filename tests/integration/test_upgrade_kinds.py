# SPDX-License-Identifier: ISC
"""Upgrade in place, by kind of server: a container served over stdio (its
docker run -i kept), a managed HTTP container (its HTTP session kept, its
logs followed again), a remote server (its Mcp-Session-Id kept: the remote
sees no second initialize), and what mcpd's children inherit (nothing of
its sockets, before and after an upgrade). test_upgrade.py has the clients
calling through upgrades and the fallbacks."""

import os
import re
import shutil
import subprocess

from conftest import MCPD, descendants, find_procs, poll
from test_remote import Everything


def docker(*args):
    return subprocess.run(["docker", *args], capture_output=True, text=True,
                          timeout=60)


def container_id(name):
    p = docker("ps", "-q", "--no-trunc", "--filter", f"name=^{name}$")
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def upgrade(d, tmp_path):
    """mcpctl upgrade to a copy of the build's mcpd (another path)."""
    new = tmp_path / "mcpd-new"
    shutil.copy2(MCPD, new)
    r = d.ctl("upgrade", "--binary", new, timeout=120)
    assert r.rc == 0, r
    assert r.json["pid"] == d.pid
    assert r.json["binary"] == str(new)
    return r.json


def listed(d):
    r = d.ctl("list")
    assert r.rc == 0, r
    return {s["name"]: s for s in r.json["servers"]}


def echo(d, server, text):
    r = d.ctl("call", server, "echo", f"message={text}")
    assert r.rc == 0, r
    return r.json["content"][0]["text"]


def logs_followers(cname):
    return [p for p in find_procs(cname)
            if b"logs" in open(f"/proc/{p}/cmdline", "rb").read()]


def test_upgrade_keeps_containers_by_name(mcpd_factory, docker_images,
                                          tmp_path):
    d = mcpd_factory()
    for name, image in (("cs", "mcpd-test/stdio:latest"),
                        ("ch", "mcpd-test/http:latest")):
        r = d.ctl("load", "--no-persist", "--name", name, image, timeout=120)
        assert r.rc == 0, r
    before = listed(d)
    assert before["cs"]["transport"] == "stdio"
    assert before["ch"]["transport"] == "streamable-http"
    cs, ch = (before["cs"]["container"]["name"],
              before["ch"]["container"]["name"])
    ids = {cs: container_id(cs), ch: container_id(ch)}
    assert all(ids.values()), ids
    run_i = [p for p in find_procs(cs)
             if b"run" in open(f"/proc/{p}/cmdline", "rb").read()]
    assert len(run_i) == 1, run_i
    assert len(logs_followers(ch)) == 1

    answer = upgrade(d, tmp_path)
    assert answer["servers"] == 2

    after = listed(d)
    for name in ("cs", "ch"):
        assert after[name]["state"] == "ready"
        assert after[name]["container"] == before[name]["container"]
        assert after[name]["transport"] == before[name]["transport"]
        assert after[name]["generation"] == before[name]["generation"]
    assert {n: container_id(n) for n in ids} == ids
    # The same docker run -i serves cs; ch's logs are followed once again.
    assert [p for p in find_procs(cs)
            if b"run" in open(f"/proc/{p}/cmdline", "rb").read()] == run_i
    poll(lambda: len(logs_followers(ch)) == 1, what="one docker logs -f",
         timeout=5)
    assert echo(d, "cs", "stdio kept") == "stdio kept"
    assert echo(d, "ch", "http kept") == "http kept"

    # The adopted records are the new process's: unload removes them.
    for name in ("cs", "ch"):
        r = d.ctl("unload", name, timeout=120)
        assert r.rc == 0, r
        assert r.json["container_removed"] is True, r.json
    assert container_id(cs) == "" and container_id(ch) == ""


def test_upgrade_keeps_a_remote_session(mcpd_factory, peers, tmp_path):
    everything = Everything(peers)
    d = mcpd_factory()
    r = d.ctl("load", "--no-persist", "--allow-local", "--name", "ev",
              everything.url(), timeout=120)
    assert r.rc == 0, r
    poll(lambda: len(everything.sessions()) == 1, what="one session")
    session = everything.sessions()[0]
    assert echo(d, "ev", "before") == "Echo: before"

    upgrade(d, tmp_path)

    assert echo(d, "ev", "after") == "Echo: after"
    assert listed(d)["ev"]["state"] == "ready"
    # The remote saw no second initialize and no end of its session.
    assert everything.sessions() == [session]
    assert everything.terminated() == []


def socket_inodes(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        m = re.fullmatch(r"socket:\[(\d+)\]", link)
        if m:
            inodes.add(m.group(1))
    return inodes


def shared_sockets(d):
    """Sockets of mcpd's that a descendant of it also holds."""
    mine = socket_inodes(d.pid)
    shared = {}
    for p in descendants(d.pid):
        try:
            both = mine & socket_inodes(p)
        except OSError:
            continue  # it ended meanwhile
        if both:
            shared[p] = both
    return shared


def test_children_hold_no_socket_of_mcpd(mcpd_factory, docker_images,
                                         tmp_path):
    """libevent makes its outgoing sockets without O_CLOEXEC, and an upgrade
    hands descriptors over without it: before children closed what they
    did not need, a docker logs -f held mcpd's HTTP connection to its
    container (and after an upgrade, the control socket)."""
    d = mcpd_factory("--listen-http", "127.0.0.1:0")
    r = d.ctl("load", "--no-persist", "--name", "ch",
              "mcpd-test/http:latest", timeout=120)
    assert r.rc == 0, r
    r = d.ctl("load", "--no-persist", "--name", "t", "--", str(
        MCPD.parent / "mcp-testserver"))
    assert r.rc == 0, r
    assert echo(d, "ch", "x") == "x"
    assert shared_sockets(d) == {}
    upgrade(d, tmp_path)
    assert echo(d, "ch", "y") == "y"
    assert echo(d, "t", "z") == "z"
    assert shared_sockets(d) == {}
    for name in ("ch", "t"):
        assert d.ctl("unload", name, timeout=120).rc == 0
