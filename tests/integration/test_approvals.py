# SPDX-License-Identifier: ISC
"""Ask rules (issue 24 item 2, the part built: doc/policy.md): a call an ask
rule decides is held, without holding any other call, until `mcpctl
approve ID` or `mcpctl deny ID` answers it from another process, or
mcpd --approval-timeout denies it; `mcpctl approvals` lists what waits."""

import json
import threading

from conftest import poll
from test_audit import ts_definition
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
    # A cancel ends it too; it did not run, and the audit log says so.
    with mcpd.mcp_session() as raw:
        raw.request("tools/call", {"name": "ts__echo", "arguments": {}},
                    id_="x")
        held(mcpd)
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": "x"}})
        held(mcpd, 0)
    lines = [json.loads(x) for x in
             (mcpd.state / "audit.jsonl").read_text().splitlines()]
    assert [(x["tool"], x["outcome"], x["error"]) for x in lines] == \
        [("echo", "refused", {"code": -32009, "kind": "timeout"})] * 2, lines


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
        assert complete([str(MCPCTL), "approve", "--"], env)[0] == \
            ["--always", "--help", "--session"]
        assert complete([str(MCPCTL), "approvals", "-"], env)[0] == \
            ["--follow", "--help", "-f", "-h"]


# A stdio MCP server with one tool, "act", whose description is $DESC: a
# definition that changes when the server is loaded again with another.
DESC_SERVER = r'''
import json, os, sys

TOOL = {"name": "act", "description": os.environ.get("DESC", ""),
        "inputSchema": {"type": "object", "properties": {}}}
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    m, i = msg["method"], msg["id"]
    if m == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"],
             "capabilities": {"tools": {}},
             "serverInfo": {"name": "desc", "version": "1"}}
    elif m == "tools/list":
        r = {"tools": [TOOL]}
    elif m == "tools/call":
        r = {"content": [{"type": "text", "text": "acted"}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": i, "result": r})
                     + "\n")
    sys.stdout.flush()
'''


def call_act(d, raw, id_):
    raw.request("mcpd/call", {"server": "py", "tool": "act",
                              "arguments": {}}, id_=id_)


def test_approve_always_lasts_until_the_definition_changes(mcpd_factory,
                                                           tmp_path):
    import sys
    from test_persist import restart
    script = tmp_path / "desc-server.py"
    script.write_text(DESC_SERVER)
    d = mcpd_factory()
    d.load([sys.executable, script], name="py", env={"DESC": "one"})
    assert d.ctl("policy", "add", "default", "ask", "--server", "py").rc == 0
    with d.client() as raw:
        call_act(d, raw, "c1")
        [a] = held(d)
        r = d.ctl("approve", "--always", str(a["id"]), is_json=False)
        assert r.out == ("approved approval 1: agent default's call of "
                         "py__act, and every later one while its definition "
                         "stays the same\n"), r
        assert "result" in raw.response("c1"), "the held call went on"
        # Later calls go without asking.
        assert raw.result("mcpd/call", {"server": "py", "tool": "act",
                                        "arguments": {}})["content"]
    digest = ts_definition(d, "py", "act")
    saved = json.loads((d.state / "policy.json").read_text())
    assert saved["agents"]["default"][0]["always"] == [
        {"server": "py", "tool": "act", "definition": digest}], saved
    line = json.loads((d.state / "audit.jsonl").read_text()
                      .splitlines()[-1])
    assert line["decision"] == {"rule": 1, "by": "approval-always",
                                "text": "ask --server py"}, line
    # Across a restart, the same definition still goes.
    d = restart(mcpd_factory, d)
    d.load([sys.executable, script], name="py", env={"DESC": "one"})
    r = d.ctl("policy", "list", "default", is_json=False)
    assert r.out == ("agent default: default allow, 1 rule\n"
                     "    1  ask --server py\n"
                     f"  approved always: py__act (definition {digest})\n"), r
    with d.client() as raw:
        assert raw.result("mcpd/call", {"server": "py", "tool": "act",
                                        "arguments": {}})["content"]
    # Another definition is asked about again.
    d.load([sys.executable, script], name="py", env={"DESC": "two"})
    with d.client() as raw:
        call_act(d, raw, "c2")
        [a] = held(d)
        assert d.ctl("deny", str(a["id"])).rc == 0
        assert raw.response("c2")["error"]["code"] == -32003
    r = d.ctl("policy", "forget", "default", "py__act")
    assert r.rc == 0 and r.json["n"] == 1 and \
        r.json["policy"]["always"] == [], r
    r = d.ctl("policy", "forget", "default", "py__act", is_json=False)
    assert r.rc == 1 and r.err.startswith(
        "mcpctl: agent default approved no tool py__act for always "
        "(mcpctl policy list default shows what it did)"), r


