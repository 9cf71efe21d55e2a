# SPDX-License-Identifier: ISC
"""mcpctl import: the config files of Claude Desktop, Cursor and VS Code
(written the way each client writes them), transport inference, `docker
run` entries as container servers, disabled and invalid entries, names
made valid, VS Code's ${env:NAME} and ${input:ID} as $(env.NAME) and
$(secret.ID), --dry-run (no daemon needed, values masked), idempotence
(enabled.json byte for byte), per-entry failures; and the progress lines
that human `mcpctl load`, `reload` and `import` print on stderr (none with
--json).

Every daemon keeps its secret key under the test's tmp_path: an import
with literal env values saves them in the secret store."""

import json
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from conftest import (BUILD, MCPCTL, REPO, TESTSERVER, TESTSERVER_TOOLS,
                      all_procs, child_env, cmdline, run_ctl)

DOCKER = shutil.which("docker") or "/usr/bin/docker"
NTOOLS = len(TESTSERVER_TOOLS)
LOADED = re.compile(r"^loaded (\S+) \(id ([0-9a-f]{12}), (\d+) tools?\)$")
SUMMARY = re.compile(r"^(\d+) loaded, (\d+) already loaded, (\d+) skipped, "
                     r"(\d+) failed$")


# --------------------------------------------------------------------------
# Helpers

