# SPDX-License-Identifier: ISC
"""Ask rules (issue 24 item 2, the part built: doc/policy.md): a call an ask
rule decides is held, without holding any other call, until `mcpctl
approve ID` or `mcpctl deny ID` answers it from another process, or
mcpd --approval-timeout denies it; `mcpctl approvals` lists what waits."""

import json
import threading

from conftest import poll
from test_profiles import bridge, clients  # noqa: F401

ASK = "ask --tool 'ts__e*'"


def held(d, n=1):
    """The waiting calls once there are n of them."""
    def waiting():
        a = d.ctl("approvals").json["approvals"]
        return [a] if len(a) == n else None
    return poll(waiting, what=f"{n} held call(s)")[0]


def test_a_held_call_waits_for_approve_and_holds_nothing_else(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.ctl("policy", "add", "default", "ask", "--tool", "ts__e*")
    assert r.rc == 0, r
    r = mcpd.ctl("policy", "test", "default", "ts__echo", is_json=False)
    assert r.out == f"ask by rule 1 ({ASK}): ts__echo matches 'ts__e*'\n", r
    with mcpd.mcp_session() as raw:
        # Asked tools are listed: a client may call them.
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert "ts__echo" in names, names
        raw.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "line\nnext\x1b[31m"}}, id_="held")
        # Another call of the same session goes on meanwhile.
        assert raw.result("tools/call", {"name": "ts__add", "arguments": {
            "a": 2, "b": 3}})["structuredContent"] == {"sum": 5}
        [a] = held(mcpd)
        assert a == {"id": 1, "agent": "default", "server": "ts",
                     "tool": "echo", "name": "ts__echo",
                     "arguments": '{"message":"line\\nnext\\u001B[31m"}',
                     "rule": 1, "asked_by": "rule 1: " + ASK,
                     "age_s": a["age_s"],
                     "timeout_s": 120}, a
        out = mcpd.ctl("approvals", is_json=False).out
        assert out == (
            "approval 1: agent default calls ts__echo "
            '{"message":"line\\nnext\\u001B[31m"} (asked by rule 1: ' +
            ASK +
            f"; {a['age_s']} s ago, denied in {120 - a['age_s']} s unless "
            "answered: mcpctl approve 1, mcpctl deny 1)\n"), out
        r = mcpd.ctl("approve", "1", is_json=False)
        assert (r.rc, r.out) == (0, "approved approval 1: agent default's "
                                    "call of ts__echo\n"), r
        got = raw.response("held")
        assert got["result"]["structuredContent"] == {
            "message": "line\nnext\x1b[31m"}, got
    assert mcpd.ctl("approvals").json["approvals"] == []
    line = json.loads((mcpd.state / "audit.jsonl").read_text()
                      .splitlines()[-1])
    assert (line["tool"], line["decision"], line["outcome"]) == \
        ("echo", {"rule": 1, "by": "approval-once", "text": ASK,
                  "approval": 1}, "ok"), line


def test_deny_from_another_process_and_an_sdk_client(mcpd, clients):
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask", "--tool",
                    "ts__e*").rc == 0
    c = bridge(mcpd, clients)
    answers = []

    def answer():
        [a] = held(mcpd)
        answers.append(mcpd.ctl("deny", str(a["id"])))
    t = threading.Thread(target=answer)
    t.start()
    r = c.ask('call ts__echo {"message":"x"}')
    t.join(timeout=60)
    assert answers and answers[0].rc == 0, answers
    assert r["error"] == {
        "code": -32003,
        "message": "MCP error -32003: the user denied approval 1 (tool "
                   "ts__echo of agent default, asked by rule 1: " + ASK +
                   "); nothing was sent"}, r
    r = mcpd.ctl("approve", "1", is_json=False)
    assert r.rc == 1 and r.err.startswith(
        "mcpctl: no call waits for approval 1: it was answered, timed out "
        "or its caller went (mcpctl approvals lists those that wait)"), r


def test_an_unanswered_ask_times_out_as_denied(mcpd_factory):
    d = mcpd_factory("--approval-timeout", "1")
    d.load_testserver("ts")
    assert d.ctl("policy", "add", "default", "ask", "--server", "ts").rc == 0
    with d.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "add",
                                  "arguments": {"a": 1, "b": 1}}, id_="c")
        e = raw.response("c", timeout=60)["error"]
    assert e == {"code": -32003,
                 "message": "nobody answered approval 1 (tool ts__add of "
                            "agent default, asked by rule 1: ask --server "
                            "ts) within 1 s (mcpd --approval-timeout), so it "
                            "timed out and was denied; nothing was sent",
                 "data": {"tool": "ts__add", "agent": "default", "rule": 1,
                          "approval": 1, "kind": "denied"}}, e
    line = json.loads((d.state / "audit.jsonl").read_text()
                      .splitlines()[-1])
    assert (line["decision"], line["outcome"]) == (
        {"rule": 1, "by": "approval-timeout", "text": "ask --server ts",
         "approval": 1}, "denied"), line


def test_a_caller_that_goes_takes_its_ask_with_it(mcpd):
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask").rc == 0
    raw = mcpd.mcp_session()
    raw.request("tools/call", {"name": "ts__echo", "arguments": {}},
                id_="gone")
    held(mcpd)
    raw.close()
    held(mcpd, 0)
    r = mcpd.ctl("approve", "1")
    assert r.rc == 1 and r.json["data"]["kind"] == "not-found", r


def test_the_default_can_ask(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.ctl("policy", "default", "default", "ask")
    assert r.rc == 0 and r.json["default"] == "ask", r
    with mcpd.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "add",
                                  "arguments": {"a": 1, "b": 2}}, id_="c")
        [a] = held(mcpd)
        assert (a["rule"], a["asked_by"]) == (None, "the agent's default")
        assert mcpd.ctl("deny", str(a["id"])).rc == 0
        e = raw.response("c")["error"]
    assert e["message"] == ("the user denied approval 1 (tool ts__add of "
                            "agent default, asked by the agent's default); "
                            "nothing was sent"), e


def test_bash_completion_of_approve(mcpd):
    from test_callflags import complete
    from conftest import MCPCTL
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask").rc == 0
    with mcpd.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "add",
                                  "arguments": {"a": 1, "b": 2}}, id_="c")
        held(mcpd)
        env = dict(mcpd.env or {}, MCPD_SOCKET=str(mcpd.sock))
        assert complete([str(MCPCTL), "approve", ""], env)[0] == ["1"]
        assert complete([str(MCPCTL), "approvals", "-"], env)[0] == \
            ["--follow", "--help", "-f", "-h"]
