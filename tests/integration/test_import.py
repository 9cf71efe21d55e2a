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
                      all_procs, child_env, cmdline, run_ctl, wait_gone)

DOCKER = shutil.which("docker") or "/usr/bin/docker"
NTOOLS = len(TESTSERVER_TOOLS)
LOADED = re.compile(r"^loaded (\S+) \(id ([0-9a-f]{12}), (\d+) tools?\)$")
SUMMARY = re.compile(r"^(\d+) loaded, (\d+) reconfigured, (\d+) replaced, "
                     r"(\d+) unchanged, (\d+) unloaded, (\d+) skipped, "
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
    assert counts == [2, 0, 0, 0, 0, 0, 0]

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
    assert r.rc == 1, r      # --dry-run flags plain http
    got = entries(r)
    assert got["web"]["status"] == "failed", got
    assert got["web"]["error"] == ("plain http is refused without "
                                   "--allow-local, which allows it to "
                                   "loopback addresses only"), got
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
    assert counts == [1, 0, 0, 0, 0, 0, 1]
    pid = mcpd.row("ts")["pid"]
    env = proc_environ(pid)
    # Strings kept what looked like comments: only real ones went.
    assert env[b"URL"] == b"http://example.com/a//b"
    assert env[b"Q"] == b'a"//b'
    assert env[b"W"] == b"C:\\tmp\\"


def test_vscode_variables(mcpd_factory, tmp_path):
    """${input:ID} is a secret that must be set first, ${env:NAME} comes
    from the environment of mcpctl import (as VS Code reads its own), not
    mcpd's; both reach the server once it starts."""
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key",
                     env={"MCPD_IT_X": "2"})
    ctl_env = child_env({"MCPD_IT_X": "3"})
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

    r = d.ctl("import", "--dry-run", cfg, is_json=False, env=ctl_env)
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0].startswith("would load keyed (process): mcpd/load "), r
    # A .vscode/mcp.json entry runs in the workspace folder.
    assert json.loads(lines[0].split("mcpd/load ", 1)[1]) == {
        "command": [str(TESTSERVER), "--tools", "3"],
        "env": {"API_KEY": "$(secret.api_key)"},
        "cwd": str(cfg.parent.parent), "name": "keyed",
        "origin": str(cfg)}
    assert lines[1] == needs, r.out
    r = d.ctl("import", "--dry-run", cfg, env=ctl_env)
    assert r.rc == 0 and entries(r)["keyed"]["secrets"] == ["api_key"], r
    assert d.list() == []

    # Not set yet: the load fails, nothing is saved, the report says how.
    r = d.ctl("import", cfg, is_json=False, env=ctl_env)
    assert r.rc == 1, r
    lines, counts = report(r.out)
    assert lines[0].startswith("failed keyed: no value for "
                               "$(secret.api_key); nothing was saved or "
                               "started"), r.out
    assert needs in r.out.splitlines(), r.out
    assert counts == [0, 0, 0, 0, 0, 0, 1]
    assert d.list() == [] and saved_rows(d) == []
    r = d.ctl("import", cfg, env=ctl_env)
    assert r.rc == 1, r
    got = entries(r)["keyed"]
    assert got["status"] == "failed" and got["secrets"] == ["api_key"], r

    rc, out, err = ctl_stdin(d.sock, "secret", "set", "api_key",
                             data=value.encode())
    assert rc == 0, (out, err)
    r = d.ctl("import", cfg, is_json=False, env=ctl_env)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert LOADED.match(lines[0]).group(1, 3) == ("keyed", str(NTOOLS + 3))
    assert needs not in r.out and value not in r.out + r.err, r.out
    assert counts == [1, 0, 0, 0, 0, 0, 0]
    pid = d.row("keyed")["pid"]
    assert proc_environ(pid)[b"API_KEY"] == value.encode()
    assert cmdline(pid) == [str(TESTSERVER), "--tools", "3"]
    assert proc_cwd(pid) == str(cfg.parent.parent)
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
    assert counts == [1, 0, 0, 0, 0, 0, 0]
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
        "cmd-typed": {"type": "stdio", "command": "sh", "args": ["srv"]},
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
    assert counts == [1, 0, 0, 0, 0, 1, 0]
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
    assert counts == [2, 0, 0, 0, 0, 0, 4], r.out
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
                    "cwd": str(tmp_path), "name": "gh",
                    "origin": str(cfg)}
    assert "would skip off: disabled in the file" in lines
    assert lines[-1] == ("dry run, nothing changed: 3 to load, 0 to load "
                         "again, 0 to replace, 0 to unload, 1 skipped, 0 "
                         "will fail"), r.out
    assert r.err == (f"no mcpd answers at {sock}: every entry is planned "
                     f"as a new load\n"), r.err

    r = run_ctl(sock, "import", "--dry-run", "--no-persist", cfg)
    assert r.rc == 0, r
    got = entries(r)
    assert r.json["dry_run"] is True and r.json["compared"] is False
    assert got["api"]["params"] == {
        "target": "https://api.example.com/mcp",
        "headers": {"Authorization": "***"},
        "transport": "streamable-http", "name": "api",
        "origin": str(cfg), "persist": False}
    assert got["box"]["kind"] == "container"
    assert got["box"]["params"] == {
        "target": "mcpd-test/stdio:latest", "args": ["--tools", "2"],
        "env": {"TOKEN": "***"}, "volumes": ["/srv:/srv"],
        "network": "none", "name": "box", "origin": str(cfg),
        "persist": False}
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
    assert counts == [2, 0, 0, 0, 0, 1, 0]
    first = enabled(mcpd)
    mtime = (mcpd.state / "enabled.json").stat().st_mtime_ns
    pids = {row["name"]: row["pid"] for row in mcpd.list()}

    # Again, from another directory and with a relative path.
    r = mcpd.ctl("import", os.path.relpath(cfg, tmp_path), is_json=False,
                 cwd=tmp_path)
    assert r.rc == 0, r
    lines, counts = report(r.out)
    assert lines[:2] == [f"unchanged one (id {ids['one']})",
                         f"unchanged two (id {ids['two']})"], r.out
    assert counts == [0, 0, 0, 2, 0, 1, 0]
    assert enabled(mcpd) == first
    assert (mcpd.state / "enabled.json").stat().st_mtime_ns == mtime
    assert {row["name"]: row["pid"] for row in mcpd.list()} == pids

    r = mcpd.ctl("import", cfg)
    assert r.rc == 0, r
    assert [(e["name"], e["status"], e.get("id")) for e in
            r.json["entries"]] == [("one", "unchanged", ids["one"]),
                                   ("two", "unchanged", ids["two"]),
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


# --------------------------------------------------------------------------
# Importing again: updates, --prune, --dry-run against what mcpd has

def ts_entry(*args, env=None):
    entry = {"command": str(TESTSERVER), "args": [str(a) for a in args]}
    if env:
        entry["env"] = env
    return entry


def pids(mcpd):
    return {row["name"]: row["pid"] for row in mcpd.list()}


def test_reimport_updates_what_it_loaded(mcpd, tmp_path):
    """The same entry name with new values is reconfigured, with a new
    command replaced, as it was unchanged; an entry the file no longer has
    is unloaded only with --prune, and a server loaded by hand never."""
    cfg = tmp_path / "cfg" / "mcp.json"
    write_json(cfg, {"mcpServers": {
        "conf": ts_entry(env={"K": "one"}),
        "cmd": ts_entry("--tools", "1"),
        "same": ts_entry("--tools", "2"),
        "gone": ts_entry("--tools", "3"),
    }})
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    ids = {LOADED.match(l).group(1): LOADED.match(l).group(2)
           for l in report(r.out)[0]}
    r = mcpd.ctl("load", "--name", "hand", "--", TESTSERVER, "--tools", "4",
                 is_json=False)
    assert r.rc == 0, r
    before = pids(mcpd)
    rows = {row["name"]: row for row in mcpd.list()}
    assert {n: rows[n]["origin"] for n in rows} == {
        "conf": str(cfg), "cmd": str(cfg), "same": str(cfg),
        "gone": str(cfg), "hand": None}

    write_json(cfg, {"mcpServers": {
        "conf": ts_entry(env={"K": "two"}),
        "cmd": ts_entry("--tools", "5"),
        "same": ts_entry("--tools", "2"),
    }})
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    new_cmd = mcpd.row("cmd")["id"]
    assert r.out.splitlines() == [
        f"reconfigured conf (id {ids['conf']}, {NTOOLS} tools)",
        f"replaced cmd (id {new_cmd}, {NTOOLS + 5} tools)",
        f"unchanged same (id {ids['same']})",
        "0 loaded, 1 reconfigured, 1 replaced, 1 unchanged, 0 unloaded, "
        "0 skipped, 0 failed"], r.out
    now = pids(mcpd)
    assert set(now) == {"conf", "cmd", "same", "gone", "hand"}
    assert now["same"] == before["same"] and now["gone"] == before["gone"]
    assert now["conf"] != before["conf"] and now["cmd"] != before["cmd"]
    assert proc_environ(now["conf"])[b"K"] == b"two"
    assert cmdline(now["cmd"]) == [str(TESTSERVER), "--tools", "5"]
    assert {row["name"] for row in saved_rows(mcpd)} == {
        "conf", "cmd", "same", "gone", "hand"}

    r = mcpd.ctl("import", "--prune", cfg, is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines() == [
        f"unchanged conf (id {ids['conf']})",
        f"unchanged cmd (id {new_cmd})",
        f"unchanged same (id {ids['same']})",
        "unloaded gone (--prune)",
        "0 loaded, 0 reconfigured, 0 replaced, 3 unchanged, 1 unloaded, "
        "0 skipped, 0 failed"], r.out
    assert set(pids(mcpd)) == {"conf", "cmd", "same", "hand"}
    assert {row["name"] for row in saved_rows(mcpd)} == {
        "conf", "cmd", "same", "hand"}
    wait_gone([before["gone"]])

    # A disabled entry counts as gone for --prune; --json says the same.
    write_json(cfg, {"mcpServers": {
        "conf": ts_entry(env={"K": "two"}),
        "cmd": dict(ts_entry("--tools", "5"), disabled=True),
    }})
    r = mcpd.ctl("import", "--prune", cfg)
    assert r.rc == 0, r
    got = [(e["name"], e["status"]) for e in r.json["entries"]]
    assert got[:2] == [("conf", "unchanged"), ("cmd", "skipped")], got
    assert sorted(got[2:]) == [("cmd", "unloaded"), ("same", "unloaded")]
    assert set(pids(mcpd)) == {"conf", "hand"}


def test_reimport_never_takes_a_name_it_did_not_load(mcpd, tmp_path):
    """An entry whose name a hand-loaded server has, with another command,
    fails and leaves that server alone; the message suggests nothing import
    does not have (no --name)."""
    r = mcpd.ctl("load", "--name", "taken", "--", TESTSERVER, "--tools", "1",
                 is_json=False)
    assert r.rc == 0, r
    pid = mcpd.row("taken")["pid"]
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "taken": ts_entry("--tools", "2")}})
    want = (f"failed taken: the name taken is taken by a server that this "
            f"file did not import ({TESTSERVER} --tools 1); rename the "
            f"entry in the file, or unload taken first (mcpctl unload "
            f"taken)")
    r = mcpd.ctl("import", "--prune", cfg, is_json=False)
    assert r.rc == 1, r
    assert r.out.splitlines() == [
        want, "0 loaded, 0 reconfigured, 0 replaced, 0 unchanged, "
        "0 unloaded, 0 skipped, 1 failed"], r.out
    assert "--name" not in r.out + r.err
    r = mcpd.ctl("import", "--dry-run", cfg, is_json=False)
    assert r.rc == 1 and r.out.splitlines()[0] == \
        want.replace("failed", "will fail", 1), r
    assert pids(mcpd) == {"taken": pid}
    assert mcpd.row("taken")["origin"] is None


