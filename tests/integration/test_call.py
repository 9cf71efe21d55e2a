# SPDX-License-Identifier: ISC
"""mcpd/call: results passed through verbatim, isError, upstream errors,
deadlines, concurrency on one server and big results."""

import json

from conftest import (MiB, NOT_FOUND, OUTCOME_UNKNOWN, UNAVAILABLE, UPSTREAM,
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
    e = rpc_error_of(mcpd.call, "ts", "no_such_tool")
    if e.code == UPSTREAM:
        # Passed to the server, whose JSON-RPC error is kept verbatim.
        assert e.data["kind"] == "upstream"
        assert e.data["upstream"] == {"code": -32602,
                                      "message": "Unknown tool: no_such_tool"}
    else:
        assert e.code == NOT_FOUND, e
        assert "no_such_tool" in e.message
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
