# SPDX-License-Identifier: ISC
"""Policy rules (issue 24 item 1, doc/policy.md): ordered allow/deny rules
per agent by server, tool glob and annotations, first match wins, then the
agent's default; denied tools are not listed, and a call of one is refused
on every path (gateway tools/call, its fast path, mcpd/call and so mcpctl
call, mcpd__call_tool) with an error naming the rule and the command that
would allow it. The SDK clients are the official ones (v1 and v2) over the
bridge and the HTTP front; the test server's echo says readOnlyHint true,
its other tools say nothing (the spec's defaults)."""

import json

import pytest

from conftest import MCPCTL, PEERS, free_port, ts_command
from test_gateway import SdkClient
from test_callflags import complete
from test_gateway_v2 import NODE as NODE_V2, V2_CLIENT, V2Client
from test_persist import mounts, need_root, restart, sh  # noqa: F401
from test_profiles import bridge, clients  # noqa: F401

TS_TOOLS = ["echo", "add", "sleep_ms", "fail", "crash", "big", "stderr",
            "notify_changed", "ask", "deaf", "report", "mismatch"]
ALL = [f"ts__{t}" for t in TS_TOOLS] + \
    [f"more__{t}" for t in TS_TOOLS + ["t0", "t1", "t2"]]
RULES = [["allow", "--annotation", "readOnlyHint=true"],
         ["deny", "--server", "more"],
         ["deny", "--tool", "ts__[a-f]*"]]
# What the three rules leave listed, in the catalog's order.
LEFT = ["ts__echo", "ts__sleep_ms", "ts__stderr", "ts__notify_changed",
        "ts__report", "ts__mismatch", "more__echo"]
DENIED_FAIL = ("policy denies tool ts__fail to agent default: rule 3 "
               "(deny --tool 'ts__[a-f]*') decides; nothing was sent; to "
               "allow it: mcpctl policy add default allow --tool 'ts__fail' "
               "--at 3")


