# SPDX-License-Identifier: ISC
"""Upstream restarts are invisible (issue 26, item 2): when a server's
connection dies and mcpd restarts it, the agents' gateway sessions stay
open with the same tool names, a call that was not sent waits for the new
connection, the call in flight gets outcome-unknown, subscriptions are
made again upstream, and list_changed comes only when the server's lists
changed. The client is the official TypeScript SDK's over mcpctl bridge
(bridge-client.mjs)."""

import http.client
import os
import re
import signal

from conftest import (OUTCOME_UNKNOWN, TESTSERVER, TESTSERVER_TOOLS,
                      UNAVAILABLE, poll, rpc_error_of)
from test_bridge_reconnect import clients, echo  # noqa: F401 (a fixture)
from test_remote import http_testserver


def row(d, name):
    return next(r for r in d.list() if r["name"] == name)


def restarted(d, name, pid):
    """The server runs again, as another process."""
    r = row(d, name)
    return r["state"] == "ready" and r.get("pid") not in (None, pid)


def test_a_crash_is_not_seen_by_the_session(mcpd, clients):  # noqa: F811
    mcpd.load_testserver("ts", persist=True)
    mcpd.load_testserver("other", "--tools", "1")
    c = clients(mcpd.sock, env=mcpd.env)
    names = c.ask("tools")["tools"]
    assert [n for n in names if n.startswith("ts__")] == \
        [f"ts__{t}" for t in TESTSERVER_TOOLS]
    pid = row(mcpd, "ts")["pid"]
    # The call in flight when the server dies: outcome unknown.
    e = c.ask("call", name="ts__crash")["error"]
    assert e["code"] == OUTCOME_UNKNOWN, e
    assert e["data"]["kind"] == "outcome-unknown", e
    # The next call is not refused: it waits for the new connection.
    assert echo(c, "after")["result"]["structuredContent"] == \
        {"message": "after"}
    assert restarted(mcpd, "ts", pid)
    assert row(mcpd, "ts")["restarts"] == 1
    # Same names, and nothing was announced: nothing changed.
    assert c.ask("tools")["tools"] == names
    assert c.ask("seen")["changed"] == {"tools": 0, "prompts": 0,
                                        "resources": 0}


def test_a_kill_while_listing_keeps_the_tools_listed(mcpd, clients):  # noqa
    mcpd.load_testserver("ts", "--start-delay-ms", "1500", persist=True)
    c = clients(mcpd.sock, env=mcpd.env)
    names = c.ask("tools")["tools"]
    pid = row(mcpd, "ts")["pid"]
    os.kill(pid, signal.SIGKILL)
    poll(lambda: row(mcpd, "ts")["state"] != "ready",
         what="mcpd to see the server go")
    # Restarting (it takes 1.5 s to answer): its tools are still listed,
    # from what mcpd kept, and a call waits for it.
    assert c.ask("tools")["tools"] == names
    assert echo(c, "x")["result"]["structuredContent"] == {"message": "x"}
    assert c.ask("seen")["changed"] == {"tools": 0, "prompts": 0,
                                        "resources": 0}


def test_a_subscription_is_made_again_upstream(mcpd, clients,  # noqa: F811
                                               tmp_path):
    log = tmp_path / "conf.log"
    uri = "test://watched-resource"
    mcpd.load_testserver("conf", "--conformance", "--log-file", log,
                         persist=True)
    c = clients(mcpd.sock, env=mcpd.env)
    assert c.ask("subscribe", uri=uri) == {"result": {}}
    pid = row(mcpd, "conf")["pid"]
    os.kill(pid, signal.SIGKILL)
    poll(lambda: restarted(mcpd, "conf", pid), what="the restart")
    poll(lambda: log.read_text().count(f"resources/subscribe {uri}") == 2,
         what="the new connection to be subscribed again")
    r = c.ask("call", name="conf__test_update_resource")
    assert r["result"]["content"][0]["text"] == f"{uri} updated", r
    poll(lambda: c.ask("seen")["updated"] == [uri],
         what="the update after the restart")
    assert c.ask("seen")["changed"] == {"tools": 0, "prompts": 0,
                                        "resources": 0}


def test_a_restart_with_other_tools_is_announced_once(mcpd, clients,  # noqa
                                                     tmp_path):
    ntools = tmp_path / "ntools"
    ntools.write_text("1")
    cmd = ["/bin/sh", "-c",
           f'exec {TESTSERVER} --tools "$(cat {ntools})"']
    mcpd.load(cmd, name="ts", persist=True, trust_updates=True)
    c = clients(mcpd.sock, env=mcpd.env)
    assert "ts__t1" not in c.ask("tools")["tools"]
    ntools.write_text("2")
    pid = row(mcpd, "ts")["pid"]
    os.kill(pid, signal.SIGKILL)
    poll(lambda: restarted(mcpd, "ts", pid), what="the restart")
    poll(lambda: c.ask("seen")["changed"]["tools"] == 1,
         what="list_changed for the new tool")
    assert "ts__t1" in c.ask("tools")["tools"]
    assert c.ask("seen")["changed"]["tools"] == 1


