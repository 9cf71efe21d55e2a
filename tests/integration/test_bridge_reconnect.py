# SPDX-License-Identifier: ISC
"""mcpctl bridge across mcpd's restarts (issue 26, item 2): the client's
session goes on when mcpd goes away (kill -9, mcpctl shutdown) and a new
one starts, with its view, handshake, subscriptions and log level made
again; what mcpd had and did not answer gets outcome-unknown; with no mcpd
coming back the bridge gives up after --reconnect-timeout. The client is
the official TypeScript SDK's (tests/integration/bridge-client.mjs), which
connects once and never again."""

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (MCPCTL, MCPD, NODE, OUTCOME_UNKNOWN, PEERS,
                      TESTSERVER_TOOLS, child_env, cmdline, descendants,
                      end_client, find_procs, is_alive, poll, proc_stat,
                      wait_gone)
from test_bridge import fresh  # noqa: F401 - the autostart fixture

HERE = Path(__file__).resolve().parent
CLIENT = HERE / "bridge-client.mjs"
WENT = "mcpctl: bridge: mcpd went away; reconnecting (for at most 60 s)\n"
BACK = "mcpctl: bridge: mcpd is back; the session goes on\n"
LOST = ("mcpd went away before it answered; the request may have run, "
        "and it is not sent again")


class BridgeClient:
    """bridge-client.mjs: the SDK client over `mcpctl bridge ARGS`; the
    bridge's stderr goes to a file."""

    def __init__(self, sock, *args, env, tmp_path):
        self.err_path = tmp_path / f"bridge-{time.monotonic_ns()}.err"
        self.err_file = open(self.err_path, "wb")
        argv = [NODE, str(CLIENT), str(PEERS), str(MCPCTL), "-s", str(sock),
                "bridge", *[str(a) for a in args]]
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=self.err_file, text=True)
        self.next_tag = 1
        self.answers = {}
        assert self.answer("connect") == {"connected": True}

    def send(self, op, **kw):
        tag = self.next_tag
        self.next_tag += 1
        self.proc.stdin.write(json.dumps(dict(kw, op=op, tag=tag)) + "\n")
        self.proc.stdin.flush()
        return tag

    def answer(self, tag, timeout=60):
        # Each ends in time: the SDK's and the bridge's own deadlines are
        # shorter than the test's; a hang fails the test at its timeout.
        while tag not in self.answers:
            line = self.proc.stdout.readline()
            assert line, f"the SDK client ended waiting for {tag}: " \
                f"{self.stderr()}"
            msg = json.loads(line)
            self.answers[msg["tag"]] = msg
        msg = dict(self.answers.pop(tag))
        msg.pop("tag")
        return msg

    def ask(self, op, **kw):
        return self.answer(self.send(op, **kw))

    def bridge_pid(self):
        kids = [p for p in descendants(self.proc.pid)
                if (Path(f"/proc/{p}/exe").resolve() == MCPCTL.resolve())]
        assert len(kids) == 1, kids
        return kids[0]

    def stderr(self):
        return self.err_path.read_text()

    def close(self):
        end_client(self.proc, json.dumps({"op": "quit"}))
        self.err_file.close()


@pytest.fixture
def clients(tmp_path):
    made = []

    def start(sock, *args, env):
        c = BridgeClient(sock, *args, env=env, tmp_path=tmp_path)
        made.append(c)
        return c
    yield start
    for c in made:
        c.close()


def kill9(d):
    """mcpd killed: its socket file stays, nobody listens on it."""
    d.track()
    os.kill(d.pid, signal.SIGKILL)
    d.proc.wait(timeout=10)


def echo(c, text):
    return c.ask("call", name="ts__echo", args={"message": text})


def test_the_session_survives_kill_9_and_a_new_start(mcpd_factory, clients):
    d1 = mcpd_factory()
    d1.load_testserver("ts", persist=True)
    c = clients(d1.sock, env=d1.env)
    names = c.ask("tools")["tools"]
    assert names == [f"ts__{t}" for t in TESTSERVER_TOOLS]
    assert echo(c, "before")["result"]["structuredContent"] == {
        "message": "before"}
    bridge = c.bridge_pid()

    kill9(d1)
    poll(lambda: WENT in c.stderr(), what="the bridge to notice")
    # Sent while mcpd is away: it waits for the new one.
    tag = c.send("call", name="ts__echo", args={"message": "while away"})
    d2 = mcpd_factory(base=d1.base)
    assert c.answer(tag)["result"]["structuredContent"] == {
        "message": "while away"}
    # The same session: no new handshake of the client's, the same names,
    # and no list_changed (nothing changed).
    assert echo(c, "after")["result"]["structuredContent"] == {
        "message": "after"}
    assert c.ask("tools")["tools"] == names
    seen = c.ask("seen")
    assert (seen["changed"], seen["closed"]) == (
        {"tools": 0, "prompts": 0, "resources": 0}, False), seen
    assert c.stderr() == WENT + BACK, c.stderr()
    assert c.bridge_pid() == bridge
    # mcpctl clients shows it as the client's bridge, as before.
    rows = d2.rpc.result("mcpd/clients", {})["clients"]
    assert [(r["kind"], r["pid"], r["client_pid"]) for r in rows] == [
        ("bridge", bridge, c.proc.pid)], rows