def test_approve_for_the_session(mcpd):
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask", "--tool",
                    "ts__e*").rc == 0
    one = mcpd.mcp_session()
    two = mcpd.mcp_session()
    try:
        one.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "1"}}, id_="a")
        [a] = held(mcpd)
        r = mcpd.ctl("approve", "--session", str(a["id"]), is_json=False)
        assert r.out == ("approved approval 1: agent default's call of "
                         "ts__echo, and its session's later ones\n"), r
        assert one.response("a")["result"]["structuredContent"] == {
            "message": "1"}
        assert one.result("tools/call", {"name": "ts__echo", "arguments": {
            "message": "2"}})["structuredContent"] == {"message": "2"}
        # Another session is asked.
        two.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "3"}}, id_="b")
        [b] = held(mcpd)
        assert b["id"] == 2
        assert mcpd.ctl("deny", "2").rc == 0
        assert two.response("b")["error"]["code"] == -32003
    finally:
        one.close()
        two.close()
    # mcpd/call is no gateway session: --session says so and it waits on.
    with mcpd.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "echo",
                                  "arguments": {}}, id_="c")
        [c] = held(mcpd)
        r = mcpd.ctl("approve", "--session", str(c["id"]))
        assert r.rc == 1 and r.json["code"] == -32602 and \
            r.json["message"] == (
                "approval 3's call was made in no gateway session "
                "(mcpd/call, mcpctl call): approve it once or --always"), r
        assert len(held(mcpd)) == 1
        assert mcpd.ctl("approve", "3").rc == 0
        assert "result" in raw.response("c")


def elicited(raw):
    """The elicitation/create mcpd sends the session, as a message."""
    m = raw.read_message()
    assert m.get("method") == "elicitation/create", m
    return m


def test_a_client_that_declared_elicitation_is_asked(mcpd):
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask", "--tool",
                    "ts__e*").rc == 0
    raw = mcpd.mcp_session(capabilities={"elicitation": {}})
    try:
        raw.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "1"}}, id_="a")
        m = elicited(raw)
        assert m["params"] == {
            "message": "mcpd asks (approval 1): may agent default call tool "
                       "echo of server ts with the arguments "
                       '{"message":"1"}? (asked by rule 1: ' + ASK +
                       "; mcpctl approve 1 also answers)",
            "requestedSchema": {
                "type": "object",
                "properties": {"choice": {
                    "type": "string", "title": "Allow this call?",
                    "description": "once: this call; session: and this "
                    "session's later calls of the tool; always: and every "
                    "later call while its definition stays the same; "
                    "decline: refuse it",
                    "enum": ["once", "session", "always", "decline"]}},
                "required": ["choice"]}}, m
        # It is listed meanwhile: the terminal could answer too.
        assert held(mcpd)[0]["id"] == 1
        raw.send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "action": "accept", "content": {"choice": "once"}}})
        assert raw.response("a")["result"]["structuredContent"] == {
            "message": "1"}
        # Once is once: the next call asks again; decline refuses it.
        raw.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "2"}}, id_="b")
        m = elicited(raw)
        raw.send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "action": "decline"}})
        e = raw.response("b")["error"]
        assert e["code"] == -32003 and e["message"] == (
            "the user denied approval 2 (tool ts__echo of agent default, "
            "asked by rule 1: " + ASK + "); nothing was sent"), e
        # Session: the later calls of this session go unasked.
        raw.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "3"}}, id_="c")
        m = elicited(raw)
        raw.send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "action": "accept", "content": {"choice": "session"}}})
        assert "result" in raw.response("c")
        assert raw.result("tools/call", {"name": "ts__echo", "arguments": {
            "message": "4"}})["structuredContent"] == {"message": "4"}
    finally:
        raw.close()
    # Always: saved, and another session goes unasked too.
    raw = mcpd.mcp_session(capabilities={"elicitation": {}})
    try:
        raw.request("tools/call", {"name": "ts__echo", "arguments": {
            "message": "5"}}, id_="d")
        m = elicited(raw)
        raw.send({"jsonrpc": "2.0", "id": m["id"], "result": {
            "action": "accept", "content": {"choice": "always"}}})
        assert "result" in raw.response("d")
    finally:
        raw.close()
    with mcpd.mcp_session(capabilities={"elicitation": {}}) as raw:
        assert raw.result("tools/call", {"name": "ts__echo", "arguments": {
            "message": "6"}})["structuredContent"] == {"message": "6"}
    saved = json.loads((mcpd.state / "policy.json").read_text())
    assert saved["agents"]["default"][0]["always"] == [
        {"server": "ts", "tool": "echo",
         "definition": ts_definition(mcpd, "ts", "echo")}], saved
    by = [json.loads(x)["decision"]["by"] for x in
          (mcpd.state / "audit.jsonl").read_text().splitlines()]
    assert by == ["approval-once", "approval-denied", "approval-session",
                  "approval-session", "approval-always",
                  "approval-always"], by