@pytest.fixture
def mcpd(mcpd_factory, tmp_path):
    """A daemon whose secret key is the test's own, never $HOME's."""
    return mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def write_json(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n")
    return path


def ctl_stdin(sock, *args, data=b"", cwd=None, is_json=False):
    """mcpctl with data on stdin; (rc, stdout, stderr)."""
    argv = [str(MCPCTL), "-s", str(sock)]
    if is_json:
        argv.append("--json")
    argv += [str(a) for a in args]
    p = subprocess.run(argv, input=data, capture_output=True, timeout=120,
                       cwd=cwd, env=child_env())
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def entries(r):
    """{name: entry} of an --json import."""
    assert r.json is not None and set(r.json) >= {"entries"}, r
    return {e["name"]: e for e in r.json["entries"]}


def report(out):
    """The per-entry lines of a human import, the summary apart."""
    lines = out.splitlines()
    assert lines and SUMMARY.match(lines[-1]), out
    return [l for l in lines[:-1] if not l.startswith("  ")], \
        [int(n) for n in SUMMARY.match(lines[-1]).groups()]


def proc_cwd(pid):
    return os.readlink(f"/proc/{pid}/cwd")


def proc_environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(kv.split(b"=", 1) for kv in f.read().split(b"\0")
                    if b"=" in kv)


def argv_holding(text):
    """Processes whose argv holds text."""
    return [(p, cmdline(p)) for p in all_procs()
            if any(text in a for a in (cmdline(p) or []))]


def enabled(mcpd):
    return (mcpd.state / "enabled.json").read_bytes()


def saved_rows(mcpd):
    path = mcpd.state / "enabled.json"
    if not path.exists():
        return []
    return [row for rows in json.loads(path.read_text())["agents"].values()
            for row in rows]


# --------------------------------------------------------------------------
# The clients' files

def test_claude_desktop_config(mcpd, tmp_path):
    cfg = write_json(tmp_path / "Claude" / "claude_desktop_config.json", {
        "mcpServers": {
            "testserver": {"command": str(TESTSERVER), "args": [],
                           "env": {"TS_MODE": "plain"}},
            "paged": {"command": str(TESTSERVER),
                      "args": ["--page-size", "3"]},
        },
        "globalShortcut": "Ctrl+Space",
    })
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert [LOADED.match(l).group(1) for l in lines] == ["testserver",
                                                         "paged"], r.out
    assert all(int(LOADED.match(l).group(3)) == NTOOLS for l in lines)
    assert counts == [2, 0, 0, 0]

    rows = {row["name"]: row for row in mcpd.list()}
    assert set(rows) == {"testserver", "paged"}
    assert rows["paged"]["endpoint"] == f"{TESTSERVER} --page-size 3"
    assert all(row["transport"] == "stdio" and row["state"] == "ready"
               for row in rows.values())
    # Without a "cwd" in the entry, a command runs in the file's directory.
    assert proc_cwd(rows["testserver"]["pid"]) == str(cfg.parent)
    assert proc_environ(rows["testserver"]["pid"])[b"TS_MODE"] == b"plain"
    assert {row["name"] for row in saved_rows(mcpd)} == set(rows)


def test_cursor_mcp_json_with_a_remote_server(mcpd, tmp_path, peers):
    http = peers([TESTSERVER, "--http", "0"], name="http")
    port = int(http.wait_output(r"listening on http://127\.0\.0\.1:(\d+)/mcp",
                                stream="err").group(1))
    work = tmp_path / "project"
    (work / "data").mkdir(parents=True)
    cfg = write_json(work / ".cursor" / "mcp.json", {
        "mcpServers": {
            "local": {"command": str(TESTSERVER), "cwd": "../data"},
            "remote": {"url": f"http://127.0.0.1:{port}/mcp",
                       "headers": {"X-Test": "1"}},
        },
    })
    r = mcpd.ctl("import", "--allow-local", cfg)
    assert r.rc == 0, r
    got = entries(r)
    assert got["local"]["status"] == "loaded"
    assert got["remote"]["status"] == "loaded", got
    assert got["remote"]["tools"] == NTOOLS
    rows = {row["name"]: row for row in mcpd.list()}
    assert rows["remote"]["transport"] == "streamable-http"
    assert rows["remote"]["endpoint"] == f"http://127.0.0.1:{port}/mcp"
    # A relative "cwd" is taken from the file's directory.
    assert proc_cwd(rows["local"]["pid"]) == str(work / "data")


def test_vscode_mcp_json_with_comments_and_inputs(mcpd, tmp_path):
    cfg = write(tmp_path / "ws" / ".vscode" / "mcp.json", f"""
        // VS Code writes JSON with comments.
        {{
          "inputs": [
            {{
              "type": "promptString",
              "id": "api-key",
              "description": "API key /* not a comment */",
              "password": true,
            }},
          ],
          /* Servers of this workspace,
             over two lines. */
          "servers": {{
            "ts": {{
              "type": "stdio",
              "command": "{TESTSERVER}",
              "args": ["--page-size", "4",], // trailing comma
              "env": {{"URL": "http://example.com/a//b", "Q": "a\\"//b",
                      "W": "C:\\\\tmp\\\\", // ends in a backslash
                      }},
            }},
            "web": {{
              "type": "http",
              "url": "http://127.0.0.1:1/api",
            }},
          }},
        }}
        """)
    r = mcpd.ctl("import", "--dry-run", cfg)
    assert r.rc == 0, r
    got = entries(r)
    assert got["ts"]["params"]["command"] == [str(TESTSERVER),
                                              "--page-size", "4"]
    assert got["ts"]["params"]["env"] == {"URL": "***", "Q": "***",
                                          "W": "***"}
    assert got["web"]["params"]["transport"] == "streamable-http"

    r = mcpd.ctl("import", cfg, "--no-persist", is_json=False)
    assert r.rc == 1, r      # plain http is refused without --allow-local
    lines, counts = report(r.out)
    assert LOADED.match(lines[0]).group(1) == "ts", r.out
    assert lines[1].startswith("failed web: "), r.out
    assert counts == [1, 0, 0, 1]
    pid = mcpd.row("ts")["pid"]
    env = proc_environ(pid)
    # Strings kept what looked like comments: only real ones went.
    assert env[b"URL"] == b"http://example.com/a//b"
    assert env[b"Q"] == b'a"//b'
    assert env[b"W"] == b"C:\\tmp\\"


def test_vscode_variables_become_mcpd_references(mcpd_factory, tmp_path):
    """${input:ID} is a secret that must be set first, ${env:NAME} comes
    from mcpd's environment; both reach the server once it starts."""
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key",
                     env={"MCPD_IT_X": "2"})
    value = "key-" + os.urandom(8).hex()
    cfg = write(tmp_path / "ws" / ".vscode" / "mcp.json", f"""
        {{
          "inputs": [
            {{
              "type": "promptString",
              "id": "api-key",
              "description": "API Key",
              "password": true
            }}
          ],
          "servers": {{
            "keyed": {{
              "type": "stdio",
              "command": "{TESTSERVER}",
              "args": ["--tools", "${{env:MCPD_IT_X}}"],
              "env": {{
                "API_KEY": "${{input:api-key}}"
              }}
            }}
          }}
        }}
        """)
    needs = "  needs secret api_key: mcpctl secret set api_key"

    r = d.ctl("import", "--dry-run", cfg, is_json=False)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0].startswith("would load keyed (process): mcpd/load "), r
    assert json.loads(lines[0].split("mcpd/load ", 1)[1]) == {
        "command": [str(TESTSERVER), "--tools", "$(env.MCPD_IT_X)"],
        "env": {"API_KEY": "$(secret.api_key)"},
        "cwd": str(cfg.parent), "name": "keyed"}
    assert lines[1] == needs, r.out
    r = d.ctl("import", "--dry-run", cfg)
    assert r.rc == 0 and entries(r)["keyed"]["secrets"] == ["api_key"], r
    assert d.list() == []

    # Not set yet: the load fails, nothing is saved, the report says how.
    r = d.ctl("import", cfg, is_json=False)
    assert r.rc == 1, r
    lines, counts = report(r.out)
    assert lines[0].startswith("failed keyed: no value for "
                               "$(secret.api_key); nothing was saved or "
                               "started"), r.out
    assert needs in r.out.splitlines(), r.out
    assert counts == [0, 0, 0, 1]
    assert d.list() == [] and saved_rows(d) == []
    r = d.ctl("import", cfg)
    assert r.rc == 1, r
    got = entries(r)["keyed"]
    assert got["status"] == "failed" and got["secrets"] == ["api_key"], r

    rc, out, err = ctl_stdin(d.sock, "secret", "set", "api_key",
                             data=value.encode())
    assert rc == 0, (out, err)
    r = d.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert LOADED.match(lines[0]).group(1, 3) == ("keyed", str(NTOOLS + 2))
    assert needs not in r.out and value not in r.out + r.err, r.out
    assert counts == [1, 0, 0, 0]
    pid = d.row("keyed")["pid"]
    assert proc_environ(pid)[b"API_KEY"] == value.encode()
    assert cmdline(pid) == [str(TESTSERVER), "--tools", "2"]
    assert [row["params"]["env"] for row in saved_rows(d)] == [
        {"API_KEY": "$(secret.api_key)"}]


