# SPDX-License-Identifier: ISC
"""A probe that listens on a port it publishes becomes the managed
container (doc/containers.md, "Promotion"), on the real Docker engine: the
first load of an HTTP image that EXPOSEs its port creates one container,
the probe, renamed rax-mcp-*; an image that exposes nothing, or a server
that listens on a port the image does not expose, still takes the probe
and a second container; a stdio image that exposes a port ends as stdio;
the promoted container goes at unload, and after mcpd is killed -9 the
next daemon removes it.

Which containers a daemon created is read from `docker events` (create
events of its owner label), so "one container" is what the engine saw."""

import os
import signal
import threading
import time

import pytest

from conftest import poll
from test_docker import (all_owners, assert_container_row,  # noqa: F401
                         assert_loopback_only, container, ctl_logs, ctl_ok,
                         ctl_row, docker, docker_run_pids, echo, engine,
                         load, owned_by, start, tracker, wait_ctl_log,
                         with_pid_label)
from test_docker_memory import created_since, image_id, memory

HTTP = "mcpd-test/http"
EVERYTHING = "mcpd-test/everything"
# mcpd-test/http without its EXPOSE (made by the noexpose fixture).
NOEXPOSE = "mcpd-test/http-noexpose:promo"


def renamed_since(did, since):
    """(old, new) names of the containers of owner did renamed since."""
    p = docker("events", "--since", f"{since:.3f}",
               "--until", f"{time.time() + 0.5:.3f}",
               "--filter", "type=container", "--filter", "event=rename",
               "--filter", f"label=io.mcpd.owner={did}", "--format",
               "{{.Actor.Attributes.oldName}} {{.Actor.Attributes.name}}",
               timeout=30)
    assert p.returncode == 0, p.stderr
    return [tuple(n.lstrip("/") for n in line.split())
            for line in p.stdout.splitlines()]


@pytest.fixture(scope="module")
def noexpose(engine):
    """mcpd-test/http's file system imported again with its entrypoint
    and no EXPOSE; removed at the end of the module."""
    made = docker("create", HTTP)
    assert made.returncode == 0, made.stderr
    cid = made.stdout.strip()
    try:
        export = docker("export", "--output", f"/tmp/promo-{cid}.tar", cid)
        assert export.returncode == 0, export.stderr
        imp = docker("import", "--change",
                     'ENTRYPOINT ["/mcp-testserver","--http","8080"]',
                     f"/tmp/promo-{cid}.tar", NOEXPOSE)
        assert imp.returncode == 0, imp.stderr
    finally:
        docker("rm", "-f", cid)
        if os.path.exists(f"/tmp/promo-{cid}.tar"):
            os.unlink(f"/tmp/promo-{cid}.tar")
    info = docker("image", "inspect", "--format",
                  "{{json .Config.ExposedPorts}}", NOEXPOSE)
    assert info.stdout.strip() == "null", info.stdout
    yield NOEXPOSE
    docker("image", "rm", NOEXPOSE)


def test_first_load_of_an_exposing_http_image_is_one_container(start):
    d = start()
    name = "promo-first"
    probe, managed = f"rax-probe-{name}-{d.pid}", f"rax-mcp-{name}-{d.pid}"
    t0 = time.time()
    r = load(d, HTTP, name=name)
    assert r["transport"] == "streamable-http"
    assert r["container"] == {"name": managed, "phase": "managed",
                              "remove_error": None}
    # One container was created, the probe, and it was renamed.
    assert created_since(d.did, t0) == [probe]
    assert renamed_since(d.did, t0) == [(probe, managed)]
    assert owned_by(d.did) == [managed]
    info = container(managed)
    assert info["State"]["Running"]
    assert info["Config"]["Labels"]["io.mcpd.phase"] == "probe"
    assert_loopback_only(managed, 8080)
    # Its docker run -i goes (mcpd ended it; it exits in its own time);
    # the server runs on.
    poll(lambda: docker_run_pids(probe) == [],
         what="the probe's docker run -i to exit")
    assert "renaming it " + managed in d.read_stderr()
    echo(d, name, HTTP, "promoted")
    # The first answer made the image remembered, as after a second start.
    assert memory(d)["images"][image_id(HTTP)]["port"] == 8080

    # Its output after the switch reaches the logs (docker logs --follow
    # --since the switch), and what the probe read is not read twice.
    ctl_ok(d, "call", name, "stderr", "lines=2", "text=promo-marker")
    wait_ctl_log(d, name, lambda ls: "promo-marker 1" in ls,
                 what="the stderr tool's lines")
    assert ctl_logs(d, name).count(
        "listening on http://127.0.0.1:8080/mcp") == 1

    u = ctl_ok(d, "unload", name)
    assert u["container_removed"] is True
    assert container(managed) is None and container(probe) is None
    assert owned_by(d.did) == []