def test_approvals_follow_prints_each_new_one(mcpd):
    import select
    import subprocess
    from conftest import MCPCTL
    mcpd.load_testserver("ts")
    assert mcpd.ctl("policy", "add", "default", "ask").rc == 0
    f = subprocess.Popen([str(MCPCTL), "-s", str(mcpd.sock), "--json",
                          "approvals", "-f"], stdout=subprocess.PIPE,
                         text=True)
    try:
        with mcpd.client() as raw:
            for i, tool in enumerate(("echo", "add")):
                raw.request("mcpd/call", {"server": "ts", "tool": tool,
                                          "arguments": {}}, id_=i)
                ready, _, _ = select.select([f.stdout], [], [], 30)
                assert ready, "approvals -f printed nothing"
                got = json.loads(f.stdout.readline())
                assert (got["id"], got["name"]) == (i + 1, f"ts__{tool}")
            for i in (1, 2):
                assert mcpd.ctl("deny", str(i)).rc == 0
    finally:
        f.kill()
        f.wait(timeout=10)


def test_an_sdk_v2_client_over_http_waits_for_approve(mcpd_factory,
                                                      tmp_path):
    from conftest import PEERS, free_port
    from test_gateway_v2 import NODE as NODE_V2, V2_CLIENT, V2Client
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.load_testserver("ts")
    assert d.ctl("policy", "add", "default", "ask", "--tool",
                 "ts__e*").rc == 0
    token = d.ctl("token").json["token"]
    v2 = V2Client([NODE_V2, V2_CLIENT, PEERS, "legacy", "--http",
                   f"http://127.0.0.1:{port}/mcp", token],
                  tmp_path / "v2.err")
    answers = []

    def answer():
        [a] = held(d)
        answers.append(d.ctl("approve", str(a["id"])))
    t = threading.Thread(target=answer)
    t.start()
    try:
        r = v2.ask('call ts__echo {"message":"over http"}')
    finally:
        t.join(timeout=60)
        v2.close()
    assert answers and answers[0].rc == 0, answers
    assert r["result"]["structuredContent"] == {"message": "over http"}, r


def test_a_desktop_notification_when_notify_send_exists(mcpd_factory,
                                                        tmp_path):
    """notify-send here is a stand-in that writes its arguments down: the
    real one needs a desktop session, which a test machine lacks."""
    import os
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "notified"
    stand_in = bin_dir / "notify-send"
    stand_in.write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' "
                        f"\"$a\"; done > {seen}\n")
    stand_in.chmod(0o755)
    d = mcpd_factory(env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    d.load_testserver("ts")
    assert d.ctl("policy", "add", "default", "ask", "--tool",
                 "ts__e*").rc == 0
    with d.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "echo",
                                  "arguments": {}}, id_="n")
        poll(lambda: seen.exists() and seen.read_text().count("\n") == 3,
             what="notify-send to be run")
        assert seen.read_text().splitlines() == [
            "--app-name=mcpd", "mcpd: approval 1",
            "agent default calls ts__echo (asked by rule 1: " + ASK +
            "): mcpctl approve 1 or mcpctl deny 1"]
        assert d.ctl("deny", "1").rc == 0
        assert raw.response("n")["error"]["code"] == -32003


def test_mcpd_stopping_fails_a_held_call_unsent(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("ts")
    assert d.ctl("policy", "add", "default", "ask").rc == 0
    with d.client() as raw:
        raw.request("mcpd/call", {"server": "ts", "tool": "echo",
                                  "arguments": {}}, id_="s")
        held(d)
        assert d.stop() == []
        e = raw.response("s")["error"]
    assert e == {"code": -32004,
                 "message": "mcpd is shutting down: the call of ts__echo "
                            "waited for approval 1 and was not sent",
                 "data": {"kind": "unavailable"}}, e
    line = json.loads((d.state / "audit.jsonl").read_text()
                      .splitlines()[-1])
    assert (line["outcome"], line["error"]) == (
        "refused", {"code": -32004, "kind": "unavailable"}), line