def test_vscode_settings_json(mcpd, tmp_path):
    cfg = write(tmp_path / "Code" / "User" / "settings.json", f"""
        {{
          "editor.fontSize": 14, // comments here too
          "mcp": {{
            "servers": {{
              "settings-ts": {{"command": "{TESTSERVER}", "args": []}},
            }},
          }},
          "files.autoSave": "afterDelay",
        }}
        """)
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert LOADED.match(lines[0]).group(1) == "settings-ts"
    assert counts == [1, 0, 0, 0]
    assert mcpd.row("settings-ts")["state"] == "ready"


def test_bad_files_are_usage_errors(mcpd, tmp_path):
    r = mcpd.ctl("import", tmp_path / "missing.json", is_json=False)
    assert r.rc == 2 and "missing.json" in r.err, r
    bad = write(tmp_path / "bad.json", '{\n  "mcpServers": {\n    "a": }\n}\n')
    r = mcpd.ctl("import", bad, is_json=False)
    assert r.rc == 2, r
    assert re.search(r"bad\.json:3:\d+: ", r.err), r.err
    open_comment = write(tmp_path / "c.json", '{"servers": {}}\n/* no end\n')
    r = mcpd.ctl("import", open_comment, is_json=False)
    assert r.rc == 2 and "c.json:2" in r.err, r
    other = write_json(tmp_path / "other.json", {"servers2": {}})
    r = mcpd.ctl("import", other, is_json=False)
    assert r.rc == 2 and "mcpServers" in r.err, r
    r = mcpd.ctl("import", is_json=False)
    assert r.rc == 2 and "FILE" in r.err, r
    assert mcpd.list() == []


