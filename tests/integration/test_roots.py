# SPDX-License-Identifier: ISC
"""A server's roots/list that no call raised (servers ask at start, and
again after notifications/roots/list_changed) is answered with the roots
of the agent's gateway sessions that see the server and declared roots:
mcpd asks each, and answers theirs when they agree, an empty list
otherwise, never an error; it says which at debug level (-v). mcpd sends
the servers notifications/roots/list_changed when such a session starts,
announces a change or goes, so that a server that keeps its roots (as
server-everything does) asks again. The servers are server-everything,
with the official SDK client, and mcp-testserver --ping-client, which
logs each answer, with raw sessions (test_gateway_ask.py and
test_call_elicit.py cover roots asked during a call)."""

import json
import subprocess

from conftest import MCPCTL, MCPD, poll
from test_gateway_ask import clients  # noqa: F401 (a fixture)

NO_CALL = "roots/list with no call in flight: "


def roots_text(c):
    r = c.ask("call everything__get-roots-list {}")
    assert "result" in r, r
    return r["result"]["content"][0]["text"]


def listed(uri, name):
    return (f"Current MCP Roots (1 total):\n\n1. {name}\n   URI: {uri}\n\n"
            "Note: ")


def test_the_start_request_is_answered(mcpd_factory):
    d = mcpd_factory("-v")
    d.load_everything(timeout=120)
    poll(lambda: f"everything: {NO_CALL}no gateway session that sees this "
         "server declared roots; answered an empty list" in d.read_stderr(),
         what="mcpd to answer server-everything's first roots/list")
    r = d.ctl("logs", "everything", is_json=False)
    assert r.rc == 0, r
    assert "Failed to request roots" not in r.out + r.err, r


def test_a_sessions_roots_reach_a_server_that_keeps_them(
        mcpd_factory, clients):  # noqa: F811
    d = mcpd_factory("-v")
    d.load_everything(timeout=120, settle=True)
    # --no-project: a bridge that finds no project file has mcpd ask its
    # client's roots once more, for one (test_projects.py); here each ask
    # is the server's.
    c = clients(d.sock, "--no-project", caps={"roots": {"listChanged": True}},
                roots=[{"uri": "file:///tmp/a", "name": "a"}])
    # No call: mcpd told the server, which asked, and mcpd asked the
    # session.
    asked = poll(lambda: c.ask("asked")["asked"],
                 what="mcpd to ask the session for its roots")
    assert [m for m, _ in asked] == ["roots/list"], asked
    poll(lambda: roots_text(c).startswith(listed("file:///tmp/a", "a")),
         what="the server to list the session's root")
    assert (f"everything: {NO_CALL}answered the 1 root(s) that the 1 "
            "gateway session(s) declaring roots agree on") in d.read_stderr()

    assert c.ask('roots [{"uri": "file:///tmp/b", "name": "b"}]') == \
        {"roots": 1}
    asked = poll(lambda: c.ask("asked")["asked"],
                 what="mcpd to ask the session for its new roots")
    assert [m for m, _ in asked] == ["roots/list"], asked
    poll(lambda: roots_text(c).startswith(listed("file:///tmp/b", "b")),
         what="the server to list the session's new root")
    # The server kept them: calls asked nothing.
    assert c.ask("asked")["asked"] == []


def answers(d, request_id):
    """The test server's log of the answer to its request_id, or None."""
    prefix = f"client answered {request_id}: "
    for line in d.logs("ts"):
        if line.startswith(prefix):
            return json.loads(line[len(prefix):])
    return None


def wait_answer(d, request_id):
    return poll(lambda: answers(d, request_id),
                what=f"the answer to the test server's {request_id}")


def roots_answer(request_id, uris):
    return {"jsonrpc": "2.0", "id": request_id,
            "result": {"roots": [{"uri": u} for u in uris]}}


def session(d):
    """A raw gateway session that declares roots and is initialized."""
    return d.mcp_session({"roots": {}})


def answer_roots(c, uris):
    msg = c.read_message(timeout=20)
    assert msg["method"] == "roots/list", msg
    assert msg["id"].startswith("mcpd-ask-"), msg
    c.send({"jsonrpc": "2.0", "id": msg["id"],
            "result": {"roots": [{"uri": u} for u in uris]}})


