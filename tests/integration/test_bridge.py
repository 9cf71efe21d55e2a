# SPDX-License-Identifier: ISC
"""mcpctl bridge (stdio <-> the control socket), mcpctl starting mcpd when
none answers, and mcpctl client-config (issue 12, items 5 and 7)."""

import json
import os
import stat
import re
import signal
import socket
import subprocess
import tempfile
import shutil
from pathlib import Path

import pytest

from conftest import (MCPCTL, MCPD, child_env, cmdline, find_procs,
                      is_alive, poll, ts_command, wait_gone,
                      NOT_FOUND, TESTSERVER)

CLOSED = "mcpctl: mcpd closed the connection (did it stop? mcpctl status)\n"


def bridge(sock, *args, env=None, **kwargs):
    argv = [str(MCPCTL), "-s", str(sock), "bridge"] + [str(a) for a in args]
    return subprocess.Popen(argv, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, **kwargs)


def load_as(mcpd, agent, name):
    with mcpd.client() as c:
        c.result("mcpd/hello", {"agent": agent})
        c.result("mcpd/load", {"command": ts_command(), "name": name,
                               "persist": False}, timeout=30)
    mcpd.list()


# The ways of the bridge: mcpd handed the pipes (--reconnect-timeout 0),
# the plain copy through mcpctl (--relay, also what a terminal gets), and
# the copy that keeps the session across mcpd's restarts (the default;
# test_bridge_reconnect.py tests the restarts).
ATTACHED = ("--reconnect-timeout", "0")
WAYS = pytest.mark.parametrize(
    "way", [ATTACHED, ("--relay", "--reconnect-timeout", "0"), ()],
    ids=["attached", "relayed", "reconnecting"])
# Those that end with mcpd.
ENDING = pytest.mark.parametrize(
    "way", [ATTACHED, ("--relay", "--reconnect-timeout", "0")],
    ids=["attached", "relayed"])


@WAYS
def test_bridge_hello_relay_and_eof(mcpd, way):
    load_as(mcpd, "x", "tx")
    mcpd.load_testserver("td")          # the default agent's: not shown
    req = b'{"jsonrpc":"2.0","id":5,"method":"mcpd/list"}\n'
    p = bridge(mcpd.sock, "--agent", "x", *way, env=mcpd.env)
    out, err = p.communicate(req, timeout=20)
    assert (p.returncode, err) == (0, b""), (p.returncode, err)
    # One line, the answer to our request only: the hello's was consumed.
    assert out.endswith(b"\n") and out.count(b"\n") == 1, out
    msg = json.loads(out)
    assert msg["jsonrpc"] == "2.0" and msg["id"] == 5, msg
    assert [r["name"] for r in msg["result"]["servers"]] == ["tx"]
    # What a direct client of agent x gets, byte for byte but the clocks.
    with mcpd.client() as c:
        c.result("mcpd/hello", {"agent": "x"})
        c.send_raw(req)
        direct = c.read_line()
    strip = re.compile(rb'"(uptime_s|started_at|ago)":[^,}]*')
    assert strip.sub(b"", out.rstrip(b"\n")) == strip.sub(b"", direct), \
        (out, direct)


@WAYS
def test_bridge_empty_stdin_exits_0(mcpd, way):
    p = bridge(mcpd.sock, *way, env=mcpd.env)
    out, err = p.communicate(b"", timeout=20)
    assert (p.returncode, out, err) == (0, b"", b"")


@WAYS
def test_bridge_relays_in_both_directions_without_a_newline_wait(mcpd, way):
    p = bridge(mcpd.sock, *way, env=mcpd.env)
    try:
        # Two requests in pieces, the first cut in the middle.
        p.stdin.write(b'{"jsonrpc":"2.0","id":1,"meth')
        p.stdin.flush()
        p.stdin.write(b'od":"mcpd/list"}\n{"jsonrpc":"2.0","id":2,'
                      b'"method":"mcpd/nope"}\n')
        p.stdin.flush()
        first = json.loads(p.stdout.readline())
        second = json.loads(p.stdout.readline())
        assert first == {"jsonrpc": "2.0", "id": 1,
                         "result": {"servers": []}}
        assert second["id"] == 2 and second["error"]["code"] == -32601
        p.stdin.close()
        assert p.wait(timeout=20) == 0
        assert p.stdout.read() == b"" and p.stderr.read() == b""
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@ENDING
def test_bridge_mcpd_stops(mcpd, way):
    p = bridge(mcpd.sock, *way, env=mcpd.env)
    try:
        p.stdin.write(b'{"jsonrpc":"2.0","id":7,"method":"mcpd/list"}\n')
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 7
        r = mcpd.ctl("shutdown", is_json=False)
        assert (r.rc, r.out) == (0, "mcpd stopped\n"), r
        assert p.wait(timeout=20) == 1
        assert p.stderr.read().decode() == CLOSED
        assert p.stdout.read() == b""
        assert mcpd.proc.wait(timeout=15) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def mcpd_pipes(mcpd):
    """The pipe inodes among mcpd's descriptors."""
    out = set()
    fd_dir = f"/proc/{mcpd.proc.pid}/fd"
    for fd in os.listdir(fd_dir):
        try:
            link = os.readlink(f"{fd_dir}/{fd}")
        except FileNotFoundError:
            continue
        if link.startswith("pipe:["):
            out.add(int(link[6:-1]))
    return out


def pipe_inodes(p):
    return {os.fstat(p.stdin.fileno()).st_ino,
            os.fstat(p.stdout.fileno()).st_ino}


def ask_list(p, id_):
    p.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"mcpd/list"}\n' % id_)
    p.stdin.flush()
    return json.loads(p.stdout.readline())


