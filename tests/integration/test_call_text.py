# SPDX-License-Identifier: ISC
"""The hot path of mcpd/call (daemon/control-fast.c): a plain call line
(server, tool and arguments, nothing more) goes to a stdio server with its
arguments as the client wrote them, neither parsed nor re-encoded, and is
answered exactly as the parsed path answers. The test server runs with
--echo-input, which logs each line it reads, so a test sees which path a
call took: the parsed path re-encodes the arguments compactly."""

import json

import pytest

from conftest import NOT_FOUND

# Spaces, an escape and a character outside ASCII: kept only when unparsed.
ARGS_TEXT = '{ "message" : "caf\\u00e9 \u00e9t\u00e9" }'
MESSAGE = "caf\u00e9 \u00e9t\u00e9"


@pytest.fixture
def ts(mcpd):
    mcpd.load_testserver("ts", "--echo-input")
    return mcpd


def call_line(id_text, server="ts", tool="echo", args=ARGS_TEXT, extra=""):
    return ('{"jsonrpc":"2.0","id":%s,"method":"mcpd/call","params":'
            '{"server":"%s","tool":"%s","arguments":%s%s}}\n' %
            (id_text, server, tool, args, extra)).encode()


def answer_to(d, line, id_):
    with d.client() as c:
        c.send_raw(line)
        return c.response(id_)


def upstream_line(d, marker):
    """The one tools/call line the server read whose arguments hold
    marker."""
    lines = d.wait_log("ts", lambda ls: [
        x for x in ls if x.startswith("in: ") and marker in x])
    got = [x[4:] for x in lines if x.startswith("in: ") and marker in x]
    assert len(got) == 1, got
    return got[0]


def test_arguments_go_upstream_as_written(ts):
    r = answer_to(ts, call_line("7"), 7)
    assert r["result"]["structuredContent"] == {"message": MESSAGE}, r
    sent = upstream_line(ts, "caf")
    msg = json.loads(sent)
    assert sent == ('{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
                    '"params":{"name":"echo","arguments":%s}}'
                    % (msg["id"], ARGS_TEXT)), sent


def test_a_call_with_more_is_parsed_and_answered_the_same(ts):
    fast = answer_to(ts, call_line('"a"'), "a")
    slow = answer_to(ts, call_line('"b"', extra=',"timeout_ms":30000'), "b")
    assert slow["result"] == fast["result"], (fast, slow)
    lines = [x for x in ts.logs("ts") if x.startswith("in: ")
             and '"echo"' in x]
    assert len(lines) == 2, lines
    # The parsed path's arguments, encoded by mcpd.
    assert json.loads(lines[1][4:])["params"] == {
        "name": "echo", "arguments": {"message": MESSAGE}}
    assert ('"arguments":{"message":"%s"}' % MESSAGE) in lines[1], lines[1]


@pytest.mark.parametrize("case", [
    {"server": "nope"},
    {"tool": "no_such_tool"},
    {"server": "t\\u0073"},     # an escape in a name: parsed, still ts
])
def test_fast_and_parsed_answers_are_identical(ts, case):
    """Each case once on the hot path, once parsed (timeout_ms forces it):
    the answers are the same, error for error."""
    server = case.get("server", "ts")
    tool = case.get("tool", "echo")
    fast = answer_to(ts, call_line("11", server, tool), 11)
    slow = answer_to(ts, call_line("11", server, tool,
                                   extra=',"timeout_ms":30000'), 11)
    assert fast == slow, (fast, slow)
    if server == "nope" or tool == "no_such_tool":
        assert fast["error"]["code"] == NOT_FOUND, fast
    else:
        assert fast["result"]["structuredContent"] == {"message": MESSAGE}


def test_ids_come_back_as_they_were(ts):
    for id_text, id_ in (('"s-1"', "s-1"), ("-5", -5),
                         ("123456789012345678", 123456789012345678)):
        r = answer_to(ts, call_line(id_text), id_)
        assert r["id"] == id_ and type(r["id"]) is type(id_), r


