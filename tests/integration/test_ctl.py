# SPDX-License-Identifier: ISC
"""mcpctl: human output, --json output and exit codes (0 ok, 1 error,
2 usage, 3 daemon unreachable, 4 outcome unknown, 5 the tool's isError)."""

import json
import re

from conftest import (BUILD, EVERYTHING_JS, NODE, NOT_FOUND, TESTSERVER,
                      TESTSERVER_TOOLS, descendants, is_alive, run_ctl)


def columns(header):
    """Start offsets of the words of a table header."""
    return [m.start() for m in re.finditer(r"\S+", header)]


def assert_aligned(lines):
    header, rows = lines[0], lines[1:]
    starts = columns(header)
    for row in rows:
        for s in starts[1:]:
            assert len(row) > s and row[s - 1] == " " and row[s] != " ", (
                f"row not aligned with the header at column {s}:\n"
                f"{header}\n{row}")


def pretty_objects(text):
    """Every JSON object printed over several lines in text."""
    dec = json.JSONDecoder()
    found = []
    for m in re.finditer(r"(?m)^\{", text):
        try:
            obj, end = dec.raw_decode(text, m.start())
        except ValueError:
            continue
        if "\n" in text[m.start():end]:
            found.append(obj)
    return found


def test_unreachable_daemon_exit_3(tmp_path):
    sock = tmp_path / "none.sock"
    r = run_ctl(sock, "list", is_json=False)
    assert r.rc == 3, r
    assert str(sock) in r.err
    assert "mcpd" in r.err and "start" in r.err     # says what to do
    assert r.out == ""
    r = run_ctl(sock, "status")
    assert r.rc == 3, r


def test_usage_errors_exit_2(mcpd):
    for args in (["frobnicate"], ["call"], ["call", "ts"], ["load"],
                 ["list", "--bogus"], ["call", "ts", "echo", "novalue"],
                 ["call", "ts", "echo", "--args-json", "[1]"]):
        r = mcpd.ctl(*args, is_json=False)
        assert r.rc == 2, (args, r)
        assert r.err.strip(), (args, r)
    assert mcpd.list() == []


def test_load_list_tools_human(mcpd):
    r = mcpd.ctl("load", "--name", "ts", "--", TESTSERVER, is_json=False)
    assert r.rc == 0, r
    assert "ts" in r.out
    mcpd.list()

    r = mcpd.ctl("list", is_json=False)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0].split()[:4] == ["NAME", "STATE", "TRANSPORT", "TOOLS"], \
        r.out
    assert_aligned([l for l in lines if not l.startswith("  ")])
    row = lines[1].split()
    assert row[:4] == ["ts", "ready", "stdio", str(len(TESTSERVER_TOOLS))], \
        r.out
    assert str(TESTSERVER) in lines[1]

    r = mcpd.ctl("tools", "ts", is_json=False)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert_aligned([l for l in lines if not l.startswith("  ")])
    gen = mcpd.row("ts")["generation"]
    for name in TESTSERVER_TOOLS:
        assert re.search(rf"(^|\s)ts\.{gen}/{re.escape(name)}\s", r.out), \
            name


def test_empty_list_says_how_to_load(mcpd):
    r = mcpd.ctl("list", is_json=False)
    assert r.rc == 0
    assert "mcpctl load" in r.out


def test_json_output_is_the_daemon_result(mcpd):
    mcpd.load_testserver("ts")
    rc, out, err = mcpd.ctl("list")
    assert rc == 0, err
    assert out == mcpd.rpc.result("mcpd/list")
    rc, out, err = mcpd.ctl("tools", "ts")
    assert rc == 0, err
    assert out == mcpd.rpc.result("mcpd/tools", {"server": "ts"})
    rc, out, err = mcpd.ctl("call", "ts", "echo", "message=hi")
    assert rc == 0, err
    assert out == {"content": [{"type": "text", "text": "hi"}],
                   "structuredContent": {"message": "hi"}}
    rc, out, err = mcpd.ctl("status")
    assert rc == 0 and out["pid"] == mcpd.pid
    rc, out, err = mcpd.ctl("logs", "ts")
    assert rc == 0 and out == mcpd.rpc.result("mcpd/logs", {"server": "ts"})


