# SPDX-License-Identifier: ISC
"""mcpctl as a docker/kubectl user expects it (issue 11): global options
anywhere, help and version, aliases, unload of many, inspect, wait, list
that fits the terminal, key=value typed by the schema, --env NAME,
--secret-env, a deadline against a silent daemon, progress during a call.

Some tests talk to a fake mcpd (a socket that answers canned results and
records what it was sent), to see exactly what mcpctl sends and prints."""

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import termios
import threading
import time

import pytest

from conftest import (EVERYTHING_JS, MCPCTL, NODE, REPO, TESTSERVER,
                      TESTSERVER_TOOLS,
                      child_env, failed_daemon, poll)


# The version the Makefile builds into both programs.
VERSION = re.search(r"^VERSION\s*:=\s*(\S+)$",
                    (REPO / "Makefile").read_text(), re.M).group(1)

def ctl(sock, *args, env=None, timeout=30.0, stdin=None):
    """mcpctl with exactly args (no -s/--json added): rc, out, err."""
    argv = [str(MCPCTL)] + [str(a) for a in args]
    full = child_env({"MCPD_SOCKET": str(sock)})
    full.update(env or {})
    p = subprocess.run(argv, input=stdin, capture_output=True,
                       timeout=timeout, env=full)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


class FakeMcpd:
    """A unix socket that answers mcpd's methods from answers: method ->
    result, or a function (params) -> (notifications, result). Keeps every
    request it got in .requests."""

    def __init__(self, path, answers):
        self.path = str(path)
        self.answers = answers
        self.requests = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._client, args=(conn,),
                             daemon=True).start()

    def _client(self, conn):
        buf = b""
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    req = json.loads(line)
                    self.requests.append(req)
                    conn.sendall(self._answer(req))

    def _answer(self, req):
        method, params = req["method"], req.get("params") or {}
        ans = self.answers.get(method, {})
        notes, result = ans(params) if callable(ans) else ([], ans)
        out = b""
        for m, p in notes:
            p = dict(p, request=req["id"])
            out += json.dumps({"jsonrpc": "2.0", "method": m,
                               "params": p}).encode() + b"\n"
        out += json.dumps({"jsonrpc": "2.0", "id": req["id"],
                           "result": result}).encode() + b"\n"
        return out

    def params_of(self, method):
        return [r.get("params") for r in self.requests
                if r["method"] == method]

    def close(self):
        # shutdown() wakes the thread in accept() (close() would not, and
        # it would take the next fake's connections).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the fake's acceptor is stuck"
        self.sock.close()


@pytest.fixture
def fake(tmp_path):
    made = []

    def start(answers):
        f = FakeMcpd(tmp_path / f"fake{len(made)}.sock", answers)
        made.append(f)
        return f
    yield start
    for f in made:
        f.close()


