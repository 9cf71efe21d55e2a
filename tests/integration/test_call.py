# SPDX-License-Identifier: ISC
"""mcpd/call: results passed through verbatim, isError, upstream errors,
deadlines, concurrency on one server and big results."""

import json

from conftest import (INVALID_PARAMS, MiB, NOT_FOUND, OUTCOME_UNKNOWN, UNAVAILABLE,
                      rpc_error_of)


def test_call_echo_testserver_verbatim(mcpd):
    r = mcpd.load_testserver("ts")
    want = {"content": [{"type": "text", "text": "hi there"}],
            "structuredContent": {"message": "hi there"}}
    assert mcpd.call("ts", "echo", {"message": "hi there"}) == want
    by_id = mcpd.call(r["id"], "echo", {"message": "hi there"})
    assert by_id == want
    handle = f"ts.{r['generation']}/echo"
    assert mcpd.rpc.result("mcpd/call", {
        "handle": handle, "arguments": {"message": "hi there"}}) == want
    assert mcpd.call("ts", "add", {"a": 2, "b": 40}) == {
        "content": [{"type": "text", "text": "42"}],
        "structuredContent": {"sum": 42}}


def test_call_everything_echo_and_structured_content(mcpd):
    mcpd.load_everything("everything")
    r = mcpd.call("everything", "echo", {"message": "hello mcpd"})
    assert r["content"] == [{"type": "text", "text": "Echo: hello mcpd"}]
    assert not r.get("isError")

    r = mcpd.call("everything", "get-structured-content",
                  {"location": "Chicago"})
    sc = r["structuredContent"]
    assert set(sc) == {"temperature", "conditions", "humidity"}
    assert isinstance(sc["temperature"], (int, float))
    # The text block carries the same object: both passed through intact.
    assert json.loads(r["content"][0]["text"]) == sc

    r = mcpd.call("everything", "get-sum", {"a": 19, "b": 23})
    assert "42" in r["content"][0]["text"]


def test_is_error_is_a_result(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.call("ts", "fail", {"message": "broken on purpose"})
    assert r == {"content": [{"type": "text", "text": "broken on purpose"}],
                 "isError": True}
    # Argument validation failures are tool results too (server's choice).
    r = mcpd.call("ts", "add", {"a": "two", "b": 1})
    assert r["isError"] is True
    assert "'a'" in r["content"][0]["text"]


def test_unknown_tool_or_server(mcpd):
    r = mcpd.load_testserver("ts")
    # mcpd knows the server's tools: nothing is sent upstream.
    e = rpc_error_of(mcpd.call, "ts", "no_such_tool")
    assert e.code == NOT_FOUND, e
    assert e.data == {"kind": "not-found", "what": "tool"}, e
    assert e.message == "server ts has no tool named no_such_tool", e
    e = rpc_error_of(mcpd.call, "nope", "echo", {"message": "x"})
    assert e.code == NOT_FOUND and e.data["kind"] == "not-found"
    e = rpc_error_of(mcpd.rpc.result, "mcpd/call",
                     {"handle": f"nope.{r['generation']}/echo"})
    assert e.code == NOT_FOUND
    assert mcpd.row("ts")["state"] == "ready"


def test_deadline_after_send_is_outcome_unknown(mcpd):
    mcpd.load_testserver("ts")
    e = rpc_error_of(mcpd.call, "ts", "sleep_ms", {"ms": 20000},
                     timeout_ms=300)
    assert e.code == OUTCOME_UNKNOWN
    assert e.data["kind"] == "outcome-unknown"
    assert e.data["execution_outcome"] == "unknown"
    # mcpd told the server with notifications/cancelled.
    mcpd.wait_log("ts", lambda ls: any(l.startswith("client cancelled ")
                                       for l in ls),
                  what="the server to see notifications/cancelled")
    # The server is still in service, not restarted.
    assert mcpd.call("ts", "echo", {"message": "after"})[
        "structuredContent"] == {"message": "after"}
    row = mcpd.row("ts")
    assert row["state"] == "ready" and row["restarts"] == 0


def test_answers_come_in_any_order(mcpd):
    mcpd.load_testserver("ts")
    with mcpd.client() as c:
        slow = c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 3000}})
        fast = c.request("mcpd/call", {"server": "ts", "tool": "echo",
                                       "arguments": {"message": "fast"}})
        first = c.read_message(timeout=20)
        assert first["id"] == fast, first
        assert first["result"]["structuredContent"] == {"message": "fast"}
        r = c.response(slow, timeout=30)
        assert r["result"]["content"][0]["text"] == "slept 3000 ms"


def test_big_result_passes_intact(mcpd):
    mcpd.load_testserver("ts")
    n = 5 * MiB
    r = mcpd.call("ts", "big", {"bytes": n}, timeout=60)
    text = r["content"][0]["text"]
    assert len(text) == n
    assert text == "x" * n
    # And the connection goes on.
    assert mcpd.call("ts", "echo", {"message": "after big"})[
        "structuredContent"] == {"message": "after big"}


def test_client_leaving_mid_call_harms_nobody(mcpd):
    mcpd.load_testserver("ts")
    c = mcpd.client()
    c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                            "arguments": {"ms": 300}})
    c.request("mcpd/call", {"server": "ts", "tool": "big",
                            "arguments": {"bytes": 4 * MiB}})
    c.close()
    # A later call outlives both answers that had nowhere to go.
    assert mcpd.call("ts", "sleep_ms", {"ms": 800})["content"][0][
        "text"] == "slept 800 ms"
    assert mcpd.proc.poll() is None
    assert mcpd.call("ts", "echo", {"message": "still"})[
        "structuredContent"] == {"message": "still"}
    assert mcpd.row("ts")["restarts"] == 0


