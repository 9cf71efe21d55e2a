# SPDX-License-Identifier: ISC
"""Defects found by review (issue 21), each shown on a real mcpd: a secret
whose value holds "$(" text reaches a server (a process and a container)
expanded exactly once, and mcpd survives it and restores the server at its
next start; a server's shim keeps no descriptor of mcpd when close_range
fails (a seccomp filter makes it fail: a kernel before 5.9, or a container
runtime's filter, cannot be had on demand); `mcpd -s PATH` refuses a PATH
that is not a socket and leaves the file as it was; an https URL whose
address is written as inet_aton reads it ("127.1") has its certificate
checked against that address (OpenSSL could not take the text, and the
unchecked failure meant no check at all). The TLS test reuses
test_remote.py's CA, socat front and server-everything."""

import ctypes
import json
import os
import re
import subprocess

import pytest

from conftest import (DOCKER, MCPCTL, MCPD, TESTSERVER, child_env,
                      owner_containers, proc_stat)
from test_remote import Pki, everything, tls_front  # noqa: F401 - fixture


# --------------------------------------------------------------------------
# Helpers

def secret_set(d, name, value):
    p = subprocess.run([str(MCPCTL), "-s", str(d.sock), "secret", "set",
                        name], input=value.encode(), capture_output=True,
                       timeout=60, env=d.env)
    assert p.returncode == 0, p.stderr


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.decode().split("=", 1)
                    for kv in f.read().split(b"\0") if b"=" in kv)


def container_env(name):
    p = subprocess.run([DOCKER, "container", "inspect", "--format",
                        "{{json .Config.Env}}", name],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return dict(kv.split("=", 1) for kv in json.loads(p.stdout))


# Secrets whose values hold "$(" text: one that names a secret that does
# not exist (a second expansion fails: mcpd used to die with fatalx), one
# that names a secret that does (a second expansion would replace it).
LITERALS = {
    "dangling": "x$(secret.missing)y",
    "pointer": "$(secret.target)",
    "target": "expanded-twice",
}
ENV = [("DANGLING", "$(secret.dangling)"), ("POINTER", "$(secret.pointer)")]
WANT = {"DANGLING": "x$(secret.missing)y", "POINTER": "$(secret.target)"}


def set_literals(d):
    for name, value in LITERALS.items():
        secret_set(d, name, value)


def env_args():
    out = []
    for k, v in ENV:
        out += ["--env", f"{k}={v}"]
    return out


# --------------------------------------------------------------------------
# 1. A value is expanded once, at each start; mcpd never dies of it

@pytest.fixture
def keyed(mcpd_factory, tmp_path):
    """Starts daemons whose secret key is the test's own."""
    key = tmp_path / "keys" / "secrets.key"

    def start(base=None):
        return mcpd_factory("--secrets-key", key, base=base)
    return start


def test_process_sees_secret_expanded_once_and_after_restart(keyed):
    # The second expansion was on the container path only (probe_new's
    # spec_copy): this one guards the process path, which had none.
    d = keyed()
    set_literals(d)
    r = d.ctl("load", "--name", "ts", *env_args(), "--", TESTSERVER)
    assert r.rc == 0, r
    env = environ_of(d.row("ts")["pid"])
    assert {k: env[k] for k in WANT} == WANT

    # The saved server comes back at the next start, the same once.
    assert d.stop() == []
    d2 = keyed(base=d.base)
    row = d2.wait_row("ts", lambda r: r["state"] == "ready",
                      what="ts to be restored")
    env = environ_of(row["pid"])
    assert {k: env[k] for k in WANT} == WANT
    assert d2.proc.poll() is None


def test_container_sees_secret_expanded_once_and_after_restart(
        keyed, docker_images, container_guard):
    d = keyed()
    did = d.rpc.result("mcpd/status")["did"]
    container_guard.append(did)
    set_literals(d)
    r = d.ctl("load", "--name", "sec", *env_args(), "mcpd-test/stdio",
              timeout=120)
    # Before the fix mcpd died here: spec_copy expanded the resolved
    # values again, and $(secret.missing) was a fatalx.
    assert r.rc == 0, (r, d.read_stderr())
    env = container_env(f"rax-probe-sec-{d.pid}")
    assert {k: env[k] for k in WANT} == WANT
    got = d.ctl("call", "sec", "echo", "message=hi").json
    assert got["structuredContent"] == {"message": "hi"}, got

    assert d.stop() == []
    d2 = keyed(base=d.base)
    d2.wait_row("sec", lambda r: r["state"] == "ready", timeout=120,
                what="sec to be restored")
    env = container_env(f"rax-probe-sec-{d2.pid}")
    assert {k: env[k] for k in WANT} == WANT
    assert d2.proc.poll() is None
    assert d2.stop() == []
    assert owner_containers(did) == []


# --------------------------------------------------------------------------
# 2. The shim keeps no descriptor of mcpd when close_range fails

NR_CLOSE_RANGE = 436            # x86_64 and aarch64 alike (asm-generic)
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte),
                ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort),
                ("filter", ctypes.POINTER(SockFilter))]