def test_dry_run_compares_with_mcpd_and_flags_failures(mcpd, tmp_path):
    cfg = tmp_path / "cfg" / "mcp.json"
    write_json(cfg, {"mcpServers": {
        "keep": ts_entry(env={"K": "one"}),
        "cmd": ts_entry("--tools", "1"),
        "gone": ts_entry("--tools", "3"),
    }})
    r = mcpd.ctl("import", cfg, is_json=False)
    assert r.rc == 0, r
    write_json(cfg, {"mcpServers": {
        "keep": ts_entry(env={"K": "two"}),
        "cmd": ts_entry("--tools", "2"),
        "new": ts_entry(),
        "web": {"url": "http://mcp.example.com/mcp"},
        "missing": {"command": "mcpd-it-no-such-program", "args": ["x"]},
        "nopath": {"command": str(tmp_path / "no-such-program")},
    }})
    state = enabled(mcpd)
    before = mcpd.list()
    r = mcpd.ctl("import", "--dry-run", "--prune", cfg, is_json=False)
    assert r.rc == 1, r
    o = f'"origin":"{cfg}"'
    assert r.out.splitlines() == [
        f"would load again keep (process; mcpd compares the values): "
        f'mcpd/load {{"command":["{TESTSERVER}"],"env":{{"K":"***"}},'
        f'"cwd":"{cfg.parent}","name":"keep",{o}}}',
        f"would replace cmd (process; it runs {TESTSERVER} --tools 1 now): "
        f'mcpd/load {{"command":["{TESTSERVER}","--tools","2"],'
        f'"cwd":"{cfg.parent}","name":"cmd",{o}}}',
        f'would load new (process): mcpd/load {{"command":["{TESTSERVER}"],'
        f'"cwd":"{cfg.parent}","name":"new",{o}}}',
        "will fail web: plain http is refused without --allow-local, "
        "which allows it to loopback addresses only",
        "will fail missing: the command mcpd-it-no-such-program is not on "
        "PATH; install it, or give its path",
        f"will fail nopath: the command {tmp_path}/no-such-program is not "
        f"an executable file",
        "would unload gone (--prune)",
        "dry run, nothing changed: 1 to load, 1 to load again, 1 to "
        "replace, 1 to unload, 0 skipped, 3 will fail"], r.out
    assert r.err == "", r

    r = mcpd.ctl("import", "--dry-run", "--prune", cfg)
    assert r.rc == 1 and r.json["compared"] is True, r
    assert [(e["name"], e["status"], e.get("action")) for e in
            r.json["entries"]] == [
        ("keep", "planned", "load-again"), ("cmd", "planned", "replace"),
        ("new", "planned", "load"), ("web", "failed", None),
        ("missing", "failed", None), ("nopath", "failed", None),
        ("gone", "planned", "unload")]
    # Nothing changed: the same servers, processes and saved rows.
    assert enabled(mcpd) == state
    assert [(r["name"], r["pid"], r["generation"]) for r in mcpd.list()] \
        == [(r["name"], r["pid"], r["generation"]) for r in before]