def test_the_session_survives_shutdown_and_a_new_start(mcpd_factory,
                                                       clients):
    d1 = mcpd_factory()
    d1.load_testserver("ts", persist=True)
    c = clients(d1.sock, env=d1.env)
    assert echo(c, "1")["result"]["structuredContent"] == {"message": "1"}
    r = d1.ctl("shutdown", is_json=False)
    assert (r.rc, r.out) == (0, "mcpd stopped\n"), r
    assert d1.proc.wait(timeout=30) == 0
    poll(lambda: WENT in c.stderr(), what="the bridge to notice")
    mcpd_factory(base=d1.base)
    assert echo(c, "2")["result"]["structuredContent"] == {"message": "2"}
    assert c.stderr() == WENT + BACK, c.stderr()


def test_list_changed_only_when_the_tools_changed(mcpd_factory, clients):
    """The new mcpd lacks a server the old one had (it was not saved): the
    client is told its tools changed, once."""
    d1 = mcpd_factory()
    d1.load_testserver("ts", persist=True)
    d1.load_testserver("gone", "--tools", "1")
    c = clients(d1.sock, env=d1.env)
    assert "gone__t0" in c.ask("tools")["tools"]
    kill9(d1)
    mcpd_factory(base=d1.base)
    assert echo(c, "x")["result"]["structuredContent"] == {"message": "x"}
    assert c.ask("seen")["changed"] == {"tools": 1, "prompts": 0,
                                        "resources": 0}
    assert c.ask("tools")["tools"] == [f"ts__{t}" for t in TESTSERVER_TOOLS]


def test_a_call_in_flight_gets_outcome_unknown(mcpd_factory, clients,
                                               tmp_path):
    log = tmp_path / "ts.log"
    d1 = mcpd_factory()
    d1.load_testserver("ts", "--log-file", log, persist=True)
    c = clients(d1.sock, env=d1.env)
    tag = c.send("call", name="ts__sleep_ms", args={"ms": 600000})
    poll(lambda: log.exists() and "sleep_ms" in log.read_text(),
         what="the server to have the call")
    kill9(d1)
    e = c.answer(tag)["error"]
    assert e == {"code": OUTCOME_UNKNOWN,
                 "message": f"MCP error {OUTCOME_UNKNOWN}: {LOST}",
                 "data": {"kind": "outcome-unknown",
                          "execution_outcome": "unknown"}}, e
    # Never sent again: the new server does not get it.
    mcpd_factory(base=d1.base)
    assert echo(c, "y")["result"]["structuredContent"] == {"message": "y"}
    assert log.read_text().count("sleep_ms") == 1


def test_subscriptions_and_the_log_level_are_made_again(mcpd_factory,
                                                        clients, tmp_path):
    log = tmp_path / "conf.log"
    uri = "test://watched-resource"
    d1 = mcpd_factory()
    d1.load_testserver("conf", "--conformance", "--log-file", log,
                       persist=True)
    c = clients(d1.sock, env=d1.env)
    assert c.ask("subscribe", uri=uri) == {"result": {}}
    assert c.ask("level", level="error") == {"result": {}}
    kill9(d1)
    mcpd_factory(base=d1.base)
    # The new server was asked again for the session's subscription.
    r = c.ask("call", name="conf__test_update_resource")
    assert r["result"]["content"][0]["text"] == f"{uri} updated", r
    poll(lambda: c.ask("seen")["updated"] == [uri],
         what="the update after the reconnect")
    assert log.read_text().count(f"resources/subscribe {uri}") == 2
    # The session's level is error: the tool's info message is held back
    # (it would come before the call's answer).
    r = c.ask("call", name="conf__test_logging_tool")
    assert r["result"]["content"][0]["text"] == "logged one message", r
    assert c.ask("seen")["messages"] == []


def raw_bridge(sock, *args, env):
    return subprocess.Popen(
        [str(MCPCTL), "-s", str(sock), "bridge", *[str(a) for a in args]],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env)


