# SPDX-License-Identifier: ISC
"""The Docker MCP Gateway as one of mcpd's servers (issue 13.5): `mcpctl
gateway start SERVER...` runs `docker mcp gateway run --servers ...
--transport streaming --port P` with a port and a bearer token of mcpd's,
and reaches it over Streamable HTTP on loopback with that token; its server
set is saved and read back; `mcpctl gateway stop` ends it and forgets it.

The real plugin (docker-mcp) cannot be installed on the test machine (no
download is reachable), so a stand-in, tests/integration/docker-mcp-standin,
is placed as the docker CLI plugin $DOCKER_CONFIG/cli-plugins/docker-mcp of
a test DOCKER_CONFIG. The docker CLI itself runs it, as it runs the real
one; it serves MCP over Streamable HTTP on the port it is given, refuses
requests without "Authorization: Bearer $MCP_GATEWAY_AUTH_TOKEN" (the real
gateway's check), and logs each start to $DOCKER_CONFIG/standin.log."""

import hashlib
import json
import os
import shutil
import urllib.error
import urllib.request

import pytest

from conftest import (CONFLICT, NOT_FOUND, REPO, STORAGE, UNAVAILABLE,
                      all_procs, cmdline, is_alive, listening_ports, poll,
                      proc_stat, wait_gone)

CTL_DAEMON_ERROR = 1
STANDIN = REPO / "tests" / "integration" / "docker-mcp-standin"


@pytest.fixture
def docker_config(tmp_path):
    """A DOCKER_CONFIG whose cli-plugins/docker-mcp is the stand-in."""
    if shutil.which("docker") is None:
        pytest.fail("the gateway tests need the docker CLI (docker.io)")
    conf = tmp_path / "docker-config"
    (conf / "cli-plugins").mkdir(parents=True)
    plugin = conf / "cli-plugins" / "docker-mcp"
    shutil.copyfile(STANDIN, plugin)
    plugin.chmod(0o755)
    return conf


def starts(conf):
    """The stand-in's log: one entry per `docker mcp gateway run`."""
    log = conf / "standin.log"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def environ(pid):
    with open(f"/proc/{pid}/environ", "rb") as f:
        return dict(e.decode().split("=", 1) for e in f.read().split(b"\0")
                    if b"=" in e)


def saved_rows(d):
    path = d.state / "enabled.json"
    if not path.exists():
        return []
    return json.loads(path.read_text())["agents"].get("default", [])


def post_without_token(port):
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", method="POST",
        data=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
        headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req, timeout=10)
    except urllib.error.HTTPError as e:
        return e.code
    return 200


def test_start_call_stop(mcpd_factory, docker_config):
    d = mcpd_factory(env={"DOCKER_CONFIG": str(docker_config)})
    r = d.ctl("gateway", "start", "github", "fetch", is_json=False,
              timeout=120)
    assert r.rc == 0, r
    out = r.out.splitlines()
    row = d.row("docker-gateway")
    assert out == [
        f"loaded docker-gateway (id {row['id']}): 2 tools, protocol "
        f"2025-11-25, generation 1",
        "endpoint: docker mcp gateway run --servers github,fetch "
        "--transport streaming",
        "saved: mcpd starts it again with these servers after a restart"]
    assert row["state"] == "ready" and row["transport"] == "streamable-http"
    assert row["mode"] == "gateway"

    # docker ran the plugin with mcpd's port; the token came in its
    # environment only. The list's pid is the docker CLI mcpd ran, which
    # runs the plugin.
    [start] = starts(docker_config)
    assert proc_stat(start["pid"])[1] == row["pid"]
    assert cmdline(row["pid"])[1:3] == ["mcp", "gateway"]
    port = start["port"]
    assert start["argv"][1:] == ["mcp", "gateway", "run", "--servers",
                                 "github,fetch", "--transport", "streaming",
                                 "--port", str(port)]
    assert start["has_token"] is True
    token = environ(start["pid"])["MCP_GATEWAY_AUTH_TOKEN"]
    assert len(token) == 64 and int(token, 16) >= 0
    assert hashlib.sha256(token.encode()).hexdigest() == \
        start["token_sha256"]
    for pid in all_procs():
        assert token not in " ".join(cmdline(pid) or []), cmdline(pid)
    assert token not in (d.state / "enabled.json").read_text()
    assert token not in d.read_stderr()
    # The gateway refuses a request without the token: mcpd sent it.
    assert port in listening_ports()
    assert post_without_token(port) == 401

    tools = sorted(t["name"] for t in d.tools("docker-gateway"))
    assert tools == ["fetch__whoami", "github__whoami"]
    result = d.call("docker-gateway", "github__whoami")
    assert result["content"][0]["text"] == (
        f"github via stand-in gateway pid {start['pid']}")

    # Its servers are saved.
    [saved] = saved_rows(d)
    assert saved["mode"] == "gateway" and saved["name"] == "docker-gateway"
    assert saved["params"] == {"gateway": ["github", "fetch"],
                               "name": "docker-gateway"}

    r = d.ctl("gateway", "stop", is_json=False)
    assert r.rc == 0, r
    assert r.out.strip() == (
        f"stopped the Docker MCP Gateway docker-gateway (id {row['id']}): "
        "its process, port and token are gone; its saved row was removed")
    wait_gone([start["pid"]], what="the gateway process")
    poll(lambda: port not in listening_ports(), timeout=10,
         what=f"port {port} to be closed")
    assert d.list() == [] and saved_rows(d) == []


