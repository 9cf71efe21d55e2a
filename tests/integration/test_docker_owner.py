# SPDX-License-Identifier: ISC
"""Containers mcpd does not own, and docker commands that cannot start, on
the real Docker engine (DESIGN.md section 5, issue 10 items 2, 3 and 7).

- A container name someone else holds (another owner's labels, no mcpd
  labels, another agent's) fails the load as `conflict`, naming the
  holder, and mcpd never removes that container.
- The reap at start removes this owner's containers of any other run of
  mcpd (io.mcpd.instance), the same daemon pid included.
- `unload IMAGE` finds the server loaded from IMAGE:latest.
- A docker command that cannot start (no descriptors left for its pipes,
  or a docker path that cannot be executed) is an error on its path (run,
  rm, port, logs, the reap), never a crash, and leaves nothing behind.
- mcpd/status says whether the engine answers.

Faults are made for real: a low RLIMIT_NOFILE on mcpd (lowered with
connections held open to use up descriptors at the right moment), and
MCPD_DOCKER as a symlink moved between the real CLI and things that
cannot be executed. Only the port and logs cases use a script in front of
the real CLI (see their docstring)."""

import json
import os
import resource
import socket
import subprocess
import time

import pytest

from conftest import (CONFLICT, DOCKER, NOT_FOUND, UNAVAILABLE, find_procs,
                      is_alive, poll)
from test_docker import container, docker, owned_by


# --------------------------------------------------------------------------
# The docker CLI and containers (test_docker.py's helpers)

def helper_pids(cname):
    """Any process (docker run, logs, ...) naming container cname."""
    return [p for p in find_procs(cname) if p != os.getpid()]


@pytest.fixture(scope="module", autouse=True)
def engine(docker_images):
    return docker_images


@pytest.fixture
def made():
    """Names of containers a test creates by hand: removed at teardown,
    also when the test failed (the container_guard pattern)."""
    names = []
    yield names
    if names:
        docker("rm", "-f", *names)


def status_when_a_slot_is_free(d):
    """mcpd/status on d's shared client. With --max-clients fitted down to
    1 (a tiny RLIMIT_NOFILE), the connection that Daemon.start() made to
    see mcpd listen may still hold the slot for a moment: try again."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return d.rpc.result("mcpd/status", timeout=60)
        except ConnectionError:
            d._rpc.close()
            d._rpc = None
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


@pytest.fixture
def start(container_guard, mcpd_factory):
    """Starts an mcpd whose containers are removed after it stopped (each
    test asserts that its own are gone)."""
    def go(*args, env=None, base=None, preexec_fn=None):
        d = mcpd_factory(*args, env=env, base=base, preexec_fn=preexec_fn)
        d.did = status_when_a_slot_is_free(d)["did"]
        container_guard.append(d.did)
        return d
    return go


def load_args(image, name=None, args=()):
    argv = ["load", "--no-persist"]
    if name is not None:
        argv += ["--name", name]
    argv.append(image)
    if args:
        argv += ["--"] + list(args)
    return argv


def load(d, image, name=None):
    r = d.ctl(*load_args(image, name), timeout=120)
    assert r.rc == 0, r
    return r.json


def load_fails(d, image, name=None, args=()):
    r = d.ctl(*load_args(image, name, args), timeout=120)
    assert r.rc == 1 and r.json is not None and "code" in r.json, r
    return r.json


def ctl_row(d, name):
    rows = [r for r in d.ctl("list").json["servers"] if r["name"] == name]
    return rows[0] if rows else None


def assert_alive(d):
    assert d.proc.poll() is None, f"mcpd died: {d.read_stderr()[-3000:]}"
    assert d.rpc.result("mcpd/list")["servers"] is not None


def instance_of(d):
    """This run's io.mcpd.instance, read from a container it started."""
    load(d, "mcpd-test/stdio", name="peek")
    labels = container(f"rax-probe-peek-{d.pid}")["Config"]["Labels"]
    assert d.ctl("unload", "peek").rc == 0
    assert labels["io.mcpd.daemon-pid"] == str(d.pid)
    assert len(labels["io.mcpd.instance"]) >= 16
    return labels["io.mcpd.instance"]


