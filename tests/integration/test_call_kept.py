# SPDX-License-Identifier: ISC
"""mcpctl call keeps the definition of each tool it called and makes a warm
call in one request, naming the definition's digest; mcpd refuses a call
made by another definition (tool-changed) and mcpctl calls again by the one
mcpd gives. What mcpctl sends is read on the way by a relay between mcpctl
and mcpd's socket that passes every byte through unchanged."""

import json
import os
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import TOOL_CHANGED, rpc_error_of, run_ctl

HEX32 = set("0123456789abcdef")


class Relay:
    """A Unix socket that forwards each connection to mcpd's socket and
    records every request line the client sends (method and params)."""

    def __init__(self, target, path):
        self.target = str(target)
        self.path = str(path)
        self.sent = []
        self.lock = threading.Lock()
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(8)
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            u.connect(self.target)
            threading.Thread(target=self._pump, args=(c, u, True),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(u, c, False),
                             daemon=True).start()

    def _pump(self, src, dst, is_request):
        pending = b""
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                return
            if is_request:
                pending += data
                *lines, pending = pending.split(b"\n")
                with self.lock:
                    for line in lines:
                        msg = json.loads(line)
                        self.sent.append((msg.get("method"),
                                          msg.get("params")))
            dst.sendall(data)

    def take(self):
        """The requests recorded since the last take, in order."""
        with self.lock:
            sent, self.sent = self.sent, []
        return sent

    def close(self):
        # A thread blocked in accept() is not woken by close(): it would
        # take the next test's connection when the descriptor number
        # comes back (and forward it to this test's mcpd, long gone).
        # shutdown() wakes it; it ends before the number can be reused.
        try:
            self.srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.acceptor.join(timeout=30)
        assert not self.acceptor.is_alive(), "the relay's acceptor is stuck"
        self.srv.close()


@pytest.fixture
def relay(mcpd, tmp_path):
    r = Relay(mcpd.sock, tmp_path / "relay.sock")
    yield r
    r.close()


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    d.mkdir()
    return d


def ctl(mcpd, relay, cache, *args):
    """mcpctl --json on the relay with its own cache directory."""
    env = dict(mcpd.env, XDG_CACHE_HOME=str(cache))
    return run_ctl(relay.path, *args, env=env)


def kept_files(cache):
    d = cache / "mcpctl" / "tools"
    return sorted(d.iterdir()) if d.is_dir() else []


def methods(sent):
    return [m for m, _ in sent if m != "mcpd/hello"]


def listed(mcpd, server, tool):
    tools = mcpd.rpc.result("mcpd/tools", {"server": server, "tool": tool})
    assert len(tools["tools"]) == 1, tools
    return tools["tools"][0]


def test_tools_of_one_tool_carry_its_definition(mcpd):
    mcpd.load_testserver("ts")
    echo = listed(mcpd, "ts", "echo")
    add = listed(mcpd, "ts", "add")
    for t in (echo, add):
        assert len(t["definition"]) == 32 and set(t["definition"]) <= HEX32
    assert echo["definition"] != add["definition"]
    # The same definition each time it is asked; the full listing has none.
    assert listed(mcpd, "ts", "echo")["definition"] == echo["definition"]
    assert all("definition" not in t for t in mcpd.tools("ts"))
    assert mcpd.rpc.result("mcpd/tools", {"server": "ts", "tool": "nope"}) \
        == {"tools": []}


def test_call_by_another_definition_is_refused_before_sending(mcpd):
    mcpd.load_testserver("ts")
    e = rpc_error_of(mcpd.call, "ts", "stderr",
                     {"lines": 1, "text": "reached the server"},
                     definition="0" * 32)
    assert e.code == TOOL_CHANGED, e
    assert e.data == {"kind": "tool-changed",
                      "tool": listed(mcpd, "ts", "stderr")}, e
    # The same call by the definition mcpd gave goes through.
    r = mcpd.call("ts", "stderr", {"lines": 1, "text": "now sent"},
                  definition=listed(mcpd, "ts", "stderr")["definition"])
    assert r["content"] == [{"type": "text", "text": "wrote 1 lines"}], r
    mcpd.wait_log("ts", lambda lines: any("now sent" in x for x in lines),
                  what="the second call's line")
    assert not any("reached the server" in x for x in mcpd.logs("ts"))


def test_warm_call_is_one_request(mcpd, relay, cache):
    mcpd.load_testserver("ts")
    r = ctl(mcpd, relay, cache, "call", "ts", "echo", "message=hi")
    assert (r.rc, r.json["structuredContent"], r.err) == \
        (0, {"message": "hi"}, ""), r
    assert methods(relay.take()) == ["mcpd/tools", "mcpd/call"]
    files = kept_files(cache)
    assert len(files) == 1, files
    assert os.stat(files[0]).st_mode & 0o777 == 0o600
    assert os.stat(files[0].parent).st_mode & 0o777 == 0o700
    doc = json.loads(files[0].read_text())
    assert doc == {"key": [relay.path, "default", "ts", "echo"],
                   "tool": listed(mcpd, "ts", "echo")}, doc

    r = ctl(mcpd, relay, cache, "call", "ts", "echo", "message=again")
    assert (r.rc, r.json["structuredContent"], r.err) == \
        (0, {"message": "again"}, ""), r
    sent = [s for s in relay.take() if s[0] != "mcpd/hello"]
    assert [m for m, _ in sent] == ["mcpd/call"], sent
    assert sent[0][1]["definition"] == doc["tool"]["definition"]
    assert sent[0][1]["arguments"] == {"message": "again"}