@pytest.mark.parametrize("how", ["kill", "shutdown"])
def test_no_mcpd_coming_back_ends_the_bridge(mcpd, how):
    p = raw_bridge(mcpd.sock, "--reconnect-timeout", "1.5", env=mcpd.env)
    try:
        p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        p.stdin.flush()
        assert json.loads(p.stdout.readline()) == {
            "jsonrpc": "2.0", "id": 1, "result": {}}
        if how == "kill":
            kill9(mcpd)
            why = ("Connection refused; mcpctl did not start mcpd: "
                   "MCPD_NO_AUTOSTART is set")
        else:
            assert mcpd.ctl("shutdown").rc == 0
            why = ("No such file or directory; mcpctl does not start an "
                   "mcpd that was stopped on purpose (its socket is gone)")
        assert p.wait(timeout=60) == 3
        err = p.stderr.read().decode()
        assert re.fullmatch(
            r"mcpctl: bridge: mcpd went away; reconnecting \(for at most "
            r"1\.5 s\)\n"
            rf"mcpctl: bridge: gave up on mcpd at {re.escape(str(mcpd.sock))}"
            r" after 1\.5 s \(--reconnect-timeout\): \d+ tries to connect, "
            rf"the last: {re.escape(why)}; the client's session ends\n",
            err), err
        assert p.stdout.read() == b""
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def daemons_on(sock):
    """The mcpd processes serving sock (not their children, not the
    bridge that names it too)."""
    mine = [p for p in find_procs(str(sock))
            if (cmdline(p) or [""])[0] == str(MCPD)]
    return [p for p in mine if proc_stat(p)[1] not in mine]


def test_the_bridge_starts_mcpd_again_after_a_crash(fresh):  # noqa: F811
    """Autostart allowed: the bridge started mcpd, mcpd crashes, the
    bridge starts a new one and the session goes on."""
    p = raw_bridge(fresh.sock, env=fresh.env)
    try:
        p.stdin.write(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}})
            .encode() + b"\n")
        p.stdin.flush()
        assert json.loads(p.stdout.readline())["id"] == 1
        p.stdin.write(b'{"jsonrpc":"2.0","method":'
                      b'"notifications/initialized"}\n')
        p.stdin.flush()
        first = daemons_on(fresh.sock)
        assert len(first) == 1, first
        os.kill(first[0], signal.SIGKILL)
        wait_gone(first)
        # Answered by the new mcpd: the replayed initialize's answer was
        # the bridge's, not the client's.
        p.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        p.stdin.flush()
        assert json.loads(p.stdout.readline()) == {
            "jsonrpc": "2.0", "id": 2, "result": {"tools": []}}
        second = daemons_on(fresh.sock)
        assert len(second) == 1 and second != first, (first, second)
        p.stdin.close()
        rc = p.wait(timeout=30)
        err = p.stderr.read().decode()
        assert rc == 0, err
        assert p.stdout.read() == b""
        assert re.fullmatch(
            r"mcpctl: started mcpd \(pid (\d+)\), log in .*\n"
            + re.escape(WENT) +
            rf"mcpctl: started mcpd \(pid {second[0]}\), log in .*\n"
            + re.escape(BACK), err), err
        assert is_alive(second[0])
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        subprocess.run([str(MCPCTL), "-s", str(fresh.sock), "shutdown"],
                       env=fresh.env, capture_output=True, timeout=60)


def test_a_line_over_the_limit_ends_the_session(mcpd):
    p = raw_bridge(mcpd.sock, "--max-message", "100", env=mcpd.env)
    out, err = p.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping",'
                             b'"params":{"x":"' + b"y" * 100 + b'"}}\n',
                             timeout=30)
    assert (p.returncode, out, err.decode()) == (
        1, b"", "mcpctl: bridge: a message of the client is longer than "
        "100 bytes (--max-message); the session ends\n")


def test_a_bad_reconnect_timeout_is_a_usage_error(tmp_path):
    p = raw_bridge(tmp_path / "none.sock", "--reconnect-timeout", "-1",
                   env=child_env())
    out, err = p.communicate(b"", timeout=30)
    assert (p.returncode, out) == (2, b"")
    assert err.decode().startswith(
        "mcpctl: bridge: --reconnect-timeout needs a number of seconds "
        "(0: end with mcpd), not '-1'\n"), err


def test_a_last_line_without_its_newline_is_sent(mcpd):
    """The relay passes whole lines; the client's last one, cut short by
    the end of its input, is one too."""
    p = raw_bridge(mcpd.sock, env=mcpd.env)
    out, err = p.communicate(b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                             timeout=30)
    assert (p.returncode, out, err) == (
        0, b'{"jsonrpc":"2.0","id":1,"result":{}}\n', b"")


def test_a_client_gone_while_mcpd_is_away_ends_the_bridge(mcpd):
    """Nobody left to reconnect for: the client closed its end of the
    bridge's standard output while the bridge waited for mcpd."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    p = subprocess.Popen([str(MCPCTL), "-s", str(mcpd.sock), "bridge"],
                         stdin=in_r, stdout=out_w, stderr=subprocess.PIPE,
                         env=mcpd.env)
    os.close(in_r)
    os.close(out_w)
    try:
        os.write(in_w, b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        with os.fdopen(os.dup(out_r), "rb", buffering=0) as f:
            assert json.loads(f.readline())["id"] == 1
        kill9(mcpd)
        os.close(out_r)
        out_r = -1
        assert p.wait(timeout=30) == 1
        assert p.stderr.read().decode() == (
            WENT + "mcpctl: bridge: cannot write to standard output: "
            "Broken pipe\n")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for fd in (in_w, out_r):
            if fd >= 0:
                os.close(fd)