def test_call_arguments_and_output(mcpd):
    mcpd.load_testserver("ts")
    # key=value: JSON when it parses as JSON, else a string.
    r = mcpd.ctl("call", "ts", "add", "a=2", "b=40", is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == "42"
    assert {"sum": 42} in pretty_objects(r.out)

    r = mcpd.ctl("call", "ts", "echo", "message=hello world",
                 is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == "hello world"
    assert {"message": "hello world"} in pretty_objects(r.out)

    r = mcpd.ctl("call", "ts", "echo", "--args-json",
                 '{"message": "from json"}', is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == "from json"

    gen = mcpd.row("ts")["generation"]
    r = mcpd.ctl("call", f"ts.{gen}/echo", "message=by handle",
                 is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == "by handle"


def test_call_structured_content_everything(mcpd):
    mcpd.load_everything("everything")
    rc, out, err = mcpd.ctl("call", "everything", "get-structured-content",
                            "location=New York")
    assert rc == 0, err
    sc = out["structuredContent"]
    r = mcpd.ctl("call", "everything", "get-structured-content",
                 "location=New York", is_json=False)
    assert r.rc == 0, r
    assert "temperature" in r.out
    assert sc.keys() == {"temperature", "conditions", "humidity"}


def test_tool_is_error_exit_5(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.ctl("call", "ts", "fail", "message=boom here", is_json=False)
    assert r.rc == 5, r
    assert "boom here" in r.out + r.err
    rc, out, err = mcpd.ctl("call", "ts", "fail", "message=boom")
    assert rc == 5
    assert out["isError"] is True


def test_outcome_unknown_exit_4(mcpd):
    mcpd.load_testserver("ts")
    r = mcpd.ctl("call", "ts", "crash", is_json=False)
    assert r.rc == 4, r
    assert "may" in r.err       # "may or may not have run"
    mcpd.wait_row("ts", lambda row: row["state"] == "ready")
    r = mcpd.ctl("call", "ts", "sleep_ms", "ms=20000", "--timeout", "300",
                 is_json=False)
    assert r.rc == 4, r


def test_daemon_error_exit_1(mcpd):
    r = mcpd.ctl("unload", "nope", is_json=False)
    assert r.rc == 1, r
    assert "nope" in r.err
    assert "mcpctl list" in r.err       # what to do next
    rc, out, err = mcpd.ctl("unload", "nope")
    assert rc == 1
    assert out["code"] == NOT_FOUND or out.get("error", {}).get(
        "code") == NOT_FOUND, out
    # A program that is not there is known before anything is saved.
    for persist in (["--no-persist"], []):
        r = mcpd.ctl("load", *persist, "--name", "x", "--",
                     "/nonexistent/mcp-x", is_json=False)
        assert r.rc == 1, r
        assert "cannot run /nonexistent/mcp-x: No such file or directory; " \
            "nothing was saved or started" in r.err, r.err
        assert mcpd.list() == []
        assert not (mcpd.state / "enabled.json").exists()
    r = mcpd.ctl("load", "--name", "x", "--", "no-such-mcp-program",
                 is_json=False)
    assert r.rc == 1, r
    assert "no program no-such-mcp-program on the PATH a server gets" in \
        r.err, r.err
    assert mcpd.list() == []
    # Saved (the default), a first load that fails only once started
    # takes its row back: nothing is saved that cannot start.
    r = mcpd.ctl("load", "--name", "x", "--", "/bin/false", is_json=False)
    assert r.rc == 1, r
    assert "; nothing was saved" in r.err and "stays saved" not in r.err, \
        r.err
    assert mcpd.list() == []


def test_load_runs_where_the_user_stands(mcpd):
    # mcpctl sends its working directory: a relative command works.
    r = mcpd.ctl("load", "--name", "rel", "--", "./mcp-testserver",
                 cwd=str(BUILD))
    assert r.rc == 0, r
    row = mcpd.row("rel")
    assert row["state"] == "ready"
    assert is_alive(row["pid"])


def test_load_default_name_and_env(mcpd):
    r = mcpd.ctl("load", "--", TESTSERVER)
    assert r.rc == 0, r
    assert r.json["name"] == "mcp-testserver"
    r = mcpd.ctl("load", "--name", "ev", "--env", "MCPD_IT_VAR=from-ctl",
                 "--", NODE, EVERYTHING_JS, "stdio")
    assert r.rc == 0, r
    rc, out, err = mcpd.ctl("call", "ev", "get-env")
    assert rc == 0, err
    assert json.loads(out["content"][0]["text"])["MCPD_IT_VAR"] == \
        "from-ctl"
    # Secrets never go in argv: the value is not on any command line.
    for pid in descendants(mcpd.pid):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            assert b"from-ctl" not in f.read()


def test_reload_logs_status_unload(mcpd):
    mcpd.load_testserver("ts")
    gen = mcpd.row("ts")["generation"]
    rc, out, err = mcpd.ctl("reload", "ts")
    assert rc == 0, err
    assert out["generation"] != gen
    r = mcpd.ctl("reload", "ts", is_json=False)
    assert r.rc == 0, r
    assert "ts" in r.out

    mcpd.call("ts", "stderr", {"lines": 1, "text": "ctl-marker"})
    mcpd.wait_log("ts", lambda ls: "ctl-marker 0" in ls)
    r = mcpd.ctl("logs", "ts", is_json=False)
    assert r.rc == 0 and "ctl-marker 0" in r.out.splitlines(), r

    r = mcpd.ctl("status", is_json=False)
    assert r.rc == 0 and str(mcpd.pid) in r.out, r

    pid = mcpd.row("ts")["pid"]
    r = mcpd.ctl("unload", "ts", is_json=False)
    assert r.rc == 0, r
    assert not is_alive(pid)
    assert mcpd.list() == []


def test_shutdown_via_ctl(mcpd):
    mcpd.load_testserver("ts")
    pid = mcpd.row("ts")["pid"]
    r = mcpd.ctl("shutdown", is_json=False)
    assert r.rc == 0, r
    assert mcpd.proc.wait(timeout=15) == 0
    assert not is_alive(pid)
    r = mcpd.ctl("list", is_json=False)
    assert r.rc == 3, r