@WAYS
def test_bridge_hands_its_pipes_to_mcpd_unless_relaying(mcpd, way):
    """With --reconnect-timeout 0 mcpd holds the client's two pipes (no
    copy through mcpctl); with --relay, or by default, it holds neither."""
    p = bridge(mcpd.sock, *way, env=mcpd.env)
    try:
        assert ask_list(p, 1) == {"jsonrpc": "2.0", "id": 1,
                                  "result": {"servers": []}}
        inodes = pipe_inodes(p)
        assert inodes & mcpd_pipes(mcpd) == (
            inodes if way == ATTACHED else set())
        p.stdin.close()
        assert p.wait(timeout=20) == 0
        assert (p.stdout.read(), p.stderr.read()) == (b"", b"")
        # The session ended: mcpd let go of both pipes.
        poll(lambda: not inodes & mcpd_pipes(mcpd),
             what="mcpd closing the attached pipes")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_bridge_puts_back_the_flags_of_what_it_shares(mcpd):
    """mcpd makes the pipes it is handed non-blocking; the open files are
    shared (here with the test, as with a shell that ran the bridge), so
    the bridge puts their flags back when the session ends."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    argv = [str(MCPCTL), "-s", str(mcpd.sock), "bridge", *ATTACHED]
    p = subprocess.Popen(argv, stdin=in_r, stdout=out_w,
                         stderr=subprocess.PIPE, env=mcpd.env)
    try:
        os.write(in_w, b'{"jsonrpc":"2.0","id":1,"method":"mcpd/list"}\n')
        with os.fdopen(os.dup(out_r), "rb", buffering=0) as f:
            assert json.loads(f.readline())["id"] == 1
        assert (os.get_blocking(in_r), os.get_blocking(out_w)) == \
            (False, False)
        os.close(in_w)
        in_w = -1
        assert p.wait(timeout=20) == 0
        assert p.stderr.read() == b""
        assert (os.get_blocking(in_r), os.get_blocking(out_w)) == \
            (True, True)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for fd in (in_r, in_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)


def test_bridge_killed_ends_its_attached_session(mcpd):
    """The client's server process is gone: mcpd closes what it was
    handed, so the client sees the end of its output."""
    p = bridge(mcpd.sock, *ATTACHED, env=mcpd.env)
    try:
        assert ask_list(p, 1)["id"] == 1
        inodes = pipe_inodes(p)
        assert inodes <= mcpd_pipes(mcpd)
        p.kill()
        p.wait()
        assert p.stdout.read() == b""
        poll(lambda: not inodes & mcpd_pipes(mcpd),
             what="mcpd closing the pipes of a killed bridge")
        assert mcpd.list() == []        # mcpd is well
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def attach(c, fds):
    """Sends mcpd/attach with fds (SCM_RIGHTS); returns its id."""
    id_ = c.next_id
    c.next_id += 1
    line = json.dumps({"jsonrpc": "2.0", "id": id_,
                       "method": "mcpd/attach"}).encode() + b"\n"
    socket.send_fds(c.sock, [line], fds)
    return id_


def test_attach_refuses_what_it_cannot_serve(mcpd, tmp_path):
    with mcpd.client() as c:
        e = c.error("mcpd/attach")
        assert e["code"] == -32602
        assert e["message"] == (
            "mcpd/attach takes two descriptors sent with the request "
            "(SCM_RIGHTS): the one mcpd reads, then the one it writes")
        f = open(tmp_path / "file", "w+b")
        r, w = os.pipe()
        inodes = {os.fstat(r).st_ino}
        try:
            for fds in ([f.fileno(), w], [w, r]):
                e = c.response(attach(c, fds))["error"]
                assert e["code"] == -32602
                assert e["message"] == (
                    "mcpd/attach takes pipes or sockets, the first open "
                    "for reading, the second for writing")
            # The connection still works, and mcpd kept none of them.
            assert c.result("mcpd/list") == {"servers": []}
            assert not inodes & mcpd_pipes(mcpd)
        finally:
            f.close()
            os.close(r)
            os.close(w)


def test_attach_serves_the_pipes_with_the_connection_s_agent(mcpd):
    load_as(mcpd, "y", "ty")
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        with mcpd.client() as c:
            c.result("mcpd/hello", {"agent": "y"})
            id_ = attach(c, [in_r, out_w])
            os.close(in_r)
            os.close(out_w)
            in_r = out_w = -1
            os.write(in_w, b'{"jsonrpc":"2.0","id":3,"method":"mcpd/list"}\n')
            line = os.read(out_r, 65536)
            msg = json.loads(line)
            assert [s["name"] for s in msg["result"]["servers"]] == ["ty"]
            # The client closes its input: the attach is answered.
            os.close(in_w)
            in_w = -1
            assert c.response(id_) == {"jsonrpc": "2.0", "id": id_,
                                       "result": {}}
            assert os.read(out_r, 10) == b""
    finally:
        for fd in (in_r, in_w, out_r, out_w):
            if fd >= 0:
                os.close(fd)


def test_bridge_without_mcpd_and_autostart_off(tmp_path):
    sock = tmp_path / "none.sock"
    p = bridge(sock, env=child_env({"MCPD_NO_AUTOSTART": "1"}))
    out, err = p.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
                             timeout=20)
    assert (p.returncode, out) == (3, b"")
    assert err.decode() == (
        f"mcpctl: cannot reach mcpd at {sock}: No such file or directory\n"
        "is mcpd running? start it with 'systemctl --user start mcpd' or "
        "'mcpd -d &', or point -s/MCPD_SOCKET at its socket\n"
        "mcpctl did not start mcpd itself: MCPD_NO_AUTOSTART is set\n")


def test_bridge_bad_server_name_is_a_usage_error(tmp_path):
    p = bridge(tmp_path / "none.sock", "--server", "a b")
    out, err = p.communicate(b"", timeout=20)
    assert (p.returncode, out) == (2, b"")
    assert err.decode().startswith(
        "mcpctl: bridge: invalid server 'a b': use letters")


# --------------------------------------------------------------------------
# Autostart

@pytest.fixture
def fresh():
    """A private runtime and state dir, no MCPD_NO_AUTOSTART, and no mcpd
    left at the end, whatever happened."""
    base = Path(tempfile.mkdtemp(prefix="mcpd-as-", dir="/tmp"))
    (base / "run").mkdir(mode=0o700)
    env = child_env({"XDG_RUNTIME_DIR": str(base / "run"),
                     "XDG_STATE_HOME": str(base / "state"),
                     "HOME": str(base / "home")})
    del env["MCPD_NO_AUTOSTART"]
    ns = type("Fresh", (), {})()
    ns.base, ns.env = base, env
    ns.sock = base / "run" / "mcpd" / "mcpd.sock"
    ns.log = base / "state" / "mcpd" / "mcpd.log"
    yield ns
    # A test's shutdown is answered before mcpd has exited (under ASan its
    # leak check runs then): what is still there after 30 s was left.
    left = find_procs(str(ns.sock))
    try:
        wait_gone(left, what="the fresh mcpd to exit")
        left = []
    except AssertionError:
        left = [pid for pid in left if is_alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(base, ignore_errors=True)
    assert not left, f"mcpd left running: {left}"


def ctl(env, *args, cwd=None):
    p = subprocess.run([str(MCPCTL)] + [str(a) for a in args],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       env=env, timeout=30, cwd=cwd)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_autostart_on_first_use_and_shutdown_never_starts(fresh):
    rc, out, err = ctl(fresh.env, "shutdown")
    assert rc == 3 and "cannot reach mcpd" in err and "started" not in err
    assert not fresh.sock.exists() and not find_procs(str(fresh.sock))

    rc, out, err = ctl(fresh.env, "list")
    m = re.fullmatch(r"mcpctl: started mcpd \(pid (\d+)\), log in (.*)\n",
                     err)
    assert rc == 0 and m, (rc, out, err)
    assert out == ("no servers loaded; add one with: "
                   "mcpctl load -- CMD [ARGS...]\n")
    pid = int(m.group(1))
    assert m.group(2) == str(fresh.log)
    assert cmdline(pid) == [str(MCPD), "-d", "-s", str(fresh.sock)]
    assert os.getsid(pid) == pid          # detached: its own session
    assert f"listening on {fresh.sock}" in fresh.log.read_text()

    # It answers now: no second one.
    rc, out, err = ctl(fresh.env, "--json", "list")
    assert (rc, json.loads(out), err) == (0, {"servers": []}, "")
    assert find_procs(str(fresh.sock)) == [pid]

    rc, out, err = ctl(fresh.env, "shutdown")
    assert (rc, out, err) == (0, "mcpd stopped\n", "")
    wait_gone([pid])
    rc, out, err = ctl(fresh.env, "shutdown")
    assert rc == 3 and "started" not in err
    assert not find_procs(str(fresh.sock))


def test_autostart_by_the_bridge(fresh):
    p = subprocess.Popen([str(MCPCTL), "bridge"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=fresh.env)
    out, err = p.communicate(
        b'{"jsonrpc":"2.0","id":3,"method":"mcpd/list"}\n', timeout=30)
    assert p.returncode == 0, err
    assert json.loads(out) == {"jsonrpc": "2.0", "id": 3,
                               "result": {"servers": []}}
    m = re.fullmatch(rb"mcpctl: started mcpd \(pid (\d+)\), log in .*\n",
                     err)
    assert m, err
    pid = int(m.group(1))
    assert is_alive(pid)
    rc, out, err = ctl(fresh.env, "shutdown")
    assert (rc, out) == (0, "mcpd stopped\n")
    wait_gone([pid])


def test_autostart_off(fresh):
    env = dict(fresh.env, MCPD_NO_AUTOSTART="1")
    rc, out, err = ctl(env, "list")
    assert (rc, out) == (3, "")
    assert err.endswith(
        "mcpctl did not start mcpd itself: MCPD_NO_AUTOSTART is set\n")
    assert not find_procs(str(fresh.sock)) and not fresh.log.exists()


def test_autostart_mcpd_fails_shows_its_log(fresh):
    sock = "/proc/mcpd-nope/mcpd.sock"   # mcpd cannot create its directory
    rc, out, err = ctl(fresh.env, "-s", sock, "list")
    assert (rc, out) == (3, "")
    lines = err.splitlines()
    assert re.fullmatch(r"mcpctl: started mcpd \(pid \d+\), log in "
                        + re.escape(str(fresh.log)), lines[0]), err
    assert re.fullmatch(r"mcpctl: mcpd \(pid \d+\) exited with status 1 "
                        r"before it accepted on " + re.escape(sock),
                        lines[1]), err
    assert lines[2] == f"--- the end of {fresh.log}:"
    assert "/proc/mcpd-nope" in "\n".join(lines[3:]), err
    assert not find_procs(sock)


# --------------------------------------------------------------------------
# client-config

def cc_env(tmp_path):
    env = child_env({"XDG_RUNTIME_DIR": str(tmp_path)})
    env.pop("MCPD_SOCKET", None)
    return env


def entry(has_type, args):
    e = {"type": "stdio"} if has_type else {}
    e.update({"command": str(MCPCTL), "args": args})
    return e


def bridge_args(tmp_path, *more, agent="default", sock=None):
    """The bridge's args client-config writes: always the socket (by
    default the one of cc_env's XDG_RUNTIME_DIR) and the agent."""
    sock = sock or tmp_path / "mcpd" / "mcpd.sock"
    return ["bridge", "-s", str(sock), "--agent", agent, *more]