def test_transport_inference(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "mcp-path": {"url": "https://a.example.com/v1/mcp"},
        "other-path": {"url": "https://a.example.com/events"},
        "typed-http": {"type": "http", "url": "https://a.example.com/x"},
        "typed-sse": {"type": "sse", "url": "https://a.example.com/mcp"},
        "camel": {"transport": "streamableHttp",
                  "serverUrl": "https://b.example.com/"},
        "cmd": {"command": "npx", "args": ["-y", "@x/server-y"]},
        "cmd-typed": {"type": "stdio", "command": "uvx", "args": ["srv"]},
    }})
    r = mcpd.ctl("import", "--dry-run", cfg)
    assert r.rc == 0, r
    got = entries(r)
    transport = {n: e["params"].get("transport") for n, e in got.items()}
    assert transport == {"mcp-path": "streamable-http", "other-path": "sse",
                         "typed-http": "streamable-http", "typed-sse": "sse",
                         "camel": "streamable-http", "cmd": None,
                         "cmd-typed": None}
    assert got["camel"]["params"]["target"] == "https://b.example.com/"
    assert got["cmd"]["kind"] == "process"
    assert got["cmd"]["params"]["command"] == ["npx", "-y", "@x/server-y"]
    assert got["cmd"]["params"]["cwd"] == str(tmp_path)
    assert all(e["status"] == "planned" for e in got.values())
    assert mcpd.list() == []


def test_disabled_and_invalid_entries(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "on": {"command": str(TESTSERVER)},
        "off": {"command": str(TESTSERVER), "args": ["--tools", "2"],
                "disabled": True},
    }})
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert lines[1] == "skipped off: disabled in the file", r.out
    assert counts == [1, 0, 1, 0]
    assert [row["name"] for row in mcpd.list()] == ["on"]

    r = mcpd.ctl("import", cfg)
    assert r.rc == 0 and entries(r)["off"] == {
        "name": "off", "kind": "skipped", "status": "skipped",
        "reason": "disabled in the file"}, r


def test_failures_are_per_entry(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "first": {"command": str(TESTSERVER)},
        "missing": {"command": str(tmp_path / "no-such-program")},
        "wrong": {"command": 5},
        "both": {"command": "x", "url": "https://x.example.com/mcp"},
        "docker-flag": {"command": "docker",
                        "args": ["run", "--privileged", "img"]},
        "last": {"command": str(TESTSERVER), "args": ["--tools", "3"]},
    }})
    r = mcpd.ctl("import", "--no-persist", cfg, is_json=False)
    assert r.rc == 1, r
    lines, counts = report(r.out)
    assert counts == [2, 0, 0, 4], r.out
    assert LOADED.match(lines[0]).group(1) == "first"
    assert lines[1].startswith("failed missing: "), r.out
    assert lines[2] == 'failed wrong: "command" is a number, not a string'
    assert lines[3].startswith("failed both: "), r.out
    assert "--privileged" in lines[4] and "not supported" in lines[4], r.out
    assert LOADED.match(lines[5]).group(3) == str(NTOOLS + 3)
    assert {row["name"] for row in mcpd.list()
            if row["state"] == "ready"} == {"first", "last"}

    for row in mcpd.list():
        mcpd.rpc.result("mcpd/unload", {"target": row["id"]})
    r = mcpd.ctl("import", "--no-persist", cfg)
    assert r.rc == 1, r
    got = entries(r)
    assert [e["status"] for e in r.json["entries"]] == [
        "loaded", "failed", "failed", "failed", "failed", "loaded"]
    assert got["missing"]["error"] and "id" not in got["missing"]
    assert got["last"]["tools"] == NTOOLS + 3 and re.match(r"^[0-9a-f]{12}$",
                                                   got["last"]["id"])
    assert saved_rows(mcpd) == []


