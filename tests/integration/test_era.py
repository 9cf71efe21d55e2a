# SPDX-License-Identifier: ISC
"""Protocol eras over stdio: mcpd tries 2026-07-28 (server/discover) first
and falls back to initialize; a modern server gets _meta on every request."""

from conftest import (OUTCOME_UNKNOWN, STALE_HANDLE, TESTSERVER_TOOLS,
                      rpc_error_of)


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


def test_header_mismatch_retires_the_tool_catalog(mcpd):
    """A 2026-07-28 server's HeaderMismatch (-32020) means the tools it
    listed no longer say what it checks: the call fails as stale-handle,
    nothing is sent again, every handle of that generation is stale until
    a reload, and the reload brings a catalog that works."""
    r = mcpd.load_testserver("modern", "--modern")
    gen = r["generation"]
    handle = f"modern.{gen}/echo"
    assert any(t["handle"] == handle for t in mcpd.tools("modern"))
    e = rpc_error_of(mcpd.call, "modern", "mismatch", {"message": "x"})
    assert e.code == STALE_HANDLE and e.data["kind"] == "stale-handle", e
    assert e.data["upstream"]["code"] == -32020, e.data
    assert "mcpctl reload" in e.message, e.message
    calls = [l for l in mcpd.logs("modern")
             if l.startswith("modern request tools/call")]
    assert len(calls) == 1, calls
    # Every handle of that generation is stale now, and none is listed.
    e = rpc_error_of(mcpd.rpc.result, "mcpd/call",
                     {"handle": handle, "arguments": {"message": "m"}})
    assert e.code == STALE_HANDLE and e.data["kind"] == "stale-handle", e
    assert "retired" in e.message, e.message
    assert mcpd.tools("modern") == []
    calls = [l for l in mcpd.logs("modern")
             if l.startswith("modern request tools/call")]
    assert len(calls) == 1, calls
    r = mcpd.rpc.result("mcpd/reload", {"target": "modern"})
    assert r["generation"] == gen + 1, r
    res = mcpd.call("modern", "echo", {"message": "again"})
    assert res["structuredContent"] == {"message": "again"}, res