def create(made, name, labels, image="mcpd-test/stdio"):
    """docker create NAME with labels; its id."""
    argv = ["create", "--name", name]
    for k, v in labels.items():
        argv += ["--label", f"{k}={v}"]
    p = docker(*argv, image)
    assert p.returncode == 0, p.stderr
    made.append(name)
    return p.stdout.strip()


# --------------------------------------------------------------------------
# 1. A name someone else holds is a conflict, and is left alone

HOLDERS = {
    "other-owner": ("probe", lambda d, inst: {
        "io.mcpd.owner": "did:key:other", "io.mcpd.daemon-pid": str(d.pid)},
        "a container of another owner (io.mcpd.owner=did:key:other)"),
    "no-labels": ("probe", lambda d, inst: {},
                  "a container with no mcpd labels"),
    "other-agent": ("probe", lambda d, inst: {
        "io.mcpd.owner": d.did, "io.mcpd.daemon-pid": str(d.pid),
        "io.mcpd.instance": inst, "io.mcpd.agent": "alice",
        "io.mcpd.server": "held"},
        "io.mcpd.agent=alice"),
    "managed-other-owner": ("mcp", lambda d, inst: {
        "io.mcpd.owner": "did:key:other"},
        "a container of another owner (io.mcpd.owner=did:key:other)"),
}


@pytest.mark.parametrize("case", list(HOLDERS))
def test_name_held_by_someone_else_is_a_conflict(start, made, case):
    phase, labels, holder = HOLDERS[case]
    d = start()
    inst = instance_of(d) if case == "other-agent" else None
    cname = f"rax-{phase}-held-{d.pid}"
    held_id = create(made, cname, labels(d, inst))
    image = "mcpd-test/http" if phase == "mcp" else "mcpd-test/stdio"

    e = load_fails(d, image, name="held")
    assert e["code"] == CONFLICT, e
    assert e["data"]["kind"] == "conflict", e
    assert cname in e["message"], e
    assert holder in e["message"], e
    assert f"docker rm -f {cname}" in e["message"], e
    assert "--name" in e["message"], e
    # Never removed, never started: it is the same container, as it was.
    info = container(cname)
    assert info is not None and info["Id"] == held_id, info
    assert not info["State"]["Running"]
    assert ctl_row(d, "held") is None
    assert_alive(d)
    assert [p for p in helper_pids(cname) if is_alive(p)] == []
    if phase == "mcp":
        # The probe it started first is gone; the managed name is not ours.
        assert container(f"rax-probe-held-{d.pid}") is None

    # Once its owner removed it, the name is free and the load works.
    assert docker("rm", "-f", cname).returncode == 0
    r = load(d, image, name="held")
    assert r["container"]["name"] == cname
    assert container(cname)["Config"]["Labels"]["io.mcpd.owner"] == d.did
    assert d.ctl("unload", "held").rc == 0
    assert container(cname) is None


# --------------------------------------------------------------------------
# 2. unload IMAGE finds the server of IMAGE:latest

def test_unload_by_image_without_tag(start):
    d = start()
    r = load(d, "mcpd-test/stdio", name="notstdio")
    assert r["image"] == "mcpd-test/stdio:latest"
    cname = f"rax-probe-notstdio-{d.pid}"
    # A name that is no server's stays not found.
    r = d.ctl("unload", "mcpd-test/other")
    assert r.rc == 1 and r.json["code"] == NOT_FOUND, r
    r = d.ctl("unload", "mcpd-test/stdio")
    assert r.rc == 0, r
    assert r.json["name"] == "notstdio" and r.json["container_removed"]
    assert container(cname) is None
    assert ctl_row(d, "notstdio") is None


# --------------------------------------------------------------------------
# 3. docker spawns that fail: descriptors used up


def low_nofile(n):
    """Soft and hard limits of n: mcpd raises its soft limit to the hard
    one at start, so both must be low for it to run short."""
    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return set_limit


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Starved:
    """Lowers a running mcpd's soft RLIMIT_NOFILE to `free` descriptors
    above what it holds: too few for a spawn's pipes (it needs 8). Control
    connections cannot be used to fill its table: mcpd fits --max-clients
    well under its limit. The soft limit is restored on exit (the hard one
    is never touched: this sandbox has no CAP_SYS_RESOURCE to raise it)."""

    def __init__(self, d, free=3):
        self.pid = d.pid
        self.saved = resource.prlimit(self.pid, resource.RLIMIT_NOFILE)
        n = fd_count(self.pid) + free
        resource.prlimit(self.pid, resource.RLIMIT_NOFILE,
                         (n, self.saved[1]))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        resource.prlimit(self.pid, resource.RLIMIT_NOFILE, self.saved)


