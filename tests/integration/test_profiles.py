# SPDX-License-Identifier: ISC
"""Profiles (DESIGN 13): named views of an agent's tools, chosen by
mcpctl bridge --profile, an HTTP token bound to a profile, or the agent's
default, else everything; a call outside the view is refused on every
path; a change sends list_changed; profiles persist like enablement rows.
The SDK clients are the official ones (v1 and v2) over the bridge and the
HTTP front."""

import json
import sys

import pytest

from conftest import MCPCTL, PEERS, free_port
from test_gateway import SdkClient
from test_gateway_http import INIT, post
from test_everyday import SELF, initialize_instructions, load_instructed
from test_gateway_v2 import NODE as NODE_V2, V2_CLIENT, V2Client
from test_persist import mounts, need_root, restart, sh  # noqa: F401

TS_TOOLS = ["echo", "add", "sleep_ms", "fail", "crash", "big", "stderr",
            "notify_changed", "ask", "deaf", "report", "mismatch"]
ALL = [f"ts__{t}" for t in TS_TOOLS] + \
    [f"more__{t}" for t in TS_TOOLS + ["t0", "t1", "t2"]]
NARROW = ["ts__echo", "ts__add"]
OUTSIDE = ("tool ts__fail is not in the view of profile narrow; to add it: "
           "mcpctl profile set narrow --tool 'ts__e*' --tool 'ts__add' "
           "--tool 'ts__fail'")


