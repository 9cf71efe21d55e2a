# SPDX-License-Identifier: ISC
"""Protocol eras over stdio: mcpd tries 2026-07-28 (server/discover) first
and falls back to initialize; a modern server gets _meta on every request."""

from conftest import OUTCOME_UNKNOWN, TESTSERVER_TOOLS, rpc_error_of


def test_legacy_server_falls_back_to_initialize(mcpd):
    r = mcpd.load_testserver("legacy")
    assert r["protocol_version"] == "2025-11-25"
    assert r["tools"] == len(TESTSERVER_TOOLS)
    # The server saw initialize: the discovery probe was refused, then
    # the legacy handshake ran.
    lines = mcpd.wait_log("legacy", lambda ls: any(
        "client initialized" in l for l in ls))
    assert any("initialize" in l for l in lines), lines


def test_modern_server_over_stdio(mcpd):
    r = mcpd.load_testserver("modern", "--modern")
    assert r["protocol_version"] == "2026-07-28", r
    assert r["tools"] == len(TESTSERVER_TOOLS)
    assert mcpd.row("modern")["protocol_version"] == "2026-07-28"
    res = mcpd.call("modern", "echo", {"message": "now"})
    assert res["structuredContent"] == {"message": "now"}
    lines = mcpd.logs("modern")
    requests = [l for l in lines if l.startswith("modern request")]
    # Every request carried _meta; initialize was never sent.
    assert requests, lines
    assert all(l.endswith("with _meta") for l in requests), requests
    assert not any("initialize" in l for l in requests), requests
    assert any("tools/call" in l for l in requests), requests


def test_input_required_ends_the_call_unanswered(mcpd):
    mcpd.load_testserver("modern", "--modern")
    e = rpc_error_of(mcpd.call, "modern", "ask", {})
    assert e.code == OUTCOME_UNKNOWN and e.data["kind"] == "outcome-unknown"
    assert "input" in e.message, e.message
    # Nothing was sent again: the server saw exactly one tools/call.
    calls = [l for l in mcpd.logs("modern")
             if l.startswith("modern request tools/call")]
    assert len(calls) == 1, calls
    # The connection is still good.
    assert mcpd.call("modern", "add", {"a": 2, "b": 3})[
        "structuredContent"] == {"sum": 5}