def test_names_are_made_valid(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "my server": {"command": str(TESTSERVER)},
        "fs.local": {"command": str(TESTSERVER), "args": ["--tools", "1"]},
        "a b": {"command": str(TESTSERVER), "args": ["--tools", "2"]},
        "a.b": {"command": str(TESTSERVER), "args": ["--tools", "4"]},
        "a-b": {"command": str(TESTSERVER), "args": ["--tools", "5"]},
        "...": {"command": str(TESTSERVER), "args": ["--tools", "6"]},
    }})
    r = mcpd.ctl("import", "--no-persist", cfg, is_json=False)
    assert r.rc == 1, r
    assert '"my server" is not a server name' in r.out
    assert "named my-server" in r.out
    got = {e["renamed_from"]: e["name"] for e in
           entries(mcpd.ctl("import", "--dry-run", cfg)).values()
           if "renamed_from" in e}
    # A valid name keeps its own; the renamed ones step aside.
    assert got == {"my server": "my-server", "fs.local": "fs-local",
                   "a b": "a-b-2", "a.b": "a-b-3", "...": "..."}
    names = {row["name"]: row["tools"] for row in mcpd.list()}
    # --tools N adds N tools: each server is told apart by its count.
    assert names == {"my-server": NTOOLS, "fs-local": NTOOLS + 1,
                     "a-b-2": NTOOLS + 2, "a-b-3": NTOOLS + 4,
                     "a-b": NTOOLS + 5}
    assert re.search(r'^failed \.\.\.: no server name', r.out, re.M), r.out


def test_stdin_and_agent(mcpd, tmp_path):
    text = json.dumps({"mcpServers": {"piped": {"command": str(TESTSERVER)}}})
    rc, out, err = ctl_stdin(mcpd.sock, "--agent", "ci", "import", "-",
                             data=text.encode(), cwd=tmp_path)
    assert rc == 0, (out, err)
    assert LOADED.match(out.splitlines()[0]).group(1) == "piped"
    assert mcpd.list() == []      # the default agent has none
    rows = mcpd.rpc.result("mcpd/list", {"all": True})["servers"]
    assert [(r["agent"], r["name"]) for r in rows] == [("ci", "piped")]
    # From stdin, a command runs in mcpctl's current directory.
    assert proc_cwd(rows[0]["pid"]) == str(tmp_path)
    assert saved_rows(mcpd)[0]["params"]["cwd"] == str(tmp_path)


# --------------------------------------------------------------------------
# --dry-run and idempotence

def test_dry_run_needs_no_daemon_and_masks_values(tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "gh": {"command": "npx", "args": ["-y", "@x/server-github"],
               "env": {"GITHUB_TOKEN": "ghp_s3cret-value",
                       "REF": "$(secret.gh_token)",
                       "MIXED": "Bearer $(secret.gh_token)",
                       "EMPTY": ""}},
        "api": {"url": "https://api.example.com/mcp",
                "headers": {"Authorization": "Bearer abc-s3cret"}},
        "box": {"command": "docker",
                "args": ["run", "-i", "--rm", "-e", "TOKEN=box-s3cret",
                         "-v", "/srv:/srv", "--network", "none",
                         "mcpd-test/stdio", "--tools", "2"]},
        "off": {"command": "x", "disabled": True},
    }})
    sock = tmp_path / "no-daemon.sock"
    r = run_ctl(sock, "import", "--dry-run", cfg, is_json=False)
    assert r.rc == 0, r
    assert "s3cret" not in r.out + r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("would load gh (process): mcpd/load {"), r.out
    plan = json.loads(lines[0].split("mcpd/load ", 1)[1])
    assert plan == {"command": ["npx", "-y", "@x/server-github"],
                    "env": {"GITHUB_TOKEN": "***",
                            "REF": "$(secret.gh_token)",
                            "MIXED": "***$(secret.gh_token)", "EMPTY": ""},
                    "cwd": str(tmp_path), "name": "gh"}
    assert "would skip off: disabled in the file" in lines
    assert lines[-1].startswith("dry run, nothing loaded: 3 to load"), r.out

    r = run_ctl(sock, "import", "--dry-run", "--no-persist", cfg)
    assert r.rc == 0, r
    got = entries(r)
    assert r.json["dry_run"] is True
    assert got["api"]["params"] == {
        "target": "https://api.example.com/mcp",
        "headers": {"Authorization": "***"},
        "transport": "streamable-http", "name": "api", "persist": False}
    assert got["box"]["kind"] == "container"
    assert got["box"]["params"] == {
        "target": "mcpd-test/stdio:latest", "args": ["--tools", "2"],
        "env": {"TOKEN": "***"}, "volumes": ["/srv:/srv"],
        "network": "none", "name": "box", "persist": False}
    assert "s3cret" not in r.out


