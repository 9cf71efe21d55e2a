# SPDX-License-Identifier: ISC
"""The gateway (DESIGN 11): mcpd answers MCP on its control socket, giving
each agent the tools of every server it runs. The client is the official
TypeScript SDK's (v1) stdio client, as agents run it, with `mcpctl bridge`
as its server command; raw JSON-RPC where a detail needs a close look."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (INVALID_PARAMS, MCPCTL, NODE, PEERS, STALE_HANDLE,
                      TESTSERVER_TOOLS, end_client, everything_cmd, poll)

HERE = Path(__file__).resolve().parent
SDK_CLIENT = HERE / "gateway-client.mjs"


class SdkClient:
    """tests/integration/gateway-client.mjs: the SDK client, one command
    per line in, one JSON answer per line out."""

    def __init__(self, sock, *bridge_args, caps=None, argv=None, roots=None,
                 cwd=None, env=None):
        # As a client configuration says: mcpctl bridge is the server.
        relay = argv or [str(MCPCTL), "-s", str(sock), "bridge",
                         *bridge_args]
        env = dict(os.environ, MCPD_TEST_CAPS=json.dumps(caps or {}),
                   **(env or {}))
        if roots is not None:   # what it lists when asked (roots/list)
            env["MCPD_TEST_ROOTS"] = json.dumps(roots)
        self.proc = subprocess.Popen(
            [NODE, str(SDK_CLIENT), str(PEERS)] + relay, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            cwd=cwd)

    def ask(self, line, timeout=30):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        out = self.proc.stdout.readline()
        assert out, (f"the SDK client ended on '{line}' "
                     f"({time.monotonic() - deadline + timeout:.1f} s)")
        return json.loads(out)

    def close(self):
        end_client(self.proc, "quit", timeout=10)


@pytest.fixture
def sdk(mcpd):
    clients = []

    def start(*bridge_args):
        c = SdkClient(mcpd.sock, *bridge_args)
        clients.append(c)
        return c
    yield start
    for c in clients:
        c.close()


def test_sdk_client_sees_and_calls_every_server(mcpd, sdk, tmp_path,
                                                docker_images,
                                                container_guard):
    mcpd.load_testserver("ts")
    mcpd.load(everything_cmd(), name="everything", timeout=120)
    # A container too: the test server's image (tests/images).
    container_guard.append(mcpd.rpc.result("mcpd/status")["did"])
    mcpd.rpc.result("mcpd/load", {"target": "mcpd-test/stdio",
                                  "name": "box", "persist": False},
                    timeout=120)
    c = sdk()
    r = c.ask("tools")
    names = r["tools"]
    assert "ts__echo" in names and "everything__echo" in names, names
    assert all(n.startswith(("ts__", "everything__", "box__"))
               for n in names)
    assert [n for n in names if n.startswith("box__")] == [
        f"box__{t}" for t in TESTSERVER_TOOLS], names
    metas = dict(zip(names, r["meta"]))
    assert metas["ts__echo"]["io.mcpd/server"] == "ts"
    assert metas["ts__echo"]["io.mcpd/tool"] == "echo"
    assert metas["box__echo"] == {"io.mcpd/server": "box",
                                  "io.mcpd/tool": "echo"}
    r = c.ask('call ts__echo {"message":"through mcpd"}')
    assert r["result"]["structuredContent"] == {"message": "through mcpd"}
    r = c.ask('call everything__echo {"message":"hi"}')
    assert r["result"]["content"][0]["text"] == "Echo: hi", r
    r = c.ask('call box__echo {"message":"in a container"}')
    assert r["result"]["structuredContent"] == {"message": "in a container"}
    r = c.ask('call ts__nope {}')
    assert r["error"]["code"] == INVALID_PARAMS, r
    assert "unknown tool ts__nope" in r["error"]["message"], r


def test_progress_reaches_the_sdk_client(mcpd, sdk):
    mcpd.load_testserver("ts")
    c = sdk()
    c.ask("tools")
    # Apart in time, as real progress comes: the SDK client (1.32) drops
    # progress that reaches it in the same read as the answer.
    r = c.ask('progress ts__report {"steps":3,"ms":100}')
    assert r["result"]["content"][0]["text"] == "reported 3 steps", r
    assert r["progress"] == [[1, 3], [2, 3], [3, 3]], r


def test_list_changed_after_a_load_and_an_unload(mcpd, sdk):
    mcpd.load_testserver("ts")
    c = sdk()
    assert c.ask("changed 200") == {"changed": 0}
    mcpd.load_testserver("more", "--tools", "1")
    assert c.ask("changed 10000")["changed"] >= 1
    assert "more__t0" in c.ask("tools")["tools"]
    mcpd.rpc.result("mcpd/unload", {"target": "more"})
    assert c.ask("changed 10000")["changed"] >= 1
    assert not any(n.startswith("more__") for n in c.ask("tools")["tools"])


def test_cancellation_reaches_the_server(mcpd, sdk, tmp_path):
    log = tmp_path / "ts.log"
    mcpd.load_testserver("ts", "--log-file", log)
    c = sdk()
    c.ask("tools")
    # The client gives up once the server has the call; the answer is an
    # error, not the sleep's result.
    flag = tmp_path / "give-up"
    c.proc.stdin.write(f'cancel ts__sleep_ms {{"ms":60000}} {flag}\n')
    c.proc.stdin.flush()
    poll(lambda: "sleep_ms" in log.read_text() if log.exists() else False,
         what="the server to have the call")
    flag.touch()
    r = json.loads(c.proc.stdout.readline())
    assert "error" in r, r
    poll(lambda: "client cancelled" in log.read_text(), timeout=10,
         what="the server to see notifications/cancelled")
    # The server is still there for the next call.
    r = c.ask('call ts__echo {"message":"after"}')
    assert r["result"]["structuredContent"] == {"message": "after"}


def raw_session(mcpd, agent=None, servers=None):
    """A raw MCP session on the socket, after an optional mcpd/hello."""
    c = mcpd.client(timeout=30)
    params = {}
    if agent:
        params["agent"] = agent
    if servers is not None:
        params["servers"] = servers
    if params:
        c.result("mcpd/hello", params)
    r = c.result("initialize", {"protocolVersion": "2025-06-18",
                                "capabilities": {},
                                "clientInfo": {"name": "raw", "version": "1"}})
    assert r["protocolVersion"] == "2025-06-18", r
    assert r["capabilities"]["tools"] == {"listChanged": True}, r
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return c


def test_scope_agent_and_one_server(mcpd):
    mcpd.load_testserver("ts")
    mcpd.load_testserver("two", "--tools", "2")
    with raw_session(mcpd, servers=["two"]) as c:
        names = [t["name"] for t in c.result("tools/list")["tools"]]
        # One server in scope: its names as the server gives them.
        assert "t0" in names and "echo" in names, names
        assert not any("__" in n for n in names), names
        r = c.result("tools/call", {"name": "t1", "arguments": {
            "message": "x"}})
        assert r["content"][0]["text"] == "x", r
    with raw_session(mcpd, agent="other") as c:
        assert c.result("tools/list")["tools"] == []


def test_a_changed_tool_must_be_listed_again(mcpd):
    mcpd.load_testserver("ts")
    with raw_session(mcpd) as c:
        names = [t["name"] for t in c.result("tools/list")["tools"]]
        assert "ts__echo" in names
        # A server that adds tools leaves echo as it was: still callable.
        c.result("tools/call", {"name": "ts__notify_changed",
                                "arguments": {}})
        # A new tool on a known server is held until accepted
        # (test_pins.py).
        poll(lambda: mcpd.rpc.result("mcpd/changes", {})["changes"],
             what="extra_1 to be held")
        mcpd.rpc.result("mcpd/accept", {"server": "ts"})
        poll(lambda: any(t["name"] == "ts__extra_1" for t in
                         c.result("tools/list")["tools"]), timeout=10,
             what="the new tool to be listed")
    # ... while another program under the same name changes it: echo of
    # server-everything is not the test server's echo.
    with raw_session(mcpd) as c:
        c.result("tools/list")
        mcpd.rpc.result("mcpd/unload", {"target": "ts"})
        mcpd.load(everything_cmd(), name="ts", timeout=120)
        e = c.error("tools/call", {"name": "ts__echo",
                                   "arguments": {"message": "x"}})
        assert e["code"] == STALE_HANDLE, e
        assert e["message"] == ("the tool ts__echo changed since this "
                                "session listed the tools; list them again "
                                "(tools/list) before calling it"), e
        c.result("tools/list")
        r = c.result("tools/call", {"name": "ts__echo",
                                    "arguments": {"message": "x"}})
        assert r["content"][0]["text"] == "Echo: x", r


def test_modern_era_discover(mcpd):
    mcpd.load_testserver("ts")
    with mcpd.client(timeout=30) as c:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        r = c.result("server/discover", {"_meta": meta})
        assert r["supportedVersions"] == ["2026-07-28"], r
        assert r["serverInfo"]["name"] == "mcpd", r
        tools = c.result("tools/list", {"_meta": meta})["tools"]
        assert any(t["name"] == "ts__echo" for t in tools)
        # listChanged, but in that era only on a subscriptions/listen:
        # without one, no list_changed when a server comes.
        assert r["capabilities"]["tools"] == {"listChanged": True}, r
        mcpd.load_testserver("more")
        with pytest.raises(TimeoutError):
            c.read_message(1.0)


def test_mcpd_methods_keep_working_on_an_mcp_connection(mcpd):
    mcpd.load_testserver("ts")
    with raw_session(mcpd) as c:
        assert [r["name"] for r in c.result("mcpd/list")["servers"]] == \
            ["ts"]
        assert c.result("ping") == {}
        e = c.error("resources/subscribe", {"uri": "x://y"})
        assert e["code"] == INVALID_PARAMS and e["data"] == {"uri": "x://y"}, e


def test_bridge_scope_to_one_server(mcpd, sdk):
    """mcpctl bridge --server two: the SDK client sees that server's tools
    under their own names."""
    mcpd.load_testserver("ts")
    mcpd.load_testserver("two", "--tools", "1")
    c = sdk("--server", "two")
    names = c.ask("tools")["tools"]
    assert "t0" in names and "echo" in names, names
    assert not any("__" in n for n in names), names
    r = c.ask('call t0 {"message":"scoped"}')
    assert r["result"]["content"][0]["text"] == "scoped", r


def test_prompts_resources_and_completion_of_every_server(mcpd, sdk):
    """Prompts are named like tools; resources and templates are merged
    and routed by URI (or the template it fits); completion goes to the
    server of its ref. server-everything has all of them."""
    mcpd.load(everything_cmd(), name="ev", timeout=120)
    mcpd.load_testserver("ts")      # offers none: left out, not an error
    c = sdk()
    prompts = c.ask("prompts")["prompts"]
    names = [p["name"] for p in prompts]
    assert "ev__simple-prompt" in names, names
    assert all(p["_meta"]["io.mcpd/server"] == "ev" for p in prompts)
    r = c.ask("prompt ev__simple-prompt {}")
    assert r["messages"][0]["content"]["text"] == \
        "This is a simple prompt without arguments.", r
    r = c.ask("prompt ev__nope {}")
    assert r["error"]["code"] == INVALID_PARAMS, r
    resources = c.ask("resources")["resources"]
    assert resources and all(x["_meta"]["io.mcpd/server"] == "ev"
                             for x in resources)
    r = c.ask("read " + resources[0]["uri"])
    assert r["contents"][0]["uri"] == resources[0]["uri"], r
    templates = c.ask("templates")["templates"]
    tmpl = next(t for t in templates if "{resourceId}" in t["uriTemplate"]
                and "text" in t["uriTemplate"])
    uri = tmpl["uriTemplate"].replace("{resourceId}", "3")
    r = c.ask("read " + uri)
    assert r["contents"][0]["uri"] == uri, r
    r = c.ask('complete {"ref":{"type":"ref/prompt","name":'
              '"ev__completable-prompt"},"argument":{"name":"department",'
              '"value":"E"}}')
    assert "Engineering" in r["completion"]["values"], r


def test_names_and_uris_a_session_was_not_shown_yet(mcpd):
    """A client may get a prompt, read a resource or complete an argument
    without listing first: the gateway lists for it, then routes; what no
    server has stays -32602 (a resource's with its URI in data, SEP-2164)."""
    mcpd.load_testserver("conf", "--conformance")
    mcpd.load_testserver("ts")
    with raw_session(mcpd) as c:
        r = c.result("prompts/get", {"name": "conf__test_simple_prompt"})
        assert r["messages"][0]["content"]["text"] == \
            "This is a simple prompt for testing.", r
        r = c.result("resources/read", {"uri": "test://template/7/data"})
        assert json.loads(r["contents"][0]["text"])["id"] == "7", r
        r = c.result("completion/complete", {
            "ref": {"type": "ref/prompt",
                    "name": "conf__test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"}})
        assert r["completion"]["values"] == ["paris", "park", "party"], r
        e = c.error("resources/read", {"uri": "test://nowhere"})
        assert e["code"] == INVALID_PARAMS, e
        assert e["data"] == {"uri": "test://nowhere"}, e
        e = c.error("prompts/get", {"name": "conf__nope"})
        assert e["code"] == INVALID_PARAMS, e


def test_resource_subscriptions(mcpd, tmp_path):
    """resources/subscribe goes to the server of the URI; its updates reach
    the sessions subscribed to it, and the server is told to unsubscribe
    when the agent's last subscriber unsubscribes or goes."""
    log = tmp_path / "conf.log"
    mcpd.load_testserver("conf", "--conformance", "--log-file", log)
    uri = "test://watched-resource"

    def upstream(verb):
        return log.read_text().count(f"resources/{verb} {uri}") \
            if log.exists() else 0
    with mcpd.client() as c:
        r = c.result("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"}})
        assert r["capabilities"]["resources"] == {
            "listChanged": True, "subscribe": True}, r
    a, b = raw_session(mcpd), raw_session(mcpd)
    try:
        assert a.result("resources/subscribe", {"uri": uri}) == {}
        assert b.result("resources/subscribe", {"uri": uri}) == {}
        assert upstream("subscribe") == 2
        a.result("tools/call", {"name": "conf__test_update_resource",
                                "arguments": {}})
        for c in (a, b):
            while not any(m.get("method") == "notifications/resources/updated"
                          and m["params"] == {"uri": uri} for m in c.other):
                c.other.append(c.read_message(10))
        # a leaves: b is still subscribed, the server is not told.
        assert a.result("resources/unsubscribe", {"uri": uri}) == {}
        time.sleep(0.3)
        assert upstream("unsubscribe") == 0
        # b goes away subscribed: now it is.
        b.close()
        poll(lambda: upstream("unsubscribe") == 1, timeout=10,
             what="resources/unsubscribe upstream")
    finally:
        a.close()
        b.close()


