"""Project files (issue 23 item 2): mcpctl bridge, given no --profile and
no --server, takes its view from the .mcpd.json found from its working
directory up to $HOME; a file that defines servers runs programs, so it is
used only once trusted (its digest kept by mcpd), and what it defines is
loaded once for every project that defines the same."""
import json
import subprocess

import pytest

from conftest import MCPCTL, TESTSERVER, child_env, is_alive
from test_gateway import SdkClient

TS_TOOLS = ["echo", "add", "sleep_ms", "fail", "crash", "big", "stderr",
            "notify_changed", "ask", "deaf", "report", "mismatch"]


@pytest.fixture
def home(tmp_path):
    """A home directory with a project and a subdirectory of it."""
    h = tmp_path / "home"
    (h / "proj" / "sub").mkdir(parents=True)
    return h


def write(home, doc, name="proj"):
    path = home / name / ".mcpd.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


class RawBridge:
    """mcpctl bridge run as a client runs it: JSON-RPC lines on its stdin,
    its stderr kept."""

    def __init__(self, d, cwd, home, *args):
        self.proc = subprocess.Popen(
            [str(MCPCTL), "-s", str(d.sock), "bridge", *args],
            cwd=cwd, env=child_env({"HOME": str(home)}),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.ask("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.id = 1

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def ask(self, method, params=None):
        self.id = getattr(self, "id", 0) + 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method,
                   "params": params or {}})
        line = self.proc.stdout.readline()
        assert line, self.close()
        return json.loads(line)

    def tools(self):
        r = self.ask("tools/list")
        return [t["name"] for t in r["result"]["tools"]] if "result" in r \
            else r["error"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read()


def ts_view(*servers):
    """The test server's tools, as a view of these servers names them: a
    view of one server, as its own (DESIGN 11)."""
    if len(servers) == 1:
        return list(TS_TOOLS)
    return [f"{s}__{t}" for s in servers for t in TS_TOOLS]


def test_servers_and_profile_from_a_subdirectory(mcpd, home):
    mcpd.load_testserver("ts")
    mcpd.load_testserver("other")
    write(home, {"servers": ["ts"]})
    b = RawBridge(mcpd, home / "proj" / "sub", home)
    assert b.tools() == ts_view("ts")
    assert b.close() == ""
    # A profile named by the file makes the view; so does the SDK client's
    # bridge, started in the project.
    r = mcpd.ctl("profile", "create", "two", "--tool", "*__echo")
    assert r.rc == 0, r
    write(home, {"profile": "two"})
    c = SdkClient(mcpd.sock, cwd=home / "proj" / "sub",
                  env={"HOME": str(home)})
    try:
        assert c.ask("tools")["tools"] == ["ts__echo", "other__echo"]
    finally:
        c.close()
    # Outside the project (HOME ends the search), or told otherwise: none.
    b = RawBridge(mcpd, home, home)
    assert b.tools() == ts_view("ts", "other")
    b.close()
    b = RawBridge(mcpd, home / "proj", home, "--no-project")
    assert b.tools() == ts_view("ts", "other")
    b.close()
    b = RawBridge(mcpd, home / "proj", home, "--server", "other")
    assert b.tools() == ts_view("other")
    b.close()


def refused(mcpd, home, path, why):
    """The bridge says why on stderr, and every list and call of its
    session fails with it: never a silently different view."""
    b = RawBridge(mcpd, home / "proj" / "sub", home)
    want = f"{path}: {why}"
    assert b.tools() == {"code": -32602, "message": want}
    r = b.ask("tools/call", {"name": "ts__echo",
                             "arguments": {"message": "x"}})
    assert r["error"] == {"code": -32602, "message": want}, r
    assert b.close() == f"mcpctl: bridge: {want}\n"


def test_a_broken_file_is_an_error_not_another_view(mcpd, home):
    mcpd.load_testserver("ts")
    path = write(home, '{"servers": ["ts"],}')
    refused(mcpd, home, path,
            "not JSON: string or '}' expected near '}' at line 1, column 20")
    write(home, {"servers": ["ts"], "tools": ["*"]})
    refused(mcpd, home, path, 'unknown key "tools" (a project file has '
            "profile, servers and define)")
    write(home, {"servers": ["tss"]})
    refused(mcpd, home, path, "no server tss for agent default; did you "
            "mean ts? (mcpctl list shows them; load it first)")
    write(home, {"profile": "nope"})
    refused(mcpd, home, path, "no profile nope for agent default (mcpctl "
            "profile list shows them)")


def define_spec(*args):
    return {"command": [str(TESTSERVER), *args]}


def test_defined_servers_start_only_once_trusted(mcpd, home):
    path = write(home, {"define": {"db": define_spec("--tools", "1")}})
    untrusted = ("it defines servers (it runs programs) and it is not "
                 f"trusted; read it, then: mcpctl project trust "
                 f"{home / 'proj'}")
    refused(mcpd, home, path, untrusted)
    assert mcpd.list() == []        # nothing started
    r = mcpd.ctl("project", "trust", home / "proj" / "sub", is_json=False)
    assert r.rc == 0, r
    assert r.out == (f"trusted {path}: the servers it defines may start "
                     f"(mcpd keeps its digest; a change needs trusting "
                     f"again)\n")
    b = RawBridge(mcpd, home / "proj" / "sub", home)
    assert b.tools() == ts_view("db") + ["t0"]
    b.close()
    assert [s["name"] for s in mcpd.list()] == ["db"]
    # A changed file is not the one trusted.
    write(home, {"define": {"db": define_spec("--tools", "2")}})
    refused(mcpd, home, path, untrusted.replace(
        "it is not trusted", "it changed since it was trusted"))
    r = mcpd.ctl("project", "list")
    assert [p["id"] for p in r.json["projects"]] == [str(path)]
    r = mcpd.ctl("project", "untrust", home / "proj", is_json=False)
    assert r.out == f"{path} is not trusted any more\n", r


def test_two_projects_defining_the_same_share_one_server(mcpd, home):
    spec = define_spec("--tools", "1")
    a = write(home, {"define": {"db": spec}}, "a")
    b = write(home, {"define": {"store": spec}}, "b")
    for p in (a, b):
        r = mcpd.ctl("project", "trust", p.parent)
        assert r.rc == 0, r
    ba = RawBridge(mcpd, a.parent, home)
    bb = RawBridge(mcpd, b.parent, home)
    # The second project's view is the server the first one started.
    assert ba.tools() == bb.tools() == ts_view("db") + ["t0"]
    rows = mcpd.list()
    assert [r["name"] for r in rows] == ["db"], rows
    assert is_alive(rows[0]["pid"])
    ba.close()
    bb.close()


def test_project_show_loads_nothing(mcpd, home):
    mcpd.load_testserver("ts")
    path = write(home, {"servers": ["ts"],
                        "define": {"db": define_spec()}})
    r = mcpd.ctl("project", "show", home / "proj" / "sub", is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines() == [
        f"project file: {path}",
        "server: ts",
        f'defines: db {{"command":["{TESTSERVER}"]}}',
        "trusted: no",
        f"error: {path}: it defines servers (it runs programs) and it is "
        f"not trusted; read it, then: mcpctl project trust {home / 'proj'}"]
    r = mcpd.ctl("project", "show", home, is_json=True,
                 env=child_env({"HOME": str(home)}))
    assert r.json["path"] is None, r
    assert [s["name"] for s in mcpd.list()] == ["ts"]


def roots_client(mcpd, home, *dirs):
    """The SDK client over a bridge started where no project file is found
    (HOME ends the search there), declaring roots: the directories given."""
    return SdkClient(mcpd.sock, cwd=home, env={"HOME": str(home)},
                     caps={"roots": {"listChanged": True}},
                     roots=[{"uri": d.as_uri(), "name": d.name}
                            for d in dirs])


def test_the_first_root_names_the_project(mcpd, home):
    mcpd.load_testserver("ts")
    mcpd.load_testserver("other")
    write(home, {"servers": ["ts"]})
    write(home, {"servers": ["other"]}, "second")
    # No file from the bridge's directory: the client's first root's is
    # the view; the first tools/list waits for it (no other view first).
    c = roots_client(mcpd, home, home / "proj" / "sub", home / "second")
    try:
        assert c.ask("tools")["tools"] == ts_view("ts")
        r = c.ask(r'call echo {"message": "hi"}')
        assert r["result"]["content"][0]["text"] == "hi", r
        # Its roots change: the view follows, with list_changed.
        assert c.ask("changed 0") == {"changed": 0}
        c.ask("roots " + json.dumps([{"uri": (home / "second").as_uri()}]))
        assert c.ask("changed 30000") == {"changed": 1}
        assert c.ask("tools")["tools"] == ts_view("other")
        # A root with no project file: everything of the agent again.
        c.ask("roots " + json.dumps([{"uri": home.as_uri()}]))
        assert c.ask("changed 30000") == {"changed": 1}
        assert c.ask("tools")["tools"] == ts_view("ts", "other")
    finally:
        c.close()
    # A client that declares no roots sees everything; so does one whose
    # bridge found a file of its own (that one wins) or was told a view.
    c = SdkClient(mcpd.sock, cwd=home, env={"HOME": str(home)})
    try:
        assert c.ask("tools")["tools"] == ts_view("ts", "other")
    finally:
        c.close()
    c = SdkClient(mcpd.sock, "--no-project", cwd=home,
                  env={"HOME": str(home)},
                  caps={"roots": {"listChanged": True}},
                  roots=[{"uri": (home / "proj").as_uri()}])
    try:
        assert c.ask("tools")["tools"] == ts_view("ts", "other")
    finally:
        c.close()


def test_a_root_project_is_checked_and_trusted_as_the_bridge_does(mcpd, home):
    mcpd.load_testserver("ts")
    path = write(home, {"servers": ["tss"]})
    c = roots_client(mcpd, home, home / "proj")
    try:
        want = (f"{path}: no server tss for agent default; did you mean ts? "
                f"(mcpctl list shows them; load it first)")
        assert c.ask("tools") == {"error": {
            "code": -32602, "message": f"MCP error -32602: {want}"}}
    finally:
        c.close()
    path = write(home, {"define": {"db": define_spec("--tools", "1")}})
    c = roots_client(mcpd, home, home / "proj")
    try:
        assert c.ask("tools") == {"error": {"code": -32602, "message": (
            f"MCP error -32602: {path}: it defines servers (it runs programs) and it is not "
            f"trusted; read it, then: mcpctl project trust {home / 'proj'}")}}
    finally:
        c.close()
    assert [s["name"] for s in mcpd.list()] == ["ts"]   # nothing started
    r = mcpd.ctl("project", "trust", home / "proj")
    assert r.rc == 0, r
    c = roots_client(mcpd, home, home / "proj")
    try:
        assert c.ask("tools")["tools"] == ts_view("db") + ["t0"]
    finally:
        c.close()
    assert [s["name"] for s in mcpd.list()] == ["ts", "db"]
