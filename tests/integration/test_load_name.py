# SPDX-License-Identifier: ISC
"""mcpctl load by name (issue 13.4): registry records resolved to what mcpd
runs (npm: npx -y PKG@VERSION; pypi: uvx PKG==VERSION; oci: the image; an
https remote), the plan printed first, values asked for by name.

The records come from a file (--server-json), from a local HTTPS registry
(mcpd --registry URL --registry-allow-local --ca-file CA) through
mcpd/registry-info, and from the catalog bundled with mcpd.

The npm record names @modelcontextprotocol/server-everything at the version
tests/peers installs, and the load runs in tests/peers with npm offline and
a fresh cache: npx finds the installed package, and nothing is downloaded
(npm would fail offline if it had to)."""

import http.server
import json
import shutil
import ssl
import subprocess
import threading
import urllib.parse

import pytest

from conftest import EVERYTHING_JS, PEERS, REPO, cmdline

CTL_DAEMON_ERROR = 1
CTL_USAGE = 2
FIXTURES = REPO / "tests" / "unit" / "fixtures" / "resolve"
EVERYTHING_VERSION = json.loads(
    (EVERYTHING_JS.parent.parent / "package.json").read_text())["version"]
EVERYTHING_NAME = "io.github.modelcontextprotocol/server-everything"


def everything_record(version=EVERYTHING_VERSION):
    """A ServerResponse of the registry's shape for server-everything."""
    return {
        "server": {
            "name": EVERYTHING_NAME,
            "description": "Exercises every part of the MCP protocol",
            "version": version,
            "packages": [{
                "registryType": "npm",
                "registryBaseUrl": "https://registry.npmjs.org",
                "identifier": "@modelcontextprotocol/server-everything",
                "version": version,
                "transport": {"type": "stdio"},
                "packageArguments": [{"type": "positional",
                                      "value": "stdio"}],
            }],
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active", "isLatest": True,
            "publishedAt": "2026-09-01T10:00:00Z",
            "updatedAt": "2026-09-01T10:00:00Z"}},
    }


def offline_npm(tmp_path):
    """--env flags that keep npm from fetching anything."""
    cache = tmp_path / "npm-cache"
    cache.mkdir()
    return ["--env", "npm_config_offline=true",
            "--env", f"npm_config_cache={cache}",
            "--env", "npm_config_update_notifier=false"]


def everything_pids(d, name):
    row = d.row(name)
    assert row is not None and isinstance(row.get("pid"), int), row
    return row["pid"]


# --------------------------------------------------------------------------
# Records from a file

def test_npm_record_runs_the_installed_package(mcpd, tmp_path):
    rec = tmp_path / "server.json"
    rec.write_text(json.dumps(everything_record()))
    r = mcpd.ctl("load", "--server-json", rec, "--no-persist",
                 *offline_npm(tmp_path), is_json=False, cwd=PEERS,
                 timeout=120)
    assert r.rc == 0, r
    out = r.out.splitlines()
    assert out[0] == (f"{EVERYTHING_NAME}: record of the file {rec}")
    assert out[1] == "will run, as server server-everything:"
    assert out[2] == ("  command    npx -y @modelcontextprotocol/"
                      f"server-everything@{EVERYTHING_VERSION} stdio")
    assert out[3] == f"  in         {PEERS}"
    assert out[-3].startswith("loaded server-everything (id ")
    row = mcpd.wait_row("server-everything",
                        lambda r: r["state"] == "ready")
    assert row["endpoint"] == ("npx -y @modelcontextprotocol/server-"
                               f"everything@{EVERYTHING_VERSION} stdio")
    # The installed package runs: node on tests/peers' copy of it.
    pid = everything_pids(mcpd, "server-everything")
    found = [p for p in [pid] + list(mcpd.seen_pids)
             if any("server-everything" in a for a in (cmdline(p) or []))]
    assert found, [(p, cmdline(p)) for p in mcpd.seen_pids]
    names = {t["name"] for t in mcpd.tools("server-everything")}
    assert "echo" in names, names
    result = mcpd.call("server-everything", "echo", {"message": "hi"})
    assert result["content"][0]["text"] == "Echo: hi"


