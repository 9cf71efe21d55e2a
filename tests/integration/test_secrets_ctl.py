# SPDX-License-Identifier: ISC
"""mcpctl secret: set (the value from stdin, or typed at a terminal with
echo off, never from argv), list (names only, and where the key comes
from), rm; names checked before the daemon is asked; and a value that never
shows in what mcpctl prints (list, status, logs, load) nor in any
process's argv, while $(secret.NAME) gives it to a server."""

import json
import os
import pty
import select
import signal
import subprocess
import termios
import time

import pytest

from conftest import (MCPCTL, TESTSERVER, all_procs, child_env, cmdline,
                      poll, run_ctl)


@pytest.fixture
def mcpd(mcpd_factory, tmp_path):
    """A daemon whose secret key is the test's own, never $HOME's."""
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key")
    d.key = tmp_path / "keys" / "secrets.key"
    return d


def secret_set(sock, name, data, *flags, is_json=False):
    """mcpctl secret set NAME with data on stdin: (rc, stdout, stderr)."""
    argv = [str(MCPCTL), "-s", str(sock)] + (["--json"] if is_json else [])
    argv += list(flags) + ["secret", "set", name]
    p = subprocess.run(argv, input=data, capture_output=True, timeout=60,
                       env=child_env())
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def argv_holding(text):
    return [(p, cmdline(p)) for p in all_procs()
            if any(text in a for a in (cmdline(p) or []))]


def environ_of(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0")
                    if b"=" in kv)