def test_run_fails_cleanly_without_descriptors(start):
    d = start()
    d.rpc.result("mcpd/status")
    with Starved(d):
        e = d.rpc.error("mcpd/load", {
                "target": "mcpd-test/stdio", "name": "nofd",
                "persist": False}, timeout=60)
        assert e["code"] == UNAVAILABLE, e
        assert e["data"]["kind"] == "unavailable", e
        assert "cannot make pipes for docker: Too many open files" in \
            e["message"], e
        assert_alive(d)
        # The status check cannot run docker either: it says so.
        st = d.rpc.result("mcpd/status", timeout=60)["docker"]
        assert st["engine"] == "not answering", st
        assert "Too many open files" in st["error"], st
    assert container(f"rax-probe-nofd-{d.pid}") is None
    assert ctl_row(d, "nofd") is None
    assert owned_by(d.did) == []
    # The daemon is fine once descriptors are free again.
    load(d, "mcpd-test/stdio", name="nofd")
    assert d.ctl("unload", "nofd").rc == 0


def test_rm_fails_cleanly_without_descriptors(start):
    d = start()
    load(d, "mcpd-test/stdio", name="keep")
    cname = f"rax-probe-keep-{d.pid}"
    with Starved(d):
        e = d.rpc.error("mcpd/unload", {"target": "keep"}, timeout=60)
        assert e["code"] == UNAVAILABLE, e
        assert e["data"]["container"] == cname, e
        assert "cannot make pipes for docker: Too many open files" in \
            e["data"]["error"], e
        assert_alive(d)
        row = d.rpc.result("mcpd/list")["servers"][0]
        assert row["state"] == "failed", row
        assert "Too many open files" in row["container"]["remove_error"]
        assert container(cname) is not None
    r = d.ctl("unload", "keep")
    assert r.rc == 0 and r.json["container_removed"] is True, r
    assert container(cname) is None
    poll(lambda: not [p for p in helper_pids(cname) if is_alive(p)],
         what=f"docker processes of {cname} to end")


def leftover_of_killed_daemon(start):
    """A daemon that loaded a container and was killed: its base (with
    the marker containers.pid) and the container it left."""
    d1 = start()
    load(d1, "mcpd-test/stdio", name="old")
    old = f"rax-probe-old-{d1.pid}"
    d1.proc.kill()
    d1.proc.wait(timeout=10)
    assert container(old) is not None
    assert (d1.state / "containers.pid").exists()
    return d1, old


def same_pid_other_instance(made, d):
    """A container of d's owner and pid, of another run (instance)."""
    name = f"rax-probe-reboot-{d.pid}"
    create(made, name, {"io.mcpd.owner": d.did,
                        "io.mcpd.daemon-pid": str(d.pid),
                        "io.mcpd.instance": "0123456789abcdef",
                        "io.mcpd.agent": "default",
                        "io.mcpd.server": "reboot"})
    return name


def test_reap_fails_cleanly_when_descriptors_run_out(start):
    """A reap at start that cannot spawn docker says so, keeps the daemon
    serving and removes nothing. (mcpd raises its soft limit to the hard
    one at start, so both are low here, and the hard one cannot be raised
    again without CAP_SYS_RESOURCE: that the retried reap succeeds is shown
    by the exec-failure case below.)"""
    d1, old = leftover_of_killed_daemon(start)
    # Just enough for mcpd to start and take a client, not for a spawn.
    idle = fd_count(start().pid)
    d2 = start(base=d1.base, preexec_fn=low_nofile(idle + 3))
    assert d2.did == d1.did
    msg = ("cannot list containers of an earlier mcpd: cannot make pipes "
           "for docker: Too many open files; trying again in 10 s")
    poll(lambda: msg in d2.read_stderr(), timeout=10, what=msg)
    assert container(old) is not None
    # Still serving (on the one connection its limit leaves room for).
    assert d2.proc.poll() is None
    assert d2.rpc.result("mcpd/status")["pid"] == d2.pid