def test_a_servers_error_reaches_the_client_as_it_is(mcpd):
    """The server's own JSON-RPC error (here server-everything's -32602 for
    a prompt without its required argument) reaches an MCP client
    unchanged; mcpd/call would wrap it as its upstream error."""
    mcpd.load(everything_cmd(), name="ev", timeout=120)
    c = raw_session(mcpd)
    c.result("prompts/list")
    e = c.error("prompts/get", {"name": "ev__args-prompt", "arguments": {}})
    assert e["code"] == INVALID_PARAMS, e
    assert "kind" not in e.get("data", {}), e  # not mcpd's wrapping
    assert e["message"].startswith(
        "MCP error -32602: Invalid arguments for prompt args-prompt"), e
    c.close()


def test_modern_listen_carries_only_the_changes_asked_for(mcpd):
    """2026-07-28 subscriptions/listen: acknowledged first with what mcpd
    honors, then only the list changes asked for, each with the listen's
    id; a second listen ends the first with an empty result; a cancelled
    listen gets no answer."""
    mcpd.load_testserver("ts")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    c = mcpd.client(timeout=30)
    first = c.request("subscriptions/listen", {
        "_meta": meta, "notifications": {"toolsListChanged": True,
                                         "resourceSubscriptions": ["x:/"]}})
    sub = {"io.modelcontextprotocol/subscriptionId": first}
    assert c.read_message() == {
        "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"notifications": {"toolsListChanged": True,
                                     "promptsListChanged": False,
                                     "resourcesListChanged": False},
                   "_meta": sub}}
    mcpd.load_testserver("more", "--tools", "1")
    assert c.read_message() == {
        "jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": sub}}
    second = c.request("subscriptions/listen", {
        "_meta": meta, "notifications": {"promptsListChanged": True}})
    sub2 = {"io.modelcontextprotocol/subscriptionId": second}
    # The first one's end and the second one's acknowledgement.
    got = sorted((c.read_message() for _ in range(2)), key=lambda m: "id" in m)
    assert got[0]["method"] == "notifications/subscriptions/acknowledged"
    assert got[0]["params"]["_meta"] == sub2
    assert got[1] == {"jsonrpc": "2.0", "id": first, "result": {
        "resultType": "complete", "_meta": sub}}
    c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": second}})
    mcpd.rpc.result("mcpd/unload", {"target": "more"})
    # Nothing more comes: no answer to the cancelled listen, no change.
    ask = c.request("tools/list", {"_meta": meta})
    m = c.read_message()
    assert m["id"] == ask and len(m["result"]["tools"]) == len(
        TESTSERVER_TOOLS), m
    c.close()