def in_tty(argv, cols, env, timeout=20.0):
    """Runs argv with stdout on a terminal of cols columns; its output."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ,
                struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
        elif p.poll() is not None:
            break
    os.close(master)
    p.wait(timeout=10)
    return p.returncode, out.decode("utf-8", "replace").replace("\r\n", "\n")


# --------------------------------------------------------------------------
# Item 7: the command line


def test_global_options_after_the_command(mcpd):
    sock = mcpd.sock
    rc, out, err = ctl("/nonexistent", "load", "--name", "ts", "-s", sock,
                       "--json", "--", TESTSERVER)
    assert rc == 0, err
    assert json.loads(out)["name"] == "ts"
    rc, out, err = ctl("/nonexistent", "list", "--json", "-s", sock)
    assert rc == 0, err
    assert [r["name"] for r in json.loads(out)["servers"]] == ["ts"]
    rc, out, err = ctl("/nonexistent", "call", "ts", "echo", "message=hi",
                       "--socket=" + str(sock), "--json")
    assert rc == 0, err
    assert json.loads(out)["structuredContent"] == {"message": "hi"}
    # --agent after the command: another agent has no servers.
    rc, out, err = ctl(sock, "list", "--agent", "other", "--json")
    assert rc == 0, err
    assert json.loads(out)["servers"] == []
    # After --, words are the server's, never mcpctl's.
    rc, out, err = ctl(sock, "call", "ts", "echo", "--", "message=--json")
    assert rc == 0, err
    assert out.splitlines()[0] == "--json"


def test_bare_help_and_version(mcpd, tmp_path):
    rc, out, err = ctl(mcpd.sock)
    assert rc == 0, err
    assert out.startswith("usage: mcpctl") and "commands:" in out
    assert "inspect" in out and "wait" in out
    rc1, out1, _ = ctl(mcpd.sock, "help", "load")
    rc2, out2, _ = ctl(mcpd.sock, "load", "--help")
    assert rc1 == rc2 == 0 and out1 == out2 and "--volume" in out1
    rc, out, _ = ctl(mcpd.sock, "help")
    assert rc == 0 and "exit status:" in out
    rc, out, err = ctl(mcpd.sock, "version")
    assert rc == 0, err
    assert out.splitlines()[0] == f"mcpctl {VERSION}"
    assert f"(pid {mcpd.pid})" in out.splitlines()[1]
    rc, out, err = ctl(tmp_path / "none.sock", "version")
    assert rc == 0, err
    assert out.splitlines()[0] == f"mcpctl {VERSION}"
    assert "no answer" in out


def test_mistyped_command_did_you_mean(mcpd):
    rc, out, err = ctl(mcpd.sock, "lsit")
    assert rc == 2
    assert "unknown command 'lsit'; did you mean 'list'?" in err
    rc, out, err = ctl(mcpd.sock, "unlaod", "x")
    assert rc == 2 and "did you mean 'unload'?" in err
    rc, out, err = ctl(mcpd.sock, "frobnicate")
    assert rc == 2 and "did you mean" not in err
    rc, out, err = ctl(mcpd.sock, "help", "inspcet")
    assert rc == 2 and "did you mean 'inspect'?" in err


def test_ls_rm_and_unload_many(mcpd):
    # Distinct commands: one command is one server (until issue 11.2).
    for k, n in enumerate(("a", "b", "c", "d")):
        mcpd.load_testserver(n, "--start-delay-ms", k)
    rc, out, err = ctl(mcpd.sock, "ls")
    assert rc == 0, err
    assert [l.split()[0] for l in out.splitlines()[1:]] == \
        ["a", "b", "c", "d"]
    rc, out, err = ctl(mcpd.sock, "rm", "a", "b")
    assert rc == 0, err
    assert len(out.splitlines()) == 2
    assert out.splitlines()[0].startswith("unloaded a ")
    assert out.splitlines()[1].startswith("unloaded b ")
    # One missing: the others go, the status is the worst.
    rc, out, err = ctl(mcpd.sock, "unload", "nope", "c")
    assert rc == 1
    assert "nope" in err and out.startswith("unloaded c ")
    assert [r["name"] for r in mcpd.list()] == ["d"]
    mcpd.load_testserver("e", "--start-delay-ms", 9)
    rc, out, err = ctl(mcpd.sock, "unload", "--all")
    assert rc == 0, err
    assert sorted(l.split()[1] for l in out.splitlines()) == ["d", "e"]
    assert mcpd.list() == []
    rc, out, err = ctl(mcpd.sock, "unload", "--all")
    assert rc == 0 and "no servers" in out


def test_inspect_masks_values(mcpd):
    rc, out, err = ctl(mcpd.sock, "load", "--name", "ts", "--env",
                       "K=secretvalue", "--env", "R=$(secret.none_such)",
                       "--", TESTSERVER)
    assert rc == 1          # the secret does not exist: nothing loads
    rc, out, err = ctl(mcpd.sock, "load", "--name", "ts", "--env",
                       "K=secretvalue", "--", TESTSERVER)
    assert rc == 0, err
    row = mcpd.row("ts")
    rc, out, err = ctl(mcpd.sock, "inspect", "ts")
    assert rc == 0, err
    assert "secretvalue" not in out + err
    assert re.search(r"(?m)^env:\s+K=\*\*\*$", out), out
    assert re.search(rf"(?m)^pid:\s+{row['pid']}$", out), out
    assert re.search(r"(?m)^generation:\s+1$", out), out
    assert re.search(r"(?m)^restarts:\s+0$", out), out
    assert re.search(rf"(?m)^command:\s+{re.escape(str(TESTSERVER))}$", out)
    assert re.search(r"(?m)^cwd:\s+/", out), out
    assert re.search(r"(?m)^state:\s+ready since \S+Z \(\d+s ago\)$", out)
    # Saved: its row refers to the secret store, shown as the reference.
    assert re.search(r"(?m)^saved:\s+yes, at ", out), out
    assert "saved env:   K=$(secret.mcpd." in out, out
    rc, out, err = ctl(mcpd.sock, "inspect", "ts", "--json")
    assert rc == 0, err
    assert "secretvalue" not in out
    got = json.loads(out)
    assert got["spec"]["env"] == {"K": "***"}
    assert got["pid"] == row["pid"] and got["id"] == row["id"]
    rc, out, err = ctl(mcpd.sock, "inspect", "nope")
    assert rc == 1 and "mcpctl list" in err


def test_wait_ready_failed_and_late(mcpd_factory, tmp_path):
    mcpd = failed_daemon(mcpd_factory, tmp_path)
    mcpd.load_testserver("ts")
    gen = mcpd.row("ts")["generation"]
    rc, out, err = ctl(mcpd.sock, "wait", "ts", "--timeout", "5")
    assert rc == 0, err
    assert out.startswith(
        f"ts is ready (generation {gen}, {len(TESTSERVER_TOOLS)} tools)"), \
        out
    # No such server: at once, with the nearest names.
    rc, out, err = ctl(mcpd.sock, "wait", "tz", "--timeout", "600")
    assert (rc, out) == (1, ""), err
    assert err == ("mcpctl: no server tz; did you mean ts?\n"
                   "see 'mcpctl list'; 'mcpctl wait --appear tz' waits for "
                   "one that is not loaded yet\n"), err
    rc, out, err = ctl(mcpd.sock, "wait", "--appear", "nope", "--timeout",
                       "1")
    assert rc == 3 and "no server nope appeared within 1 s" in err
    rc, out, err = ctl(mcpd.sock, "wait", "bad", "--timeout", "5")
    assert rc == 3
    assert "bad failed" in err and "mcpctl logs bad" in err
    assert "mcpctl inspect bad" in err


def test_failed_server_call_says_how_to_see_why(mcpd_factory, tmp_path):
    mcpd = failed_daemon(mcpd_factory, tmp_path)
    rc, out, err = ctl(mcpd.sock, "call", "bad", "echo", "message=x")
    assert rc == 1
    assert "try again when it is ready" not in err
    assert "mcpctl logs bad" in err and "mcpctl inspect bad" in err


def test_list_shows_when_the_error_happened(mcpd_factory, tmp_path):
    mcpd = failed_daemon(mcpd_factory, tmp_path)
    rc, out, err = ctl(mcpd.sock, "list")
    assert rc == 0, err
    assert re.search(r"(?m)^  error \(\d+s ago\): ", out), out


def test_list_fits_the_terminal(mcpd, tmp_path):
    long_dir = tmp_path / ("d" * 80)
    long_dir.mkdir()
    cmd = long_dir / "mcp-testserver"
    shutil.copy(TESTSERVER, cmd)
    mcpd.load([cmd], name="ts")
    env = child_env({"MCPD_SOCKET": str(mcpd.sock)})
    rc, out = in_tty([str(MCPCTL), "list"], 100, env)
    assert rc == 0, out
    lines = out.splitlines()
    assert all(len(l) <= 100 for l in lines), out
    assert "..." in lines[1] and str(cmd) not in out
    rc, out = in_tty([str(MCPCTL), "list", "-w"], 100, env)
    assert rc == 0 and str(cmd) in out, out
    rc, out, err = ctl(mcpd.sock, "list")       # not a terminal: whole
    assert rc == 0 and str(cmd) in out


# --------------------------------------------------------------------------
# Item 6: arguments and environment


def test_key_value_typed_by_the_schema(mcpd):
    mcpd.load_testserver("ts")
    rc, out, err = ctl(mcpd.sock, "call", "ts", "echo", "message=42",
                       "--json")
    assert rc == 0, err
    got = json.loads(out)
    assert got["structuredContent"] == {"message": "42"}
    assert "warning" not in err
    rc, out, err = ctl(mcpd.sock, "call", "ts", "echo", "message=true")
    assert rc == 0 and out.splitlines()[0] == "true", err
    # Integers stay integers where the schema says so.
    rc, out, err = ctl(mcpd.sock, "call", "ts", "add", "a=2", "b=40",
                       "--json")
    assert rc == 0, err
    assert json.loads(out)["structuredContent"] == {"sum": 42}


def test_unknown_tool_suggests_the_nearest(mcpd):
    mcpd.load_testserver("ts")
    rc, out, err = ctl(mcpd.sock, "call", "ts", "ecoh", "message=x")
    assert rc == 1
    assert "has no tool 'ecoh'; did you mean echo?" in err
    assert "mcpctl tools ts" in err


def test_env_from_the_environment_and_secret_env(mcpd, tmp_path):
    everything = ["--", NODE, EVERYTHING_JS, "stdio"]
    rc, out, err = ctl(mcpd.sock, "load", "--no-persist", "--name", "ev",
                       "--env", "MCPD_IT_FROM_ENV", *everything)
    assert rc == 2
    assert "MCPD_IT_FROM_ENV is not set" in err
    mcpd.rpc.result("mcpd/secret-set", {"name": "it_token",
                                        "value": "s3cret-from-store"})
    # An empty --env value is what a shell leaves of an unquoted
    # $(secret.x): refused, nothing loaded.
    rc, out, err = ctl(mcpd.sock, "load", "--no-persist", "--name", "ev",
                       "--env", "MCPD_IT_EMPTY=", *everything)
    assert (rc, out) == (2, ""), err
    assert err.startswith(
        "mcpctl: load: --env MCPD_IT_EMPTY= sets MCPD_IT_EMPTY to the empty "
        "string; if it was '$(secret.NAME)', the shell took $(...) for a "
        "command: single-quote it ('MCPD_IT_EMPTY=$(secret.NAME)') or use "
        "--secret-env MCPD_IT_EMPTY=NAME (an empty value on purpose goes in "
        "an --env-file line 'MCPD_IT_EMPTY=')\n"), err
    assert mcpd.list() == []
    envfile = tmp_path / "env"
    envfile.write_text("MCPD_IT_EMPTY=\n")
    rc, out, err = ctl(mcpd.sock, "load", "--no-persist", "--name", "ev",
                       "--env", "MCPD_IT_FROM_ENV", "--secret-env",
                       "MCPD_IT_SECRET=it_token", "--env-file", envfile,
                       *everything, env={"MCPD_IT_FROM_ENV": "from-mcpctl"})
    assert rc == 0, err
    rc, out, err = ctl(mcpd.sock, "call", "ev", "get-env", "--json")
    assert rc == 0, err
    got = json.loads(json.loads(out)["content"][0]["text"])
    assert got["MCPD_IT_FROM_ENV"] == "from-mcpctl"
    assert got["MCPD_IT_SECRET"] == "s3cret-from-store"
    assert got["MCPD_IT_EMPTY"] == ""
    rc, out, err = ctl(mcpd.sock, "inspect", "ev")
    assert "$(secret.it_token)" in out and "s3cret" not in out
    rc, out, err = ctl(mcpd.sock, "load", "--secret-env", "X=bad name",
                       "--", TESTSERVER)
    assert rc == 2 and "--secret-env needs NAME=SECRET" in err


def test_load_image_options_and_env_file(fake, tmp_path):
    f = fake({"mcpd/load": {"id": "0123456789ab", "name": "alpine",
                            "tools": 1, "protocol_version": "2025-06-18",
                            "generation": 1, "persistent": True}})
    envfile = tmp_path / "env"
    envfile.write_text("# a comment\nA=1\n\nB=two words\nC\nD=\n"
                       "E=\"quoted value\"\nF='single'\nG=\"half\nH='\"mixed\"'\n"
                       "I=\"\"\n")
    rc, out, err = ctl(f.path, "load", "-v", "/a:/b", "--volume", "/c:/d:ro",
                       "--network", "none", "--env-file", envfile,
                       "alpine:latest", "--json", env={"C": "from-env"})
    assert rc == 0, err
    (p,) = f.params_of("mcpd/load")
    assert p["target"] == "alpine:latest"
    assert p["volumes"] == ["/a:/b", "/c:/d:ro"]
    assert p["network"] == "none"
    # Matching quotes come off; one alone, or a mix, stays as written.
    assert p["env"] == {"A": "1", "B": "two words", "C": "from-env", "D": "",
                        "E": "quoted value", "F": "single", "G": "\"half",
                        "H": "\"mixed\"", "I": ""}
    # "1 tool", not "1 tools".
    rc, out, err = ctl(f.path, "load", "alpine:latest")
    assert rc == 0, err
    assert "loaded alpine (id 0123456789ab): 1 tool, protocol" in out


def test_load_help_lists_every_option():
    rc, out, err = ctl("/nonexistent", "load", "--help")
    assert rc == 0
    for opt in ("--name", "--env", "--secret-env", "--env-file", "--volume",
                "--network", "--timeout", "--no-persist", "--transport",
                "--allow-local", "--header", "--source", "--catalog",
                "--server-json", "--remote", "--dry-run", "--help"):
        assert re.search(rf"(?m)^  (-\w, )?{opt}\b", out), opt
    for form in ("-- CMD", "IMAGE", "URL", "NAME[@VERSION]",
                 "--server-json FILE"):
        assert form in out


# --------------------------------------------------------------------------
# Item 11: never hang


def test_stopped_daemon_gives_exit_3(mcpd):
    mcpd.load_testserver("ts")
    os.kill(mcpd.pid, signal.SIGSTOP)
    try:
        # Each gives up after its own 0.5 s, as it says (ctl's timeout
        # catches a hang).
        rc, out, err = ctl(mcpd.sock, "list", "--request-timeout", "0.5")
        assert rc == 3, err
        assert f"mcpd at {mcpd.sock} did not answer within 0.5 s" in err
        assert f"kill -CONT {mcpd.pid}" in err
        rc, out, err = ctl(mcpd.sock, "status",
                           env={"MCPCTL_TIMEOUT": "0.5"})
        assert rc == 3 and "did not answer within 0.5 s" in err, err
    finally:
        os.kill(mcpd.pid, signal.SIGCONT)
    # A call longer than the timeout is fine while mcpd answers.
    rc, out, err = ctl(mcpd.sock, "--request-timeout", "0.5", "call", "ts",
                       "sleep_ms", "ms=2000")
    assert rc == 0, err


# --------------------------------------------------------------------------
# Item 12 (mcpctl's side), 7 (list, tools) and 13 against a fake mcpd

ROW = {"id": "0123456789ab", "name": "srv", "agent": "default",
       "mode": "process", "transport": "stdio", "endpoint": "/bin/srv",
       "image": None, "container": None, "state": "ready",
       "protocol_version": "2025-06-18", "tools": 1, "generation": 3,
       "persistent": True, "restarts": 2, "since": "2026-01-01T00:00:00Z",
       "pid": 42}


def test_call_shows_progress_and_log_messages(fake):
    tool = {"name": "long", "server": "srv", "handle": "srv.3/long",
            "inputSchema": {"type": "object"}}

    def call(params):
        return ([("mcpd/progress", {"server": "srv", "progress": 1,
                                    "total": 4, "message": "step one"}),
                 ("mcpd/message", {"server": "srv", "level": "info",
                                   "logger": "srv", "data": "halfway"})],
                {"content": [{"type": "text", "text": "done"}]})
    f = fake({"mcpd/tools": {"tools": [tool]}, "mcpd/call": call})
    rc, out, err = ctl(f.path, "call", "srv", "long")
    assert rc == 0, err
    assert out == "done\n"
    assert "  progress 1/4: step one\n" in err
    assert "  [info] srv: halfway\n" in err
    rc, out, err = ctl(f.path, "call", "srv", "long", "--quiet")
    assert rc == 0 and out == "done\n" and err == ""


def test_list_drops_an_older_generation_error(fake):
    rows = [dict(ROW, last_error="old crash", last_error_generation=2,
                 last_error_at="2026-01-01T00:00:00Z"),
            dict(ROW, name="new", id="ba9876543210", state="failed",
                 last_error="new crash", since="2026-01-01T00:00:00Z")]
    f = fake({"mcpd/list": {"servers": rows}})
    rc, out, err = ctl(f.path, "list")
    assert rc == 0, err
    assert "old crash" not in out
    assert re.search(r"(?m)^  error \(\d+d ago\): new crash$", out), out


def test_tools_no_trunc(fake):
    desc = "word " * 40
    f = fake({"mcpd/tools": {"tools": [
        {"name": "t", "server": "srv", "handle": "srv.1/t",
         "description": desc}]}})
    rc, out, err = ctl(f.path, "tools")
    assert rc == 0, err
    assert all(len(l) <= 100 for l in out.splitlines())
    assert out.splitlines()[1].endswith("...")
    rc, out, err = ctl(f.path, "tools", "--no-trunc")
    assert rc == 0 and desc.strip() in out


def test_logs_n_0_follow(mcpd):
    mcpd.load_testserver("ts")
    mcpd.call("ts", "stderr", {"lines": 1, "text": "old-line"})
    mcpd.wait_log("ts", lambda ls: "old-line 0" in ls)
    p = subprocess.Popen([str(MCPCTL), "-s", str(mcpd.sock), "logs", "-n",
                          "0", "-f", "ts"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=child_env())
    try:
        # The follower may not be following yet: a line is written until
        # one reaches it (each the same line), and the first it prints is
        # that one, not the old one.
        def follows():
            mcpd.call("ts", "stderr", {"lines": 1, "text": "new-line"})
            return select.select([p.stdout], [], [], 0.2)[0]
        poll(follows, timeout=30, what="mcpctl logs -f to print a line")
        line = p.stdout.readline().decode()
        assert line == "new-line 0\n"
        mcpd.rpc.result("mcpd/unload", {"target": "ts"})
        out, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        assert b"old-line" not in out
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_man_page_lint_and_logs_json_text():
    mandoc = shutil.which("mandoc")
    assert mandoc, "mandoc is needed (make check installs it)"
    page = REPO / "man" / "mcpctl.1"
    p = subprocess.run([mandoc, "-Tlint", "-W", "warning", str(page)],
                       capture_output=True)
    assert p.returncode == 0 and p.stdout == b"", p.stdout.decode()
    text = subprocess.run([mandoc, "-Tascii", str(page)],
                          capture_output=True).stdout.decode()
    text = re.sub(r".\x08", "", text)
    text = re.sub(r"\s+", " ", text)
    assert ('each line is a JSON object with "server", "line", "time" '
            'and "request"') in text, text[text.find("--json each"):][:300]


def test_inspect_show_env_shows_plain_values_not_secrets(mcpd):
    mcpd.rpc.result("mcpd/secret-set", {"name": "tok", "value": "s3cret"})
    rc, out, err = ctl(mcpd.sock, "load", "--no-persist", "--name", "ts",
                       "--env", "PLAIN=visible\x1b[31m", "--secret-env",
                       "TOKEN=tok", "--", TESTSERVER)
    assert rc == 0, err
    rc, out, err = ctl(mcpd.sock, "inspect", "ts", "--show-env")
    assert rc == 0, err
    assert "s3cret" not in out + err
    # Sorted; a control character escaped; the secret its reference.
    assert re.search(r"(?m)^env:\s+PLAIN=visible\\x1b\[31m "
                     r"TOKEN=\$\(secret\.tok\)$", out), out
    got = json.loads(ctl(mcpd.sock, "inspect", "ts", "--show-env",
                         "--json")[1])
    assert got["spec"]["env"] == {"PLAIN": "visible\x1b[31m",
                                  "TOKEN": "$(secret.tok)"}
    # Without it, plain values stay masked.
    got = json.loads(ctl(mcpd.sock, "inspect", "ts", "--json")[1])
    assert got["spec"]["env"] == {"PLAIN": "***", "TOKEN": "$(secret.tok)"}
