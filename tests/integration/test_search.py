# SPDX-License-Identifier: ISC
"""A view over its budget (issue 23 items 3 and 4, doc/views.md): what a
view's tools/list costs (mcpctl tools --cost, mcpctl list), and, over
mcpd's --tool-budget, the view lists mcpd__find_tools and mcpd__call_tool
instead of its tools; what a session finds is added to its list. The
clients are the official TypeScript SDK's, v1 over mcpctl bridge and v2
over the bridge and --listen-http in both eras, and raw JSON-RPC where a
detail needs a close look."""

import json
import math
import os

import pytest

from conftest import (INVALID_PARAMS, MCPCTL, PEERS, TESTSERVER_TOOLS,
                      direct_tools, free_port, ts_command)
from test_callflags import complete
from test_gateway import SdkClient
from test_gateway_v2 import NODE as V2_NODE
from test_gateway_v2 import V2_CLIENT, WAYS, V2Client

OWN = ["mcpd__find_tools", "mcpd__call_tool"]


@pytest.fixture
def clients():
    made = []

    def start(d):
        c = SdkClient(d.sock)
        made.append(c)
        return c
    yield start
    for c in made:
        c.close()


def session(d):
    """A raw gateway session on the control socket."""
    return d.mcp_session(version="2025-11-25")


def as_listed(tool, server):
    """A Tool as the gateway lists it: verbatim but its name, _meta added."""
    t = dict(tool, name=f"{server}__{tool['name']}")
    t["_meta"] = dict(tool.get("_meta", {}), **{"io.mcpd/server": server,
                                                "io.mcpd/tool": tool["name"]})
    return t


def compact(v):
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False))


def view_bytes(d):
    """The bytes of the whole view's tools/list result, as mcpd counts."""
    with session(d) as c:
        tools = c.result("tools/list")["tools"]
    return compact({"tools": tools}), tools


def test_cost_counts_the_view_bytes_and_tokens(mcpd_factory):
    d = mcpd_factory("--tool-budget", "0")
    d.load_testserver("ts")
    d.load_testserver("two", "--tools", "2")
    total, tools = view_bytes(d)
    cost = d.ctl("tools", "--cost").json
    assert cost["budget"] == 0 and "search" not in cost, cost
    assert (cost["tools"], cost["bytes"], cost["tokens"]) == \
        (len(tools), total, math.ceil(total / 4))
    per = {}
    for t in tools:
        s = t["_meta"]["io.mcpd/server"]
        per.setdefault(s, [0, 0])
        per[s][0] += 1
        per[s][1] += compact(t)
    assert [(r["server"], r["tools"], r["bytes"], r["tokens"])
            for r in cost["servers"]] == \
        [(s, n, b, math.ceil(b / 4)) for s, (n, b) in per.items()]
    # The text: a row a server, the total, then the budget.
    out = d.ctl("tools", "--cost", is_json=False).out.splitlines()
    assert out[0].split() == ["SERVER", "TOOLS", "BYTES", "TOKENS"]
    assert out[1].split() == ["ts", str(per["ts"][0]), str(per["ts"][1]),
                              str(math.ceil(per["ts"][1] / 4))]
    assert out[3].split() == ["total", str(len(tools)), str(total),
                              str(math.ceil(total / 4))]
    assert out[4] == ("budget: none (mcpd --tool-budget 0): every tool is "
                      "listed")
    # mcpctl list: each server's tokens in a TOKENS column.
    lines = d.ctl("list", is_json=False).out.splitlines()
    assert lines[0].split()[:5] == ["NAME", "STATE", "TRANSPORT", "TOOLS",
                                    "TOKENS"]
    rows = {ln.split()[0]: ln.split() for ln in lines[1:]}
    assert rows["ts"][4] == str(math.ceil(per["ts"][1] / 4))
    assert rows["two"][4] == str(math.ceil(per["two"][1] / 4))
    # A server to cost is refused: the cost is of the whole view.
    bad = d.ctl("tools", "--cost", "ts", is_json=False)
    assert (bad.rc, bad.err) == (2, "mcpctl: tools: unexpected argument "
                                    "'ts'\nsee mcpctl tools --help\n"), bad


