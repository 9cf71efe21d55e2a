# SPDX-License-Identifier: ISC
"""README.md's examples run as written. Every line of a fenced code block
that is an `mcpctl` or `mcpd` command (continuation lines joined) is run
with bash, in README order, against one real mcpd that has no network (a
network namespace of its own: so the servers it runs have none either),
with mcpctl and mcpd on PATH and the daemon's socket as the default one
(MCPD_SOCKET), HOME and the working directory private to the test, and
the npm test peers (server-everything) where npx looks first. Each exits
0 unless EXPECTED says otherwise.

An example that needs the network (the MCP Registry, Docker Hub, ghcr.io,
a remote server or its OAuth login, a package npm would fetch) is in
NOT_RUN with the reason; the list is reviewed, not a pattern, so a new
example that is neither run nor listed fails the test, as does a listed
one that the README no longer has. The first screen's two commands for a
fresh machine, `make run` and `make check`, are not run here (they
install and build; make check runs this test): the test only checks that
the first block is exactly those two."""

import ctypes
import json
import os
import shlex
import signal
import subprocess
import time

from conftest import BUILD, PEERS, REPO
from test_load_name import everything_record

README = REPO / "README.md"

CLONE_NEWNET = 0x40000000

REGISTRY = "the MCP Registry, on the network"
DOCKER_CATALOG = "Docker's MCP catalog, an image pulled from Docker Hub"
GITHUB_IMAGE = ("the GitHub server's image, pulled from ghcr.io (and a "
                "GitHub token)")
EXAMPLE_COM = ("a remote server: mcp.example.com stands for one on the "
               "network")
OAUTH = "the OAuth login of that remote server, in a browser"
ASK = ("answers a call that an ask rule holds, which another process made "
       "(test_approvals.py runs these)")

# Each example not run, by its words (shlex.join of the line without its
# comment), with the reason.
NOT_RUN = {
    "mcpctl load --header 'Authorization=Bearer TOKEN' "
    "https://mcp.example.com/mcp": EXAMPLE_COM,
    "mcpctl tools mcp-example-com": EXAMPLE_COM,
    "mcpctl load --env GITHUB_PERSONAL_ACCESS_TOKEN=ghp_... "
    "ghcr.io/github/github-mcp-server": GITHUB_IMAGE,
    "mcpctl load --name github-ro --env "
    "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_... ghcr.io/github/github-mcp-server "
    "-- stdio --read-only": GITHUB_IMAGE,
    "mcpctl search weather": REGISTRY,
    "mcpctl search weather --limit 50 --cursor CURSOR": REGISTRY,
    "mcpctl catalog": REGISTRY,
    "mcpctl info io.github.owner/server": REGISTRY,
    "mcpctl info io.github.owner/server 1.2.0": REGISTRY,
    "mcpctl load --source local memory":
        "npx fetches @modelcontextprotocol/server-memory from npm (not a "
        "test peer)",
    "mcpctl docker-catalog": DOCKER_CATALOG,
    "mcpctl docker-catalog git": DOCKER_CATALOG,
    "mcpctl load --source docker github --dry-run": DOCKER_CATALOG,
    "mcpctl load --source docker github --secret-env "
    "GITHUB_PERSONAL_ACCESS_TOKEN=gh": DOCKER_CATALOG,
    "mcpctl load io.github.owner/server@1.2.0": REGISTRY,
    "mcpctl gateway start github fetch":
        "docker mcp gateway run, which pulls its servers' images",
    "mcpctl gateway stop": "stops the gateway the line before started",
    "mcpctl load --env 'GITHUB_PERSONAL_ACCESS_TOKEN=$(secret.github_token)' "
    "ghcr.io/github/github-mcp-server": GITHUB_IMAGE,
    "mcpctl load https://mcp.example.com/mcp": EXAMPLE_COM,
    "mcpctl auth status mcp-example-com": OAUTH,
    "mcpctl auth login mcp-example-com": OAUTH,
    "mcpctl auth logout mcp-example-com": OAUTH,
    "mcpctl approve 3": ASK,
    "mcpctl approve --session 5": ASK,
    "mcpctl approve --always 6": ASK,
    "mcpctl deny 4": ASK,
    "mcpctl policy forget default fs__write_file":
        "forgets an --always approval, which the line before it would give",
}

# What an example that is run does besides exiting 0: its standard input,
# and what its standard output is (as the README's comment says).
EXPECTED = {
    "mcpctl call server-everything echo message=hi": {"out": "Echo: hi\n"},
    "mcpctl call server-everything get-sum --a 2 --b 3": {
        "out": "The sum of 2 and 3 is 5.\n"},
    # The value comes on standard input, never from argv.
    "mcpctl secret set github_token": {"input": "a-value\n"},
}

