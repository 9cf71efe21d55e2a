# SPDX-License-Identifier: ISC
"""A server's requests to its client (sampling/createMessage,
elicitation/create, roots/list) raised during a tool call go to the
gateway session that made the call when it declared the capability, and
are refused otherwise (DESIGN 11). The server is the official
server-everything (it offers trigger-sampling-request and the others only
to a client that declares the capability, so mcpd declares them
upstream); the clients are the official SDK's, over `mcpctl bridge` and
over the HTTP front; raw JSON-RPC where a client must misbehave."""

import json

import pytest

from conftest import poll
from test_gateway import SdkClient
from test_gateway_http import front  # noqa: F401 (a fixture)
from test_remote import Everything

EVERY = {"sampling": {}, "elicitation": {}, "roots": {}}
# Without roots: mcpd asks a session that declares them at once, with no
# call (test_roots.py), which a test of what a call raises leaves out.
ASKS = {"sampling": {}, "elicitation": {}}


@pytest.fixture
def everything(mcpd_factory):
    d = mcpd_factory("-v")  # settle reads the debug log
    d.load_everything(timeout=120, settle=True)
    return d


@pytest.fixture
def clients():
    made = []

    def start(*args, **kwargs):
        c = SdkClient(*args, **kwargs)
        made.append(c)
        return c
    yield start
    for c in made:
        c.close()


def text_of(r):
    assert "result" in r, r
    return "\n".join(c.get("text", "") for c in r["result"]["content"])


def test_upstream_sees_what_mcpd_declares(everything):
    names = [t["name"] for t in everything.tools("everything")]
    for tool in ("trigger-sampling-request", "trigger-elicitation-request",
                 "get-roots-list"):
        assert tool in names, names


def test_sampling_goes_to_the_client_that_called(everything, clients):
    c = clients(everything.sock, caps=ASKS)
    r = c.ask('call everything__trigger-sampling-request '
              '{"prompt":"say hi","maxTokens":5}')
    text = text_of(r)
    assert "mcpd-test-model" in text, text
    assert "sampled: Resource trigger-sampling-request context: say hi" \
        in text, text
    asked = c.ask("asked")["asked"]
    assert [m for m, _ in asked] == ["sampling/createMessage"], asked
    assert asked[0][1]["maxTokens"] == 5


def test_elicitation_goes_to_the_caller(everything, clients):
    # --no-project: mcpd asks for no project file among its roots
    # (test_projects.py), so each roots/list here is the server's.
    c = clients(everything.sock, "--no-project", caps=EVERY)
    # Its roots are asked at once, with no call (test_roots.py): the
    # server keeps them, and asks nothing of them during a call.
    asked = poll(lambda: c.ask("asked")["asked"],
                 what="mcpd to ask the new session for its roots")
    assert [m for m, _ in asked] == ["roots/list"], asked
    text = text_of(c.ask("call everything__trigger-elicitation-request {}"))
    assert '"name": "Ada"' in text, text
    text = text_of(c.ask("call everything__get-roots-list {}"))
    assert "file:///mcpd-test-root" in text, text
    methods = [m for m, _ in c.ask("asked")["asked"]]
    assert methods == ["elicitation/create"], methods


def test_a_client_that_did_not_declare_it_is_not_asked(everything, clients):
    c = clients(everything.sock, caps={"elicitation": {}})
    r = c.ask('call everything__trigger-sampling-request {"prompt":"x"}')
    # The server's tool fails with mcpd's refusal, which says why.
    assert r["result"]["isError"] is True, r
    assert "did not declare the capability sampling/createMessage needs" \
        in text_of(r), r
    assert c.ask("asked")["asked"] == []
    logs = everything.read_stderr()
    assert "refused sampling/createMessage" in logs