# --------------------------------------------------------------------------
# A remote server that forgets its session (HTTP 404): mcpd initializes a
# new one, once, and sends the request it refused again. mcp-testserver
# --http forgets every session at POST /forget, and with --forget-on-call
# each session that a tools/call comes on; it logs "initialize: session
# ID", "tools/call on forgotten session ID: 404", and "answered METHOD on
# session ID" once an answer is sent.

FORGOTTEN = re.compile(r"^(initialize: session \w+|"
                       r"tools/call on forgotten session \w+: 404)$", re.M)


def forget_sessions(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", "/forget", b"")
        resp = conn.getresponse()
        assert resp.status == 200, resp.status
        return resp.read().decode()
    finally:
        conn.close()


def sessions(proc):
    return re.findall(r"^initialize: session (\w+)$", proc.err(), re.M)


def test_a_remote_that_forgets_its_session_is_initialized_again_once(
        mcpd, peers, clients):  # noqa: F811
    remote, port = http_testserver(peers)
    r = mcpd.load_url(f"http://127.0.0.1:{port}/mcp", name="ts",
                      allow_local=True)
    c = clients(mcpd.sock, env=mcpd.env)
    names = c.ask("tools")["tools"]
    assert names == [f"ts__{t}" for t in TESTSERVER_TOOLS]
    assert echo(c, "before")["result"]["structuredContent"] == {
        "message": "before"}
    (first,) = sessions(remote)

    assert forget_sessions(port) == "forgot 1 sessions"
    # Refused with 404 (it did not run), sent again on a new session.
    assert echo(c, "after")["result"]["structuredContent"] == {
        "message": "after"}
    assert FORGOTTEN.findall(remote.err()) == [
        f"initialize: session {first}",
        f"tools/call on forgotten session {first}: 404",
        f"initialize: session {sessions(remote)[1]}"]
    second = sessions(remote)[1]
    # Its tools listed again on the new session: the same, so the agent
    # hears nothing. A call answered after that listing comes after any
    # list_changed it would have caused.
    remote.wait_output(rf"^answered tools/list on session {second}$",
                       stream="err")
    assert echo(c, "again")["result"]["structuredContent"] == {
        "message": "again"}
    assert c.ask("seen")["changed"] == {"tools": 0, "prompts": 0,
                                        "resources": 0}
    assert c.ask("tools")["tools"] == names
    # One initialize again, and no restart: the same connection goes on.
    assert sessions(remote) == [first, second]
    got = row(mcpd, "ts")
    assert got["state"] == "ready" and got["restarts"] == 0, got
    assert got["generation"] == r["generation"], got


def test_a_second_404_in_a_row_fails_the_call(mcpd, peers):
    remote, port = http_testserver(peers, "--forget-on-call")
    r = mcpd.load_url(f"http://127.0.0.1:{port}/mcp", name="ts",
                      allow_local=True)
    e = rpc_error_of(mcpd.call, "ts", "echo", {"message": "x"})
    assert e.code == UNAVAILABLE, e
    assert e.message == (
        "the server answered HTTP 404 for its new session too (mcpd had "
        "initialized it again after HTTP 404 for the one it forgot); the "
        "request did not run"), e
    first, second = sessions(remote)[:2]
    # Sent twice, with one initialize between: what the remote saw first.
    assert FORGOTTEN.findall(remote.err())[:4] == [
        f"initialize: session {first}",
        f"tools/call on forgotten session {first}: 404",
        f"initialize: session {second}",
        f"tools/call on forgotten session {second}: 404"]
    # Then the connection is given up and started again, as after a
    # crash; the call is not sent a third time.
    got = mcpd.wait_row("ts", lambda x: x["state"] == "ready" and
                        x["restarts"] == 1)
    assert got["generation"] > r["generation"], got
    assert remote.err().count("tools/call on forgotten session") == 2


def test_a_forgotten_session_is_subscribed_again(mcpd, peers,
                                                 clients):  # noqa: F811
    uri = "test://watched-resource"
    remote, port = http_testserver(peers, "--conformance")
    mcpd.load_url(f"http://127.0.0.1:{port}/mcp", name="conf",
                  allow_local=True)
    c = clients(mcpd.sock, env=mcpd.env)
    assert c.ask("subscribe", uri=uri) == {"result": {}}
    (first,) = sessions(remote)
    remote.wait_output(rf"^answered resources/subscribe on session {first}$",
                       stream="err")
    assert forget_sessions(port) == "forgot 1 sessions"
    r = c.ask("call", name="conf__test_simple_text")
    assert r["result"]["content"][0]["text"] == \
        "This is a simple text response for testing.", r
    # The new session knows nothing of the old one's subscription: mcpd
    # makes it again there, once.
    second = sessions(remote)[1]
    remote.wait_output(
        rf"^answered resources/subscribe on session {second}$",
        stream="err")
    assert remote.err().count(f"resources/subscribe {uri}") == 2
    assert sessions(remote) == [first, second]
    assert row(mcpd, "conf")["restarts"] == 0