@pytest.fixture
def front(mcpd_factory):
    """mcpd with the HTTP front, ts and more (3 generated tools) loaded,
    and two profiles: narrow (two tools of ts) and gen (more's t*)."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.load_testserver("ts")
    d.load_testserver("more", "--tools", "3")
    for args in (["narrow", "--server", "ts", "--tool", "ts__e*", "--tool",
                  "ts__add"],
                 ["gen", "--tool", "more__t[0-9]", "--exclude-tool",
                  "*__echo"]):
        r = d.ctl("profile", "create", *args)
        assert r.rc == 0, r
    return d


@pytest.fixture
def clients():
    started = []
    yield started
    for c in started:
        c.close()


def bridge(d, clients, *args):
    c = SdkClient(d.sock, *args)
    clients.append(c)
    return c


def http(d, clients, token):
    c = SdkClient(d.sock, argv=["--http", d.url, token])
    clients.append(c)
    return c


def token(d, *args):
    r = d.ctl("token", *args)
    assert r.rc == 0, r
    return r.json["token"]


def test_views_of_a_profile_a_token_the_default_and_none(front, clients,
                                                         tmp_path):
    assert bridge(front, clients).ask("tools")["tools"] == ALL
    assert bridge(front, clients, "--profile", "narrow").ask(
        "tools")["tools"] == NARROW
    # One server's view: its globs also match unprefixed names.
    assert bridge(front, clients, "--profile", "narrow", "--server",
                  "ts").ask("tools")["tools"] == ["echo", "add"]
    gen = token(front, "create", "--profile", "gen")
    assert gen != token(front)
    assert http(front, clients, gen).ask("tools")["tools"] == \
        ["more__t0", "more__t1", "more__t2"]
    # A token's session is its own: the agent's plain token cannot use it.
    st, h, _ = post(front.url, INIT, gen)
    assert st == 200
    assert post(front.url, {"jsonrpc": "2.0", "id": 2, "method":
                            "tools/list"}, token(front),
                h["Mcp-Session-Id"])[0] == 404
    # The agent's own token sees everything; so does a bridge, until the
    # agent has a default profile.
    assert http(front, clients, token(front)).ask("tools")["tools"] == ALL
    r = front.ctl("profile", "default", "default", "narrow")
    assert r.rc == 0 and r.json == {"agent": "default",
                                    "default": "narrow"}, r
    assert bridge(front, clients).ask("tools")["tools"] == NARROW
    assert http(front, clients, token(front)).ask("tools")["tools"] == \
        NARROW
    # The most specific wins: the token's profile, the bridge's.
    assert http(front, clients, gen).ask("tools")["tools"] == \
        ["more__t0", "more__t1", "more__t2"]
    assert bridge(front, clients, "--profile", "gen").ask(
        "tools")["tools"] == ["more__t0", "more__t1", "more__t2"]
    # The SDK v2 client sees the same view over the bridge.
    v2 = V2Client([NODE_V2, V2_CLIENT, PEERS, "legacy", MCPCTL, "-s",
                   front.sock, "bridge", "--profile", "gen"],
                  tmp_path / "v2.err")
    clients.append(v2)
    assert v2.ask("tools")["tools"] == ["more__t0", "more__t1", "more__t2"]
    v2 = V2Client([NODE_V2, V2_CLIENT, PEERS, "legacy", "--http", front.url,
                   gen], tmp_path / "v2-http.err")
    clients.append(v2)
    assert v2.ask("tools")["tools"] == ["more__t0", "more__t1", "more__t2"]
    r = front.ctl("profile", "default", "default", "--none")
    assert r.rc == 0 and r.json == {"agent": "default",
                                    "default": None}, r
    assert bridge(front, clients).ask("tools")["tools"] == ALL


def test_prompts_and_resources_follow_the_server_list(front, clients):
    front.load_everything(name="ev", timeout=120)
    r = front.ctl("profile", "create", "evp", "--server", "ev", "--tool",
                  "nothing")
    assert r.rc == 0, r
    every = bridge(front, clients)
    prompts = every.ask("prompts")["prompts"]
    resources = every.ask("resources")["resources"]
    assert prompts and resources, "server-everything offers both"
    # Tool globs do not touch them; the server list does.
    evp = bridge(front, clients, "--profile", "evp")
    assert evp.ask("tools")["tools"] == []
    assert evp.ask("prompts")["prompts"] == prompts
    assert evp.ask("resources")["resources"] == resources
    narrow = bridge(front, clients, "--profile", "narrow")
    assert narrow.ask("prompts")["prompts"] == []
    assert narrow.ask("resources")["resources"] == []
    r = narrow.ask(f'read {resources[0]["uri"]}')
    assert r["error"]["code"] == -32602, r


def test_a_call_outside_the_view_is_refused_on_every_path(front, clients):
    c = bridge(front, clients, "--profile", "narrow")
    assert c.ask("tools")["tools"] == NARROW
    r = c.ask('call ts__echo {"message":"in view"}')
    assert r["result"]["structuredContent"] == {"message": "in view"}, r
    r = c.ask('call ts__fail {}')
    assert r["error"] == {"code": -32602,
                          "message": f"MCP error -32602: {OUTSIDE}"}, r
    # Raw: the fast path (a plain line) and the parser (with _meta).
    with front.client() as raw:
        raw.result("mcpd/hello", {"profile": "narrow"})
        raw.result("initialize", {"protocolVersion": "2025-06-18",
                                  "capabilities": {},
                                  "clientInfo": {"name": "raw",
                                                 "version": "1"}})
        raw.send_raw(b'{"jsonrpc":"2.0","id":"fast","method":"tools/call",'
                     b'"params":{"name":"ts__fail","arguments":{}}}\n')
        fast = raw.response("fast")
        parsed = raw.call("tools/call", {"name": "ts__fail", "arguments": {},
                                         "_meta": {"progressToken": 1}})
        for e in (fast["error"], parsed["error"]):
            assert e["code"] == -32602 and e["message"] == OUTSIDE, e
            assert e["data"] == {"tool": "ts__fail", "profile": "narrow"}, e
        # mcpd/call of a connection that chose a profile: the same view,
        # by the fast path and by the parser.
        raw.send_raw(b'{"jsonrpc":"2.0","id":"c1","method":"mcpd/call",'
                     b'"params":{"server":"ts","tool":"fail",'
                     b'"arguments":{}}}\n')
        e = raw.response("c1")["error"]
        assert e["code"] == -32602 and e["message"] == OUTSIDE, e
        e = raw.call("mcpd/call", {"handle": "ts.1/fail",
                                   "arguments": {}})["error"]
        assert e["code"] == -32602 and e["message"] == OUTSIDE, e
    # mcpctl call is the user's own: no profile, everything of the agent,
    # even with a default profile.
    assert front.ctl("profile", "default", "default", "narrow").rc == 0
    r = front.ctl("call", "ts", "fail", "message=mine")
    assert r.rc == 5, r


def test_the_hint_adds_the_server_and_drops_the_exclusion(front, clients):
    r = front.ctl("profile", "create", "few", "--server", "more",
                  "--exclude-tool", "*__echo", "--exclude-tool", "more__t*")
    assert r.rc == 0, r
    c = bridge(front, clients, "--profile", "few")
    r = c.ask('call ts__echo {"message":"x"}')
    assert r["error"]["message"] == (
        "MCP error -32602: tool ts__echo is not in the view of profile few; "
        "to add it: mcpctl profile set few --server 'more' --server 'ts' "
        "--exclude-tool 'more__t*'"), r


def test_list_changed_after_profile_set_rm_and_default(front):
    with front.client() as raw:
        raw.result("mcpd/hello", {"profile": "narrow"})
        raw.result("initialize", {"protocolVersion": "2025-06-18",
                                  "capabilities": {},
                                  "clientInfo": {"name": "raw",
                                                 "version": "1"}})
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert names == NARROW
        r = front.ctl("profile", "set", "narrow", "--tool", "ts__*")
        assert r.rc == 0, r
        assert r.json["tools"] == ["ts__*"] and \
            r.json["servers"] == ["ts"], r
        assert raw.read_message() == {
            "jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert names == [f"ts__{t}" for t in TS_TOOLS]
        assert raw.call("tools/call", {"name": "ts__fail", "arguments": {
            "message": "now in view"}})["result"]["isError"] is True


def test_profiles_persist_across_a_restart(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("ts")
    r = d.ctl("--agent", "bot", "profile", "create", "p", "--server", "ts",
              "--tool", "ts__e*", "--exclude-tool", "ts__echo2", "--pin",
              "ts__add", "--budget", "4000")
    assert r.rc == 0, r
    assert d.ctl("profile", "default", "bot", "p").rc == 0
    before = d.ctl("--agent", "bot", "profile", "list")
    assert before.json["default"] == "p", before
    text = (d.state / "profiles.json").read_text()
    assert json.loads(text)["agents"]["bot"] == [
        {"id": "p", "servers": ["ts"], "tools": ["ts__e*"],
         "exclude_tools": ["ts__echo2"], "pins": ["ts__add"],
         "budget": 4000},
        {"id": "@default", "profile": "p"}]
    d2 = restart(mcpd_factory, d)
    after = d2.ctl("--agent", "bot", "profile", "list")
    assert after.json == before.json, (before, after)
    assert d2.ctl("--agent", "bot", "profile", "show", "p",
                  is_json=False).out == (
        "profile p (agent bot), the agent's default\n"
        "  servers:       ts\n"
        "  tools:         ts__e*\n"
        "  exclude-tools: ts__echo2\n"
        "  pins:          ts__add\n"
        "  budget:        4000 tokens\n"
        "  costs:         12 bytes, about 3 tokens, within its budget of "
        "4000\n"
        "  selects 0 tools now\n")


def test_a_read_only_state_dir_changes_nothing(mcpd_factory, mounts):
    need_root()
    d = mcpd_factory()
    assert d.ctl("profile", "create", "p", "--tool", "a*").rc == 0
    before = (d.state / "profiles.json").read_bytes()
    mounts("--bind", d.state, target=d.state)
    rc, err = sh("mount", "-o", "remount,bind,ro", d.state)
    assert rc == 0, err
    for args in (["create", "q", "--tool", "b*"],
                 ["set", "p", "--tool", "c*"], ["rm", "p"],
                 ["default", "default", "p"]):
        r = d.ctl("profile", *args)
        assert r.rc == 1, r
        assert r.json["data"]["kind"] == "storage", r
        path = d.state / "profiles.json"
        assert r.json["message"].startswith(
            "cannot save the profile") and \
            "Read-only file system" in r.json["message"], r
        assert str(path) in r.json["message"], r
    r = d.ctl("profile", "list")
    assert [p["name"] for p in r.json["profiles"]] == ["p"], r
    assert r.json["profiles"][0]["tools"] == ["a*"], r
    assert r.json["default"] is None, r
    assert (d.state / "profiles.json").read_bytes() == before


def test_bad_globs_and_unknown_profiles(front):
    r = front.ctl("profile", "create", "x", "--tool", "ts__[ab",
                  is_json=False)
    assert (r.rc, r.out) == (2, ""), r
    assert r.err == ("mcpctl: profile: --tool: bad glob 'ts__[ab' at "
                     "column 5: '[' has no closing ']'\n"
                     "see mcpctl profile --help\n"), r
    r = front.ctl("profile", "set", "narrow", "--exclude-tool", "a]b",
                  is_json=False)
    assert r.rc == 2 and r.err.startswith(
        "mcpctl: profile: --exclude-tool: bad glob 'a]b' at column 2: "
        "']' closes no '[' (write \\] for the character)\n"), r
    # mcpd checks too: a request that skips mcpctl changes nothing.
    e = front.rpc.error("mcpd/profile", {"op": "set", "name": "narrow",
                                         "tools": ["ok*", "x\\"]})
    assert e["code"] == -32602, e
    assert e["message"] == ("bad glob 'x\\' at column 2: '\\' at the end "
                            "escapes nothing"), e
    assert front.ctl("profile", "show", "narrow").json["tools"] == \
        ["ts__e*", "ts__add"]
    # Unknown profiles: did you mean.
    for args in (["bridge", "--profile", "narow"],
                 ["token", "create", "--profile", "narow"],
                 ["profile", "show", "narow"]):
        r = front.ctl(*args, is_json=False, timeout=20)
        assert (r.rc, r.out) == (1, ""), r
        assert r.err == ("mcpctl: no profile narow for agent default; did "
                         "you mean narrow? (mcpctl profile list shows "
                         "them)\n"), r


def test_rm_refuses_a_profile_in_use(front):
    token(front, "create", "--profile", "gen")
    assert front.ctl("profile", "default", "default", "gen").rc == 0
    r = front.ctl("profile", "rm", "gen")
    assert r.rc == 1 and r.json["message"] == (
        "profile gen is in use: it is the default of agent default "
        "(mcpctl profile default AGENT --none), and an HTTP token is bound "
        "to it (mcpctl token --profile PROFILE --revoke); nothing removed"), r
    assert front.ctl("profile", "default", "default", "--none").rc == 0
    assert front.ctl("token", "--profile", "gen", "--revoke").rc == 0
    r = front.ctl("profile", "rm", "gen")
    assert r.rc == 0 and r.json == {"name": "gen", "agent": "default",
                                    "removed": True}, r
    assert [p["name"] for p in front.ctl("profile", "list").json[
        "profiles"]] == ["narrow"]


def test_instructions_come_from_the_servers_of_the_view(mcpd, tmp_path):
    load_instructed(mcpd, tmp_path, "alpha", "Use alpha for A.")
    load_instructed(mcpd, tmp_path, "beta", "Beta does B.")
    for args in (["b", "--server", "beta"],
                 ["ab", "--server", "alpha", "--server", "beta", "--tool",
                  "none"]):
        assert mcpd.ctl("profile", "create", *args).rc == 0
    with mcpd.client() as c:
        c.result("mcpd/hello", {"profile": "b"})
        r = c.result("initialize", {"protocolVersion": "2025-06-18",
                                    "capabilities": {},
                                    "clientInfo": {"name": "t",
                                                   "version": "1"}})
    assert r["instructions"] == "Beta does B."
    # The agent's default profile, when the session chose none.
    assert mcpd.ctl("profile", "default", "default", "ab").rc == 0
    assert initialize_instructions(mcpd) == (
        SELF + "\n\n## alpha\n\nUse alpha for A.\n\n## beta\n\nBeta does B.")
    assert mcpd.ctl("profile", "set", "ab", "--server", "alpha").rc == 0
    assert initialize_instructions(mcpd) == "Use alpha for A."


# A stdio MCP server with tools whose names the gateway must change.
ODD = r'''
import json, sys

TOOLS = [{"name": n, "inputSchema": {"type": "object"}}
         for n in ("read.file", "write file")]
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}},
                  "serverInfo": {"name": "odd", "version": "1"}}
    elif msg["method"] == "tools/list":
        result = {"tools": TOOLS}
    else:
        result = {"content": [{"type": "text", "text": "called"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}),
          flush=True)
'''


def test_globs_match_the_names_the_gateway_gives(mcpd, tmp_path):
    script = tmp_path / "odd.py"
    script.write_text(ODD)
    mcpd.load([sys.executable, str(script)], name="fs")
    r = mcpd.ctl("profile", "create", "reads", "--tool", "fs__read_*")
    assert r.rc == 0 and r.json["selects"] == ["fs__read_file"], r
    with mcpd.client() as c:
        c.result("mcpd/hello", {"profile": "reads"})
        c.result("initialize", {"protocolVersion": "2025-06-18",
                                "capabilities": {},
                                "clientInfo": {"name": "t", "version": "1"}})
        assert [t["name"] for t in c.result("tools/list")["tools"]] == \
            ["fs__read_file"]
        e = c.call("tools/call", {"name": "fs__write_file",
                                  "arguments": {}})["error"]
        assert e["message"] == (
            "tool fs__write_file is not in the view of profile reads; to "
            "add it: mcpctl profile set reads --tool 'fs__read_*' --tool "
            "'fs__write_file'"), e


def test_a_profiles_budget_and_pins_make_its_view_search(front, clients):
    """A profile's --budget replaces --tool-budget for its views, and its
    --pin globs are what such a view lists beside mcpd's two tools; the
    view searched is the profile's, not everything of the agent."""
    r = front.ctl("profile", "create", "tight", "--server", "ts", "--budget",
                  "1", "--pin", "ts__echo")
    assert r.rc == 0, r
    # Its cost says so: the bytes of its view's tools/list, over 1 token.
    show = front.ctl("profile", "show", "tight")
    assert show.json["cost"]["over_budget"] is True, show
    assert show.json["cost"]["budget"] == 1
    assert show.json["cost"]["tokens"] == \
        -(-show.json["cost"]["bytes"] // 4)
    c = bridge(front, clients, "--profile", "tight")
    assert c.ask("tools")["tools"] == \
        ["ts__echo", "mcpd__find_tools", "mcpd__call_tool"]
    found = c.ask('call mcpd__find_tools {"query": "echo the message", '
                  '"limit": 50}')["result"]
    names = [t["name"] for t in found["structuredContent"]["tools"]]
    # more has an echo too: outside the profile, never found.
    assert names[0] == "ts__echo" and \
        not any(n.startswith("more__") for n in names), names
    # Without a budget of its own, the same profile lists its whole view.
    r = front.ctl("profile", "set", "tight", "--no-budget")
    assert r.rc == 0, r
    c2 = bridge(front, clients, "--profile", "tight")
    assert "mcpd__find_tools" not in c2.ask("tools")["tools"]


def test_modern_requests_each_get_their_own_view(front):
    """Each 2026-07-28 request is a session of its own, and the gateway
    keeps its catalog by name for the next session of the same view: a
    request of another profile, another path or after the profile changed
    must not be served another view's catalog."""
    from test_gateway_http import modern
    narrow = token(front, "create", "--profile", "narrow")
    plain = token(front)
    ts = front.url + "/ts"

    def call(url, tok, name):
        body, h = modern("tools/call", {"name": name,
                                        "arguments": {"message": "m"}})
        st, _, text = post(url, body, tok, headers=h)
        return st, json.loads(text)

    outside = {"code": -32602, "message": OUTSIDE,
               "data": {"tool": "ts__fail", "profile": "narrow"}}
    for _ in range(2):
        st, r = call(front.url, narrow, "ts__fail")
        assert (st, r["error"]) == (400, outside), r
        st, r = call(front.url, plain, "ts__fail")
        assert st == 200 and r["result"]["isError"] is True, r
        # One server's path names its tools unprefixed; /mcp does not.
        st, r = call(ts, plain, "fail")
        assert st == 200 and r["result"]["isError"] is True, r
        st, r = call(front.url, plain, "fail")
        assert r["error"]["message"] == \
            "unknown tool fail: list the tools again (tools/list)", r
    # With ts alone, /mcp and /mcp/ts have the same servers: only the
    # scope tells their names apart.
    assert front.ctl("unload", "more").rc == 0
    for _ in range(2):
        st, r = call(ts, plain, "fail")
        assert st == 200 and r["result"]["isError"] is True, r
        st, r = call(front.url, plain, "fail")
        assert r["error"]["message"] == \
            "unknown tool fail: list the tools again (tools/list)", r
    r = front.ctl("profile", "set", "narrow", "--tool", "ts__e*", "--tool",
                  "ts__add", "--tool", "ts__fail")
    assert r.rc == 0, r
    st, r = call(front.url, narrow, "ts__fail")
    assert st == 200 and r["result"]["isError"] is True, r