# It follows the log until interrupted: it runs until the test stops it.
FOLLOWS = {"mcpctl logs -f server-everything"}

# The files the import examples read: a client's own entries, which a user
# has before mcpd (client-config, run before them, adds mcpd's).
EVERYTHING = {"command": "npx",
              "args": ["-y", "@modelcontextprotocol/server-everything"]}
CLIENT_FILES = {
    ".config/Claude/claude_desktop_config.json":
        {"mcpServers": {"server-everything": EVERYTHING}},
    ".cursor/mcp.json": {"mcpServers": {"server-everything": EVERYTHING}},
    ".claude.json": {"mcpServers": {"server-everything": EVERYTHING}},
}
VSCODE = """{
  // VS Code's own format: comments and trailing commas
  "servers": {
    "server-everything": {"command": "npx", "args": ["-y",
      "@modelcontextprotocol/server-everything",],},
  },
}
"""


def blocks():
    """The README's fenced code blocks, each a list of lines, continuation
    lines joined."""
    out, block = [], None
    for line in README.read_text().splitlines():
        if line.lstrip().startswith("```"):
            if block is None:
                block = []
            else:
                out.append(block)
                block = None
        elif block is not None:
            if block and block[-1].endswith("\\"):
                block[-1] = block[-1][:-1] + " " + line.strip()
            else:
                block.append(line.strip())
    assert block is None, "README.md has a fenced block that never ends"
    return out


def words(line):
    return shlex.split(line, comments=True)


def examples():
    """(words, line) of each mcpctl or mcpd line, in README order."""
    found = []
    for block in blocks():
        for line in block:
            if line.split(maxsplit=1)[:1] in (["mcpctl"], ["mcpd"]):
                found.append((shlex.join(words(line)), line))
    return found


def no_network():
    """A preexec_fn: mcpd gets a network namespace of its own (no
    interface but a loopback that is down)."""
    libc = ctypes.CDLL(None, use_errno=True)

    def unshare():
        if libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET)")
    return unshare


def test_the_first_screen_is_two_commands():
    assert [words(line) for line in blocks()[0]] == \
        [["make", "run"], ["make", "check"]]


def test_what_is_listed_is_in_the_readme():
    found = {w for w, _ in examples()}
    assert found, "no mcpctl example found in README.md"
    # A list says something of a README example: it must be there.
    assert sorted(set(NOT_RUN) - found) == []
    assert sorted((set(EXPECTED) | FOLLOWS) - found) == []


def test_readme_examples_run(mcpd_factory, tmp_path):
    d = mcpd_factory(preexec_fn=no_network())
    assert os.readlink(f"/proc/{d.pid}/ns/net") != \
        os.readlink("/proc/self/ns/net")
    home = tmp_path / "home"
    work = tmp_path / "work"
    for path in (home, work / ".vscode"):
        path.mkdir(parents=True)
    for name, content in CLIENT_FILES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(json.dumps(content, indent=2) + "\n")
    (work / ".vscode" / "mcp.json").write_text(VSCODE)
    # A record of the registry's shape, as a publisher's server.json.
    (work / "server.json").write_text(json.dumps(everything_record()))
    # npx finds server-everything in the project of the server's working
    # directory: mcpctl's, or an imported file's (~/.cursor, say).
    for project in (work, home):
        (project / "node_modules").symlink_to(PEERS / "node_modules")
        (project / "package.json").write_text(
            (PEERS / "package.json").read_text())
    env = dict(d.env, HOME=str(home), MCPD_SOCKET=str(d.sock),
               PATH=f"{BUILD}:{d.env['PATH']}")

    ran = []
    for key, line in examples():
        if key in NOT_RUN:
            continue
        want = EXPECTED.get(key, {})
        if key in FOLLOWS:
            follow(line, env, work)
        else:
            p = subprocess.run(["bash", "-c", line], cwd=work, env=env,
                               input=want.get("input", ""),
                               capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, (line, p.stdout, p.stderr)
            if "out" in want:
                assert p.stdout == want["out"], (line, p.stdout, p.stderr)
        ran.append(key)
    assert ran, "no README example was run"
    # The migrate example took out the entry that import brought in.
    assert list(json.loads((home / ".claude.json").read_text())
                ["mcpServers"]) == ["mcpd"]
    assert (home / ".gemini" / "settings.json").is_file()


def follow(line, env, cwd):
    """Runs a following example: it prints what there is and keeps
    running until an interrupt (Ctrl-C) ends it."""
    p = subprocess.Popen(["bash", "-c", "exec " + line], cwd=cwd, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        assert first, (line, p.wait(timeout=10), p.stderr.read())
        # Having printed, it does not end by itself.
        time.sleep(0.2)
        assert p.poll() is None, (line, p.returncode, p.stderr.read())
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=10) == -signal.SIGINT, (line, p.stderr.read())
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