@pytest.fixture
def front(mcpd_factory):
    """mcpd with the HTTP front, ts and more (3 generated tools) loaded."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.load_testserver("ts")
    d.load_testserver("more", "--tools", "3")
    return d


def add_rules(d, agent="default", rules=RULES):
    for rule in rules:
        r = d.ctl("policy", "add", agent, *rule)
        assert r.rc == 0, r


def token(d):
    r = d.ctl("token")
    assert r.rc == 0, r
    return r.json["token"]


def test_rules_decide_what_sdk_clients_list(front, clients, tmp_path):
    assert bridge(front, clients).ask("tools")["tools"] == ALL
    assert front.ctl("tools", "--cost").json["tools"] == len(ALL)
    add_rules(front)
    # By annotation (rule 1 keeps more__echo), by server, by glob.
    assert bridge(front, clients).ask("tools")["tools"] == LEFT
    # What the view costs counts only what it lists.
    cost = front.ctl("tools", "--cost").json
    assert cost["tools"] == len(LEFT), cost
    assert [(r["server"], r["tools"]) for r in cost["servers"]] == \
        [("ts", 6), ("more", 1)], cost
    http = SdkClient(front.sock, argv=["--http", front.url, token(front)])
    clients.append(http)
    assert http.ask("tools")["tools"] == LEFT
    r = http.ask('call ts__fail {"message":"x"}')
    assert r["error"] == {"code": -32003,
                          "message": f"MCP error -32003: {DENIED_FAIL}"}, r
    for argv in ([NODE_V2, V2_CLIENT, PEERS, "legacy", MCPCTL, "-s",
                  front.sock, "bridge"],
                 [NODE_V2, V2_CLIENT, PEERS, "legacy", "--http", front.url,
                  token(front)]):
        v2 = V2Client(argv, tmp_path / "v2.err")
        clients.append(v2)
        assert v2.ask("tools")["tools"] == LEFT
        r = v2.ask('call ts__fail {"message":"x"}')
        assert r["error"] == {"code": -32003, "message": DENIED_FAIL}, r
    # Another agent has no rules: it sees everything.
    r = front.ctl("--agent", "bot", "load", "--no-persist", "--name", "ts",
                  "--", *ts_command())
    assert r.rc == 0, r
    assert bridge(front, clients, "--agent", "bot").ask("tools")[
        "tools"] == [f"ts__{t}" for t in TS_TOOLS]


def test_policy_test_says_which_rule_decides_and_why(front):
    add_rules(front)
    add_rules(front, rules=[["deny", "--server", "ts", "--annotation",
                             "destructiveHint=true"]])
    want = {
        "ts__echo": "allow by rule 1 (allow --annotation readOnlyHint=true): "
                    "ts__echo is read-only (readOnlyHint true)",
        "more__t0": "deny by rule 2 (deny --server more): its server is more",
        "ts__fail": "deny by rule 3 (deny --tool 'ts__[a-f]*'): ts__fail "
                    "matches 'ts__[a-f]*'",
        "ts__report": "deny by rule 4 (deny --server ts --annotation "
                      "destructiveHint=true): its server is ts, ts__report "
                      "is destructive (destructiveHint missing: the spec's "
                      "default true)",
    }
    for tool, text in want.items():
        r = front.ctl("policy", "test", "default", tool, is_json=False)
        assert (r.rc, r.out, r.err) == (0, text + "\n", ""), r
    r = front.ctl("policy", "rm", "default", "4")
    assert r.rc == 0, r
    r = front.ctl("policy", "test", "default", "ts__report", is_json=False)
    assert r.out == ("allow by the default of agent default: no rule of its "
                     "3 matches ts__report\n"), r
    r = front.ctl("policy", "test", "default", "ts__fail")
    assert r.json == {"agent": "default", "tool": "ts__fail",
                      "effect": "deny", "rule": 3,
                      "decision": {"rule": 3, "by": "rule-deny",
                                   "text": "deny --tool 'ts__[a-f]*'"},
                      "explain": want["ts__fail"]}, r
    r = front.ctl("policy", "test", "default", "ts__nope", is_json=False)
    assert r.rc == 1 and r.err.startswith(
        "mcpctl: agent default has no tool ts__nope now: the gateway names "
        "a tool SERVER__TOOL (mcpctl tools lists them)"), r


def test_a_denied_call_is_refused_on_every_path(front, clients):
    add_rules(front)
    c = bridge(front, clients)
    r = c.ask('call ts__fail {"message":"x"}')
    assert r["error"] == {"code": -32003,
                          "message": f"MCP error -32003: {DENIED_FAIL}"}, r
    r = c.ask('call ts__echo {"message":"allowed"}')
    assert r["result"]["structuredContent"] == {"message": "allowed"}, r
    data = {"tool": "ts__fail", "agent": "default", "rule": 3,
            "kind": "denied"}
    with front.mcp_session() as raw:
        # The fast path (a plain line) and the parser (with _meta).
        raw.send_raw(b'{"jsonrpc":"2.0","id":"fast","method":"tools/call",'
                     b'"params":{"name":"ts__fail","arguments":{}}}\n')
        fast = raw.response("fast")["error"]
        parsed = raw.call("tools/call", {"name": "ts__fail", "arguments": {},
                                         "_meta": {"progressToken": 1}})
        for e in (fast, parsed["error"]):
            assert e == {"code": -32003, "message": DENIED_FAIL,
                         "data": data}, e
        # mcpd/call: the fast path and the parser (by handle).
        raw.send_raw(b'{"jsonrpc":"2.0","id":"c1","method":"mcpd/call",'
                     b'"params":{"server":"ts","tool":"fail",'
                     b'"arguments":{}}}\n')
        e = raw.response("c1")["error"]
        assert e == {"code": -32003, "message": DENIED_FAIL, "data": data}, e
        e = raw.call("mcpd/call", {"handle": "ts.1/fail",
                                   "arguments": {}})["error"]
        assert e == {"code": -32003, "message": DENIED_FAIL, "data": data}, e
    # mcpctl call: an agent can run it, so it obeys too.
    r = front.ctl("call", "ts", "fail", "message=x", is_json=False)
    assert r.rc == 1 and r.err.startswith(f"mcpctl: {DENIED_FAIL}"), r
    # The default: deny what no rule matches.
    r = front.ctl("policy", "default", "default", "deny")
    assert r.rc == 0 and r.json == {
        "agent": "default", "default": "deny",
        "rules": [dict(rule, n=i + 1) for i, rule in enumerate(
            front.ctl("policy", "list", "default").json["agents"][0][
                "rules"])], "always": []}, r
    r = c.ask('call ts__report {}')
    assert r["error"] == {
        "code": -32003,
        "message": "MCP error -32003: policy denies tool ts__report to "
                   "agent default: no rule matches and the agent's default "
                   "is deny; nothing was sent; to allow it: mcpctl policy add "
                   "default allow --tool 'ts__report'"}, r
    # The audit log: the allowed call's decision, and a line per denial.
    lines = [json.loads(x) for x in
             (front.state / "audit.jsonl").read_text().splitlines()]
    assert [(x["tool"], x["decision"], x["outcome"], x["error"])
            for x in lines] == \
        [("fail", {"rule": 3, "by": "rule-deny",
                   "text": "deny --tool 'ts__[a-f]*'"}, "denied",
          {"code": -32003, "kind": "denied"})] + \
        [("echo", {"rule": 1, "by": "rule-allow",
                   "text": "allow --annotation readOnlyHint=true"}, "ok",
          None)] + \
        [("fail", {"rule": 3, "by": "rule-deny",
                   "text": "deny --tool 'ts__[a-f]*'"}, "denied",
          {"code": -32003, "kind": "denied"})] * 5 + \
        [("report", {"rule": None, "by": "default-deny"}, "denied",
          {"code": -32003, "kind": "denied"})], lines


def test_mcpd_call_tool_and_find_tools_of_a_searched_view(mcpd_factory,
                                                          clients):
    d = mcpd_factory("--tool-budget", "1")
    d.load_testserver("ts")
    c = bridge(d, clients)
    assert c.ask("tools")["tools"] == ["mcpd__find_tools", "mcpd__call_tool"]

    def found():
        r = c.ask('call mcpd__find_tools {"query": "fail echo"}')
        return [t["name"] for t in r["result"]["structuredContent"]["tools"]]
    before = found()
    assert "ts__fail" in before, before
    add_rules(d, rules=[["deny", "--tool", "ts__f*"]])
    assert found() == [n for n in before if n != "ts__fail"]
    # What it found before is not listed either.
    assert c.ask("tools")["tools"] == [
        f"ts__{t}" for t in TS_TOOLS
        if f"ts__{t}" in before and t != "fail"] + [
        "mcpd__find_tools", "mcpd__call_tool"]
    r = c.ask('call mcpd__call_tool {"name": "ts__fail", "arguments": {}}')
    assert r["error"] == {
        "code": -32003,
        "message": "MCP error -32003: policy denies tool ts__fail to agent "
                   "default: rule 1 (deny --tool 'ts__f*') decides; nothing "
                   "was sent; to allow it: mcpctl policy add default allow "
                   "--tool 'ts__fail' --at 1"}, r


def test_a_rule_of_a_profile_applies_to_its_sessions_only(front, clients):
    r = front.ctl("profile", "create", "narrow", "--server", "ts")
    assert r.rc == 0, r
    add_rules(front, rules=[["deny", "--tool", "ts__e*", "--profile",
                             "narrow"]])
    assert bridge(front, clients, "--profile", "narrow").ask("tools")[
        "tools"] == [f"ts__{t}" for t in TS_TOOLS if t != "echo"]
    assert bridge(front, clients).ask("tools")["tools"] == ALL
    # What the profile selects, and its cost, leave the denied tool out.
    r = front.ctl("profile", "show", "narrow")
    assert r.json["selects"] == [f"ts__{t}" for t in TS_TOOLS
                                 if t != "echo"], r
    r = front.ctl("policy", "test", "default", "ts__echo", "--profile",
                  "narrow", is_json=False)
    assert r.out == ("deny by rule 1 (deny --tool 'ts__e*' --profile "
                     "narrow): the session's profile is narrow, ts__echo "
                     "matches 'ts__e*'\n"), r


def test_list_changed_after_a_rule_change(front):
    with front.mcp_session() as raw:
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert names == ALL
        r = front.ctl("policy", "add", "default", "deny", "--server", "more")
        assert r.rc == 0, r
        assert raw.read_message() == {
            "jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert names == [f"ts__{t}" for t in TS_TOOLS]
        r = front.ctl("policy", "rm", "default", "1")
        assert r.rc == 0, r
        assert raw.read_message() == {
            "jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        names = [t["name"] for t in raw.result("tools/list")["tools"]]
        assert names == ALL


def test_rules_persist_across_a_restart(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("ts", persist=True)
    add_rules(d, agent="default", rules=[["deny", "--tool", "ts__f*"],
                                         ["allow", "--server", "ts", "--at",
                                          "1"]])
    assert d.ctl("policy", "default", "bot", "deny").rc == 0
    before = d.ctl("policy", "list")
    assert json.loads((d.state / "policy.json").read_text())["agents"] == {
        "default": [{"id": "@policy", "default": "allow", "rules": [
            {"effect": "allow", "server": "ts"},
            {"effect": "deny", "tool": "ts__f*"}]}],
        "bot": [{"id": "@policy", "default": "deny", "rules": []}]}
    d2 = restart(mcpd_factory, d)
    after = d2.ctl("policy", "list")
    assert after.json == before.json, (before, after)
    r = d2.ctl("policy", "list", is_json=False)
    assert r.out == ("agent default: default allow, 2 rules\n"
                     "    1  allow --server ts\n"
                     "    2  deny --tool 'ts__f*'\n"
                     "agent bot: default deny, 0 rules\n"), r


def test_a_read_only_state_dir_changes_nothing(mcpd_factory, mounts):
    need_root()
    d = mcpd_factory()
    add_rules(d, rules=[["deny", "--tool", "a*"]])
    before = (d.state / "policy.json").read_bytes()
    mounts("--bind", d.state, target=d.state)
    rc, err = sh("mount", "-o", "remount,bind,ro", d.state)
    assert rc == 0, err
    for args in (["add", "default", "deny", "--tool", "b*"],
                 ["rm", "default", "1"], ["default", "default", "deny"]):
        r = d.ctl("policy", *args)
        assert r.rc == 1, r
        assert r.json["data"]["kind"] == "storage", r
        assert r.json["message"].startswith(
            "cannot save the policy: ") and \
            "Read-only file system" in r.json["message"] and \
            r.json["message"].endswith("; nothing changed"), r
    r = d.ctl("policy", "list", "default")
    assert r.json == {"agents": [{"agent": "default", "default": "allow",
                                  "rules": [{"effect": "deny", "tool": "a*",
                                             "n": 1,
                                             "text": "deny --tool 'a*'"}],
                                  "always": []}]}
    assert (d.state / "policy.json").read_bytes() == before


def test_bad_input_is_refused_and_changes_nothing(front):
    add_rules(front, rules=[["deny", "--tool", "x*"]])
    usage = {
        ("add", "default", "deny", "--annotation", "sneaky=true"):
            "mcpctl: policy: --annotation: unknown annotation sneaky: "
            "readOnlyHint, destructiveHint, idempotentHint or openWorldHint",
        ("add", "default", "deny", "--annotation", "readOnlyHint=yes"):
            "mcpctl: policy: --annotation takes NAME=true or NAME=false, "
            "not 'readOnlyHint=yes'",
        ("add", "default", "deny", "--tool", "ts__[ab"):
            "mcpctl: policy: --tool: bad glob 'ts__[ab' at column 5: '[' "
            "has no closing ']'",
        ("add", "default", "maybe"):
            "mcpctl: policy: the effect is allow, deny or ask, not 'maybe'",
        ("rm", "default", "x"):
            "mcpctl: policy: N needs a positive number of rules, not 'x'",
        ("list", "--server", "ts"):
            "mcpctl: policy: --server, --tool, --annotation and --at go "
            "with add; --profile with add and test",
    }
    for args, err in usage.items():
        r = front.ctl("policy", *args, is_json=False)
        assert (r.rc, r.out) == (2, ""), r
        assert r.err.startswith(err + "\n"), r
    refused = {
        ("add", "default", "allow", "--at", "3"):
            "--at 3: agent default has 1 rule, so the new one can be rule 1 "
            "to 2; nothing changed",
        ("add", "default", "allow", "--profile", "nope"):
            "agent default has no profile nope (mcpctl profile list shows "
            "them); nothing changed",
        ("rm", "default", "2"):
            "agent default has 1 rule: N is 1 to 1 (mcpctl policy list "
            "default shows them); nothing changed",
    }
    for args, message in refused.items():
        r = front.ctl("policy", *args)
        assert r.rc == 1, r
        assert r.json["code"] == -32602 and r.json["message"] == message, r
    # mcpd checks too: a request that skips mcpctl changes nothing.
    e = front.rpc.error("mcpd/policy", {"op": "add", "agent": "default",
                                        "effect": "deny",
                                        "tool": "x\\"})
    assert e["code"] == -32602 and e["message"] == (
        "bad glob 'x\\' at column 2: '\\' at the end escapes nothing; "
        "nothing changed"), e
    e = front.rpc.error("mcpd/policy", {"op": "add", "agent": "default",
                                        "effect": "deny",
                                        "annotations": {"readOnlyHint": 1}})
    assert e["message"] == ("annotation readOnlyHint takes true or false; "
                            "nothing changed"), e
    r = front.ctl("policy", "list", "default")
    assert r.json["agents"][0]["rules"] == [
        {"effect": "deny", "tool": "x*", "n": 1, "text": "deny --tool 'x*'"}]


def test_bash_completion_of_policy(front):
    env = dict(front.env or {}, MCPD_SOCKET=str(front.sock))
    m = str(MCPCTL)
    assert front.ctl("profile", "create", "narrow").rc == 0
    assert complete([m, "policy", ""], env)[0] == sorted(
        ["add", "list", "rm", "default", "test", "forget"])
    assert complete([m, "policy", "add", "default", ""], env)[0] == \
        ["allow", "ask", "deny"]
    assert complete([m, "policy", "add", "default", "deny", "--server",
                     ""], env)[0] == ["more", "ts"]
    assert complete([m, "policy", "add", "default", "deny", "--profile",
                     ""], env)[0] == ["narrow"]
    assert complete([m, "policy", "add", "default", "deny", "--annotation",
                     "read"], env)[0] == ["readOnlyHint=false",
                                          "readOnlyHint=true"]
    got, err = complete([m, "policy", "--"], env)
    assert err == "" and got == sorted(
        ["--server", "--tool", "--annotation", "--profile", "--at",
         "--help"]), got
