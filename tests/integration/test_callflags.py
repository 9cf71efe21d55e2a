# SPDX-License-Identifier: ISC
"""mcpctl call with flags made from the tool's inputSchema: every type, the
names (kebab-case, exact, --arg-NAME), required and unknown flags, the
generated --help, inputSchema and outputSchema checks, KEY=VALUE and
--args-json alongside, and the bash completion (ctl/mcpctl.bash-completion).

Besides server-everything and the C test server, a small MCP server written
here (FLAGS_SERVER) has the types those two lack (arrays, objects,
anyOf/null), clashing names, and results that break their outputSchema."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import MCPCTL, REPO, run_ctl

COMPLETION = REPO / "ctl" / "mcpctl.bash-completion"

# A stdio MCP server: each call is logged on stderr ("called TOOL ARGS"),
# and "search" answers with the arguments it got.
FLAGS_SERVER = r'''
import json, sys

ECHO_OUT = {"type": "object", "properties": {"arguments": {"type": "object"}},
            "required": ["arguments"]}
TOOLS = [
    {"name": "search", "title": "Search Tool",
     "description": "Searches the index.\nAnswers with its arguments.",
     "inputSchema": {"type": "object", "properties": {
         "query": {"type": "string", "description": "What to look for"},
         "maxResults": {"type": "integer", "minimum": 1, "maximum": 100,
                        "default": 10, "description": "At most this many"},
         "min_score": {"type": "number"},
         "verbose": {"type": "boolean"},
         "tags": {"type": "array", "items": {"type": "string"}},
         "ids": {"type": "array", "items": {"type": "integer"}},
         "filter": {"type": "object", "properties": {
             "lang": {"type": "string"}, "depth": {"type": "integer"}}},
         "points": {"type": "array", "items": {
             "type": "object", "properties": {"x": {"type": "number"}},
             "required": ["x"]}},
         "mode": {"anyOf": [{"type": "string", "enum": ["fast", "exact"]},
                            {"type": "null"}]},
         "timeout": {"type": "number", "description": "The tool's own"},
         "json": {"type": "boolean"},
         "extra": {}},
      "required": ["query"]},
     "outputSchema": ECHO_OUT},
    {"name": "clash", "description": "Two names, one kebab-case form.",
     "inputSchema": {"type": "object", "properties": {
         "maxResults": {"type": "integer"},
         "max_results": {"type": "integer"},
         "alpha1": {"type": "string"}, "alpha2": {"type": "string"},
         "alpha3": {"type": "string"}, "alpha4": {"type": "string"}}},
     "outputSchema": ECHO_OUT},
    {"name": "bad-output", "description": "Breaks its outputSchema.",
     "inputSchema": {"type": "object", "properties": {
         "fail": {"type": "boolean"}, "missing": {"type": "boolean"}}},
     "outputSchema": {"type": "object", "properties": {
         "count": {"type": "integer"},
         "items": {"type": "array", "items": {"type": "string"}}},
         "required": ["count"]}},
    {"name": "code", "description": "A string with a pattern.",
     "inputSchema": {"type": "object", "properties": {
         "code": {"type": "string", "pattern": "^[a-z]+-[0-9]{2}$"}},
         "required": ["code"]},
     "outputSchema": ECHO_OUT},
    {"name": "remote-ref", "description": "A schema with a remote $ref.",
     "inputSchema": {"type": "object", "properties": {
         "profile": {"$ref": "https://example.com/profile.json"}}},
     "outputSchema": {"$ref": "https://example.com/out.json"}},
]


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def call(name, args):
    sys.stderr.write("called %s %s\n" % (name, json.dumps(args,
                                                          sort_keys=True)))
    sys.stderr.flush()
    if name in ("search", "clash", "code", "remote-ref"):
        return {"content": [{"type": "text", "text": "got " +
                             json.dumps(args, sort_keys=True)}],
                "structuredContent": {"arguments": args}}
    if name == "bad-output":
        text = {"type": "text", "text": "three items"}
        if args.get("fail"):
            return {"content": [text], "isError": True}
        if args.get("missing"):
            return {"content": [text]}
        return {"content": [text],
                "structuredContent": {"count": 3, "items": ["a", 2]}}
    return None


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or "method" not in msg:
        continue
    method, id_ = msg["method"], msg["id"]
    params = msg.get("params") or {}
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "flags", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        result = call(params.get("name"), params.get("arguments") or {})
        if result is None:
            send({"jsonrpc": "2.0", "id": id_, "error": {
                "code": -32602, "message": "Unknown tool"}})
        else:
            send({"jsonrpc": "2.0", "id": id_, "result": result})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": id_, "error": {
            "code": -32601, "message": "Method not found"}})
'''


@pytest.fixture
def flags(mcpd, tmp_path):
    """mcpd with FLAGS_SERVER loaded as "flags"."""
    script = tmp_path / "flags-server.py"
    script.write_text(FLAGS_SERVER)
    mcpd.load([sys.executable, str(script)], name="flags")
    return mcpd


def sent(d, args):
    """What the flags server got from mcpctl --json call flags search
    ARGS (the call must succeed)."""
    r = d.ctl("call", "flags", "search", *args)
    assert r.rc == 0, r
    return r.json["structuredContent"]["arguments"]


def calls(d):
    """The calls the flags server saw, from its stderr."""
    return [l for l in d.logs("flags") if l.startswith("called ")]


def usage_error(d, *args):
    """mcpctl call ARGS must be a usage error (2); its stderr."""
    r = d.ctl("call", *args, is_json=False)
    assert r.rc == 2, r
    assert r.out == "", r
    return r.err


# --------------------------------------------------------------------------
# Types

def test_string_enum_and_boolean_flags_everything(mcpd):
    mcpd.load_everything("everything")
    r = mcpd.ctl("call", "everything", "echo", "--message", "hello flags",
                 is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == "Echo: hello flags"
    rc, out, err = mcpd.ctl("call", "everything", "echo",
                            "--message=a=b --c")
    assert rc == 0, err
    assert out["content"][0]["text"] == "Echo: a=b --c"

    # camelCase properties as kebab-case flags; a boolean set and cleared.
    rc, out, err = mcpd.ctl("call", "everything", "get-annotated-message",
                            "--message-type", "success", "--include-image")
    assert rc == 0, err
    assert [c["type"] for c in out["content"]] == ["text", "image"]
    for off in (["--no-include-image"], ["--include-image=false"]):
        rc, out, err = mcpd.ctl("call", "everything",
                                "get-annotated-message",
                                "--message-type=success", *off)
        assert rc == 0, (off, err)
        assert [c["type"] for c in out["content"]] == ["text"], off
    # The exact property name works too.
    rc, out, err = mcpd.ctl("call", "everything", "get-annotated-message",
                            "--messageType", "debug")
    assert rc == 0, err

    err = usage_error(mcpd, "everything", "get-annotated-message",
                      "--message-type", "loud")
    assert "'loud' is not one of: error, success, debug" in err
    err = usage_error(mcpd, "everything", "get-annotated-message",
                      "--message-type", "debug", "--include-image=yes")
    assert "--include-image needs true or false, not 'yes'" in err
    err = usage_error(mcpd, "everything", "get-annotated-message",
                      "--message-type", "debug", "--no-include-image=true")
    assert "--no-include-image takes no value" in err
    err = usage_error(mcpd, "everything", "echo", "--message")
    assert "--message needs a value" in err


def test_number_flags_everything(mcpd):
    mcpd.load_everything("everything")
    r = mcpd.ctl("call", "everything", "get-sum", "--a", "19", "--b=23",
                 is_json=False)
    assert r.rc == 0, r
    assert "42" in r.out
    r = mcpd.ctl("call", "everything", "get-sum", "--a", "1.5", "--b",
                 "-0.25", is_json=False)
    assert r.rc == 0, r
    assert "1.25" in r.out
    r = mcpd.ctl("call", "everything", "get-sum", "--a", "1e2", "--b", "0",
                 is_json=False)
    assert r.rc == 0, r
    assert "100" in r.out
    for bad in ("x", "1.5.2", "0x10", "inf", "nan", ""):
        err = usage_error(mcpd, "everything", "get-sum", "--a", bad,
                          "--b", "1")
        assert f"--a needs a number, not '{bad}'" in err, bad


def test_integer_flags_are_strict_testserver(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.ctl("call", "ts", "sleep_ms", "--ms", "5", is_json=False)
    assert r.rc == 0, r
    assert r.out.strip() == "slept 5 ms"
    r = mcpd.ctl("call", "ts", "big", "--bytes=7", is_json=False)
    assert r.rc == 0, r
    assert r.out.strip() == "x" * 7
    r = mcpd.ctl("call", "ts", "stderr", "--lines", "1", "--text",
                 "flag-marker", is_json=False)
    assert r.rc == 0, r
    mcpd.wait_log("ts", lambda ls: any("flag-marker" in l for l in ls))
    for bad in ("5.0", "5x", "1e3", "", " 5", "five"):
        err = usage_error(mcpd, "ts", "sleep_ms", "--ms", bad)
        assert "--ms needs an integer" in err and f"'{bad}'" in err, bad
        assert "see mcpctl call ts sleep_ms --help" in err
    # Numbers of the C server's add are numbers.
    rc, out, err = mcpd.ctl("call", "ts", "add", "--a", "2", "--b", "40")
    assert rc == 0, err
    assert out["structuredContent"] == {"sum": 42}


def test_handle_with_flags(mcpd):
    r = mcpd.load_testserver("ts")
    handle = f"ts.{r['generation']}/echo"
    rc, out, err = mcpd.ctl("call", handle, "--message", "by handle")
    assert rc == 0, err
    assert out["structuredContent"] == {"message": "by handle"}
    r = mcpd.ctl("call", handle, "--help", is_json=False)
    assert r.rc == 0, r
    assert f"usage: mcpctl call {handle} " in r.out
    assert "  --message STRING" in r.out


def test_array_object_and_any_flags(flags):
    assert sent(flags, ["--query", "q", "--tags", "a", "--tags", "b c",
                        "--ids", "1", "--ids=-2", "--verbose"]) == {
        "query": "q", "tags": ["a", "b c"], "ids": [1, -2], "verbose": True}
    # A JSON array gives several items at once, and more may follow.
    assert sent(flags, ["--query=q", "--tags", '["x", "y"]', "--tags", "z",
                        "--ids", "[3, 4]"]) == {
        "query": "q", "tags": ["x", "y", "z"], "ids": [3, 4]}
    # Arrays of objects and objects take JSON.
    assert sent(flags, ["--query", "q", "--points", '{"x": 1}', "--points",
                        '[{"x": 2}, {"x": 3.5}]', "--filter",
                        '{"lang": "c", "depth": 2}']) == {
        "query": "q", "points": [{"x": 1}, {"x": 2}, {"x": 3.5}],
        "filter": {"lang": "c", "depth": 2}}
    # Integers stay integers in a number property; 0.5 is a number.
    got = sent(flags, ["--query", "q", "--min-score", "3"])
    assert got["min_score"] == 3 and isinstance(got["min_score"], int)
    assert sent(flags, ["--query", "q", "--min-score", "0.5"])[
        "min_score"] == 0.5
    # anyOf [string enum, null] is a string with that enum.
    assert sent(flags, ["--query", "q", "--mode", "fast"])["mode"] == "fast"
    err = usage_error(flags, "flags", "search", "--query", "q", "--mode",
                      "slow")
    assert "'slow' is not one of: fast, exact" in err
    # A property without a type: JSON when it parses, else a string.
    assert sent(flags, ["--query", "q", "--extra", "[1]"])["extra"] == [1]
    assert sent(flags, ["--query", "q", "--extra", "plain"])[
        "extra"] == "plain"

    err = usage_error(flags, "flags", "search", "--query", "q", "--ids",
                      "1.5")
    assert "--ids needs an integer" in err and "'1.5'" in err
    err = usage_error(flags, "flags", "search", "--query", "q", "--filter",
                      "lang=c")
    assert "--filter needs a JSON object, not 'lang=c'" in err
    err = usage_error(flags, "flags", "search", "--query", "q", "--filter",
                      "[1]")
    assert "--filter needs a JSON object" in err
    err = usage_error(flags, "flags", "search", "--query", "a", "--query",
                      "b")
    assert "--query given twice" in err
    assert not [l for l in calls(flags) if '"query": "a"' in l]


# --------------------------------------------------------------------------
# Names

def test_names_kebab_exact_and_reserved(flags):
    # maxResults and min_score: kebab-case, or the exact names.
    assert sent(flags, ["--query", "q", "--max-results", "5",
                        "--min-score", "1"]) == {
        "query": "q", "maxResults": 5, "min_score": 1}
    assert sent(flags, ["--query", "q", "--maxResults", "6",
                        "--min_score", "2"]) == {
        "query": "q", "maxResults": 6, "min_score": 2}
    # "timeout" and "json" collide with call and mcpctl: --arg-NAME.
    rc, out, err = flags.ctl("call", "flags", "search", "--query", "q",
                             "--timeout", "5000", "--arg-timeout", "2.5",
                             "--arg-json")
    assert rc == 0, err
    assert out["structuredContent"]["arguments"] == {
        "query": "q", "timeout": 2.5, "json": True}
    assert sent(flags, ["--query", "q", "--no-arg-json", "timeout=7"]) == {
        "query": "q", "json": False, "timeout": 7}
    # --timeout stays call's: a bad value is its error.
    err = usage_error(flags, "flags", "search", "--query", "q", "--timeout",
                      "soon")
    assert "--timeout needs a positive number of milliseconds" in err
    # A global option is mcpctl's wherever it is (a property named json
    # is --arg-json).
    r = flags.ctl("call", "flags", "search", "--query", "q", "--json",
                  is_json=False)
    assert r.rc == 0, r
    assert json.loads(r.out)["structuredContent"]["arguments"] == {
        "query": "q"}
    # Every property may be given as --arg-NAME.
    assert sent(flags, ["--arg-query", "q"]) == {"query": "q"}


def test_clashing_kebab_names(flags):
    err = usage_error(flags, "flags", "clash", "--max-results", "1")
    assert "--max-results is ambiguous: use --maxResults or --max_results" \
        in err
    rc, out, err = flags.ctl("call", "flags", "clash", "--maxResults", "1",
                             "--max_results", "2")
    assert rc == 0, err
    assert out["structuredContent"]["arguments"] == {
        "maxResults": 1, "max_results": 2}
    r = flags.ctl("call", "flags", "clash", "--help", is_json=False)
    assert r.rc == 0, r
    assert "  --maxResults INTEGER" in r.out
    assert "  --max_results INTEGER" in r.out


def test_unknown_flags_suggest_the_nearest(flags, mcpd):
    err = usage_error(flags, "flags", "search", "--querry", "q")
    assert "unknown flag '--querry' for search; did you mean --query?" in err
    assert "see mcpctl call flags search --help" in err
    err = usage_error(flags, "flags", "search", "--query", "q",
                      "--max-result", "3")
    assert "did you mean --max-results?" in err
    err = usage_error(flags, "flags", "search", "--query", "q",
                      "--verbos")
    assert "did you mean --verbose" in err
    err = usage_error(flags, "flags", "search", "--query", "q", "--timout",
                      "1")
    assert "did you mean --timeout" in err
    # At most three suggestions, nearest first.
    err = usage_error(flags, "flags", "clash", "--alpha", "x")
    m = re.search(r"did you mean (.*)\?", err)
    assert m, err
    assert m.group(1) == "--alpha1, --alpha2, --alpha3", err
    # Nothing near: no guess, but where to look.
    err = usage_error(flags, "flags", "search", "--zzzzzzzz", "1")
    assert "unknown flag '--zzzzzzzz' for search" in err
    assert "did you mean" not in err
    # Flags before the tool are not the tool's.
    err = usage_error(flags, "--query", "q", "flags", "search")
    assert "unknown option '--query'" in err
    assert calls(flags) == []

    # A tool with no properties.
    mcpd.load_testserver("ts")
    err = usage_error(mcpd, "ts", "notify_changed", "--what", "x")
    assert "notify_changed takes no arguments" in err
    # An unknown tool, with flags or --help, is an error (1) with a guess.
    for args in (["ts", "ecoh", "--message", "x"], ["ts", "ecoh", "--help"]):
        r = mcpd.ctl("call", *args, is_json=False)
        assert r.rc == 1, r
        assert "server 'ts' has no tool 'ecoh'; did you mean echo?" in r.err
        assert "mcpctl tools ts" in r.err


# --------------------------------------------------------------------------
# Required properties and the inputSchema

def test_required_flags_before_anything_is_sent(flags, mcpd):
    err = usage_error(flags, "flags", "search", "--verbose")
    assert "missing required --query" in err
    assert calls(flags) == []
    mcpd.load_everything("everything")
    err = usage_error(mcpd, "everything", "get-sum", "--a", "1")
    assert "missing required --b" in err
    err = usage_error(mcpd, "everything", "get-sum")
    assert "missing required --a, --b" in err
    # KEY=VALUE counts: the property is there.
    r = mcpd.ctl("call", "everything", "get-sum", "--a", "1", "b=2",
                 is_json=False)
    assert r.rc == 0, r
    assert "3" in r.out


def test_input_schema_errors_name_the_json_path(flags):
    err = usage_error(flags, "flags", "search", "--query", "q",
                      "--max-results", "0")
    assert "the arguments do not match the inputSchema: $.maxResults:" \
        in err
    err = usage_error(flags, "flags", "search", "--query", "q", "--filter",
                      '{"depth": "deep"}')
    assert "$.filter.depth: expected integer, got string" in err
    err = usage_error(flags, "flags", "search", "--query", "q", "--points",
                      '[{"x": 1}, {"y": 2}]')
    assert "$.points[1]: missing required property \"x\"" in err
    # A flag mixed with KEY=VALUE: all is checked (query=5 is the string
    # "5", the schema's type; maxResults=many cannot be an integer, and is
    # refused as --max-results many would be).
    err = usage_error(flags, "flags", "search", "--verbose", "query=5",
                      "maxResults=many")
    assert "mcpctl: call: maxResults needs an integer (digits, no " \
        "fraction), not 'many'\n" in err, err
    # KEY=VALUE alone is as strict as flags: refused before sending.
    err = usage_error(flags, "flags", "search", "query=q", "maxResults=0")
    assert "the arguments do not match the inputSchema: $.maxResults" \
        in err, err
    assert calls(flags) == []


def test_pattern_is_checked_before_sending(flags):
    # mcpctl is built with musl, whose regexec has no REG_STARTEND: the
    # pattern is matched by common/ecmaregex.c's other path there.
    r = flags.ctl("call", "flags", "code", "--code", "abc-42")
    assert (r.rc, r.json["structuredContent"], r.err) == \
        (0, {"arguments": {"code": "abc-42"}}, ""), r
    for bad in ("ABC-42", "abc-4", "abc-42x", "x abc-42"):
        err = usage_error(flags, "flags", "code", "--code", bad)
        assert "the arguments do not match the inputSchema: $.code: " \
            "does not match the pattern" in err, (bad, err)
    assert calls(flags) == ['called code {"code": "abc-42"}']


def test_unsupported_schema_is_a_warning(flags):
    r = flags.ctl("call", "flags", "remote-ref", "--profile", '{"a": 1}')
    assert r.rc == 0, r
    assert r.json["structuredContent"]["arguments"] == {"profile": {"a": 1}}
    assert "warning: the arguments were not checked" in r.err
    assert "warning: structuredContent was not checked" in r.err
    assert "example.com" in r.err


def test_key_value_is_as_strict_as_flags(mcpd):
    mcpd.load_everything("everything")
    for words, what in ((["a=two", "b=3"], "a needs a number, not 'two'"),
                        (["--a", "two", "--b", "3"],
                         "--a needs a number, not 'two'")):
        err = usage_error(mcpd, "everything", "get-sum", *words)
        assert err == (f"mcpctl: call: {what}\n"
                       "see mcpctl call everything get-sum --help\n"), err
    # An enum the same way.
    err = usage_error(mcpd, "everything", "get-annotated-message",
                      "messageType=loud")
    assert err.startswith("mcpctl: call: messageType: 'loud' is not one of: "
                          "error, success, debug\n"), err
    # --force-args sends it: the server says what it thinks.
    r = mcpd.ctl("call", "everything", "get-sum", "a=two", "b=3",
                 "--force-args", is_json=False)
    assert "warning: the arguments do not match the inputSchema, sent as " \
        "given: $.a: expected number, got string" in r.err, r


def test_key_value_and_args_json_still_work(flags, mcpd):
    mcpd.load_everything("everything")
    r = mcpd.ctl("call", "everything", "get-sum", "a=2", "b=3",
                 is_json=False)
    assert r.rc == 0 and "5" in r.out, r
    assert r.err == "", r
    r = mcpd.ctl("call", "everything", "get-sum", "--args-json",
                 '{"a": 4, "b": 5}', is_json=False)
    assert r.rc == 0 and "9" in r.out, r
    # Flags and KEY=VALUE go on top of --args-json, in the order given;
    # arguments after "--" are KEY=VALUE only.
    assert sent(flags, ["--args-json", '{"query": "base", "tags": ["z"]}',
                        "--tags", "a", "other=1"]) == {
        "query": "base", "tags": ["a"], "other": 1}
    assert sent(flags, ["--query", "q", "--", "--x=1"]) == {
        "query": "q", "--x": 1}
    # --force-args, or --args-json alone: what the schema refuses is still
    # sent, with a warning (the way to send what the schema does not
    # allow).
    before = len(calls(flags))
    r = flags.ctl("call", "flags", "search", "query=q", "maxResults=0",
                  "--force-args")
    assert r.rc == 0, r
    assert r.json["structuredContent"]["arguments"] == {
        "query": "q", "maxResults": 0}
    assert "warning: the arguments do not match the inputSchema, sent as " \
        "given: $.maxResults" in r.err
    r = flags.ctl("call", "flags", "search", "--args-json",
                  '{"verbose": null}')
    assert r.rc == 0, r
    assert r.json["structuredContent"]["arguments"] == {"verbose": None}
    assert "do not match the inputSchema, sent as given: $" in r.err
    assert len(calls(flags)) == before + 2
    # Usage errors of KEY=VALUE come before mcpd is asked anything.
    r = run_ctl(flags.base / "nowhere.sock", "call", "x", "y", "novalue",
                is_json=False)
    assert r.rc == 2, r
    assert "expected KEY=VALUE, not 'novalue'" in r.err


# --------------------------------------------------------------------------
# Generated help

def test_generated_help_everything(mcpd):
    mcpd.load_everything("everything")
    r = mcpd.ctl("call", "everything", "get-annotated-message", "--help",
                 is_json=False)
    assert r.rc == 0, r
    out = r.out
    assert out.startswith("usage: mcpctl call everything "
                          "get-annotated-message [--FLAG VALUE ...]")
    assert "Demonstrates how annotations can be used to provide metadata " \
        "about content." in out
    lines = out.splitlines()
    i = lines.index("  --message-type STRING")
    assert lines[i + 1] == ("      string, required, one of: error, "
                            "success, debug")
    assert lines[i + 2] == ("      Type of message to demonstrate different "
                            "annotation patterns")
    i = lines.index("  --include-image, --no-include-image")
    assert lines[i + 1] == "      boolean, default: false"
    assert lines[i + 2] == "      Whether to include an example image"
    assert "structuredContent" not in out
    assert "  --timeout MS" in out          # the options of call follow

    r = mcpd.ctl("call", "everything", "get-resource-links", "-h",
                 is_json=False)
    assert r.rc == 0, r
    assert "  --count NUMBER\n      number, default: 3, minimum: 1, " \
        "maximum: 10\n      Number of resource links to return (1-10)\n" \
        in r.out
    r = mcpd.ctl("call", "everything", "get-env", "--help", is_json=False)
    assert r.rc == 0, r
    assert "flags: none" in r.out


def test_generated_help_shows_the_output_schema(mcpd):
    mcpd.load_everything("everything")
    (tool,) = [t for t in mcpd.tools("everything")
               if t["name"] == "get-structured-content"]
    r = mcpd.ctl("call", "--help", "everything", "get-structured-content",
                 is_json=False)
    assert r.rc == 0, r
    head, _, rest = r.out.partition(
        "\nstructuredContent, from the outputSchema:\n")
    assert rest, r.out
    schema, end = json.JSONDecoder().raw_decode(rest)
    assert schema == tool["outputSchema"]
    assert "\n  \"type\": \"object\"," in rest[:end]     # pretty JSON
    assert "one of: New York, Chicago, Los Angeles" in head


def test_generated_help_types_and_reserved_names(flags):
    r = flags.ctl("call", "flags", "search", "--help", is_json=False)
    assert r.rc == 0, r
    out = r.out
    assert "\nSearch Tool\n\nSearches the index.\nAnswers with its " \
        "arguments.\n" in out
    for line in ("  --query STRING\n      string, required\n"
                 "      What to look for\n",
                 "  --max-results INTEGER\n      integer, default: 10, "
                 "minimum: 1, maximum: 100\n",
                 "  --min-score NUMBER\n      number\n",
                 "  --tags STRING...\n      array of string, one item per "
                 "flag or a JSON array\n",
                 "  --ids INTEGER...\n      array of integer,",
                 "  --points JSON\n      array of object (JSON), one item "
                 "per flag or a JSON array\n      shape: [{x: number}]\n",
                 "  --filter JSON\n      object (JSON)\n"
                 "      shape: {lang?: string, depth?: integer}\n",
                 "  --mode STRING\n      string, one of: fast, exact\n",
                 "  --arg-timeout NUMBER\n      number\n      The tool's "
                 "own\n",
                 "  --arg-json, --no-arg-json\n      boolean\n",
                 "  --extra VALUE\n      any JSON value (else a string)\n"):
        assert line in out, line
    assert "set with --arg-NAME" in out


def test_generic_help_without_a_tool(mcpd):
    mcpd.load_testserver("ts")
    for args in (["call", "--help"], ["call", "ts", "--help"], ["call", "-h"]):
        r = mcpd.ctl(*args, is_json=False)
        assert r.rc == 0, (args, r)
        assert r.out.startswith("usage: mcpctl call SERVER TOOL | HANDLE "
                                "[--FLAG VALUE ...]"), r.out
        assert "flags, from" not in r.out
    # The generic help needs no daemon.
    r = run_ctl(mcpd.base / "nowhere.sock", "call", "--help", is_json=False)
    assert r.rc == 0, r


# --------------------------------------------------------------------------
# The outputSchema

def test_output_schema_checked(flags, mcpd):
    mcpd.load_everything("everything")
    r = mcpd.ctl("call", "everything", "get-structured-content",
                 "--location", "Chicago", is_json=False)
    assert r.rc == 0, r
    assert "temperature" in r.out
    assert r.err == "", r

    # A mismatch: the result is printed, then a warning with the path; 1.
    r = flags.ctl("call", "flags", "bad-output", is_json=False)
    assert r.rc == 1, r
    assert r.out.startswith("three items\nstructured:\n")
    assert {"count": 3, "items": ["a", 2]} == json.loads(
        r.out.split("structured:\n", 1)[1])
    assert "warning: structuredContent does not match the outputSchema: " \
        "$.items[1]: expected string, got integer" in r.err
    rc, out, err = flags.ctl("call", "flags", "bad-output")
    assert rc == 1
    assert out["structuredContent"] == {"count": 3, "items": ["a", 2]}
    assert "$.items[1]" in err
    # No structuredContent at all, although the tool has an outputSchema.
    r = flags.ctl("call", "flags", "bad-output", "--missing", is_json=False)
    assert r.rc == 1, r
    assert r.out == "three items\n"
    assert "has an outputSchema but sent no structuredContent" in r.err
    # A tool error is not checked against the outputSchema: 5.
    r = flags.ctl("call", "flags", "bad-output", "--fail", is_json=False)
    assert r.rc == 5, r
    assert "warning" not in r.err


# --------------------------------------------------------------------------
# Bash completion

def complete(words, env, cword=None):
    """COMPREPLY of _mcpctl for COMP_WORDS=words (the last one being
    completed, unless cword says), and bash's stderr."""
    cword = len(words) - 1 if cword is None else cword
    script = ('source "$1"; shift; COMP_WORDS=("$@"); '
              f'COMP_CWORD={cword}; _mcpctl; '
              'printf "%s\\n" "${COMPREPLY[@]}"')
    p = subprocess.run(["bash", "-c", script, "bash", str(COMPLETION)] +
                       [str(w) for w in words], capture_output=True,
                       timeout=30, env=env, stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p
    return sorted(l for l in p.stdout.decode().split("\n") if l), \
        p.stderr.decode()


def test_bash_completion(flags, mcpd):
    mcpd.load_everything("everything")
    env = dict(flags.env, MCPD_SOCKET=str(flags.sock))
    m = str(MCPCTL)

    got, err = complete([m, ""], env)
    assert {"load", "unload", "list", "tools", "call", "status"} <= set(got)
    assert err == ""
    assert complete([m, "ca"], env)[0] == ["call", "catalog"]
    assert complete([m, "--j"], env)[0] == ["--json"]
    assert {"--socket", "--agent", "--json"} <= set(complete([m, "--"],
                                                             env)[0])

    assert complete([m, "call", ""], env)[0] == ["everything", "flags"]
    assert complete([m, "unload", "ev"], env)[0] == ["everything"]
    # The socket of the line is the one asked.
    bare = dict(flags.env)
    bare.pop("MCPD_SOCKET", None)
    assert complete([m, "-s", flags.sock, "call", "fl"], bare)[0] == \
        ["flags"]
    assert complete([m, "--socket", "=", flags.sock, "--json", "call", "e"],
                    bare)[0] == ["everything"]

    assert complete([m, "call", "flags", ""], env)[0] == sorted(
        ["search", "clash", "code", "bad-output", "remote-ref"])
    assert complete([m, "call", "--timeout", "5", "everything", "get-s"],
                    env)[0] == ["get-structured-content", "get-sum"]

    got, err = complete([m, "call", "flags", "search", "--"], env)
    assert err == ""
    for flag in ("--query", "--max-results", "--min-score", "--verbose",
                 "--no-verbose", "--tags", "--filter", "--arg-timeout",
                 "--arg-json", "--no-arg-json", "--timeout", "--args-json",
                 "--help"):
        assert flag in got, (flag, got)
    assert "--FLAG" not in got
    assert complete([m, "call", "everything", "get-annotated-message",
                     "--message-type", "debug", "--inc"], env)[0] == \
        ["--include-image"]
    gen = flags.row("flags")["generation"]
    assert complete([m, "call", f"flags.{gen}/search", "--max"], env)[0] \
        == ["--max-results"]

    # secret takes its verbs; import takes a file.
    assert complete([m, "secret", ""], env)[0] == ["list", "rm", "set"]
    assert complete([m, "import", str(COMPLETION)[:-3]], env)[0] == \
        [str(COMPLETION)]


def test_bash_completion_of_client_config(mcpd):
    """Its clients, its flags, a file after --write and --migrate, a
    server after --server."""
    mcpd.load_testserver("ts")
    env = dict(os.environ, MCPD_SOCKET=str(mcpd.sock))
    m = str(MCPCTL)
    assert complete([m, "client-config", ""], env)[0] == sorted(
        ["claude-desktop", "claude-code", "cursor", "vscode", "gemini-cli",
         "codex"])
    assert complete([m, "client-config", "codex", "--mi"], env)[0] == \
        ["--migrate"]
    assert complete([m, "client-config", "cursor", "--migrate",
                     str(COMPLETION)[:-3]], env)[0] == [str(COMPLETION)]
    assert complete([m, "client-config", "cursor", "--write", "x", "--server",
                     ""], env)[0] == ["ts"]
    assert complete([m, "client-config", "--write", "x", "cu"], env)[0] == \
        ["cursor"]


def test_bash_completion_without_daemon_is_quiet_and_fast(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "MCPD_SOCKET": str(tmp_path / "none.sock")}
    m = str(MCPCTL)
    assert complete([m, "call", ""], env) == ([], "")
    assert complete([m, "call", "srv", ""], env) == ([], "")
    got, err = complete([m, "call", "srv", "tool", "--"], env)
    assert (got, err) == (["--args-json", "--elicit-defaults",
                           "--force-args", "--help", "--quiet", "--timeout"],
                          "")
    assert complete([m, "logs", ""], env) == ([], "")
    # Commands need no daemon.
    assert "call" in complete([m, ""], env)[0]
    # Fast: no daemon was started to be asked (complete() times out a
    # completion that hangs).
    assert not (tmp_path / "none.sock").exists()