def test_required_values_of_a_record_are_named(mcpd):
    r = mcpd.ctl("load", "--server-json", FIXTURES / "npm.json",
                 "--dry-run", is_json=False)
    assert r.rc == CTL_USAGE, r
    assert r.err.splitlines()[:3] == [
        "mcpctl: load: server-everything needs values mcpctl does not "
        "guess:",
        "  env API_KEY (secret): the service's key",
        "give an env with --env NAME=VALUE, or --secret-env NAME=SECRET for "
        "a secret 'mcpctl secret set' stored; a header with --header "
        "NAME=VALUE"]
    r = mcpd.ctl("load", "--server-json", FIXTURES / "npm.json",
                 "--dry-run", "--secret-env", "API_KEY=svc.key")
    assert r.rc == 0, r
    assert r.json["kind"] == "npm"
    assert r.json["params"]["env"] == {
        "API_KEY": "$(secret.svc.key)", "ENDPOINT":
        "https://api.example.com/v1", "LOG_LEVEL": "info", "MODE": "fixed"}
    assert mcpd.list() == []


def test_pypi_needs_uvx(mcpd, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = dict(mcpd.env, PATH=str(empty))
    r = mcpd.ctl("load", "--server-json", FIXTURES / "pypi.json",
                 "--dry-run", is_json=False, env=env)
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.err.strip() == (
        "mcpctl: load: the pypi package mcp-weather runs with uvx, which is "
        "not on PATH: install uv (https://docs.astral.sh/uv/), or load "
        "another way (mcpctl load -- CMD)")
    # With a uvx on PATH, the command is uvx PKG==VERSION.
    uvx = empty / "uvx"
    uvx.write_text("#!/bin/sh\nexit 1\n")
    uvx.chmod(0o755)
    r = mcpd.ctl("load", "--server-json", FIXTURES / "pypi.json",
                 "--dry-run", "--env", "WEATHER_TOKEN=t", is_json=False,
                 env=env)
    assert r.rc == 0, r
    assert r.out.splitlines()[2] == (
        "  command    uvx mcp-weather==1.4.0 --units=metric --verbose")


def test_oci_record_and_its_remote(mcpd):
    r = mcpd.ctl("load", "--server-json", FIXTURES / "oci.json",
                 "--dry-run", "--env", "GITHUB_PERSONAL_ACCESS_TOKEN=t")
    assert r.rc == 0, r
    assert r.json["params"] == {
        "target": "ghcr.io/github/github-mcp-server:0.9.0",
        "args": ["stdio", "--read-only"], "volumes": ["/tmp/gh:/data"],
        "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "(given, not shown)",
                "GITHUB_TOOLSETS": "repos,issues"},
        "name": "github-mcp-server"}
    r = mcpd.ctl("load", "--server-json", FIXTURES / "oci.json",
                 "--dry-run", "--remote", "--header",
                 "Authorization=Bearer t")
    assert r.rc == 0, r
    assert r.json["kind"] == "remote"
    assert r.json["params"]["target"] == "https://api.githubcopilot.com/mcp/"
    # --env goes with a package, not a remote.
    r = mcpd.ctl("load", "--server-json", FIXTURES / "oci.json",
                 "--dry-run", "--remote", "--env", "A=b", is_json=False)
    assert r.rc == CTL_USAGE, r
    assert "--env goes with commands and images; this resolves to a " \
        "remote" in r.err


def test_plain_http_remotes_are_refused(mcpd):
    r = mcpd.ctl("load", "--server-json", FIXTURES / "http-remote.json",
                 "--dry-run", is_json=False)
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.err.strip() == (
        "mcpctl: load: com.example/plain's remote http://mcp.example.com/"
        "mcp is not https: mcpd loads catalog and registry remotes over "
        "HTTPS only")


def test_existing_forms_keep_their_meaning(mcpd):
    """A command word, an image reference with a registry host and a URL
    are still what they were: only reversed-domain names are registry
    names (unit-tested in test-resolve too)."""
    r = mcpd.ctl("load", "--dry-run", "ghcr.io/github/github-mcp-server",
                 is_json=False)
    assert r.rc == CTL_USAGE, r
    assert "--dry-run, --remote and --catalog go with a catalog or " \
        "registry NAME" in r.err
    r = mcpd.ctl("load", "--source", "docker", "--", "true", is_json=False)
    assert r.rc == CTL_USAGE, r
    assert "--source needs a NAME, not a command" in r.err


# --------------------------------------------------------------------------
# Registry names through mcpd/registry-info

# Options of mcpd for a local registry besides --registry and --ca-file.
REGISTRY_LOCAL_OPTS = ["--registry-allow-local"]


