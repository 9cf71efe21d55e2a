# SPDX-License-Identifier: ISC
"""What a server asks during `mcpctl call` is answered by mcpctl: an
elicitation (form or URL) that mcpd relays from a 2025 server, asked on
the terminal (a pseudo-terminal here), filled with its defaults
(--elicit-defaults) or declined without a terminal; roots/list with the
working directory; sampling refused; and the inputRequests of a
2026-07-28 server's input_required results, retried with inputResponses
and the echoed requestState, a bounded number of rounds. The servers are
the official server-everything, mcp-testserver --modern and asker.py."""

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from conftest import MCPCTL, poll

ASKER = Path(__file__).resolve().parent / "asker.py"


def without_roots_log(err):
    """mcpctl call's stderr without server-everything's own log of the
    roots it got (it may come while the call runs: when is its own)."""
    return "".join(line for line in err.splitlines(keepends=True)
                   if not line.startswith("  [info] everything-server: "
                                          "Roots updated"))


@pytest.fixture
def everything(mcpd_factory):
    d = mcpd_factory("-v")  # settle reads the debug log
    d.load_everything(timeout=120, settle=True)
    return d


class Terminal:
    """mcpctl ARGS with a pseudo-terminal as its standard input and error
    (where it asks), its standard output a pipe (the result)."""

    def __init__(self, d, *args, cwd=None):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [str(MCPCTL), "-s", str(d.sock), *args], stdin=slave,
            stdout=subprocess.PIPE, stderr=slave, env=d.env, cwd=cwd,
            start_new_session=True)
        os.close(slave)
        self.seen = ""      # what the terminal showed, "\r\n" as "\n"
        self.pos = 0        # how far expect() has read
        self.raw = b""

    def _read(self, timeout):
        r, _, _ = select.select([self.master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:     # EIO: every end of the terminal is closed
            return False
        self.raw += data
        self.seen = self.raw.decode("utf-8", "replace").replace("\r\n", "\n")
        return bool(data)

    def expect(self, text, timeout=30.0):
        """Waits until the terminal shows text after what was expected
        before; returns what it showed up to its end."""
        deadline = time.monotonic() + timeout
        while text not in self.seen[self.pos:]:
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(left) and
                             self.proc.poll() is not None):
                raise AssertionError(
                    f"the terminal did not show {text!r}; it showed "
                    f"{self.seen[self.pos:]!r}")
        end = self.seen.index(text, self.pos) + len(text)
        shown, self.pos = self.seen[self.pos:end], end
        return shown

    def type(self, line):
        os.write(self.master, line.encode() + b"\n")

    def end_input(self):
        os.write(self.master, b"\x04")     # Ctrl-D at the start of a line

    def wait(self, timeout=60.0):
        """The exit status and standard output, once mcpctl ends."""
        out, _ = self.proc.communicate(timeout=timeout)
        while self._read(0.2):
            pass
        return self.proc.returncode, out.decode("utf-8", "replace")

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        if self.proc.stdout:
            self.proc.stdout.close()
        os.close(self.master)


@pytest.fixture
def terminal():
    made = []

    def start(d, *args, **kwargs):
        t = Terminal(d, *args, **kwargs)
        made.append(t)
        return t
    yield start
    for t in made:
        t.close()


def raw_result(out):
    """server-everything's "Raw result: {...}", the answer it got."""
    assert "Raw result: " in out, out
    return json.loads(out.split("Raw result: ", 1)[1])


def test_a_form_answered_on_the_terminal(everything, terminal):
    t = terminal(everything, "call", "everything",
                 "trigger-elicitation-request")
    assert t.expect("Answer it? [Y]es, [n]o: decline, [c]ancel: ") == (
        "everything asks: Please provide inputs for the following fields:\n"
        "Answer it? [Y]es, [n]o: decline, [c]ancel: ")
    t.type("y")
    assert t.expect("  text, required: ") == (
        "y\n(Enter takes the value in [brackets]; - leaves an optional "
        "field out; Ctrl-D cancels)\n"
        "name - String: Your full, legal name\n  text, required: ")
    t.type("")      # required, no default: asked again
    t.expect("  not taken: an answer is required\n  text, required: ")
    t.type("Ada Lovelace")
    t.expect("check - Boolean: Agree to the terms and conditions\n"
             "  yes or no: ")
    t.type("maybe")
    t.expect("  not taken: answer yes or no\n  yes or no: ")
    t.type("y")
    t.expect("  text [It was a dark and stormy night.]: ")
    t.type("")      # the default (SEP-1034)
    t.expect("  email address: ")
    t.type("ada at example.org")
    t.expect("  not taken: an email address, like name@example.org\n"
             "  email address: ")
    t.type("ada@example.org")
    t.expect("  URI: ")
    t.type("-")     # optional: left out
    t.expect("  date, YYYY-MM-DD: ")
    t.type("1815-12-10")
    t.expect("  integer from 1 to 100 [42]: ")
    t.type("500")
    t.expect("  not taken: expected at most 100, got 500\n"
             "  integer from 1 to 100 [42]: ")
    t.type("7")
    t.expect("  number from 0 to 1000 [3.14]: ")
    t.type("")
    assert t.expect("  one of 1-6 [Monica]: ") == (
        "\nuntitledSingleSelectEnum - Untitled Single Select Enum: Choose "
        "your favorite friend\n"
        "  1) Monica  2) Rachel  3) Joey  4) Chandler  5) Ross  6) Phoebe\n"
        "  one of 1-6 [Monica]: ")
    t.type("2")
    t.expect("  some of 1-5, separated by commas (1 to 3) [Guitar]: ")
    t.type("1, 3, Guitar")
    assert t.expect("  one of 1-3 [Superman]: ").endswith(
        "  1) Superman  2) Green Lantern  3) Wonder Woman\n"
        "  one of 1-3 [Superman]: ")
    t.type("wonder woman")      # a title, whatever its case
    t.expect("  some of 1-3, separated by commas (1 to 3) [Tuna]: ")
    t.type("fish-2,1")
    t.expect("  1) Cats  2) Dogs  3) Birds  4) Fish  5) Reptiles\n"
             "  one of 1-5 [Cats]: ")
    t.type("")
    rc, out = t.wait()
    assert rc == 0, (out, t.seen)
    assert out.startswith("✅ User provided the requested information!\n"
                          "User inputs:\n- Name: Ada Lovelace\n"), out
    assert raw_result(out) == {"action": "accept", "content": {
        "name": "Ada Lovelace", "check": True,
        "firstLine": "It was a dark and stormy night.",
        "email": "ada@example.org", "birthdate": "1815-12-10",
        "integer": 7, "number": 3.14,
        "untitledSingleSelectEnum": "Rachel",
        "untitledMultipleSelectEnum": ["Guitar", "Violin"],
        "titledSingleSelectEnum": "hero-3",
        "titledMultipleSelectEnum": ["fish-2", "fish-1"],
        "legacyTitledEnum": "pet-1"}}
    assert "elicitation/create: the client answered" in \
        everything.read_stderr()


def test_declined_and_cancelled_on_the_terminal(everything, terminal):
    t = terminal(everything, "call", "everything",
                 "trigger-elicitation-request")
    t.expect("Answer it? [Y]es, [n]o: decline, [c]ancel: ")
    t.type("n")
    rc, out = t.wait()
    assert rc == 0, out
    assert raw_result(out) == {"action": "decline"}

    t = terminal(everything, "call", "everything",
                 "trigger-elicitation-request")
    t.expect("Answer it? [Y]es, [n]o: decline, [c]ancel: ")
    t.type("")
    t.expect("  text, required: ")
    t.end_input()
    rc, out = t.wait()
    assert rc == 0, out
    assert raw_result(out) == {"action": "cancel"}
    assert out.startswith("⚠️ User cancelled the elicitation dialog."), out


def test_declined_without_a_terminal(everything):
    r = everything.ctl("call", "everything", "trigger-elicitation-request",
                       is_json=False)
    assert r.rc == 0, r
    assert raw_result(r.out) == {"action": "decline"}
    assert without_roots_log(r.err) == (
        "everything asks: Please provide inputs for the following fields:\n"
        "  declined: standard input is not a terminal (--elicit-defaults "
        "accepts a form's defaults)\n"), r


def test_elicit_defaults_declines_a_form_they_do_not_fill(everything):
    # The form requires "name", which has no default.
    r = everything.ctl("call", "everything", "trigger-elicitation-request",
                       "--elicit-defaults", is_json=False)
    assert r.rc == 0, r
    assert raw_result(r.out) == {"action": "decline"}
    assert without_roots_log(r.err) == (
        "everything asks: Please provide inputs for the following fields:\n"
        "  declined: its defaults do not fill the form (--elicit-defaults): "
        "missing required property \"name\"\n"), r


def test_elicit_defaults_asks_nothing_on_a_terminal(mcpd, terminal):
    mcpd.load_testserver("modern", "--modern")
    t = terminal(mcpd, "call", "modern", "ask", "--elicit-defaults")
    rc, out = t.wait()
    assert rc == 0, (out, t.seen)
    assert out == 'confirmed: {"action":"accept","content":{}}\n'
    assert t.seen == ("modern asks: Proceed?\n"
                      "  accepted with its defaults (--elicit-defaults): "
                      "{}\n")


URL = "https://example.org/consent?step=1"


def test_a_url_is_accepted_only_when_the_person_says_so(everything,
                                                         terminal):
    args = ("call", "everything", "trigger-url-elicitation", f"url={URL}")
    t = terminal(everything, *args)
    assert t.expect("[c]ancel: ") == (
        "everything asks you to open a URL: Please open the link to "
        "complete this action.\n"
        f"  {URL}\n"
        "Will you open it (mcpctl does not)? [y]es, [N]o: decline, "
        "[c]ancel: ")
    t.type("y")
    t.expect("  accepted: open the URL above in your browser\n")
    rc, out = t.wait()
    assert rc == 0, out
    assert out.startswith("✅ User completed the URL elicitation flow.\n"), \
        out
    assert raw_result(out) == {"action": "accept"}

    t = terminal(everything, *args)
    t.expect("[c]ancel: ")
    t.type("")      # the default is no
    rc, out = t.wait()
    assert rc == 0, out
    assert raw_result(out) == {"action": "decline"}

    for extra in ((), ("--elicit-defaults",)):
        r = everything.ctl(*args, *extra, is_json=False)
        assert r.rc == 0, r
        assert raw_result(r.out) == {"action": "decline"}
        assert r.err.endswith(
            f"  {URL}\n  declined: a URL is accepted only when you say so "
            "at the terminal\n"), r


def test_roots_are_the_working_directory(mcpd, tmp_path):
    """A roots/list that comes while mcpctl call's call is in flight goes
    to mcpctl, which answers its working directory. The test server asks
    at notifications/roots/list_changed, which mcpd sends it when a
    gateway session that declares roots starts (test_roots.py)."""
    mcpd.load_testserver("ts", "--ping-client")
    mcpd.wait_log("ts", lambda ls: any(
        line.startswith("client answered srv-2: ") for line in ls),
        what="the first roots/list to be answered")
    where = tmp_path / "my project"
    where.mkdir()
    call = subprocess.Popen(
        [str(MCPCTL), "-s", str(mcpd.sock), "call", "ts", "sleep_ms",
         "ms=4000"], cwd=where, env=mcpd.env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        mcpd.wait_log("ts", lambda ls: any(
            line.startswith("sleep_ms ") for line in ls),
            what="the call to be in flight")
        with mcpd.client() as c:
            c.result("initialize", {
                "protocolVersion": "2025-06-18",
                "capabilities": {"roots": {}},
                "clientInfo": {"name": "raw", "version": "1"}})
            c.send({"jsonrpc": "2.0",
                    "method": "notifications/initialized"})
            out, err = call.communicate(timeout=30)
    finally:
        if call.poll() is None:
            call.kill()
            call.wait()
    assert call.returncode == 0, (out, err)
    uri = "file://" + urllib.parse.quote(str(where))
    assert uri.endswith("/my%20project"), uri
    assert f"ts asked for roots: {uri}\n" in err, err
    answer = [json.loads(line.split(": ", 1)[1]) for line in mcpd.logs("ts")
              if line.startswith("client answered srv-3: ")]
    assert answer == [{"jsonrpc": "2.0", "id": "srv-3", "result": {
        "roots": [{"uri": uri, "name": "my project"}]}}], answer


def test_sampling_is_refused_saying_why(everything):
    r = everything.ctl("call", "everything", "trigger-sampling-request",
                       "prompt=x", is_json=False)
    assert r.rc == 5, r     # the tool reported the refusal as its error
    assert ("the client whose call is in flight on everything (an "
            "mcpd/call) does not answer sampling/createMessage: its answers "
            "do not name it") in r.err, r


def test_input_required_answered_on_the_terminal(mcpd, terminal):
    """A 2026-07-28 server's input_required result: mcpctl asks, then
    calls again with inputResponses and the echoed requestState; the
    server got mcpctl's answers as its client capabilities."""
    mcpd.load_testserver("modern", "--modern")
    t = terminal(mcpd, "call", "modern", "ask")
    assert t.expect("[c]ancel: ") == (
        "modern asks: Proceed?\nAccept? [Y]es, [n]o: decline, [c]ancel: ")
    t.type("y")
    rc, out = t.wait()
    assert rc == 0, (out, t.seen)
    assert out == 'confirmed: {"action":"accept","content":{}}\n'
    caps = [line for line in mcpd.logs("modern")
            if line.startswith("ask: client capabilities")]
    assert caps == ['ask: client capabilities {"elicitation":{"form":{},'
                    '"url":{}},"roots":{}}'] * 2, caps

    r = mcpd.ctl("call", "modern", "ask", is_json=False)
    assert r.rc == 0, r
    assert r.out == 'confirmed: {"action":"decline"}\n', r


@pytest.fixture
def asker(mcpd):
    mcpd.load([sys.executable, str(ASKER)], name="asker")
    return mcpd


def asker_calls(d):
    """The params of every tools/call the asker got, in order."""
    return [json.loads(line.split("call: ", 1)[1])
            for line in d.logs("asker") if line.startswith("call: ")]


def test_input_rounds_echo_each_request_state(asker, tmp_path):
    requests = {"form": {"method": "elicitation/create", "params": {
        "message": "How many?", "requestedSchema": {
            "type": "object", "properties": {
                "count": {"type": "integer", "default": 3}}}}},
        "where": {"method": "roots/list", "params": {}}}
    args = json.dumps({"requests": requests, "rounds": 2})
    r = asker.ctl("call", "asker", "ask", "--args-json", args,
                  "--elicit-defaults", cwd=tmp_path)
    assert r.rc == 0, r
    responses = {"form": {"action": "accept", "content": {"count": 3}},
                 "where": {"roots": [{"uri": "file://" + str(tmp_path),
                                      "name": tmp_path.name}]}}
    assert json.loads(r.json["content"][0]["text"]) == {
        "rounds": 2, "state": "round-2", "responses": responses}
    calls = asker_calls(asker)
    assert [c.get("requestState") for c in calls] == \
        [None, "round-1", "round-2"]
    assert [c.get("inputResponses") for c in calls] == \
        [None, responses, responses]
    for c in calls:
        assert c["name"] == "ask" and c["arguments"] == json.loads(args)
        assert c["_meta"]["io.modelcontextprotocol/clientCapabilities"] == \
            {"elicitation": {"form": {}, "url": {}}, "roots": {}}, c


def test_no_request_state_is_sent_when_none_came(asker):
    requests = {"ok": {"method": "elicitation/create",
                       "params": {"message": "Go?"}}}
    r = asker.ctl("call", "asker", "ask", "--elicit-defaults", "--args-json",
                  json.dumps({"requests": requests, "no_state": True}))
    assert r.rc == 0, r
    calls = asker_calls(asker)
    assert len(calls) == 2, calls
    assert "requestState" not in calls[1], calls[1]
    assert calls[1]["inputResponses"] == \
        {"ok": {"action": "accept", "content": {}}}


def test_input_rounds_are_bounded(asker):
    requests = {"ok": {"method": "elicitation/create",
                       "params": {"message": "Again?"}}}
    r = asker.ctl("call", "asker", "ask", "--elicit-defaults", "--args-json",
                  json.dumps({"requests": requests, "rounds": 100}),
                  is_json=False)
    assert r.rc == 1, r
    assert r.out == ""
    assert r.err.endswith(
        "mcpctl: asker still asks for input after 8 rounds; mcpctl stops "
        "there (nothing more was sent)\n"), r
    assert len(asker_calls(asker)) == 8


def test_sampling_in_an_input_request_is_refused(asker):
    requests = {"model": {"method": "sampling/createMessage", "params": {
        "messages": [], "maxTokens": 5}},
        "ok": {"method": "elicitation/create", "params": {"message": "x"}}}
    r = asker.ctl("call", "asker", "ask", "--elicit-defaults", "--args-json",
                  json.dumps({"requests": requests}), is_json=False)
    assert r.rc == 1, r
    assert r.err == (
        "mcpctl: asker asked for input mcpctl does not give: input request "
        "model: mcpctl call does not answer sampling/createMessage: it has "
        "no language model to sample with (an MCP client that samples can "
        "call the tool through mcpctl bridge); nothing was sent again\n"), r
    # Nothing was asked (the elicitation), nothing sent again.
    assert len(asker_calls(asker)) == 1


def test_an_unknown_answer_is_refused(mcpd):
    mcpd.load_testserver("ts")
    with mcpd.client() as c:
        e = c.error("mcpd/call", {"server": "ts", "tool": "echo",
                                  "arguments": {"message": "x"},
                                  "answers": ["elicitation", "telepathy"]})
    assert e["code"] == -32602, e
    assert e["data"] == {"field": "answers"}, e
    assert e["message"] == ("mcpd/call: answers is a list of elicitation, "
                            "elicitation-url, roots, sampling and "
                            "input_required"), e


def test_input_required_without_the_answer_ends_unanswered(mcpd):
    mcpd.load_testserver("modern", "--modern")
    with mcpd.client() as c:
        e = c.error("mcpd/call", {"server": "modern", "tool": "ask",
                                  "answers": ["elicitation"]})
    assert e["data"]["kind"] == "outcome-unknown", e
    assert e["message"] == (
        "the server asked for more input (resultType input_required), which "
        "the caller did not say it answers; nothing was sent again"), e


def test_the_request_waits_the_calls_deadline(everything):
    """mcpd's request to an mcpd/call caller waits as long as the call
    may (its timeout_ms), not mcpd's --call-timeout (60 s here)."""
    conn = everything.client(timeout=30)
    call = conn.request("mcpd/call", {
        "server": "everything", "tool": "trigger-elicitation-request",
        "answers": ["elicitation"], "timeout_ms": 1500})
    msg = conn.read_message(timeout=20)
    assert msg["method"] == "elicitation/create", msg
    assert msg["id"].startswith("mcpd-ask-"), msg
    # Both come within the reads' 20 s, well before mcpd's 60 s; the log
    # line below names the deadline that was kept.
    seen = [conn.read_message(timeout=20), conn.read_message(timeout=20)]
    assert {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": msg["id"],
                       "reason": "mcpd's deadline passed"}} in seen, seen
    answer = [m for m in seen if m.get("id") == call]
    assert answer and answer[0]["error"]["data"]["kind"] == \
        "outcome-unknown", seen
    poll(lambda: "elicitation/create: the client did not answer within "
         "1500 ms; mcpd cancelled its request" in everything.read_stderr(),
         what="mcpd to tell the server")
    conn.close()
