# SPDX-License-Identifier: ISC
"""The HTTP+SSE transport (2024-11-05) against the real server-everything in
`sse` mode: reached by inference (a URL without /mcp whose POST of
initialize is refused) and by --transport sse."""

import pytest

from conftest import (EVERYTHING_JS, NODE, OUTCOME_UNKNOWN, UNAVAILABLE,
                      RpcError, free_port, poll, wait_listening)


class EverythingSse:
    """server-everything in sse mode: GET /sse, POST /message?sessionId=."""

    def __init__(self, peers):
        self.port = free_port()
        self.proc = peers([NODE, EVERYTHING_JS, "sse"], name="everything-sse",
                          env={"PORT": str(self.port)})
        wait_listening(self.port, proc=self.proc)

    def url(self, host="127.0.0.1"):
        return f"http://{host}:{self.port}/sse"


@pytest.fixture
def everything_sse(peers):
    return EverythingSse(peers)


def _names(tools):
    return sorted(t["name"] for t in tools)


def test_sse_by_inference(mcpd, everything_sse):
    r = mcpd.load_url(everything_sse.url(), name="sse", allow_local=True)
    assert r["mode"] == "remote"
    # The POST of initialize to /sse was refused: HTTP+SSE took over.
    assert r["transport"] == "sse", r
    assert r["tools"] > 5
    row = mcpd.row("sse")
    assert row["state"] == "ready" and row["transport"] == "sse", row
    res = mcpd.call("sse", "echo", {"message": "over sse"})
    assert res["content"][0]["text"] == "Echo: over sse", res
    tools = mcpd.tools("sse")
    assert "echo" in _names(tools) and len(tools) == r["tools"]
    u = mcpd.rpc.result("mcpd/unload", {"target": everything_sse.url()})
    assert u["stopped_live"] is True
    assert mcpd.row("sse") is None


def test_sse_explicit_transport(mcpd, everything_sse):
    r = mcpd.load_url(everything_sse.url("localhost"), name="sse2",
                      allow_local=True, transport="sse")
    assert r["transport"] == "sse" and r["endpoint"] == (
        f"http://localhost:{everything_sse.port}/sse"), r
    res = mcpd.call("sse2", "get-sum", {"a": 2, "b": 40})
    assert "42" in res["content"][0]["text"], res


def test_sse_server_gone_then_back(mcpd, peers, everything_sse):
    """The stream ending is a lost connection: calls in flight end, and
    the daemon reconnects with a fresh generation once the server is back."""
    mcpd.load_url(everything_sse.url(), name="sse", allow_local=True,
                  transport="sse")
    gen = mcpd.row("sse")["generation"]
    everything_sse.proc.kill()
    mcpd.wait_row("sse", lambda r: r["state"] != "ready",
                  what="the server to be noticed gone")
    with pytest.raises(RpcError) as e:
        mcpd.call("sse", "echo", {"message": "x"})
    assert e.value.code in (UNAVAILABLE, OUTCOME_UNKNOWN), e.value
    again = peers([NODE, EVERYTHING_JS, "sse"], name="everything-sse-2",
                  env={"PORT": str(everything_sse.port)})
    wait_listening(everything_sse.port, proc=again)
    row = mcpd.wait_row("sse", lambda r: r["state"] == "ready" and
                        r["generation"] > gen, timeout=40,
                        what="a fresh generation")
    assert row["restarts"] >= 1
    res = poll(lambda: _try_echo(mcpd), timeout=10, what="a call to work")
    assert res["content"][0]["text"] == "Echo: back"


def _try_echo(mcpd):
    try:
        return mcpd.call("sse", "echo", {"message": "back"})
    except RpcError:
        return None