def test_budget_boundary_switches_to_search(mcpd_factory):
    d = mcpd_factory("--tool-budget", "0")
    d.load_testserver("ts")
    tokens = d.ctl("tools", "--cost").json["tokens"]
    # At the budget every tool is listed; one token over, search.
    for budget, names in ((tokens, [f"ts__{t}" for t in TESTSERVER_TOOLS]),
                          (tokens - 1, OWN)):
        e = mcpd_factory("--tool-budget", str(budget))
        e.load_testserver("ts")
        with session(e) as c:
            got = [t["name"] for t in c.result("tools/list")["tools"]]
        assert got == names, (budget, got)
    cost = e.ctl("tools", "--cost").json

    assert cost["budget"] == tokens - 1
    assert cost["search"]["tools"] == 2, cost
    out = e.ctl("tools", "--cost", is_json=False).out.splitlines()
    assert out[-2].split()[0] == "listed"
    assert out[-1] == (f"budget: {tokens - 1} tokens, exceeded: the view "
                       "lists its pinned tools, mcpd__find_tools and "
                       "mcpd__call_tool (the 'listed' row); tools an agent "
                       "finds are added to its list")


def test_under_budget_lists_every_tool(mcpd, clients):
    # The default budget (12000 tokens) holds the test server's tools.
    mcpd.load_testserver("ts")
    c = clients(mcpd)
    assert c.ask("tools")["tools"] == [f"ts__{t}" for t in TESTSERVER_TOOLS]
    got = c.ask('call mcpd__find_tools {"query": "echo"}')
    assert got["error"]["code"] == INVALID_PARAMS
    assert got["error"]["message"].endswith(
        "unknown tool mcpd__find_tools: this session lists all its tools "
        "(its view is within its budget)"), got


def test_over_budget_find_then_call(mcpd_factory, clients):
    d = mcpd_factory("--tool-budget", "100")
    d.load_testserver("ts")
    defs = {t["name"]: t for t in direct_tools(ts_command())}
    c = clients(d)
    # Exactly the two tools (nothing is pinned without a profile).
    assert c.ask("tools")["tools"] == OWN
    found = c.ask('call mcpd__find_tools {"query": "add two numbers", '
                  '"limit": 2}')["result"]
    tools = found["structuredContent"]["tools"]
    # The definitions as tools/list would give them, best first.
    assert tools[0] == as_listed(defs["add"], "ts"), tools
    assert len(tools) == 2
    assert json.loads(found["content"][0]["text"]) == {"tools": tools}
    # Found: listed from now on, announced with list_changed.
    assert c.ask("changed 10000")["changed"] == 1
    assert c.ask("tools")["tools"] == [t["name"] for t in tools] + OWN
    # Called directly, and through mcpd__call_tool: the same answer.
    direct = c.ask('call ts__add {"a": 2, "b": 3}')["result"]
    via = c.ask('call mcpd__call_tool {"name": "ts__add", '
                '"arguments": {"a": 2, "b": 3}}')["result"]
    assert via == direct and direct["structuredContent"] == {"sum": 5}
    # A tool not found yet is called through it too (the view has it).
    echo = c.ask('call mcpd__call_tool {"name": "ts__echo", '
                 '"arguments": {"message": "hi"}}')["result"]
    assert echo["structuredContent"] == {"message": "hi"}
    # Errors are a direct call's.
    for line, message in (
            ('call mcpd__call_tool {"name": "nope", "arguments": {}}',
             "unknown tool nope: list the tools again (tools/list)"),
            ('call mcpd__call_tool {"name": "mcpd__find_tools"}',
             "mcpd__call_tool needs the name of one of the session's tools "
             "(not mcpd's own) and an arguments object"),
            ('call mcpd__find_tools {"query": ""}',
             "mcpd__find_tools needs a query: a string of 1 to 1024 bytes"),
            ('call mcpd__find_tools {"query": "x", "limit": 51}',
             "mcpd__find_tools's limit is an integer from 1 to 50")):
        got = c.ask(line)["error"]
        assert got["code"] == INVALID_PARAMS, (line, got)
        assert got["message"].endswith(message), (line, got)
    direct_err = c.ask('call nope {}')["error"]
    assert direct_err["message"].endswith(
        "unknown tool nope: list the tools again (tools/list)")