# --------------------------------------------------------------------------
# 4. docker spawns that fail: a docker path that cannot be executed

class DockerPath:
    """MCPD_DOCKER as a symlink, moved (atomically) between the real CLI,
    a file that is not executable, a directory, and a script whose
    interpreter does not exist (it passes mcpd's check of the path, and
    exec fails)."""

    def __init__(self, tmp_path):
        self.dir = tmp_path
        self.path = tmp_path / "docker"
        self.targets = {"real": DOCKER,
                        "noexec": tmp_path / "noexec",
                        "dir": tmp_path / "adir",
                        "badinterp": tmp_path / "badinterp"}
        self.targets["noexec"].write_text("#!/bin/sh\nexit 0\n")
        self.targets["noexec"].chmod(0o644)
        self.targets["dir"].mkdir()
        self.targets["badinterp"].write_text("#!/nonexistent/sh\n")
        self.targets["badinterp"].chmod(0o755)
        self.point("real")

    def point(self, what):
        tmp = self.dir / "docker.new"
        target = self.targets.get(what, what)
        os.symlink(str(target), tmp)
        os.replace(tmp, self.path)

    def env(self):
        return {"MCPD_DOCKER": str(self.path)}


def test_run_fails_cleanly_when_docker_cannot_exec(start, tmp_path):
    dp = DockerPath(tmp_path)
    d = start(env=dp.env())
    dp.point("badinterp")
    e = load_fails(d, "mcpd-test/stdio", name="noexec")
    assert e["code"] == UNAVAILABLE and e["data"]["kind"] == "unavailable"
    assert f"cannot run {dp.path}: No such file or directory" in \
        e["message"], e
    assert_alive(d)
    st = d.ctl("status").json["docker"]
    assert st["available"] is True and st["engine"] == "not answering"
    assert f"cannot run {dp.path}" in st["error"], st
    # Not executable at all: refused before anything runs.
    for what in ("noexec", "dir"):
        dp.point(what)
        e = load_fails(d, "mcpd-test/stdio", name="noexec")
        assert e["code"] == UNAVAILABLE, e
        assert f"'{dp.path}' is not an executable file" in e["message"], e
        st = d.ctl("status").json["docker"]
        assert st["available"] is False and st["cli"] is None, st
    assert_alive(d)
    assert container(f"rax-probe-noexec-{d.pid}") is None
    assert d.ctl("list").json["servers"] == []
    dp.point("real")


@pytest.mark.parametrize("what", ["noexec", "dir"])
def test_rm_fails_cleanly_when_docker_cannot_exec(start, tmp_path, what):
    dp = DockerPath(tmp_path)
    d = start(env=dp.env())
    load(d, "mcpd-test/stdio", name="keep")
    cname = f"rax-probe-keep-{d.pid}"
    dp.point(what)
    try:
        r = d.ctl("unload", "keep")
        assert r.rc == 1 and r.json["code"] == UNAVAILABLE, r
        assert r.json["data"]["container"] == cname
        assert f"cannot run {dp.path}: Permission denied" in \
            r.json["data"]["error"], r
        assert_alive(d)
        assert ctl_row(d, "keep")["state"] == "failed"
        assert container(cname) is not None     # docker ps -a has it
    finally:
        dp.point("real")
    r = d.ctl("unload", "keep")
    assert r.rc == 0 and r.json["container_removed"] is True, r
    assert container(cname) is None


def breaking_docker(dp, after):
    """A script in front of the real CLI that, once `docker <after>` ran,
    points MCPD_DOCKER at a file that cannot be executed. A script is
    needed because the break must come between two commands mcpd runs on
    its own (create, start, then container inspect, then logs); the failure itself is real
    (exec of a non-executable file)."""
    script = dp.dir / "breaker"
    noexec = dp.targets["noexec"]
    script.write_text(
        "#!/bin/sh\n"
        f"'{DOCKER}' \"$@\"\n"
        "rc=$?\n"
        f"if [ \"$1 $2\" = '{after}' ] || [ \"$1\" = '{after}' ]; then\n"
        f"\tln -s '{noexec}' '{dp.dir}/docker.tmp' && "
        f"mv -T '{dp.dir}/docker.tmp' '{dp.path}'\n"
        "fi\n"
        "exit $rc\n")
    script.chmod(0o755)
    dp.point(script)


