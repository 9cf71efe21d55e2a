# SPDX-License-Identifier: ISC
"""Docker's MCP catalog (issue 13.3 and 13.4): `mcpctl docker-catalog` and
`mcpctl load --source docker NAME` against catalog images on the real
engine.

No registry is reachable, so each catalog image is made here with `docker
import` from local files, in the layout mcpd reads from a filesystem image:
/catalog.json holding the document docker/mcp-gateway publishes as its
catalog artifact ({"title", "servers": [{"type", "image", "snapshot":
{"server": ...}}]}, doc/docker-catalog.md). The definitions point at the
test images of tests/images, so a load by name runs a real container.

One fake docker is used, in test_missing_catalog_is_pulled: a wrapper that
answers `docker pull` by importing a catalog image (a registry cannot be
reached here, DESIGN.md section 9); every other docker command is the real
one."""

import io
import json
import os
import subprocess
import tarfile
import time
import uuid

import pytest

from conftest import (DOCKER, INVALID_PARAMS, MCPCTL, NOT_FOUND, REPO,
                      TESTSERVER_TOOLS, UNAVAILABLE, poll)

CTL_DAEMON_ERROR = 1
CTL_USAGE = 2

# Every definition kind mcpd reads, and two it cannot use.
CATALOG = {
    "title": "mcpd test catalog",
    "servers": [
        {"type": "image", "image": "mcpd-test/stdio:1",
         "snapshot": {"server": {
             "name": "ts-stdio", "type": "server",
             "image": "mcpd-test/stdio:1",
             "title": "Test server (stdio)",
             "description": "the static test server over stdio",
             "command": ["--tools", "2"],
             "env": [{"name": "TS_MODE", "value": "plain"},
                     {"name": "TS_HOST", "value": "{{ts-stdio.host}}"}],
             "secrets": [{"name": "ts-stdio.token", "env": "TS_TOKEN"}],
             "config": [{"name": "ts-stdio", "type": "object",
                         "properties": {"host": {"type": "string"}}}],
             "metadata": {"category": "testing", "tags": ["stdio"]}}}},
        {"type": "image", "image": "mcpd-test/http:1",
         "snapshot": {"server": {
             "name": "ts-http", "type": "server",
             "image": "mcpd-test/http:1",
             "title": "Test server (HTTP)",
             "description": "the static test server over Streamable HTTP",
             "metadata": {"category": "testing", "tags": ["http"]}}}},
        {"type": "remote", "endpoint": "https://mcp.example.com/mcp",
         "snapshot": {"server": {
             "name": "example-remote", "type": "remote",
             "title": "Example remote",
             "remote": {"url": "https://mcp.example.com/mcp",
                        "transport_type": "streamable-http",
                        "headers": {
                            "Authorization": "Bearer ${EXAMPLE_TOKEN}"}},
             "secrets": [{"name": "example-remote.token",
                          "env": "EXAMPLE_TOKEN"}]}}},
        {"type": "image", "image": "mcp/notes:1",
         "snapshot": {"server": {"name": "notes", "type": "poci",
                                 "image": "mcp/notes:1",
                                 "title": "Notes tools"}}},
        {"type": "registry",
         "source": "https://registry.modelcontextprotocol.io/v0/servers/x"},
    ],
}


def docker(*args, timeout=120, input=None):
    return subprocess.run([DOCKER] + [str(a) for a in args], input=input,
                          capture_output=True, timeout=timeout)