def test_image_that_exposes_nothing_takes_two_containers(start, noexpose):
    d = start()
    name = "promo-none"
    probe, managed = f"rax-probe-{name}-{d.pid}", f"rax-mcp-{name}-{d.pid}"
    t0 = time.time()
    r = load(d, noexpose, name=name)
    assert r["container"]["name"] == managed
    assert created_since(d.did, t0) == [probe, managed]
    assert renamed_since(d.did, t0) == []
    assert owned_by(d.did) == [managed]
    assert container(managed)["Config"]["Labels"]["io.mcpd.phase"] == \
        "managed"
    assert_loopback_only(managed, 8080)
    echo(d, name, noexpose, "two")
    ctl_ok(d, "unload", name)
    assert owned_by(d.did) == []


def test_server_on_a_port_the_image_does_not_expose(start):
    # The last --http wins: the server listens on 9090, which the probe
    # does not publish (the image exposes 8080).
    d = start()
    name = "promo-other"
    probe, managed = f"rax-probe-{name}-{d.pid}", f"rax-mcp-{name}-{d.pid}"
    t0 = time.time()
    load(d, HTTP, ["--http", "9090"], name=name)
    assert created_since(d.did, t0) == [probe, managed]
    assert owned_by(d.did) == [managed]
    assert_loopback_only(managed, 9090)
    echo(d, name, HTTP, "other-port")
    ctl_ok(d, "unload", name)
    assert owned_by(d.did) == []


def test_stdio_image_that_exposes_a_port_stays_stdio(start):
    d = start()
    name = "promo-stdio"
    probe = f"rax-probe-{name}-{d.pid}"
    t0 = time.time()
    r = load(d, EVERYTHING, name=name)
    assert r["transport"] == "stdio"
    assert_container_row(ctl_row(d, name), probe, "probe")
    assert created_since(d.did, t0) == [probe]
    assert owned_by(d.did) == [probe]
    # The probe published the exposed port (on loopback) and is the server.
    assert_loopback_only(probe, 3001)
    assert len(docker_run_pids(probe)) == 1
    echo(d, name, EVERYTHING, "stdio-exposed")
    ctl_ok(d, "unload", name)
    assert owned_by(d.did) == []


def test_promoted_container_of_a_killed_mcpd_is_reaped(start):
    d1 = start()
    managed = f"rax-mcp-promo-kill-{d1.pid}"
    load(d1, HTTP, name="promo-kill")
    assert owned_by(d1.did) == [managed]
    os.kill(d1.pid, signal.SIGKILL)
    d1.proc.wait(timeout=10)
    assert container(managed)["State"]["Running"]

    d2 = start(base=d1.base)
    assert d2.did == d1.did and d2.pid != d1.pid
    # The next daemon removes it by the name it has now.
    load(d2, "mcpd-test/stdio", name="promo-wake")
    poll(lambda: not with_pid_label(d1.pid), timeout=30, interval=0.2,
         what=f"the promoted container of the killed mcpd ({managed}) to go")
    assert container(managed) is None
    assert owned_by(d2.did) == [f"rax-probe-promo-wake-{d2.pid}"]