@pytest.fixture
def cc_daemon(mcpd_factory):
    """A daemon whose agent default has servers fs and github, and agent
    work github and fs: client-config's --server must name them."""
    d = mcpd_factory()
    for agent in ("default", "work"):
        for name in ("fs", "github"):
            r = d.ctl("--agent", agent, "load", "--no-persist", "--name",
                      name, "--", str(TESTSERVER))
            assert r.rc == 0, r
    return d


def args_text(args):
    return "[" + ", ".join(json.dumps(a) for a in args) + "]"


@pytest.mark.parametrize("client,box,has_type", [
    ("claude-desktop", "mcpServers", False),
    ("claude-code", "mcpServers", True),
    ("cursor", "mcpServers", False),
    ("vscode", "servers", True),
    ("gemini-cli", "mcpServers", False)])
def test_client_config_prints_the_entry(tmp_path, cc_daemon, client, box,
                                        has_type):
    env = cc_env(tmp_path)
    rc, out, err = ctl(env, "client-config", client)
    assert (rc, err) == (0, "")
    want = {box: {"mcpd": entry(has_type, bridge_args(tmp_path))}}
    assert json.loads(out) == want
    typ = '      "type": "stdio",\n' if has_type else ""
    assert out == (f'{{\n  "{box}": {{\n    "mcpd": {{\n{typ}'
                   f'      "command": "{MCPCTL}",\n'
                   f'      "args": {args_text(bridge_args(tmp_path))}\n'
                   f'    }}\n  }}\n}}\n')
    sock = cc_daemon.sock
    rc, out, err = ctl(env, "-s", sock, "client-config", client, "--agent",
                       "work", "--server", "github", "--server", "fs",
                       "--json")
    assert (rc, err) == (0, "")
    assert out == json.dumps(
        {box: {"mcpd": entry(has_type, bridge_args(
            tmp_path, "--server", "github", "--server", "fs",
            agent="work", sock=sock))}}, separators=(",", ":")) + "\n"
    # Another socket goes into the entry the same way, made absolute.
    rc, out, err = ctl(env, "-s", "o.sock", "client-config", client,
                       "--json", cwd=tmp_path)
    assert json.loads(out)[box]["mcpd"]["args"] == [
        "bridge", "-s", str(tmp_path / "o.sock"), "--agent", "default"]