def test_mcpctl_call_is_not_asked_to_sample(everything):
    # mcpctl call answers elicitation and roots (test_call_elicit.py).
    r = everything.ctl("call", "everything", "trigger-sampling-request",
                       "prompt=x", is_json=False)
    assert r.rc == 5, r  # the tool reported an error
    assert ("(an mcpd/call) does not answer sampling/createMessage: its "
            "answers do not name it") in r.out + r.err, r


def read_not_log(conn, timeout=20):
    """The next message that is not a log notification: server-everything
    logs "Roots updated" whenever its roots come, which may be late."""
    while True:
        msg = conn.read_message(timeout=timeout)
        if msg.get("method") != "notifications/message":
            return msg


def ask_by_hand(everything, caps):
    """A raw gateway session that declares caps and calls
    trigger-sampling-request: returns (connection, the request mcpd sent
    it, the call's id)."""
    conn = everything.client()
    conn.result("initialize", {
        "protocolVersion": "2025-06-18", "capabilities": caps,
        "clientInfo": {"name": "raw", "version": "1"}})
    conn.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    conn.result("tools/list")
    call = conn.request("tools/call", {
        "name": "everything__trigger-sampling-request",
        "arguments": {"prompt": "by hand"}})
    msg = read_not_log(conn)
    assert msg["method"] == "sampling/createMessage", msg
    assert msg["id"].startswith("mcpd-ask-"), msg
    return conn, msg, call


def test_the_callers_error_reaches_the_server(everything):
    conn, msg, call = ask_by_hand(everything, {"sampling": {}})
    conn.send({"jsonrpc": "2.0", "id": msg["id"],
               "error": {"code": -1, "message": "the user said no"}})
    r = conn.response(call, timeout=20)
    assert r["result"]["isError"] is True, r
    assert "the user said no" in r["result"]["content"][0]["text"], r
    conn.close()


def test_a_caller_that_goes_before_answering(everything):
    conn, msg, call = ask_by_hand(everything, {"sampling": {}})
    conn.close()
    poll(lambda: "sampling/createMessage: the client went before it "
         "answered" in everything.read_stderr(), timeout=20,
         what="mcpd to answer the server for the client that went")
    # The server is still served: another client calls it.
    r = everything.call("everything", "echo", {"message": "still here"})
    assert r["content"][0]["text"] == "Echo: still here"


def test_sampling_over_the_http_front(front, clients):  # noqa: F811
    front.load_everything(timeout=120, settle=True)
    # The client takes mcpd's request on the session's GET stream.
    c = clients(None, caps=ASKS, argv=["--http", front.url, front.token])
    text = text_of(c.ask('call everything__trigger-sampling-request '
                         '{"prompt":"over http"}'))
    assert "sampled: Resource trigger-sampling-request context: over http" \
        in text, text
    assert [m for m, _ in c.ask("asked")["asked"]] == \
        ["sampling/createMessage"]


def test_unknown_answer_ids_are_ignored(everything):
    conn = everything.client()
    conn.send({"jsonrpc": "2.0", "id": "mcpd-ask-999999",
               "result": {"model": "x"}})
    conn.send({"jsonrpc": "2.0", "id": 7, "error": {"code": 1,
                                                   "message": "stray"}})
    # Nothing answers a stray answer; the connection still serves.
    assert conn.result("mcpd/status", {})["version"]
    conn.close()


MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def test_input_required_passes_to_a_modern_caller(mcpd):
    """A 2026-07-28 session gets the upstream's input_required result as
    it is; its retry, with inputResponses and the echoed requestState,
    goes to the same server, which answers it; the caller's own client
    capabilities reach the server (it is the caller that answers)."""
    mcpd.load_testserver("modern", "--modern")
    with mcpd.client(timeout=30) as c:
        c.result("server/discover", {"_meta": MODERN})
        c.result("tools/list", {"_meta": MODERN})
        r = c.result("tools/call", {"name": "modern__ask", "arguments": {},
                                    "_meta": MODERN})
        assert r["resultType"] == "input_required", r
        assert r["requestState"] == "state-1", r
        assert r["inputRequests"]["confirm"]["method"] == \
            "elicitation/create", r
        r = c.result("tools/call", {
            "name": "modern__ask", "arguments": {}, "_meta": MODERN,
            "inputResponses": {"confirm": {"action": "accept",
                                           "content": {"ok": True}}},
            "requestState": "state-1"})
        assert r["content"][0]["text"] == \
            'confirmed: {"action":"accept","content":{"ok":true}}', r
    assert "ask: client capabilities {\"elicitation\":{}}" in \
        mcpd.logs("modern"), mcpd.logs("modern")