def rootfs_tar(files):
    """A tar of files {path: bytes}, owned by root, as docker import takes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module", autouse=True)
def engine(docker_images):
    return docker_images


@pytest.fixture
def catalogs():
    """make(files, ref=None) -> ref: an image made with docker import from
    files {path: bytes}; every image made is removed at teardown."""
    made = []
    base = f"mcpd-test-dcat/catalog-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def make(files, ref=None):
        ref = ref or f"{base}:{len(made)}"
        p = docker("import", "-", ref, input=rootfs_tar(files))
        assert p.returncode == 0, p.stderr
        made.append(ref)
        return ref
    yield make
    for ref in made:
        docker("rmi", "-f", ref)


def catalog_file(doc):
    return {"catalog.json": json.dumps(doc, indent=2).encode()}


def image_id(ref):
    p = docker("image", "inspect", "--format", "{{.Id}}", ref)
    assert p.returncode == 0, p.stderr
    return p.stdout.decode().strip()


@pytest.fixture
def start(container_guard, mcpd_factory):
    """An mcpd whose containers are removed after it stopped."""
    def go(*args, env=None, base=None):
        d = mcpd_factory(*args, env=env, base=base)
        container_guard.append(d.rpc.result("mcpd/status")["did"])
        return d
    return go


def ctl_env(d, catalog):
    return dict(d.env, MCPD_DOCKER_CATALOG=catalog)


# --------------------------------------------------------------------------
# Reading the catalog

def test_catalog_lists_definitions_and_queries_them(start, catalogs):
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    r = d.ctl("docker-catalog", env=ctl_env(d, ref))
    assert r.rc == 0, r
    got = r.json
    assert got["catalog"] == ref
    assert got["image"] == image_id(ref)
    assert got["title"] == "mcpd test catalog"
    # Definitions, sorted by name: the registry entry without a snapshot
    # is counted as skipped, not listed.
    assert [s["name"] for s in got["servers"]] == [
        "example-remote", "notes", "ts-http", "ts-stdio"]
    assert got["count"] == 4 and got["skipped"] == 1
    ts = got["servers"][3]
    assert ts["image"] == "mcpd-test/stdio:1"
    assert ts["secrets"] == [{"name": "ts-stdio.token", "env": "TS_TOKEN"}]
    # Nothing was loaded by reading it.
    assert d.list() == []

    # A query: name, title, description, category or tag, any case.
    r = d.ctl("docker-catalog", "HTTP", env=ctl_env(d, ref))
    assert r.rc == 0, r
    assert [s["name"] for s in r.json["servers"]] == ["ts-http"]
    assert r.json["count"] == 4
    r = d.ctl("docker-catalog", "testing", env=ctl_env(d, ref))
    assert [s["name"] for s in r.json["servers"]] == ["ts-http", "ts-stdio"]

    # The human listing says what the numbers count.
    r = d.ctl("docker-catalog", "testing", is_json=False,
              env=ctl_env(d, ref))
    assert r.rc == 0, r
    lines = r.out.splitlines()
    assert lines[0] == (f'Docker MCP catalog {ref} (image '
                        f'{image_id(ref)[:19]}): "mcpd test catalog"')
    assert lines[1] == ('2 of 4 server definitions match "testing" '
                        '(1 more that mcpd cannot use); none of them runs '
                        'until it is loaded')
    assert lines[2].split() == ["NAME", "TYPE", "RUNS", "TITLE"]
    assert lines[3].split()[:3] == ["ts-http", "image", "mcpd-test/http:1"]
    assert lines[4].split()[:3] == ["ts-stdio", "image",
                                    "mcpd-test/stdio:1"]
    assert lines[5] == ("load one with: mcpctl load --source docker NAME "
                        "[--dry-run]")


def test_catalog_option_and_daemon_default(start, catalogs):
    """--catalog beats MCPD_DOCKER_CATALOG; mcpd's own
    MCPD_DOCKER_CATALOG is the default when the client names none."""
    ref1 = catalogs(catalog_file(CATALOG))
    ref2 = catalogs(catalog_file({"title": "two", "servers": []}))
    d = start(env={"MCPD_DOCKER_CATALOG": ref2})
    plain = {k: v for k, v in d.env.items() if k != "MCPD_DOCKER_CATALOG"}
    r = d.ctl("docker-catalog", env=plain)
    assert r.rc == 0 and r.json["catalog"] == ref2, r
    assert r.json["count"] == 0 and r.json["servers"] == []
    r = d.ctl("docker-catalog", "--catalog", ref1, env=ctl_env(d, ref2))
    assert r.rc == 0 and r.json["catalog"] == ref1, r
    r = d.ctl("docker-catalog", env=ctl_env(d, ref1))
    assert r.rc == 0 and r.json["catalog"] == ref1, r


def test_missing_catalog_is_an_error(start):
    ref = f"mcpd-test-dcat/none-{uuid.uuid4().hex[:8]}:1"
    d = start()
    r = d.ctl("docker-catalog", env=ctl_env(d, ref))
    assert r.rc == CTL_DAEMON_ERROR, r
    # No registry answers here: docker pull fails, and that is said.
    assert r.json["code"] in (NOT_FOUND, UNAVAILABLE), r
    assert r.json["message"].startswith(
        f"the Docker MCP catalog {ref} is not in docker's image cache and "
        f"cannot be pulled: docker exited with status 1: "), r
    assert r.json["data"]["what"] == "docker-catalog"


@pytest.mark.parametrize("files, why", [
    ({"etc/hostname": b"x\n"},
     "it holds no /catalog.json (and is no catalog artifact of type "
     "application/vnd.docker.mcp.catalog.v1+json)"),
    ({"catalog.json": b"registry:\n  time:\n    image: mcp/time\n"},
     "its catalog.json is not JSON (YAML catalogs are not read: mcpd has "
     "no YAML parser; `docker mcp catalog show NAME --format json` writes "
     "the JSON form)"),
    ({"catalog.json": b'{"servers": [1, '},
     "its catalog is not valid JSON: line 1: "),
    ({"catalog.json": b'{"title": "no servers"}'},
     'its catalog has neither "servers" (an array) nor "registry" '
     '(an object)'),
], ids=["no-file", "yaml", "bad-json", "no-servers"])
def test_unreadable_catalog_is_an_error(start, catalogs, files, why):
    ref = catalogs(files)
    d = start()
    r = d.ctl("docker-catalog", env=ctl_env(d, ref))
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.json["code"] == UNAVAILABLE, r
    assert r.json["message"].startswith(
        f"the Docker MCP catalog {ref} cannot be read: {why}"), r


def test_catalog_reference_must_be_an_image(start):
    d = start()
    r = d.ctl("docker-catalog", "--catalog", "--format=x")
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == INVALID_PARAMS, r
    assert r.json["data"]["field"] == "catalog"


def test_missing_catalog_is_pulled(start, catalogs, tmp_path):
    """The catalog is pulled into docker's cache when it is not there. No
    registry is reachable, so a wrapper answers `docker pull REF` with a
    `docker import` of a catalog image under REF (and logs the pull)."""
    src = catalogs(catalog_file(CATALOG))
    tarball = tmp_path / "catalog.tar"
    tarball.write_bytes(rootfs_tar(catalog_file(CATALOG)))
    pulls = tmp_path / "pulls"
    wrapper = tmp_path / "docker"
    wrapper.write_text(
        "#!/bin/sh\n"
        "if [ \"$1\" = pull ]; then\n"
        f"\techo \"$*\" >> '{pulls}'\n"
        "\tfor ref; do :; done\n"
        f"\texec '{DOCKER}' import '{tarball}' \"$ref\"\n"
        "fi\n"
        f"exec '{DOCKER}' \"$@\"\n")
    wrapper.chmod(0o755)
    ref = src.rsplit(":", 1)[0] + ":pulled"
    assert docker("image", "inspect", ref).returncode != 0
    try:
        d = start("--docker", wrapper)
        r = d.ctl("docker-catalog", env=ctl_env(d, ref))
        assert r.rc == 0, r
        assert pulls.read_text() == f"pull --quiet {ref}\n"
        assert r.json["image"] == image_id(ref)
        assert len(r.json["servers"]) == 4
        # Cached now: read again without a pull.
        r = d.ctl("docker-catalog", env=ctl_env(d, ref))
        assert r.rc == 0 and len(r.json["servers"]) == 4, r
        assert pulls.read_text() == f"pull --quiet {ref}\n"
    finally:
        docker("rmi", "-f", ref)


# --------------------------------------------------------------------------
# Loading by name

def test_dry_run_prints_the_plan_and_loads_nothing(start, catalogs):
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    env = ctl_env(d, ref)
    r = d.ctl("load", "--source", "docker", "ts-stdio", "--dry-run",
              "--env", "TS_TOKEN=s3cret", is_json=False, env=env)
    assert r.rc == 0, r
    assert r.out.splitlines() == [
        f"ts-stdio: definition of the Docker MCP catalog {ref} "
        f"(image {image_id(ref)[:19]})",
        "will run, as server ts-stdio:",
        "  image      mcpd-test/stdio:1",
        "  arguments  --tools 2",
        "  env        TS_TOKEN=(given, not shown)",
        "  env        TS_MODE=plain",
        "note: optional env TS_HOST is not set (the catalog fills it from "
        "its configuration {{ts-stdio.host}})",
        "dry run: nothing was loaded",
    ]
    assert "s3cret" not in r.out + r.err
    assert d.list() == []
    # --json: the plan as one JSON value, the user's values masked.
    r = d.ctl("load", "--source", "docker", "ts-stdio", "--dry-run",
              "--env", "TS_TOKEN=s3cret", env=env)
    assert r.rc == 0, r
    assert r.json["kind"] == "image"
    assert r.json["origin"] == (f"docker-catalog:{ref}@{image_id(ref)}"
                                "#ts-stdio")
    assert r.json["params"] == {
        "target": "mcpd-test/stdio:1", "args": ["--tools", "2"],
        "env": {"TS_TOKEN": "(given, not shown)", "TS_MODE": "plain"},
        "name": "ts-stdio"}
    assert d.list() == []


def test_required_values_are_asked_for_by_name(start, catalogs):
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    env = ctl_env(d, ref)
    r = d.ctl("load", "--source", "docker", "ts-stdio", is_json=False,
              env=env)
    assert r.rc == CTL_USAGE, r
    assert r.err.splitlines()[:2] == [
        "mcpctl: load: ts-stdio needs values mcpctl does not guess:",
        "  env TS_TOKEN (secret): ts-stdio.token"]
    r = d.ctl("load", "--source", "docker", "example-remote", "--dry-run",
              is_json=False, env=env)
    assert r.rc == CTL_USAGE, r
    assert r.err.splitlines()[1] == (
        "  header Authorization (secret): Bearer ${EXAMPLE_TOKEN}")
    # Given, the remote's plan is shown (https only; it is not loaded).
    r = d.ctl("load", "--source", "docker", "example-remote", "--dry-run",
              "--header", "Authorization=Bearer t0k", is_json=False,
              env=env)
    assert r.rc == 0, r
    assert r.out.splitlines()[1:5] == [
        "will run, as server example-remote:",
        "  url        https://mcp.example.com/mcp",
        "  transport  streamable-http",
        "  header     Authorization=(given, not shown)"]
    assert d.list() == []


def test_names_mcpd_cannot_load(start, catalogs):
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    env = ctl_env(d, ref)
    r = d.ctl("load", "--source", "docker", "notes", "--dry-run",
              is_json=False, env=env)
    assert r.rc == CTL_DAEMON_ERROR, r
    assert r.err.strip() == (
        "mcpctl: load: notes is a poci definition of the catalog (its "
        "tools run as one-shot containers), not an MCP server mcpd can run")
    r = d.ctl("load", "--source", "docker", "nope", env=env)
    assert r.rc == CTL_DAEMON_ERROR and r.json["code"] == NOT_FOUND, r
    assert r.json["message"] == (
        f"the Docker MCP catalog {ref} has no server definition called "
        f"nope (it has 4; mcpctl docker-catalog lists them)")


def saved_rows(d, agent="default"):
    doc = json.loads((d.state / "enabled.json").read_text())
    return doc["agents"].get(agent, [])


def test_load_by_name_runs_and_restores_what_was_resolved(
        start, catalogs, mcpd_factory):
    """The saved row keeps the resolved image and arguments: after the
    catalog changes under the same reference, a restart restores what was
    loaded, not what the catalog says now."""
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    env = ctl_env(d, ref)
    r = d.ctl("load", "--source", "docker", "ts-stdio", "--env",
              "TS_TOKEN=s3cret", is_json=False, env=env, timeout=180)
    assert r.rc == 0, r
    out = r.out.splitlines()
    # The plan comes first, then the load's own answer.
    assert out[1:4] == ["will run, as server ts-stdio:",
                        "  image      mcpd-test/stdio:1",
                        "  arguments  --tools 2"]
    assert out[-2:] == ["loaded ts-stdio (id %s): %d tools, protocol "
                        "2025-11-25, generation 1" % (
                            d.row("ts-stdio")["id"],
                            len(TESTSERVER_TOOLS) + 2),
                        "endpoint: mcpd-test/stdio:1 --tools 2"]
    row = d.row("ts-stdio")
    assert row["state"] == "ready" and row["tools"] == len(
        TESTSERVER_TOOLS) + 2
    cname = row["container"]["name"]
    info = json.loads(docker("container", "inspect", cname).stdout)[0]
    assert "TS_TOKEN=s3cret" in info["Config"]["Env"]
    assert "TS_MODE=plain" in info["Config"]["Env"]
    assert info["Config"]["Image"] == "mcpd-test/stdio:1"
    saved = saved_rows(d)
    assert len(saved) == 1
    params = saved[0]["params"]
    assert params["target"] == "mcpd-test/stdio:1"
    assert params["args"] == ["--tools", "2"]
    assert params["origin"] == (f"docker-catalog:{ref}@{image_id(ref)}"
                                "#ts-stdio")
    # The value went to the secret store, the row holds a reference.
    assert params["env"]["TS_MODE"].startswith("$(secret.mcpd.")
    assert "s3cret" not in (d.state / "enabled.json").read_text()

    # The catalog changes under the same reference.
    changed = json.loads(json.dumps(CATALOG))
    changed["servers"][0]["snapshot"]["server"]["image"] = "mcpd-test/http:1"
    changed["servers"][0]["snapshot"]["server"]["command"] = []
    catalogs(catalog_file(changed), ref=ref)
    r = d.ctl("load", "--source", "docker", "ts-stdio", "--dry-run",
              "--env", "TS_TOKEN=x", env=env)
    assert r.json["params"]["target"] == "mcpd-test/http:1", r

    problems = d.stop()
    assert problems == [], problems
    d2 = mcpd_factory(base=d.base)
    row = d2.wait_row("ts-stdio", lambda r: r["state"] == "ready",
                      timeout=120)
    assert row["endpoint"] == "mcpd-test/stdio:1 --tools 2"
    assert row["transport"] == "stdio"
    assert row["tools"] == len(TESTSERVER_TOOLS) + 2
    r = d2.ctl("unload", "ts-stdio")
    assert r.rc == 0, r
    poll(lambda: docker("container", "inspect", row["container"]["name"])
         .returncode != 0, timeout=30, what="the container to go")


def test_bash_completion_of_catalog_names(start, catalogs):
    ref = catalogs(catalog_file(CATALOG))
    d = start()
    env = dict(d.env, MCPD_SOCKET=str(d.sock), MCPD_DOCKER_CATALOG=ref)
    completion = REPO / "ctl" / "mcpctl.bash-completion"

    def complete(*words):
        script = ('source "$1"; shift; COMP_WORDS=("$@"); '
                  f'COMP_CWORD={len(words) - 1}; _mcpctl; '
                  'printf "%s\\n" "${COMPREPLY[@]}"')
        p = subprocess.run(["bash", "-c", script, "bash", str(completion),
                            str(MCPCTL)] + list(words)[1:],
                           capture_output=True, timeout=30, env=env,
                           stdin=subprocess.DEVNULL)
        assert p.returncode == 0 and p.stderr == b"", p
        return sorted(w for w in p.stdout.decode().split("\n") if w)

    assert complete("mcpctl", "load", "--source", "") == [
        "docker", "local", "official"]
    assert complete("mcpctl", "load", "--source", "docker", "ts-") == [
        "ts-http", "ts-stdio"]
    assert complete("mcpctl", "gateway", "") == ["start", "stop"]
    assert complete("mcpctl", "gateway", "--name", "gw", "start", "") == [
        "example-remote", "notes", "ts-http", "ts-stdio"]
    assert "docker-catalog" in complete("mcpctl", "do")