def test_a_view_of_a_missing_server_is_refused(tmp_path, cc_daemon):
    """client-config, the bridge and mcpd/hello refuse a server the agent
    does not have (its view would be silently empty), with the nearest
    names; nothing is written."""
    env = cc_env(tmp_path)
    sock = cc_daemon.sock
    want = ("mcpctl: no server gitub for agent default; did you mean "
            "github? (mcpctl list shows them; load it first)\n")
    f = tmp_path / "mcp.json"
    rc, out, err = ctl(env, "-s", sock, "client-config", "cursor",
                       "--server", "fs", "--server", "gitub", "--write", f)
    assert (rc, out, err) == (1, "", want)
    assert not f.exists()
    rc, out, err = ctl(env, "-s", sock, "bridge", "--server", "gitub")
    assert (rc, out, err) == (1, "", want)
    # Another agent's server is not this agent's.
    rc, out, err = ctl(env, "-s", sock, "--agent", "other", "bridge",
                       "--server", "fs")
    assert (rc, out) == (1, ""), err
    assert err == ("mcpctl: no server fs for agent other (mcpctl list "
                   "shows them; load it first)\n"), err
    with cc_daemon.client() as c:
        e = c.error("mcpd/hello", {"servers": ["fs", "gitub"]})
        assert e["code"] == NOT_FOUND, e
        assert e["data"] == {"kind": "not-found", "what": "server",
                             "server": "gitub"}, e
        # The connection goes on, unscoped.
        assert len(c.result("mcpd/list")["servers"]) == 2


def test_client_config_usage(tmp_path):
    rc, out, err = ctl(cc_env(tmp_path), "client-config", "zed")
    assert (rc, out) == (2, "")
    assert err.startswith("mcpctl: client-config: unknown client 'zed': "
                          "use claude-desktop, claude-code, cursor, "
                          "vscode, gemini-cli or codex\n")
    rc, out, err = ctl(cc_env(tmp_path), "client-config")
    assert rc == 2 and "missing CLIENT" in err


JSONC = """// my settings
{
\t// the servers I use
\t"servers": {
\t\t"other": { "type": "stdio", "command": "foo", "args": ["1"] }, /* keep */
\t},
\t"inputs": [],
}
"""

def merged(tmp_path, sock):
    return f"""// my settings
{{
\t// the servers I use
\t"servers": {{
\t\t"mcpd": {{
\t\t\t"type": "stdio",
\t\t\t"command": "{MCPCTL}",
\t\t\t"args": {args_text(bridge_args(tmp_path, "--server", "fs",
                                             sock=sock))}
\t\t}},
\t\t"other": {{ "type": "stdio", "command": "foo", "args": ["1"] }}, /* keep */
\t}},
\t"inputs": [],
}}
"""