def test_set_list_rm(mcpd):
    rc, out, err = secret_set(mcpd.sock, "gh_token", b"ghp-value-1\n")
    assert rc == 0, err
    assert out == "set secret gh_token; use it as $(secret.gh_token)\n"
    rc, out, err = secret_set(mcpd.sock, "gh_token", b"ghp-value-2")
    assert rc == 0 and out.startswith("replaced secret gh_token;"), err
    rc, out, err = secret_set(mcpd.sock, "api.key_2", b"v3", is_json=True)
    assert rc == 0, err
    assert json.loads(out) == {"name": "api.key_2", "replaced": False}

    r = mcpd.ctl("secret", "list", is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines() == ["api.key_2", "gh_token",
                                  f"key: {mcpd.key}"]
    r = mcpd.ctl("secret", "list")
    assert r.rc == 0 and r.json == {"names": ["api.key_2", "gh_token"],
                                    "key_source": str(mcpd.key),
                                    "hidden": 0}, r
    assert "value" not in r.out

    r = mcpd.ctl("secret", "rm", "gh_token", is_json=False)
    assert r.rc == 0 and r.out == "removed secret gh_token\n", r
    r = mcpd.ctl("secret", "rm", "gh_token", is_json=False)
    assert r.rc == 0 and "no secret gh_token" in r.out, r
    r = mcpd.ctl("secret", "rm", "gh_token")
    assert r.json == {"name": "gh_token", "removed": False,
                      "used_by": []}, r
    assert mcpd.ctl("secret", "list").json["names"] == ["api.key_2"]


def test_empty_list_says_how_to_set(mcpd):
    r = mcpd.ctl("secret", "list", is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == \
        "no secrets; add one with 'mcpctl secret set NAME'"


def test_value_reaches_the_server_and_nothing_else(mcpd, tmp_path):
    value = "s3cr3t-" + os.urandom(12).hex()
    rc, out, err = secret_set(mcpd.sock, "tok", (value + "\n").encode())
    assert rc == 0, err
    assert value not in out + err
    # One trailing newline goes; another one is part of the value.
    rc, _, err = secret_set(mcpd.sock, "two_lines", b"a\nb\n\n")
    assert rc == 0, err

    r = mcpd.ctl("load", "--name", "ts", "--env", "TOKEN=$(secret.tok)",
                 "--env", "TWO=$(secret.two_lines)", "--", TESTSERVER,
                 is_json=False)
    assert r.rc == 0, r
    pid = mcpd.row("ts")["pid"]
    env = environ_of(pid)
    assert env[b"TOKEN"] == value.encode()
    assert env[b"TWO"] == b"a\nb\n"

    seen = ""
    for args in (("list",), ("status",), ("logs", "ts"), ("tools",),
                 ("secret", "list")):
        for is_json in (True, False):
            r = mcpd.ctl(*args, is_json=is_json)
            assert r.rc == 0, r
            seen += r.out + r.err
    assert value not in seen
    assert argv_holding(value) == []
    saved = (mcpd.state / "enabled.json").read_bytes()
    assert b"$(secret.tok)" in saved and value.encode() not in saved
    assert value.encode() not in mcpd.read_stderr().encode()


def test_changed_secret_applies_at_the_next_load(mcpd):
    """The same load after `secret set` changed a value it uses starts the
    server again with the new value; unchanged, it is left running."""
    assert secret_set(mcpd.sock, "tok", b"first")[0] == 0
    load = ("load", "--name", "ts", "--env", "TOKEN=$(secret.tok)", "--",
            TESTSERVER)
    r = mcpd.ctl(*load)
    assert r.rc == 0, r
    pid1 = mcpd.row("ts")["pid"]
    assert environ_of(pid1)[b"TOKEN"] == b"first"
    r = mcpd.ctl(*load)
    assert r.rc == 0 and r.json.get("was_loaded") is True, r

    assert secret_set(mcpd.sock, "tok", b"second")[0] == 0
    assert mcpd.row("ts")["pid"] == pid1      # nothing restarts by itself
    r = mcpd.ctl(*load, is_json=False)
    assert r.rc == 0, r
    assert "with new settings" in r.out, r
    pid2 = mcpd.row("ts")["pid"]
    assert pid2 != pid1
    assert environ_of(pid2)[b"TOKEN"] == b"second"
    assert "second" not in r.out + r.err


def test_value_never_in_argv_while_set_runs(mcpd):
    value = "pending-" + os.urandom(8).hex()
    p = subprocess.Popen([str(MCPCTL), "-s", str(mcpd.sock), "secret",
                          "set", "later"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=child_env())
    try:
        p.stdin.write(value.encode())
        p.stdin.flush()
        time.sleep(0.2)
        assert p.poll() is None      # still reading: stdin is open
        assert value not in " ".join(cmdline(p.pid) or [])
        assert argv_holding(value) == []
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert value.encode() not in out + err


def test_usage_errors_need_no_daemon(tmp_path):
    sock = tmp_path / "none.sock"
    for args, what in (
            (["secret"], "missing set, list or rm"),
            (["secret", "get", "x"], "unknown secret command 'get'"),
            (["secret", "set"], "missing NAME"),
            (["secret", "set", "tok", "the-value"], "standard input"),
            (["secret", "set", "a-b"], "invalid secret name 'a-b'"),
            (["secret", "set", "x" * 129], "invalid secret name"),
            (["secret", "rm", "$(secret.x)"], "invalid secret name"),
            (["secret", "list", "extra"], "unexpected argument 'extra'")):
        r = run_ctl(sock, *args, is_json=False)
        assert r.rc == 2, (args, r)
        assert what in r.err, (args, r)
    rc, out, err = secret_set(sock, "x" * 128, b"v")
    assert rc == 3, err            # a valid name: then the daemon is asked


def test_bad_values_are_refused(mcpd):
    for data, what in ((b"", "empty"), (b"\n", "empty"),
                       (b"a\0b", "NUL"), (b"\xff\xfe", "UTF-8"),
                       (b"x" * 65537, "longer than 65536 bytes")):
        rc, out, err = secret_set(mcpd.sock, "bad", data)
        assert rc == 2, (data[:10], err)
        assert what in err, err
    rc, _, err = secret_set(mcpd.sock, "big", b"x" * 65536 + b"\n")
    assert rc == 0, err
    assert mcpd.ctl("secret", "list").json["names"] == ["big"]


# --------------------------------------------------------------------------
# At a terminal

class Tty:
    """mcpctl secret set on a pseudo-terminal of its own."""

    def __init__(self, sock, name):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                # An ignored signal stays ignored through exec (as under
                # nohup), and mcpctl rightly leaves it so: these tests
                # mean the default.
                for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                os.execve(str(MCPCTL), [str(MCPCTL), "-s", str(sock),
                                        "secret", "set", name], child_env())
            finally:
                os._exit(127)
        self.out = b""
        self.is_reaped = False

    def read(self, until=None, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if until is not None and until in self.out:
                return
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    return
                if not chunk:
                    return
                self.out += chunk
        assert until is None, f"no {until!r} in {self.out!r}"

    def echo(self):
        return bool(termios.tcgetattr(self.fd)[3] & termios.ECHO)

    def wait(self):
        def done():
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            return [status] if pid == self.pid else None
        status = poll(done, timeout=30, what="mcpctl to exit")[0]
        self.is_reaped = True
        return status

    def close(self):
        if not self.is_reaped:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.fixture
def tty(mcpd):
    opened = []

    def start(name):
        t = Tty(mcpd.sock, name)
        opened.append(t)
        return t
    yield start
    for t in opened:
        t.close()


def test_prompt_without_echo(mcpd, tty):
    value = "typed-" + os.urandom(6).hex()
    t = tty("typed")
    t.read(until=b"(not shown): ")
    assert not t.echo()
    os.write(t.fd, value.encode() + b"\n")
    t.read(until=b"use it as")
    status = t.wait()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, t.out
    assert value.encode() not in t.out       # not echoed
    assert b"set secret typed" in t.out
    assert mcpd.ctl("secret", "list").json["names"] == ["typed"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM,
                                 signal.SIGHUP])
def test_signal_at_the_prompt_restores_echo(mcpd, tty, sig):
    t = tty("never")
    t.read(until=b"(not shown): ")
    assert not t.echo()
    os.write(t.fd, b"half-typed")
    os.kill(t.pid, sig)
    status = t.wait()
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == sig, status
    assert t.echo(), "the terminal was left without echo"
    assert mcpd.ctl("secret", "list").json["names"] == []


def test_secrets_of_saved_servers(mcpd):
    """The secrets mcpd makes for the literal values of saved loads are not
    listed unless --all; a secret a saved server uses is not removed unless
    --force, which says what will fail."""
    r = mcpd.ctl("load", "--name", "lit", "--env", "TOKEN=literal-value",
                 "--", TESTSERVER)
    assert r.rc == 0, r
    rc, _, err = secret_set(mcpd.sock, "used", b"v")
    assert rc == 0, err
    r = mcpd.ctl("load", "--name", "ref", "--env", "KEY=$(secret.used)",
                 "--", TESTSERVER)
    assert r.rc == 0, r
    r = mcpd.ctl("secret", "list", is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines() == [
        "used", "(1 more that mcpd keeps for the values of saved loads: "
        "--all shows them)", f"key: {mcpd.key}"], r.out
    made = [n for n in mcpd.ctl("secret", "list", "--all").json["names"]
            if n.startswith("mcpd.")]
    assert len(made) == 1 and made[0].endswith(".env.TOKEN"), made
    # In use by a saved server: refused, naming it; nothing removed.
    for name in ("used", made[0]):
        r = mcpd.ctl("secret", "rm", name)
        assert r.rc == 1, r
        e = r.json
        assert e["code"] == -32002 and e["data"]["kind"] == "conflict", e
        assert e["data"]["used_by"] == [
            {"agent": "default", "name": "ref" if name == "used" else "lit"}]
    assert "used" in mcpd.ctl("secret", "list").json["names"]
    r = mcpd.ctl("secret", "rm", "--force", "used", is_json=False)
    assert r.rc == 0 and r.out == "removed secret used\n", r
    assert "saved server ref (agent default) uses $(secret.used): it fails " \
        "at its next start" in r.err, r.err
    assert mcpd.ctl("secret", "list").json["names"] == []