def test_dry_run_changes_nothing(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "ts": {"command": str(TESTSERVER), "env": {"K": "v"}}}})
    r = mcpd.ctl("import", "--dry-run", cfg)
    assert r.rc == 0 and entries(r)["ts"]["status"] == "planned", r
    assert mcpd.list() == []
    assert not (mcpd.state / "enabled.json").exists() or saved_rows(mcpd) \
        == []


def test_import_twice_changes_nothing(mcpd, tmp_path):
    cfg = write_json(tmp_path / "cfg" / "mcp.json", {"mcpServers": {
        "one": {"command": str(TESTSERVER), "env": {"API_KEY": "k-123"}},
        "two": {"command": str(TESTSERVER), "args": ["--tools", "2"]},
        "off": {"command": "x", "disabled": True},
    }})
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    ids = {LOADED.match(l).group(1): LOADED.match(l).group(2)
           for l in lines[:2]}
    assert counts == [2, 0, 1, 0]
    first = enabled(mcpd)
    mtime = (mcpd.state / "enabled.json").stat().st_mtime_ns
    pids = {row["name"]: row["pid"] for row in mcpd.list()}

    # Again, from another directory and with a relative path.
    r = mcpd.ctl("import", os.path.relpath(cfg, tmp_path), is_json=False,
                 cwd=tmp_path)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert lines[:2] == [f"already loaded one (id {ids['one']})",
                         f"already loaded two (id {ids['two']})"], r.out
    assert counts == [0, 2, 1, 0]
    assert enabled(mcpd) == first
    assert (mcpd.state / "enabled.json").stat().st_mtime_ns == mtime
    assert {row["name"]: row["pid"] for row in mcpd.list()} == pids

    r = mcpd.ctl("import", cfg)
    assert r.rc == 0, r
    assert [(e["name"], e["status"], e.get("id")) for e in
            r.json["entries"]] == [("one", "already", ids["one"]),
                                   ("two", "already", ids["two"]),
                                   ("off", "skipped", None)]
    assert enabled(mcpd) == first
    # The literal value went to the secret store, not into the file.
    assert b"k-123" not in first


# --------------------------------------------------------------------------
# Containers: docker run entries, progress of container loads