def test_client_config_write_merges_keeping_comments(tmp_path, cc_daemon):
    env = cc_env(tmp_path)
    sock = cc_daemon.sock
    want = merged(tmp_path, sock)
    f = tmp_path / "mcp.json"
    f.write_text(JSONC)
    f.chmod(0o640)
    rc, out, err = ctl(env, "-s", sock, "client-config", "vscode", "--server", "fs",
                       "--write", f)
    assert (rc, err) == (0, "")
    assert out == (f'updated {f}: the mcpd entry for vscode added under '
                   f'"servers"\nthe old content is in {f}.bak\n'
                   f'read back: as written; restart vscode to use it\n')
    assert f.read_text() == want
    assert (tmp_path / "mcp.json.bak").read_text() == JSONC
    assert f.stat().st_mode & 0o777 == 0o640
    # Again: nothing to do, nothing touched.
    rc, out, err = ctl(env, "-s", sock, "client-config", "vscode", "--server", "fs",
                       "--write", f)
    assert (rc, err) == (0, "")
    assert out == (f"{f} already has the mcpd entry for vscode: "
                   f"nothing changed\n")
    assert f.read_text() == want
    assert (tmp_path / "mcp.json.bak").read_text() == JSONC
    # Another scope replaces the entry, in place.
    rc, out, err = ctl(env, "-s", sock, "client-config", "vscode", "--write", f)
    assert rc == 0 and "entry for vscode replaced" in out
    assert f.read_text() == want.replace(', "--server", "fs"', "")
    assert (tmp_path / "mcp.json.bak").read_text() == want


def test_client_config_write_adds_the_container(tmp_path):
    env = cc_env(tmp_path)
    f = tmp_path / "claude_desktop_config.json"
    old = '{\n  "globalShortcut": "Ctrl+Space"\n}\n'
    f.write_text(old)
    rc, out, err = ctl(env, "client-config", "claude-desktop", "--write", f)
    assert (rc, err) == (0, "")
    assert f.read_text() == (
        '{\n  "mcpServers": {\n    "mcpd": {\n'
        f'      "command": "{MCPCTL}",\n'
        f'      "args": {args_text(bridge_args(tmp_path))}\n'
        '    }\n  },\n  "globalShortcut": "Ctrl+Space"\n}\n')
    assert (tmp_path / "claude_desktop_config.json.bak").read_text() == old


def test_client_config_write_creates_a_missing_file(tmp_path):
    env = cc_env(tmp_path)
    f = tmp_path / ".mcp.json"
    rc, out, err = ctl(env, "client-config", "claude-code", "--write", f)
    assert (rc, err) == (0, "")
    assert out == (f'created {f}: the mcpd entry for claude-code added '
                   f'under "mcpServers"\nread back: as written; restart '
                   f'claude-code to use it\n')
    assert json.loads(f.read_text()) == {
        "mcpServers": {"mcpd": entry(True, bridge_args(tmp_path))}}
    assert not (tmp_path / ".mcp.json.bak").exists()
    # The directories a new file's path lacks are made, 0700 (~/.gemini
    # before Gemini CLI ever ran); one that cannot be made is said.
    f = tmp_path / "nodir" / "deeper" / "mcp.json"
    rc, out, err = ctl(env, "client-config", "cursor", "--write", f)
    assert (rc, err) == (0, ""), err
    assert out.startswith(f"created {f}: ")
    assert stat.S_IMODE(os.stat(tmp_path / "nodir").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(f.parent).st_mode) == 0o700
    (tmp_path / "afile").write_text("")
    rc, out, err = ctl(env, "client-config", "cursor", "--write",
                       tmp_path / "afile" / "mcp.json")
    assert (rc, out) == (1, "")
    assert err == (f"mcpctl: client-config: cannot read "
                   f"{tmp_path}/afile/mcp.json: Not a directory\n")


def test_client_config_write_refuses_what_it_cannot_merge(tmp_path):
    env = cc_env(tmp_path)
    for text, why in (('{"mcpServers": [1]}', '"mcpServers" in'),
                      ("[1, 2]", "does not hold a JSON object"),
                      ('{"a": 1', ":1:")):
        f = tmp_path / "c.json"
        f.write_text(text)
        rc, out, err = ctl(env, "client-config", "cursor", "--write", f)
        assert (rc, out) == (1, ""), (text, err)
        assert why in err, (text, err)
        assert f.read_text() == text
        assert not (tmp_path / "c.json.bak").exists()


# --------------------------------------------------------------------------
# client-config --migrate (issue 22, item 9)

def claude_file(tmp_path):
    """A Claude-style file: two entries mcpctl import will load (one
    renamed: "my tools" is no server name), one it will load and the test
    unloads, one disabled."""
    return f"""{{
  // Claude Code's servers
  "mcpServers": {{
    "fs": {{ "command": "{TESTSERVER}" }},
    "github": {{ "command": "{TESTSERVER}" }},
    "my tools": {{ "command": "{TESTSERVER}" }}, /* renamed by import */
    "off": {{ "command": "{TESTSERVER}", "disabled": true }}
  }},
  "theme": "dark"
}}
"""


def ids_of(d):
    return {s["name"]: s["id"] for s in d.list()}