def close_range_fails(errno_value=38):
    """A preexec_fn: a seccomp filter under which close_range(2) fails
    with errno_value (ENOSYS: what a kernel before 5.9 says, and what
    container runtimes' filters said for syscalls they did not know)."""
    arch = AUDIT_ARCH[os.uname().machine]
    prog = (SockFilter * 6)(
        SockFilter(0x20, 0, 0, 4),                  # A = arch
        SockFilter(0x15, 0, 3, arch),               # other arch: allow
        SockFilter(0x20, 0, 0, 0),                  # A = nr
        SockFilter(0x15, 0, 1, NR_CLOSE_RANGE),
        SockFilter(0x06, 0, 0, 0x00050000 | errno_value),   # ERRNO
        SockFilter(0x06, 0, 0, 0x7FFF0000))         # ALLOW
    fprog = SockFprog(len(prog), prog)
    libc = ctypes.CDLL(None, use_errno=True)

    def install():
        if libc.prctl(38, 1, 0, 0, 0) != 0:         # PR_SET_NO_NEW_PRIVS
            os._exit(91)
        if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
            os._exit(92)                            # PR_SET_SECCOMP
    return install


def test_close_range_under_the_filter_fails():
    """The fault the next test relies on is real."""
    p = subprocess.run(
        ["python3", "-c",
         "import ctypes; c = ctypes.CDLL(None, use_errno=True); "
         "print(c.syscall(436, 1000, 1000, 0), ctypes.get_errno())"],
        preexec_fn=close_range_fails(), capture_output=True, text=True,
        timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "-1 38\n"


def fds_of(pid):
    return sorted(int(n) for n in os.listdir(f"/proc/{pid}/fd"))


def test_shim_keeps_nothing_when_close_range_fails(mcpd_factory):
    d = mcpd_factory(preexec_fn=close_range_fails())
    # mcpd itself holds descriptors beyond 0-2 (the socket, the loop...).
    assert len(fds_of(d.pid)) > 3
    # Before the fix the shim kept every one of them, the error pipe
    # among them, and mcpd waited for its end: the load never finished.
    d.load_testserver("ts", timeout=30)
    server = d.row("ts")["pid"]
    shim = proc_stat(server)[1]
    assert shim != d.pid and proc_stat(shim)[1] == d.pid
    assert fds_of(shim) == []
    assert fds_of(server) == [0, 1, 2]
    assert d.call("ts", "echo", {"message": "hi"})["structuredContent"] == \
        {"message": "hi"}


# --------------------------------------------------------------------------
# 3. -s PATH: a file that is not a socket is refused and left alone

@pytest.mark.parametrize("kind", ["file", "directory"])
def test_socket_path_that_is_not_a_socket_is_refused(tmp_path, kind):
    path = tmp_path / "mcpd.sock"
    if kind == "file":
        path.write_text("the user's notes\n")
    else:
        path.mkdir()
        (path / "inside").write_text("kept\n")
    before = os.lstat(path)
    p = subprocess.run([str(MCPD), "-d", "-s", str(path), "-S",
                        str(tmp_path / "state")],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=30, env=child_env())
    assert p.returncode == 1, p
    assert re.fullmatch(
        r"\d\d:\d\d:\d\d\.\d{3} mcpd: " + re.escape(
            f"{path} exists and is not a socket; mcpd leaves it as it is: "
            f"remove it or give another path with -s") + "\n",
        p.stderr), p.stderr
    after = os.lstat(path)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    if kind == "file":
        assert path.read_text() == "the user's notes\n"
    else:
        assert (path / "inside").read_text() == "kept\n"


# --------------------------------------------------------------------------
# 4. The certificate of an address literal is checked against the address

@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return Pki(tmp_path_factory.mktemp("pki"))


def test_short_ipv4_literal_is_checked(mcpd_factory, peers, everything, pki):
    """127.1 is 127.0.0.1 to inet_aton (and so to mcpd's policy), but not
    to OpenSSL's X509_VERIFY_PARAM_set1_ip_asc, which failed unchecked:
    a certificate for any name was taken."""
    wrong = tls_front(peers, pki.wrong, everything.port)
    # The Host mcpd sends is the URL's, 127.1:PORT. server-everything's
    # HTTP layer (@hono/node-server) takes a short literal only with a
    # port its pattern knows (up to 59999) and answers 400 with no body
    # otherwise: the kernel's pick is up to 60999, and this failed once in
    # about thirty runs until the port was kept under 60000.
    good = tls_front(peers, pki.good, everything.port, below=60000)
    d = mcpd_factory("--ca-file", pki.ca)
    r = d.ctl("load", "--no-persist", "--allow-local", "--timeout", "10000",
              "--name", "wrong", f"https://127.1:{wrong}/mcp")
    assert r.rc == 1, r
    assert r.json["data"]["kind"] == "unavailable", r
    assert "TLS certificate rejected: IP address mismatch" in \
        r.json["message"], r
    assert d.list() == []
    # The leaf that names 127.0.0.1 passes, written either way.
    for name, host in (("short", "127.1"), ("long", "127.0.0.1")):
        r = d.ctl("load", "--no-persist", "--allow-local", "--name", name,
                  f"https://{host}:{good}/mcp")
        assert r.rc == 0, r
    assert {row["name"]: row["state"] for row in d.list()} == {
        "short": "ready", "long": "ready"}