def test_restart_restores_the_servers_with_a_new_token(mcpd_factory,
                                                      docker_config):
    env = {"DOCKER_CONFIG": str(docker_config)}
    d = mcpd_factory(env=env)
    r = d.ctl("gateway", "start", "github", timeout=120)
    assert r.rc == 0, r
    assert d.stop() == []
    d2 = mcpd_factory(env=env, base=d.base)
    row = d2.wait_row("docker-gateway", lambda r: r["state"] == "ready",
                      timeout=60)
    assert row["endpoint"] == ("docker mcp gateway run --servers github "
                               "--transport streaming")
    first, second = starts(docker_config)
    assert second["servers"] == ["github"]
    assert second["token_sha256"] != first["token_sha256"]
    assert not is_alive(first["pid"])
    r = d2.ctl("gateway", "stop")
    assert r.rc == 0, r


def test_start_again_with_other_servers(mcpd_factory, docker_config):
    d = mcpd_factory(env={"DOCKER_CONFIG": str(docker_config)})
    assert d.ctl("gateway", "start", "github", timeout=120).rc == 0
    r = d.ctl("gateway", "start", "github", "fetch", is_json=False,
              timeout=120)
    assert r.rc == 0, r
    assert r.out.splitlines()[0].startswith(
        "restarted with new settings docker-gateway (id ")
    first, second = starts(docker_config)
    assert second["servers"] == ["github", "fetch"]
    wait_gone([first["pid"]], what="the first gateway process")
    assert d.row("docker-gateway")["tools"] == 2
    assert saved_rows(d)[0]["params"]["gateway"] == ["github", "fetch"]
    # The same servers again change nothing.
    r = d.ctl("gateway", "start", "github", "fetch", timeout=120)
    assert r.rc == 0 and r.json["was_loaded"] is True, r
    assert len(starts(docker_config)) == 2


def test_a_failed_save_says_what_is_saved(mcpd_factory, docker_config):
    """The store cannot be written (a directory where its temporary file
    goes): the start fails as storage, saying which servers are saved."""
    d = mcpd_factory(env={"DOCKER_CONFIG": str(docker_config)})
    assert d.ctl("gateway", "start", "github", timeout=120).rc == 0
    (d.state / "enabled.json.tmp").mkdir()
    r = d.ctl("gateway", "start", "github", "fetch", timeout=120)
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == STORAGE, r
    assert r.json["message"].startswith(
        "the Docker MCP Gateway docker-gateway cannot be saved: "), r
    assert r.json["message"].endswith(
        "; saved now: github; it keeps running with its old servers"), r
    assert r.json["data"]["saved"] == "github"
    assert r.json["data"]["asked"] == ["github", "fetch"]
    # It runs on with the servers it had; only one gateway was started.
    assert d.row("docker-gateway")["tools"] == 1
    assert len(starts(docker_config)) == 1

    # A first start that cannot be saved starts nothing.
    r = d.ctl("gateway", "start", "--name", "gw2", "fetch", timeout=120)
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == STORAGE, r
    assert r.json["message"].endswith(
        "; saved now: nothing (no row of it is saved); nothing was "
        "started"), r
    assert d.row("gw2") is None


def test_missing_plugin_is_named(mcpd_factory, tmp_path):
    empty = tmp_path / "docker-config"
    (empty / "cli-plugins").mkdir(parents=True)
    d = mcpd_factory(env={"DOCKER_CONFIG": str(empty)})
    r = d.ctl("gateway", "start", "github")
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == UNAVAILABLE, r
    assert r.json["data"]["what"] == "docker-mcp-plugin"
    assert r.json["message"].startswith(
        "the Docker MCP Gateway needs the docker CLI plugin docker-mcp (the "
        "'docker mcp' command), and `docker mcp version` failed: docker "
        "exited with status 1: "), r
    assert r.json["message"].endswith(
        "install the plugin as ~/.docker/cli-plugins/docker-mcp "
        "(https://github.com/docker/mcp-gateway)"), r
    assert d.list() == [] and saved_rows(d) == []


def test_stop_without_a_gateway(mcpd_factory, docker_config):
    d = mcpd_factory(env={"DOCKER_CONFIG": str(docker_config)})
    r = d.ctl("gateway", "stop")
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == NOT_FOUND, r
    assert r.json["message"] == (
        "no Docker MCP Gateway called docker-gateway runs or is saved; "
        "start one with: mcpctl gateway start SERVER...")
    d.load_testserver("docker-gateway")
    r = d.ctl("gateway", "stop")
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == CONFLICT, r
    assert d.row("docker-gateway")["state"] == "ready"


def test_bad_server_names_are_refused(mcpd_factory, docker_config):
    d = mcpd_factory(env={"DOCKER_CONFIG": str(docker_config)})
    r = d.ctl("gateway", "start", "git,hub")
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == -32602, r
    assert r.json["data"]["field"] == "servers"
    assert starts(docker_config) == []