def test_vscode_workspace_folder_and_env(mcpd_factory, tmp_path):
    """${workspaceFolder} is the folder that holds .vscode/, which is also
    where a .vscode/mcp.json entry runs; ${env:X} is mcpctl's X."""
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key",
                     env={"MCPD_IT_X": "from-mcpd"})
    ws = tmp_path / "proj"
    (ws / "sub").mkdir(parents=True)
    cfg = write(ws / ".vscode" / "mcp.json", f"""
        {{
          "servers": {{
            "here": {{
              "command": "{TESTSERVER}",
              "env": {{"WS": "${{workspaceFolder}}",
                      "BASE": "${{workspaceFolderBasename}}",
                      "X": "${{env:MCPD_IT_X}}"}},
            }},
            "sub": {{
              "command": "{TESTSERVER}",
              "cwd": "${{workspaceFolder}}/sub",
            }},
            "rel": {{"command": "{TESTSERVER}", "args": ["--tools", "1"],
                    "cwd": "sub"}},
          }},
        }}
        """)
    r = d.ctl("import", cfg, is_json=False,
              env=child_env({"MCPD_IT_X": "from-mcpctl"}))
    assert r.rc == 0, r
    rows = {row["name"]: row for row in d.list()}
    env = proc_environ(rows["here"]["pid"])
    assert (env[b"WS"], env[b"BASE"], env[b"X"]) == (
        str(ws).encode(), b"proj", b"from-mcpctl")
    assert proc_cwd(rows["here"]["pid"]) == str(ws)
    assert proc_cwd(rows["sub"]["pid"]) == str(ws / "sub")
    assert proc_cwd(rows["rel"]["pid"]) == str(ws / "sub")

    # Unset in mcpctl's environment: the entry fails, naming the variable.
    r = d.ctl("import", cfg, is_json=False, env=child_env())
    assert r.rc == 1, r
    assert report(r.out)[0][0] == (
        'failed here: "env" uses ${env:MCPD_IT_X}, but that variable is '
        'not set in the environment of mcpctl import (VS Code reads it '
        'there too); set it and import again'), r.out
    # Out of a .vscode folder, ${workspaceFolder} is unknown.
    other = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "ws": {"command": str(TESTSERVER), "cwd": "${workspaceFolder}"}}})
    r = d.ctl("import", "--dry-run", other, is_json=False)
    assert r.rc == 1 and r.out.splitlines()[0] == (
        'will fail ws: "cwd" uses ${workspaceFolder}, which is known only '
        "for a file in a workspace's .vscode folder; edit the entry"), r