def test_input_required_to_a_legacy_caller_ends_unanswered(mcpd):
    mcpd.load_testserver("modern", "--modern")
    with mcpd.client(timeout=30) as c:
        c.result("initialize", {"protocolVersion": "2025-06-18",
                                "capabilities": {"elicitation": {}},
                                "clientInfo": {"name": "raw",
                                               "version": "1"}})
        c.result("tools/list")
        e = c.error("tools/call", {"name": "modern__ask", "arguments": {}})
        assert e["data"]["kind"] == "outcome-unknown", e
        assert "input_required" in e["message"], e


def test_sampling_from_a_streamable_http_server(mcpd, peers, clients):
    """The server is remote (Streamable HTTP): its request comes on the
    call's response stream, and the caller's answer goes back as a POST."""
    server = Everything(peers)
    mcpd.load_url(server.url(), name="remote", allow_local=True)
    c = clients(mcpd.sock, caps=ASKS)
    text = text_of(c.ask('call remote__trigger-sampling-request '
                         '{"prompt":"from afar"}'))
    assert "sampled: Resource trigger-sampling-request context: from afar" \
        in text, text


def test_a_caller_that_never_answers(mcpd_factory):
    """mcpd's request waits at most the call deadline: then the client gets
    notifications/cancelled for it and the server an error saying why."""
    d = mcpd_factory("-v", "--call-timeout", "1500")
    d.load_everything(timeout=120, settle=True)
    conn, msg, call = ask_by_hand(d, {"sampling": {}})
    # The call's own deadline is the same: its error may come first.
    note = read_not_log(conn)
    if note.get("id") == call:
        assert note["error"]["data"]["kind"] == "outcome-unknown", note
        note = read_not_log(conn)
    assert note == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": msg["id"],
                               "reason": "mcpd's deadline passed"}}, note
    poll(lambda: "sampling/createMessage: the client did not answer within "
         "1500 ms; mcpd cancelled its request" in d.read_stderr(),
         what="mcpd to tell the server")
    conn.close()


def test_an_ask_with_no_stream_to_take_it_is_refused(front):  # noqa: F811
    """A session whose call takes only JSON and that has no GET stream
    cannot be asked anything: the front answers mcpd's sampling request
    itself, with an error that says what to do, and the call ends."""
    from test_gateway_http import post
    front.load_everything(timeout=120, settle=True)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18",
                       "capabilities": {"sampling": {}},
                       "clientInfo": {"name": "raw", "version": "1"}}}
    status, headers, body = post(front.url, init, front.token)
    assert status == 200, (status, body)
    sid = headers["Mcp-Session-Id"]
    assert post(front.url, {"jsonrpc": "2.0",
                            "method": "notifications/initialized"},
                front.token, sid)[0] == 202
    status, _, body = post(front.url, {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "everything__trigger-sampling-request",
                   "arguments": {"prompt": "no stream"}}},
        front.token, sid, headers={"Accept": "application/json"},
        timeout=60)
    assert status == 200, (status, body)
    assert json.loads(body) == {"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text":
                     "MCP error -32603: the HTTP client has no stream open "
                     "for requests: call with Accept: text/event-stream, or "
                     "open the GET stream"}],
        "isError": True}}, body
    poll(lambda: "sampling/createMessage: the client answered with an "
         "error" in front.read_stderr(), what="mcpd to log the refusal")