@pytest.fixture
def registry(tmp_path):
    """A local HTTPS registry (a self-signed certificate for 127.0.0.1)
    answering GET /v0.1/servers/{name}/versions/{version} from records:
    {(name, version): ServerResponse}; "latest" is the record with
    isLatest. Yields (url, ca file, records, requests seen)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.fail("the registry tests need the openssl CLI")
    key, cert = tmp_path / "reg.key", tmp_path / "reg.crt"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                    key, "-out", cert, "-days", "2", "-subj",
                    "/CN=mcpd-test-registry", "-addext",
                    "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    records, seen = {}, []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            seen.append(self.path)
            parts = self.path.split("/")
            rec = None
            if len(parts) == 6 and parts[1:3] == ["v0.1", "servers"] and \
                    parts[4] == "versions":
                name = urllib.parse.unquote(parts[3])
                version = urllib.parse.unquote(parts[5])
                for (n, v), r in records.items():
                    latest = r["_meta"][
                        "io.modelcontextprotocol.registry/official"][
                        "isLatest"]
                    if n == name and (v == version or
                                      (version == "latest" and latest)):
                        rec = r
            body = json.dumps(rec if rec is not None else
                              {"error": "Server not found"}).encode()
            self.send_response(200 if rec is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield (f"https://127.0.0.1:{httpd.server_address[1]}", cert,
               records, seen)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_registry_name_npm_runs_the_installed_package(
        mcpd_factory, registry, tmp_path):
    url, ca, records, seen = registry
    older = everything_record("2026.1.1")
    older["_meta"]["io.modelcontextprotocol.registry/official"][
        "isLatest"] = False
    records[(EVERYTHING_NAME, EVERYTHING_VERSION)] = everything_record()
    records[(EVERYTHING_NAME, "2026.1.1")] = older
    d = mcpd_factory("--registry", url, "--ca-file", ca,
                     *REGISTRY_LOCAL_OPTS)
    # An explicit version asks for that version.
    r = d.ctl("load", f"{EVERYTHING_NAME}@2026.1.1", "--dry-run")
    assert r.rc == 0, r
    assert r.json["params"]["command"] == [
        "npx", "-y", "@modelcontextprotocol/server-everything@2026.1.1",
        "stdio"]
    assert r.json["origin"] == f"registry:official:{EVERYTHING_NAME}@2026.1.1"
    # Without one, the latest; it runs tests/peers' copy, offline.
    r = d.ctl("load", EVERYTHING_NAME, "--no-persist",
              *offline_npm(tmp_path), is_json=False, cwd=PEERS, timeout=120)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == (
        f"{EVERYTHING_NAME}@{EVERYTHING_VERSION}: record of the official "
        f"MCP Registry")
    row = d.wait_row("server-everything", lambda r: r["state"] == "ready")
    assert row["endpoint"] == ("npx -y @modelcontextprotocol/server-"
                               f"everything@{EVERYTHING_VERSION} stdio")
    assert any("/versions/latest" in p for p in seen), seen
    result = d.call("server-everything", "echo", {"message": "hi"})
    assert result["content"][0]["text"] == "Echo: hi"


def test_registry_name_not_in_the_registry(mcpd_factory, registry):
    url, ca, records, seen = registry
    d = mcpd_factory("--registry", url, "--ca-file", ca,
                     *REGISTRY_LOCAL_OPTS)
    r = d.ctl("load", "io.github.nobody/nothing")
    assert r.rc == CTL_DAEMON_ERROR, r
    assert d.list() == []


def test_local_catalog_name(mcpd):
    """A name of the catalog bundled with mcpd (data/catalog.json)
    resolves to its npm package, and the plan says where it came from."""
    doc = json.loads((REPO / "data" / "catalog.json").read_text())
    recs = doc if isinstance(doc, list) else doc.get("servers", [])
    rec = next(r["server"] for r in recs if r["server"]["name"] ==
               EVERYTHING_NAME)
    version = rec["packages"][0]["version"]
    r = mcpd.ctl("load", "--source", "local", EVERYTHING_NAME, "--dry-run")
    assert r.rc == 0, r
    assert r.json["params"]["command"][:3] == [
        "npx", "-y", f"@modelcontextprotocol/server-everything@{version}"], r
    assert r.json["origin"] == f"registry:local:{EVERYTHING_NAME}@{version}"
    r = mcpd.ctl("load", "--source", "local", EVERYTHING_NAME, "--dry-run",
                 is_json=False)
    assert r.rc == 0, r
    assert r.out.splitlines()[0] == (
        f"{EVERYTHING_NAME}@{version}: record of the catalog bundled with "
        "mcpd"), r.out
    assert mcpd.list() == []