PODMAN_ENTRY = {"command": "podman",
                "args": ["run", "-i", "--rm", "mcpd-test/stdio"]}


def test_podman_entry_refused_unless_mcpd_runs_podman(mcpd, tmp_path):
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "pod": PODMAN_ENTRY, "ts": ts_entry()}})
    cli = mcpd.rpc.result("mcpd/status")["docker"]["cli"] or "docker"
    why = (f"the entry uses podman; mcpd runs containers with {cli}; start "
           f"mcpd with --docker podman")
    r = mcpd.ctl("import", "--no-persist", cfg, is_json=False)
    assert r.rc == 1, r
    lines, counts = report(r.out)
    assert lines[0] == f"failed pod: {why}", r.out
    assert counts == [1, 0, 0, 0, 0, 0, 1]
    assert [row["name"] for row in mcpd.list()] == ["ts"]
    r = mcpd.ctl("import", "--dry-run", cfg, is_json=False)
    assert r.rc == 1 and r.out.splitlines()[0] == f"will fail pod: {why}", r


def test_podman_entry_runs_with_podman(images, owners, mcpd_factory,
                                       tmp_path):
    """With mcpd running a CLI named podman (here a wrapper that logs and
    runs docker), the entry loads, and that CLI ran its container."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "podman.log"
    podman = bindir / "podman"
    podman.write_text(f'#!/bin/sh\necho "$1" >> {log}\n'
                      f'exec {DOCKER} "$@"\n')
    podman.chmod(0o755)
    d = mcpd_factory("--secrets-key", tmp_path / "keys" / "secrets.key",
                     "--docker", podman)
    owners.append(d.rpc.result("mcpd/status")["did"])
    cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {
        "pod": PODMAN_ENTRY}})
    r = d.ctl("import", "--dry-run", cfg, is_json=False)
    assert r.rc == 0, r
    assert r.out.startswith("would load pod (container): mcpd/load "), r.out
    r = d.ctl("import", "--no-persist", cfg, is_json=False)
    assert r.rc == 0, r
    assert LOADED.match(report(r.out)[0][0]).group(1) == "pod", r.out
    assert d.row("pod")["mode"] == "container"
    assert "run" in log.read_text().split()


def test_container_name_held_hint_is_imports(dmcpd, tmp_path):
    """mcpd's conflict over a container name says what import can do
    (rename the entry), never an option import does not have."""
    held = f"rax-probe-held-{dmcpd.pid}"
    p = subprocess.run([DOCKER, "create", "--name", held,
                        "mcpd-test/stdio:latest"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    try:
        cfg = write_json(tmp_path / "mcp.json", {"mcpServers": {"held": {
            "command": "docker", "args": ["run", "-i", "mcpd-test/stdio"]}}})
        r = dmcpd.ctl("import", "--no-persist", cfg, is_json=False)
        assert r.rc == 1, r
        line = report(r.out)[0][0]
        assert line.startswith(f"failed held: cannot load held: the container "
                               f"name {held} is "
                               f"taken by "), r.out
        assert line.endswith(" or rename the entry in the file"), r.out
        assert "--name" not in r.out + r.err
    finally:
        subprocess.run([DOCKER, "rm", "-f", held], capture_output=True,
                       timeout=60)