def test_client_config_migrate_replaces_what_import_brought(tmp_path,
                                                            mcpd_factory):
    d = mcpd_factory()
    env, sock = cc_env(tmp_path), d.sock
    f = tmp_path / ".claude.json"
    old = claude_file(tmp_path)
    f.write_text(old)
    rc, out, err = ctl(env, "-s", sock, "import", f)
    assert rc == 0, (out, err)
    rc, out, err = ctl(env, "-s", sock, "unload", "github")
    assert rc == 0, err
    ids = ids_of(d)
    assert sorted(ids) == ["fs", "my-tools"], ids
    mcpd_entry = entry(True, bridge_args(tmp_path, sock=sock))
    keep_github = (f"mcpd has no server github (mcpctl import {f} loads "
                   f"it)")
    keep_off = "disabled in the file: import does not load it"
    plan = (f"removed fs: mcpd has it as fs (id {ids['fs']})\n"
            f"removed my tools: mcpd has it as my-tools "
            f"(id {ids['my-tools']})\n"
            f"kept github: {keep_github}\n"
            f"kept off: {keep_off}\n")

    # --dry-run: the plan, nothing written.
    rc, out, err = ctl(env, "-s", sock, "client-config", "claude-code",
                       "--migrate", f, "--dry-run")
    assert (rc, err) == (0, "")
    assert out == (plan.replace("removed ", "would remove ")
                   .replace("kept ", "would keep ") +
                   f'would update {f}: the mcpd entry for claude-code added '
                   f'under "mcpServers", 2 entries to remove, 2 to keep\n'
                   f"dry run, nothing changed\n")
    assert f.read_text() == old
    assert not (tmp_path / ".claude.json.bak").exists()

    rc, out, err = ctl(env, "-s", sock, "client-config", "claude-code",
                       "--migrate", f)
    assert (rc, err) == (0, "")
    assert out == (plan +
                   f'updated {f}: the mcpd entry for claude-code added '
                   f'under "mcpServers", 2 entries removed, 2 kept\n'
                   f"the old content is in {f}.bak\n"
                   f"read back: as written; restart claude-code to use "
                   f"it\n")
    # Only the imported entries went; the comments and the rest stayed.
    assert f.read_text() == f"""{{
  // Claude Code's servers
  "mcpServers": {{
    "mcpd": {{
      "type": "stdio",
      "command": "{MCPCTL}",
      "args": {args_text(bridge_args(tmp_path, sock=sock))}
    }},
    "github": {{ "command": "{TESTSERVER}" }},
    "off": {{ "command": "{TESTSERVER}", "disabled": true }}
  }},
  "theme": "dark"
}}
"""
    assert (tmp_path / ".claude.json.bak").read_bytes() == old.encode()

    # Again, --json: nothing left to take out, the entry as it was:
    # nothing written.
    migrated = f.read_text()
    rc, out, err = ctl(env, "-s", sock, "--json", "client-config",
                       "claude-code", "--migrate", f)
    assert (rc, err) == (0, "")
    assert json.loads(out) == {
        "file": str(f), "client": "claude-code", "action": "unchanged",
        "backup": None, "note": None, "dry_run": False, "removed": [],
        "kept": [{"name": "github", "reason": keep_github},
                 {"name": "off", "reason": keep_off}]}
    assert f.read_text() == migrated
    assert (tmp_path / ".claude.json.bak").read_bytes() == old.encode()
    assert json.loads(f.read_text().replace("// Claude Code's servers",
                                            "")) == {
        "mcpServers": {"mcpd": mcpd_entry,
                       "github": {"command": str(TESTSERVER)},
                       "off": {"command": str(TESTSERVER),
                               "disabled": True}},
        "theme": "dark"}


def test_client_config_migrate_keeps_what_mcpd_runs_otherwise(tmp_path,
                                                               mcpd_factory):
    """An entry whose name mcpd has with another command stays, and so
    does one outside the view the mcpd entry gives (--server)."""
    d = mcpd_factory()
    env, sock = cc_env(tmp_path), d.sock
    f = tmp_path / "mcp.json"
    f.write_text(f'{{"mcpServers": {{"fs": {{"command": "{TESTSERVER}"}}, '
                 f'"ts": {{"command": "{TESTSERVER}", "args": ["--modern"]}}, '
                 f'"gh": {{"command": "{TESTSERVER}"}}}}}}\n')
    for name, args in (("fs", []), ("ts", []), ("gh", [])):
        rc, out, err = ctl(env, "-s", sock, "load", "--name", name, "--",
                           TESTSERVER, *args)
        assert rc == 0, err
    ids = ids_of(d)
    rc, out, err = ctl(env, "-s", sock, "--json", "client-config", "cursor",
                       "--server", "fs", "--server", "ts", "--migrate", f)
    assert (rc, err) == (0, "")
    assert json.loads(out)["removed"] == [
        {"name": "fs", "server": "fs", "id": ids["fs"]}]
    assert json.loads(out)["kept"] == [
        {"name": "ts", "reason": f"mcpd's server ts runs {TESTSERVER}, "
                                 f"not what this entry runs"},
        {"name": "gh", "reason": "mcpd has it, but the mcpd entry shows "
                                 "only the servers given with --server"}]
    assert list(json.loads(f.read_text())["mcpServers"]) == ["mcpd", "ts",
                                                             "gh"]


def test_client_config_write_dry_run_and_usage(tmp_path):
    env = cc_env(tmp_path)
    f = tmp_path / "mcp.json"
    old = '{"mcpServers": {"x": {"command": "y"}}}\n'
    f.write_text(old)
    rc, out, err = ctl(env, "client-config", "cursor", "--write", f,
                       "--dry-run")
    assert (rc, err) == (0, "")
    assert out == (f'would update {f}: the mcpd entry for cursor added '
                   f'under "mcpServers"\ndry run, nothing changed\n')
    assert f.read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]
    # No mcpd answers (child_env turns autostart off): a dry run of
    # --migrate plans with none; --migrate itself fails, changing nothing.
    rc, out, err = ctl(env, "client-config", "cursor", "--migrate", f,
                       "--dry-run")
    assert (rc, err) == (0, "")
    assert out == (
        f"would keep x: mcpd has no server x (mcpctl import {f} loads "
        f"it)\nwould update {f}: the mcpd entry for cursor added under "
        f'"mcpServers", 0 entries to remove, 1 to keep\n'
        f"dry run, nothing changed\n")
    rc, out, err = ctl(env, "client-config", "cursor", "--migrate", f)
    assert (rc, out) == (3, "")
    assert err.startswith(f"mcpctl: cannot reach mcpd at "
                          f"{tmp_path / 'mcpd' / 'mcpd.sock'}: No such file "
                          f"or directory\n"), err
    assert f.read_text() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]
    for args, why in (
            (["--write", f, "--migrate", f],
             "--write and --migrate both name the file to change: give "
             "one"),
            (["--dry-run"],
             "--dry-run shows what --write FILE or --migrate FILE would "
             "change: give one")):
        rc, out, err = ctl(env, "client-config", "cursor", *args)
        assert (rc, out) == (2, "")
        assert err.startswith(f"mcpctl: client-config: {why}\n"), err
    assert f.read_text() == old