@pytest.fixture(scope="module")
def images():
    """The test images, built once if this machine lacks them."""
    p = subprocess.run([DOCKER, "info", "--format", "{{.ServerVersion}}"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.fail(f"the container tests need a running Docker engine: "
                    f"{p.stderr.strip()}", pytrace=False)
    p = subprocess.run([DOCKER, "image", "inspect", "mcpd-test/stdio:latest",
                        "mcpd-test/http:latest"], capture_output=True,
                       timeout=60)
    if p.returncode != 0:
        b = subprocess.run([str(REPO / "tests" / "images" / "build"),
                            str(BUILD), "stdio", "http"],
                           capture_output=True, text=True, timeout=600)
        assert b.returncode == 0, b.stdout + b.stderr


def owned_containers(did):
    p = subprocess.run([DOCKER, "ps", "-a", "--filter",
                        f"label=io.mcpd.owner={did}", "--format",
                        "{{.Names}}"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


@pytest.fixture
def owners():
    """Daemon DIDs; once their daemons stopped, none may own a container."""
    dids = []
    yield dids
    left = [n for did in dids for n in owned_containers(did)]
    for name in left:
        subprocess.run([DOCKER, "rm", "-f", name], capture_output=True,
                       timeout=60)
    assert not left, f"containers left after mcpd stopped: {left}"


@pytest.fixture
def dmcpd(images, owners, mcpd):
    owners.append(mcpd.rpc.result("mcpd/status")["did"])
    return mcpd


def test_docker_run_entry_is_a_container_server(dmcpd, tmp_path):
    token = "tok-" + os.urandom(8).hex()
    cfg = write_json(tmp_path / "claude_desktop_config.json", {
        "mcpServers": {"dock": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "-e", "TOKEN", "mcpd-test/stdio"],
            "env": {"TOKEN": token}}}})
    r = dmcpd.ctl("import", "--no-persist", cfg, is_json=False)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert LOADED.match(lines[0]).groups()[::2] == ("dock", str(NTOOLS))
    assert re.search(r"^  probing: .*rax-probe-dock-", r.err, re.M), r.err

    row = dmcpd.row("dock")
    assert row["mode"] == "container" and row["transport"] == "stdio"
    assert row["image"] == "mcpd-test/stdio:latest"
    name = row["container"]["name"]
    assert name == f"rax-probe-dock-{dmcpd.pid}", row
    inspect = json.loads(subprocess.run(
        [DOCKER, "container", "inspect", name], capture_output=True,
        text=True, timeout=60).stdout)[0]
    assert f"TOKEN={token}" in inspect["Config"]["Env"]
    assert argv_holding(token) == []
    assert dmcpd.call("dock", "echo", {"message": "hi"})[
        "structuredContent"] == {"message": "hi"}


def test_container_load_progress_human_and_json(dmcpd):
    r = dmcpd.ctl("load", "--no-persist", "--name", "web", "mcpd-test/http",
                  is_json=False)
    assert r.rc == 0, r
    progress = [l for l in r.err.splitlines() if l.startswith("  ")]
    stages = [l.split()[0].rstrip(":") for l in progress]
    assert progress[0] == "  starting: mcpd-test/http:latest", r.err
    assert "probing" in stages and "http-detected" in stages, r.err
    assert any(s == "probing" and "rax-probe-web-" in l
               for s, l in zip(stages, progress)), r.err
    assert any(s == "http-detected" and "rax-mcp-web-" in l
               for s, l in zip(stages, progress)), r.err
    assert stages[-1] == "connected", r.err
    assert r.out.startswith("loaded web (id "), r.out
    assert not any(l.startswith("  ") for l in r.out.splitlines())

    dmcpd.rpc.result("mcpd/unload", {"target": "web"}, timeout=60)
    r = dmcpd.ctl("load", "--no-persist", "--name", "web", "mcpd-test/http")
    assert r.rc == 0, r
    assert r.err == "", r
    assert len(r.out.splitlines()) == 1
    assert r.json["name"] == "web" and r.json["transport"] == \
        "streamable-http"


def test_process_load_and_reload_progress(mcpd, tmp_path):
    r = mcpd.ctl("load", "--no-persist", "--name", "ts", "--", TESTSERVER,
                 is_json=False)
    assert r.rc == 0, r
    lines = r.err.splitlines()
    assert lines[0] == f"  starting: {TESTSERVER}", r.err
    version = mcpd.row("ts")["protocol_version"]
    assert lines[-1] == f"  connected: protocol {version}, {NTOOLS} tools", \
        r.err
    assert all(l.startswith("  ") for l in lines), r.err

    r = mcpd.ctl("reload", "ts", is_json=False)
    assert r.rc == 0, r
    assert r.err.splitlines()[0].startswith("  starting: "), r.err
    assert r.err.splitlines()[-1].startswith("  connected: "), r.err
    r = mcpd.ctl("reload", "ts")
    assert r.rc == 0 and r.err == "", r

    # A load that fails once started: its stage, then the error.
    r = mcpd.ctl("load", "--no-persist", "--", "/bin/false",
                 is_json=False)
    assert r.rc == 1, r
    assert re.search(r"^  failed: ", r.err, re.M), r.err
    assert re.search(r"^mcpctl: ", r.err, re.M), r.err
    r = mcpd.ctl("load", "--no-persist", "--", "/bin/false")
    assert r.rc == 1 and not re.search(r"^  ", r.err, re.M), r