def test_load_deadline_during_the_rename_removes_it_by_its_new_name(
        start, tmp_path):
    """A load whose deadline passes while `docker rename` runs fails; the
    removal waits for the rename and removes the container by the name it
    ends with. A fake docker (a script in front of the real one) makes the
    rename slow: a real engine cannot be made to (DESIGN 9). The rename
    waits until the test lets it go, once the deadline has passed; the
    deadline is long enough for the probe before it on a loaded machine."""
    from conftest import DOCKER
    fake = tmp_path / "docker"
    go = tmp_path / "rename-may-go"
    fake.write_text(
        "#!/bin/sh\n"
        f"if [ \"$1\" = rename ]; then\n"
        f"\twhile [ ! -e '{go}' ]; do sleep 0.05; done\n"
        "fi\n"
        f"exec '{DOCKER}' \"$@\"\n")
    fake.chmod(0o755)
    d = start(env={"MCPD_DOCKER": str(fake)})
    name = "promo-slow"
    probe, managed = f"rax-probe-{name}-{d.pid}", f"rax-mcp-{name}-{d.pid}"
    t0 = time.time()
    got = []
    loader = threading.Thread(target=lambda: got.append(d.ctl(
        "load", "--no-persist", "--timeout", "5000", "--name", name, HTTP,
        timeout=90)))
    loader.start()
    try:
        poll(lambda: "renaming it " + managed in d.read_stderr(),
             what="the rename to start")
        # The deadline counts from before the rename began: 5 s after it
        # began, it has passed (a wait that a slow machine only lengthens).
        time.sleep(5)
    finally:
        go.touch()
        loader.join()
    (r,) = got
    assert r.rc == 1, r
    assert "deadline of 5000 ms" in r.json["message"], r
    poll(lambda: owned_by(d.did) == [], timeout=30, interval=0.2,
         what=f"{managed} to be removed after its rename")
    assert renamed_since(d.did, t0) == [(probe, managed)]
    assert container(managed) is None and container(probe) is None


def test_a_connection_lost_during_a_rename_restarts_after_it(start,
                                                            tmp_path):
    """The container of a stdio server dies while `docker rename` of a
    rename runs: once the rename has answered, the server restarts under
    its new name (before, it stayed listed ready with no connection, and
    every call failed). A fake docker (a script in front of the real one)
    holds the rename until the test lets it go: a real engine cannot be
    made to hold one (DESIGN 9)."""
    from conftest import DOCKER
    fake = tmp_path / "docker"
    held, go = tmp_path / "rename-held", tmp_path / "rename-may-go"
    fake.write_text(
        "#!/bin/sh\n"
        f"if [ \"$1\" = rename ]; then\n"
        f"\ttouch '{held}'\n"
        f"\twhile [ ! -e '{go}' ]; do sleep 0.05; done\n"
        "fi\n"
        f"exec '{DOCKER}' \"$@\"\n")
    fake.chmod(0o755)
    d = start(env={"MCPD_DOCKER": str(fake)})
    load(d, "mcpd-test/stdio", name="lost")
    before = ctl_row(d, "lost")
    got = []
    renamer = threading.Thread(target=lambda: got.append(d.ctl(
        "rename", "lost", "found", timeout=90)))
    renamer.start()
    try:
        poll(held.exists, what="the docker rename to start")
        docker("kill", f"rax-probe-lost-{d.pid}")
        poll(lambda: "connection lost" in d.read_stderr(),
             what="mcpd to see the connection die")
    finally:
        go.touch()
        renamer.join()
    (r,) = got
    assert r.rc == 0, r
    row = d.wait_row("found", lambda x: x["state"] == "ready" and
                     x["restarts"] == 1, what="found to restart")
    assert row["generation"] > before["generation"], row
    echo(d, "found", "mcpd-test/stdio", "after the rename")
    ctl_ok(d, "unload", "found")
    assert owned_by(d.did) == []


def test_stdio_image_is_remembered_and_not_inspected_again(start):
    d = start("-v")
    ref = f"{EVERYTHING}:latest"
    looked = f"image {ref}: 1 exposed TCP port(s) to publish"
    load(d, EVERYTHING, name="promo-s1")
    assert ctl_row(d, "promo-s1")["transport"] == "stdio"
    assert list(memory(d)["stdio"]) == [ref]
    assert d.read_stderr().count(looked) == 1
    ctl_ok(d, "unload", "promo-s1")

    # Known as stdio: no docker image inspect, and nothing is published.
    before = (d.state / "image-transports.json").read_bytes()
    load(d, EVERYTHING, name="promo-s2")
    probe = f"rax-probe-promo-s2-{d.pid}"
    assert_container_row(ctl_row(d, "promo-s2"), probe, "probe")
    assert d.read_stderr().count(looked) == 1
    assert "exposed TCP port" not in d.read_stderr().split(
        "promo-s2: connecting")[1]
    assert container(probe)["HostConfig"]["PortBindings"] in ({}, None)
    echo(d, "promo-s2", EVERYTHING, "known-stdio")
    assert (d.state / "image-transports.json").read_bytes() == before
    ctl_ok(d, "unload", "promo-s2")
    assert owned_by(d.did) == []