def test_client_config_migrate_failures_change_nothing(tmp_path,
                                                       mcpd_factory):
    d = mcpd_factory()
    env, sock = cc_env(tmp_path), d.sock
    # A file that is not JSON: its name and line, nothing written.
    f = tmp_path / "bad.json"
    bad = '{\n  "mcpServers": {\n    "fs": {"command": "x"}\n    "b": 1\n}\n'
    f.write_text(bad)
    rc, out, err = ctl(env, "-s", sock, "client-config", "cursor",
                       "--migrate", f)
    assert (rc, out) == (1, "")
    assert err.startswith(f"mcpctl: client-config: {f}:4:"), err
    assert f.read_text() == bad
    assert not (tmp_path / "bad.json.bak").exists()
    # A file that does not exist is not created.
    rc, out, err = ctl(env, "-s", sock, "client-config", "cursor",
                       "--migrate", tmp_path / "none.json")
    assert (rc, out, err) == (1, "", (
        f"mcpctl: client-config: {tmp_path / 'none.json'} does not exist: "
        f"--migrate changes a client's file, --write creates one\n"))
    assert not (tmp_path / "none.json").exists()
    # codex's TOML is none of import's.
    rc, out, err = ctl(env, "-s", sock, "client-config", "codex",
                       "--migrate", tmp_path / "config.toml")
    assert (rc, out) == (2, "")
    assert err.startswith(
        "mcpctl: client-config: --migrate reads what mcpctl import brought "
        "into mcpd, and import does not read codex's config.toml: use "
        "--write\n"), err


def test_client_config_migrate_unwritable_changes_nothing(tmp_path,
                                                          mcpd_factory):
    """A read-only file system: the backup cannot be written, so the file
    is left as it was (and says so)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a read-only tmpfs")
    d = mcpd_factory()
    env, sock = cc_env(tmp_path), d.sock
    ro = tmp_path / "ro"
    ro.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                        str(ro)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr!r}")
    try:
        f = ro / "mcp.json"
        old = f'{{"mcpServers": {{"fs": {{"command": "{TESTSERVER}"}}}}}}\n'
        f.write_text(old)
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        rc, out, err = ctl(env, "-s", sock, "load", "--name", "fs", "--",
                           TESTSERVER)
        assert rc == 0, err
        rc, out, err = ctl(env, "-s", sock, "client-config", "cursor",
                           "--migrate", f)
        assert (rc, out) == (1, "")
        assert err.startswith(
            f"mcpctl: client-config: cannot write the backup, so {f} was "
            f"left alone: "), err
        assert f.read_text() == old
        assert sorted(p.name for p in ro.iterdir()) == ["mcp.json"]
    finally:
        subprocess.run(["umount", str(ro)], check=True)


# --------------------------------------------------------------------------
# client-config for gemini-cli and codex, checked with their own CLIs

def peer_cli(name, var):
    """The CLI of tests/peers (scripts/install-deps --test-peers), or the
    one $var names; None when there is none."""
    path = os.environ.get(var) or str(PEERS_BIN / name)
    return path if os.access(path, os.X_OK) else None


PEERS_BIN = Path(__file__).resolve().parents[1] / "peers" / "agents" \
    / "node_modules" / ".bin"


def cli_env(home):
    env = child_env({"HOME": str(home)})
    for k in ("XDG_CONFIG_HOME", "CODEX_HOME", "GEMINI_CLI_TRUST_WORKSPACE",
              "CI", "GITHUB_ACTIONS"):
        env.pop(k, None)
    return env


def test_client_config_gemini_cli_file(tmp_path):
    env = cc_env(tmp_path)
    f = tmp_path / ".gemini" / "settings.json"
    f.parent.mkdir()
    old = '{\n  "theme": "GitHub"\n}\n'
    f.write_text(old)
    rc, out, err = ctl(env, "client-config", "gemini-cli", "--write", f)
    assert (rc, err) == (0, "")
    assert f.read_text() == (
        '{\n  "mcpServers": {\n    "mcpd": {\n'
        f'      "command": "{MCPCTL}",\n'
        f'      "args": {args_text(bridge_args(tmp_path))}\n'
        '    }\n  },\n  "theme": "GitHub"\n}\n')
    assert out.endswith(
        "note: Gemini CLI disables every MCP server (mcpd too) in a folder "
        "it does not trust: trust the folder you run gemini in "
        "(/permissions in gemini, or ~/.gemini/trustedFolders.json), else "
        "`gemini mcp list` shows mcpd as Disabled\n"), out


def test_client_config_gemini_cli_connects(tmp_path, mcpd_factory):
    """`gemini mcp list` connects to the entry client-config wrote (in a
    folder it trusts: in one it does not, it disables every server)."""
    gemini = peer_cli("gemini", "MCPD_TEST_GEMINI")
    if gemini is None:
        pytest.skip("no gemini CLI: scripts/install-deps --test-peers "
                    "installs @google/gemini-cli (or set MCPD_TEST_GEMINI)")
    d = mcpd_factory()
    d.load_testserver("ts")
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    rc, out, err = ctl(cc_env(tmp_path), "-s", d.sock, "client-config",
                       "gemini-cli", "--write", home / ".gemini" /
                       "settings.json")
    assert rc == 0, err
    line = (f"mcpd: {MCPCTL} bridge -s {d.sock} --agent default (stdio) - ")

    def listed():
        p = subprocess.run([gemini, "mcp", "list"], capture_output=True,
                           cwd=work, env=cli_env(home), timeout=120,
                           stdin=subprocess.DEVNULL)
        text = re.sub(r"\x1b\[[0-9;]*m", "", (p.stdout + p.stderr).decode())
        return p.returncode, text

    rc, text = listed()
    assert rc == 0 and line + "Disabled" in text, text
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(work): "TRUST_FOLDER"}))
    rc, text = listed()
    assert rc == 0 and line + "Connected" in text, text


CODEX_OLD = """# my codex settings
model = "o3"
notes = \"\"\"
[mcp_servers.mcpd]
is text, not a table\"\"\"