def stale(path, mutate):
    """Rewrites a kept definition as an older one of the tool would be."""
    doc = json.loads(path.read_text())
    mutate(doc["tool"])
    doc["tool"]["definition"] = "0" * 32
    path.write_text(json.dumps(doc))


def test_changed_tool_is_called_again_by_its_new_definition(mcpd, relay,
                                                            cache):
    mcpd.load_testserver("ts")
    assert ctl(mcpd, relay, cache, "call", "ts", "echo", "message=x").rc == 0
    relay.take()
    [path] = kept_files(cache)
    # Kept: message was an integer. Typed by that, 42 is the number 42.
    stale(path, lambda t: t["inputSchema"]["properties"]["message"]
          .update(type="integer"))

    r = ctl(mcpd, relay, cache, "call", "ts", "echo", "message=42")
    assert (r.rc, r.json["structuredContent"], r.err) == \
        (0, {"message": "42"}, ""), r
    sent = [s for s in relay.take() if s[0] != "mcpd/hello"]
    assert [(m, p["arguments"], p["definition"]) for m, p in sent] == [
        ("mcpd/call", {"message": 42}, "0" * 32),
        ("mcpd/call", {"message": "42"},
         listed(mcpd, "ts", "echo")["definition"])], sent
    assert json.loads(path.read_text())["tool"] == listed(mcpd, "ts", "echo")


def test_kept_definition_that_refuses_the_words_is_asked_again(mcpd, relay,
                                                               cache):
    mcpd.load_testserver("ts")
    assert ctl(mcpd, relay, cache, "call", "ts", "echo", "message=x").rc == 0
    [path] = kept_files(cache)
    stale(path, lambda t: t["inputSchema"].update(
        required=["message", "other"]))
    relay.take()
    # What the old definition says of the words is not printed.
    r = ctl(mcpd, relay, cache, "call", "ts", "echo", "message=fine")
    assert (r.rc, r.json["structuredContent"], r.err) == \
        (0, {"message": "fine"}, ""), r
    assert methods(relay.take()) == ["mcpd/tools", "mcpd/call"]
    assert json.loads(path.read_text())["tool"] == listed(mcpd, "ts", "echo")

    # Words the current definition refuses too: said once, as without a
    # kept definition, and nothing is called.
    r = ctl(mcpd, relay, cache, "call", "ts", "echo")
    assert methods(relay.take()) == ["mcpd/tools"]
    with tempfile.TemporaryDirectory() as empty:
        cold = ctl(mcpd, relay, Path(empty), "call", "ts", "echo")
    relay.take()
    assert (r.rc, r.out, r.err) == (2, "", cold.err), r
    assert cold.rc == 2 and "missing required" in cold.err, cold


def test_kept_tool_the_server_no_longer_has(mcpd, relay, cache):
    mcpd.load_testserver("ts")
    assert mcpd.call("ts", "notify_changed")["content"][0]["text"] == \
        "tools changed: extra_1..extra_1"
    mcpd.wait_row("ts", lambda r: r.get("tools") == 13,
                  what="extra_1 to be listed")
    # A new tool on a known server is held until accepted (test_pins.py).
    assert mcpd.rpc.result("mcpd/accept", {"server": "ts"})["accepted"] == \
        ["extra_1"]
    r = ctl(mcpd, relay, cache, "call", "ts", "extra_1", "message=x")
    assert (r.rc, r.err) == (0, ""), r
    assert len(kept_files(cache)) == 1
    assert mcpd.rpc.result("mcpd/reload", {"target": "ts"}, timeout=30)
    mcpd.wait_row("ts", lambda r: r.get("tools") == 12,
                  what="the reloaded server without extra_1")
    relay.take()
    r = ctl(mcpd, relay, cache, "call", "ts", "extra_1", "message=x")
    assert methods(relay.take()) == ["mcpd/call", "mcpd/tools",
                                     "mcpd/tools"]
    with tempfile.TemporaryDirectory() as empty:
        cold = ctl(mcpd, relay, Path(empty), "call", "ts", "extra_1",
                   "message=x")
    assert methods(relay.take()) == ["mcpd/tools", "mcpd/tools"]
    assert (r.rc, r.out, r.err) == (cold.rc, cold.out, cold.err), r
    assert cold.rc == 1 and \
        "server 'ts' has no tool 'extra_1'" in cold.err, cold


def test_unwritable_cache_costs_only_the_round_trip(mcpd, relay, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a read-only tmpfs")
    ro = tmp_path / "ro"
    ro.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs",
                        str(ro)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr!r}")
    try:
        mcpd.load_testserver("ts")
        for word in ("one", "two"):
            r = ctl(mcpd, relay, ro, "call", "ts", "echo", f"message={word}")
            assert (r.rc, r.json["structuredContent"], r.err) == \
                (0, {"message": word}, ""), r
            assert methods(relay.take()) == ["mcpd/tools", "mcpd/call"]
        assert list(ro.iterdir()) == []
    finally:
        subprocess.run(["umount", str(ro)], check=True)