def test_call_deadline_longer_than_the_work(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.call("ts", "sleep_ms", {"ms": 1500}, timeout_ms=10000)
    assert r["content"][0]["text"] == "slept 1500 ms"


def test_server_that_stops_reading_is_not_fed_forever(mcpd_factory):
    """A server that stops reading its stdin: mcpd keeps at most four
    max_message of input for it, refuses further calls as unavailable
    (nothing sent), and all is well once the server reads again."""
    d = mcpd_factory("--max-message", "65536")
    d.load_testserver("ts")
    assert "not reading" in d.call("ts", "deaf", {"ms": 4000})[
        "content"][0]["text"]
    c = d.client()
    blob = "x" * 30000
    ids = [c.request("mcpd/call", {"server": "ts", "tool": "echo",
                                   "arguments": {"message": blob}})
           for _ in range(40)]
    answers = [c.response(i, timeout=30) for i in ids]
    refused = [a for a in answers if "error" in a]
    done = [a for a in answers if "result" in a]
    assert refused, "every call was queued for a server that reads nothing"
    for a in refused:
        assert a["error"]["code"] == UNAVAILABLE, a
        assert "not reading" in a["error"]["message"], a
    # What was queued before the limit went through once it read again.
    assert done, answers[:2]
    for a in done:
        assert a["result"]["structuredContent"]["message"] == blob
    assert d.call("ts", "echo", {"message": "fine"})[
        "structuredContent"] == {"message": "fine"}


def test_call_progress_and_log_messages_reach_the_caller(mcpd):
    """mcpd/call with progress: true gives the server a progressToken of
    mcpd's own and maps its notifications/progress back to the caller as
    mcpd/progress (another caller's never), and the server's log messages
    during the call as mcpd/message; mcpctl call prints them on stderr."""
    mcpd.load_testserver("ts")
    with mcpd.client(timeout=30) as a, mcpd.client(timeout=30) as b:
        ida = a.request("mcpd/call", {"server": "ts", "tool": "report",
                                      "arguments": {"steps": 3},
                                      "progress": True})
        idb = b.request("mcpd/call", {"server": "ts", "tool": "report",
                                      "arguments": {"steps": 2},
                                      "progress": True})
        seen = {}
        for name, c, i in (("a", a, ida), ("b", b, idb)):
            notes = []
            while True:
                m = c.read_message(timeout=10)
                if m.get("id") == i:
                    break
                notes.append(m)
            assert m["result"]["content"][0]["text"].startswith(
                "reported "), m
            seen[name] = notes
        progress = [(n["params"]["request"], n["params"]["progress"],
                     n["params"]["total"]) for n in seen["a"]
                    if n["method"] == "mcpd/progress"]
        assert progress == [(ida, 1, 3), (ida, 2, 3), (ida, 3, 3)], seen
        progress = [(n["params"]["request"], n["params"]["total"])
                    for n in seen["b"] if n["method"] == "mcpd/progress"]
        assert progress == [(idb, 2), (idb, 2)], seen
        logs = [n["params"] for n in seen["a"]
                if n["method"] == "mcpd/message"]
        assert logs and all(p["server"] == "ts" and p["level"] == "info"
                            and p["logger"] == "report" and
                            p["data"] == "a step" for p in logs), logs
    # Without progress: the server gets no token, the caller no notes.
    res = mcpd.call("ts", "report", {"steps": 1})
    assert res["content"][0]["text"] == "reported 1 steps (no progressToken)"
    r = mcpd.ctl("call", "ts", "report", "steps=2", is_json=False)
    assert r.rc == 0, r
    assert r.out == "reported 2 steps\n", r
    assert r.err.count("  progress ") == 2, r.err
    assert "  progress 2/2: working\n" in r.err, r.err
    assert "  [info] report: a step\n" in r.err, r.err
    r = mcpd.ctl("call", "ts", "report", "steps=2", "--quiet", is_json=False)
    assert r.rc == 0 and r.err == "", r


def test_a_long_request_id_gets_its_answer(mcpd):
    """A result passed through unparsed is framed with the caller's id, of
    any length (an id over 127 characters once got no answer at all:
    found by the jsonrpc fuzz target)."""
    mcpd.load_testserver("ts")
    with mcpd.client(timeout=30) as c:
        long_id = "request-" + "x" * 300
        c.request("mcpd/call", {"server": "ts", "tool": "echo",
                                "arguments": {"message": "long"}},
                  id_=long_id)
        r = c.response(long_id, timeout=10)
        assert r["result"]["structuredContent"] == {"message": "long"}, r


def test_tools_of_one_tool(mcpd):
    """mcpd/tools with a tool name gives that tool alone (what mcpctl call
    asks for), none for a name the server lacks, and needs its server."""
    mcpd.load_testserver("ts")
    tools = mcpd.rpc.result("mcpd/tools", {"server": "ts", "tool": "add"})
    assert [t["name"] for t in tools["tools"]] == ["add"], tools
    assert tools["tools"][0]["handle"].endswith("/add")
    assert mcpd.rpc.result("mcpd/tools", {"server": "ts",
                                          "tool": "nope"}) == {"tools": []}
    e = mcpd.rpc.error("mcpd/tools", {"tool": "add"})
    assert e["code"] == INVALID_PARAMS, e
    assert e["message"] == 'a tool name needs its server ("server")', e