def test_found_tools_are_the_sessions_own(mcpd_factory):
    d = mcpd_factory("--tool-budget", "100")
    d.load_testserver("ts")
    find = {"name": "mcpd__find_tools",
            "arguments": {"query": "sleep", "limit": 1}}
    with session(d) as a, session(d) as b:
        a.result("ping")
        b.result("ping")
        a.other.clear()
        b.other.clear()
        r = a.result("tools/call", find)
        assert [t["name"] for t in r["structuredContent"]["tools"]] == \
            ["ts__sleep_ms"]
        # Told once, before its next answer, and only of its tools.
        a.result("ping")
        assert a.other == [{"jsonrpc": "2.0",
                            "method": "notifications/tools/list_changed"}]
        a.other.clear()
        assert [t["name"] for t in a.result("tools/list")["tools"]] == \
            ["ts__sleep_ms"] + OWN
        # Found again: nothing new, nothing told.
        a.result("tools/call", find)
        a.result("ping")
        assert a.other == []
        # Another session of the same agent lists and is told nothing.
        assert [t["name"] for t in b.result("tools/list")["tools"]] == OWN
        assert b.other == []


@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_find_then_call_every_way(mcpd_factory, tmp_path, way):
    """The SDK v2 client, over the bridge and --listen-http, in both eras
    (2026-07-28: the list change comes on its subscriptions/listen
    stream), refreshes its list itself after a find."""
    port = free_port()
    d = mcpd_factory("--tool-budget", "100", "--listen-http",
                     f"127.0.0.1:{port}")
    d.load_testserver("ts")
    transport, era = way
    server = ([MCPCTL, "-s", d.sock, "bridge"] if transport == "stdio" else
              ["--http", f"http://127.0.0.1:{port}/mcp",
               d.rpc.result("mcpd/token", {})["token"]])
    c = V2Client([V2_NODE, V2_CLIENT, PEERS, era] + server,
                 tmp_path / "v2-client.err")
    try:
        assert c.ask("tools")["tools"] == OWN
        found = c.ask('call mcpd__find_tools {"query": "echo a message", '
                      '"limit": 1}')["result"]
        assert [t["name"] for t in found["structuredContent"]["tools"]] == \
            ["ts__echo"]
        if way == ("http", "auto"):
            # 2026-07-28 over HTTP: every request is a session of its own,
            # so nothing found is kept; found tools are called by name.
            assert c.ask("tools")["tools"] == OWN
            direct = c.ask('call ts__echo {"message": "direct"}')["result"]
            assert direct["structuredContent"] == {"message": "direct"}
        else:
            r = c.ask("changed 10000")
            assert r["changed"] >= 1 and r["error"] is None, r
            assert r["tools"] == ["ts__echo"] + OWN, r
        via = c.ask('call mcpd__call_tool {"name": "ts__echo", '
                    '"arguments": {"message": "via"}}')["result"]
        assert via["structuredContent"] == {"message": "via"}
        assert c.ask("info")["errors"] == []
    finally:
        c.close()


def test_bash_completion_of_tools_cost(mcpd):
    mcpd.load_testserver("ts")
    env = dict(os.environ, MCPD_SOCKET=str(mcpd.sock))
    m = str(MCPCTL)
    assert complete([m, "tools", "--c"], env)[0] == ["--cost"]
    assert complete([m, "tools", ""], env)[0] == ["ts"]
    # The cost is of the whole view: no server after --cost.
    assert complete([m, "tools", "--cost", ""], env) == ([], "")