def test_sessions_agree_or_the_answer_is_empty(mcpd_factory):
    d = mcpd_factory("-v")
    d.load_testserver("ts", "--ping-client")
    assert wait_answer(d, "srv-2") == roots_answer("srv-2", [])

    a = session(d)
    answer_roots(a, ["file:///tmp/a"])
    assert wait_answer(d, "srv-3") == roots_answer("srv-3", ["file:///tmp/a"])

    # A second session with other roots: both are asked; they disagree.
    b = session(d)
    answer_roots(b, ["file:///tmp/b"])
    answer_roots(a, ["file:///tmp/a"])
    assert wait_answer(d, "srv-4") == roots_answer("srv-4", [])
    assert (f"ts: {NO_CALL}the gateway sessions declaring roots disagree "
            "on them; answered an empty list") in d.read_stderr()

    # It goes: the one left decides again.
    b.close()
    answer_roots(a, ["file:///tmp/a"])
    assert wait_answer(d, "srv-5") == roots_answer("srv-5", ["file:///tmp/a"])

    # It changes its roots and says so.
    a.send({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"})
    answer_roots(a, ["file:///tmp/c", "file:///tmp/d"])
    assert wait_answer(d, "srv-6") == roots_answer(
        "srv-6", ["file:///tmp/c", "file:///tmp/d"])
    a.close()


def test_a_session_that_does_not_answer(mcpd_factory):
    d = mcpd_factory("-v", "--roots-timeout", "500")
    d.load_testserver("ts", "--ping-client")
    wait_answer(d, "srv-2")
    c = session(d)
    msg = c.read_message(timeout=20)
    assert msg["method"] == "roots/list", msg
    assert c.read_message(timeout=20) == {
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": msg["id"],
                   "reason": "mcpd's deadline passed"}}
    assert wait_answer(d, "srv-3") == roots_answer("srv-3", [])
    assert (f"ts: {NO_CALL}a gateway session failed: the client did not "
            "answer within 500 ms; mcpd cancelled its request; answered an "
            "empty list") in d.read_stderr()
    c.close()


def test_the_roots_timeout_is_bounded(tmp_path):
    p = subprocess.run([str(MCPD), "--roots-timeout", "50", "-s",
                        str(tmp_path / "s"), "-S", str(tmp_path / "state")],
                       capture_output=True, text=True, timeout=30)
    assert (p.returncode, p.stderr) == (
        2, 'mcpd: --roots-timeout wants a number from 100 to 600000, not '
        '"50"\n')
    assert not (tmp_path / "state").exists()


def test_a_session_without_roots_is_not_asked(mcpd_factory):
    d = mcpd_factory("-v")
    d.load_testserver("ts", "--ping-client")
    assert wait_answer(d, "srv-2") == roots_answer("srv-2", [])
    with d.client() as c:
        c.result("initialize", {"protocolVersion": "2025-06-18",
                                "capabilities": {},
                                "clientInfo": {"name": "raw",
                                               "version": "1"}})
        c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # Nothing is sent to the server, nor asked of the session.
        c.send({"jsonrpc": "2.0",
                "method": "notifications/roots/list_changed"})
        assert c.result("ping") == {}
    assert answers(d, "srv-3") is None


def test_mcpd_as_a_server_of_itself(mcpd_factory):
    """A bridge to mcpd loaded into mcpd speaks 2026-07-28 with it, which
    has no roots/list: it gets no roots/list_changed, and its session is
    not asked, so nothing goes round (mcpd's list_changed relayed back to
    mcpd as a session's would go on for ever)."""
    d = mcpd_factory("-v")
    d.load_testserver("ts", "--ping-client")
    assert wait_answer(d, "srv-2") == roots_answer("srv-2", [])
    d.load([MCPCTL, "-s", d.sock, "bridge"], name="self")
    a = session(d)
    answer_roots(a, ["file:///tmp/a"])
    assert wait_answer(d, "srv-3") == roots_answer("srv-3", ["file:///tmp/a"])
    assert "self: connected: generation 1, protocol 2026-07-28, " in \
        d.read_stderr()
    # One list_changed, for a's start, to ts alone: nothing went round.
    assert d.call("ts", "echo", {"message": "x"})["structuredContent"] == \
        {"message": "x"}
    sent = [line.split(": ")[1] for line in d.read_stderr().splitlines()
            if "sent notifications/roots/list_changed" in line]
    assert sent == ["ts"], sent
    assert answers(d, "srv-4") is None
    a.close()