@pytest.mark.parametrize("after,what", [
    ("start", "cannot read the published port of {c}"),
    ("container inspect", "cannot follow container {c}"),
])
def test_port_and_logs_fail_cleanly_when_docker_cannot_exec(
        start, tmp_path, after, what):
    """docker container inspect (the published port, after docker start)
    and docker logs --follow (after that inspect) cannot be run: the load fails saying so, the managed
    container cannot be removed either (the same docker), stays listed,
    and goes once docker can run again. See breaking_docker for the
    script."""
    dp = DockerPath(tmp_path)
    d = start(env=dp.env())
    breaking_docker(dp, after)
    cname = f"rax-mcp-web-{d.pid}"
    try:
        # On 9090, which the image does not expose: docker create and
        # start make the managed one (a promoted probe has neither).
        e = load_fails(d, "mcpd-test/http", name="web",
                       args=["--http", "9090"])
        assert e["code"] == UNAVAILABLE, e
        assert e["data"]["kind"] == "unavailable", e
        assert (what.format(c=cname) +
                f": cannot run {dp.path}: Permission denied") in \
            e["message"], e
        assert f"its container {cname} could not be removed" in \
            e["message"], e
        assert_alive(d)
        assert container(cname) is not None
        assert ctl_row(d, "web")["state"] == "failed"
    finally:
        dp.point("real")
    r = d.ctl("unload", "web")
    assert r.rc == 0, r
    assert container(cname) is None
    assert container(f"rax-probe-web-{d.pid}") is None
    poll(lambda: not [p for p in helper_pids(cname) if is_alive(p)],
         what=f"docker processes of {cname} to end")


def test_reap_retries_when_docker_cannot_exec_and_spares_nothing_stale(
        start, made, tmp_path):
    """The reap at start selects this owner's containers of other runs by
    io.mcpd.instance: one of the same pid (a reboot reuses pids) goes, the
    new run's own stays, another owner's is never touched."""
    d1, old = leftover_of_killed_daemon(start)
    dp = DockerPath(tmp_path)
    dp.point("badinterp")
    d2 = start(base=d1.base, env=dp.env())
    msg = (f"cannot list containers of an earlier mcpd: cannot run "
           f"{dp.path}: No such file or directory; trying again in 10 s")
    poll(lambda: msg in d2.read_stderr(), timeout=10, what=msg)
    assert_alive(d2)
    reboot = same_pid_other_instance(made, d2)
    stranger = f"rax-probe-stranger-{d2.pid}"
    create(made, stranger, {"io.mcpd.owner": "did:key:other",
                            "io.mcpd.daemon-pid": str(d2.pid)})
    dp.point("real")
    r = load(d2, "mcpd-test/stdio", name="own")
    own = r["container"]["name"]
    poll(lambda: container(old) is None and container(reboot) is None,
         timeout=30, interval=0.5, what="the retried reap")
    assert container(own)["State"]["Running"]
    assert container(stranger) is not None
    assert d2.ctl("unload", "own").rc == 0


# --------------------------------------------------------------------------
# 5. mcpctl status: does the engine answer?

def test_status_says_whether_the_engine_answers(start, tmp_path):
    d = start()
    want = docker("version", "--format", "{{.Server.Version}}").stdout
    st = d.ctl("status").json["docker"]
    assert st["engine"] == "answers", st
    assert st["version"] == want.strip() and st["error"] is None, st
    assert st["available"] is True and os.path.isabs(st["cli"]), st
    text = d.ctl("status", is_json=False).out
    assert f"engine {want.strip()} answers" in text, text

    d2 = start(env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    st = d2.ctl("status").json["docker"]
    assert st["available"] is True and st["engine"] == "not answering", st
    assert st["version"] is None, st
    assert "/nonexistent/docker.sock" in st["error"], st
    text = d2.ctl("status", is_json=False).out
    assert "engine not answering: " in text, text

    d3 = start(env={"MCPD_DOCKER": "/nonexistent/docker"})
    st = d3.ctl("status").json["docker"]
    assert st["available"] is False and st["cli"] is None, st
    assert st["engine"] == "not answering", st
    assert "not installed" in st["error"], st
    text = d3.ctl("status", is_json=False).out
    assert "docker: unavailable (/nonexistent/docker): " in text, text