[mcp_servers.other]
command = "npx"
args = [
  "-y", # a comment
  "other-server",
]

[mcp_servers.mcpd]
command = "old"

[mcp_servers.mcpd.env]
A = "b"

# the fast profile
[profiles.fast]
model = "o4-mini"
"""


def codex_table(tmp_path, sock):
    return ("[mcp_servers.mcpd]\n"
            f'command = "{MCPCTL}"\n'
            f"args = {args_text(bridge_args(tmp_path, sock=sock))}\n")


def test_client_config_codex_file(tmp_path):
    env = cc_env(tmp_path)
    sock = tmp_path / "mcpd" / "mcpd.sock"
    rc, out, err = ctl(env, "client-config", "codex")
    assert (rc, out, err) == (0, codex_table(tmp_path, sock), "")
    f = tmp_path / "config.toml"
    f.write_text(CODEX_OLD)
    rc, out, err = ctl(env, "client-config", "codex", "--write", f)
    assert (rc, err) == (0, "")
    assert out == (f"updated {f}: the [mcp_servers.mcpd] table replaced\n"
                   f"the old content is in {f}.bak\n"
                   f"read back: as written; restart codex to use it\n")
    # Only the mcpd tables changed (its env table went with it).
    assert f.read_text() == CODEX_OLD.replace(
        '[mcp_servers.mcpd]\ncommand = "old"\n\n'
        '[mcp_servers.mcpd.env]\nA = "b"\n',
        codex_table(tmp_path, sock))
    assert (tmp_path / "config.toml.bak").read_text() == CODEX_OLD
    # A file without the table gets it at its end; a new file is the table.
    f.write_text('model = "o3"')
    rc, out, err = ctl(env, "client-config", "codex", "--write", f)
    assert (rc, err) == (0, "")
    assert f.read_text() == 'model = "o3"\n\n' + codex_table(tmp_path, sock)
    n = tmp_path / "new.toml"
    rc, out, err = ctl(env, "client-config", "codex", "--write", n)
    assert (rc, err) == (0, "")
    assert n.read_text() == codex_table(tmp_path, sock)


@pytest.mark.parametrize("text,line,why", [
    ('mcp_servers = { mcpd = { command = "x" } }\n', 1,
     "mcp_servers is given as a key of the top level, not as "
     "[mcp_servers.NAME] tables"),
    ('[mcp_servers]\nmcpd.command = "x"\n', 2,
     "the mcpd entry is given as keys of [mcp_servers], not as its own "
     "table"),
    ('[[mcp_servers]]\nname = "x"\n', 1,
     "mcp_servers is an array of tables ([[mcp_servers...]])"),
    ('a = """\nnever ends\n', 1,
     "a value the scanner cannot find the end of")])
def test_client_config_codex_refuses_what_it_cannot_edit(tmp_path, text,
                                                         line, why):
    env = cc_env(tmp_path)
    f = tmp_path / "config.toml"
    f.write_text(text)
    rc, out, err = ctl(env, "client-config", "codex", "--write", f)
    assert (rc, out) == (1, "")
    assert err == (f"mcpctl: client-config: {f}:{line}: {why}: mcpctl "
                   f"cannot edit this file safely, so it was left alone; "
                   f"add the [mcp_servers.mcpd] table that `mcpctl "
                   f"client-config codex` prints by hand\n")
    assert f.read_text() == text
    assert not (tmp_path / "config.toml.bak").exists()


def test_client_config_codex_lists_the_entry_enabled(tmp_path,
                                                     mcpd_factory):
    """`codex mcp list` reads the table client-config wrote into a file
    that has other tables, and lists the entry enabled (codex connects
    only when a session starts, which needs a model)."""
    codex = peer_cli("codex", "MCPD_TEST_CODEX")
    if codex is None:
        pytest.skip("no codex CLI: scripts/install-deps --test-peers "
                    "installs @openai/codex (or set MCPD_TEST_CODEX)")
    d = mcpd_factory()
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    f = home / ".codex" / "config.toml"
    f.write_text(CODEX_OLD)
    rc, out, err = ctl(cc_env(tmp_path), "-s", d.sock, "client-config",
                       "codex", "--write", f)
    assert rc == 0, err
    p = subprocess.run([codex, "mcp", "list", "--json"], capture_output=True,
                       cwd=home, env=cli_env(home), timeout=120,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stderr
    listed = {s["name"]: s for s in json.loads(p.stdout)}
    assert sorted(listed) == ["mcpd", "other"], listed
    s = listed["mcpd"]
    assert (s["enabled"], s["disabled_reason"]) == (True, None), s
    assert s["transport"]["type"] == "stdio"
    assert s["transport"]["command"] == str(MCPCTL)
    assert s["transport"]["args"] == bridge_args(tmp_path, sock=d.sock)