def test_bad_arguments_are_refused_as_before(ts):
    """arguments that are not an object: the parsed path's refusal; a line
    that is not JSON: a parse error, nothing sent."""
    r = answer_to(ts, call_line("3", args='"text"'), 3)
    assert r["error"]["code"] == -32602, r
    assert r["error"] == {
        "code": -32602, "data": {"field": "arguments"},
        "message": "mcpd/call: param arguments must be an object"}, r
    with ts.client() as c:
        c.send_raw(call_line("4", args='{"message": "x",}'))
        r = c.read_message()
    assert r["id"] is None and r["error"]["code"] == -32700, r
    assert not [x for x in ts.logs("ts") if x.startswith("in: ")
                and '"tools/call"' in x]


# ---- MCP's tools/call from a 2025 gateway session: the same hot path ----

def gateway_session(d):
    """A raw 2025 MCP session on the socket, its tools listed."""
    c = d.client()
    c.send({"jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}})
    assert "result" in c.response("init"), "initialize failed"
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    c.send({"jsonrpc": "2.0", "id": "list", "method": "tools/list"})
    return c, [t["name"] for t in c.response("list")["result"]["tools"]]


def tools_call_line(id_text, name, args=ARGS_TEXT, extra=""):
    return ('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":'
            '{"name":"%s","arguments":%s%s}}\n' %
            (id_text, name, args, extra)).encode()


def test_gateway_call_goes_upstream_as_written(ts):
    c, names = gateway_session(ts)
    with c:
        assert names[0] == "ts__echo", names
        c.send_raw(tools_call_line("21", "ts__echo"))
        r = c.response(21)
        assert r["result"]["structuredContent"] == {"message": MESSAGE}, r
        c.send_raw(tools_call_line("22", "ts__echo", extra=',"_meta":{}'))
        assert c.response(22)["result"] == r["result"]
    lines = [x[4:] for x in ts.logs("ts") if x.startswith("in: ")
             and '"echo"' in x]
    assert len(lines) == 2, lines
    assert lines[0].endswith('"params":{"name":"echo","arguments":%s}}'
                             % ARGS_TEXT), lines[0]
    # _meta sends it the parsed way: arguments encoded by mcpd.
    assert json.loads(lines[1])["params"] == {
        "name": "echo", "arguments": {"message": MESSAGE}}, lines[1]
    assert ARGS_TEXT not in lines[1]


def test_gateway_fast_and_parsed_errors_are_identical(ts):
    c, _ = gateway_session(ts)
    with c:
        c.send_raw(tools_call_line("31", "no_such_tool"))
        fast = c.response(31)
        c.send_raw(tools_call_line("31", "no_such_tool", extra=',"_meta":{}'))
        slow = c.response(31)
    assert fast == slow, (fast, slow)
    assert fast["error"] == {
        "code": -32602,
        "message": "unknown tool no_such_tool: list the tools again "
                   "(tools/list)"}, fast


def test_gateway_names_follow_the_catalog(ts):
    """The session's names are kept between calls and made again when the
    catalog changes: a tool the server gains after the session's first
    call is found at once."""
    c, names = gateway_session(ts)
    with c:
        assert "ts__t0" not in names, names
        c.send_raw(tools_call_line("41", "ts__echo"))
        assert "result" in c.response(41)
        ts.rpc.result("mcpd/unload", {"target": "ts"})
        ts.load_testserver("ts", "--tools", "2", "--echo-input")
        c.send_raw(tools_call_line("42", "ts__t0"))
        r = c.response(42)
        assert r["result"]["structuredContent"] == {"message": MESSAGE}, r
        c.send_raw(tools_call_line("43", "ts__echo"))
        fast = c.response(43)
        c.send_raw(tools_call_line("43", "ts__echo", extra=',"_meta":{}'))
        assert c.response(43) == fast, fast
