# SPDX-License-Identifier: ISC
"""The image transport memory (doc/containers.md) on the real Docker
engine: an image ID that answered HTTP is remembered in
image-transports.json, and its next start runs rax-mcp-* directly (no
probe container is created); the memory survives a restart; a remembered
image that does not answer HTTP, or whose tag moved, falls back to the full
probe and leaves no container; a corrupt file is logged and left alone;
a shutdown in the middle of a direct start leaves no container.

Which containers a daemon created is read from `docker events` (create
events of its owner label), so "no probe" is what the engine saw, not what
mcpd says."""

import json
import subprocess
import time

import pytest

from conftest import MCPCTL, poll
from test_docker import (all_owners, container, ctl_row, docker,  # noqa: F401
                         echo, engine, load, owned_by, start, tracker)

MEMORY = "image-transports.json"
HTTP = "mcpd-test/http"
STDIO = "mcpd-test/stdio"


def image_id(ref):
    p = docker("image", "inspect", "--format", "{{.Id}}", ref)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def created_since(did, since):
    """Names of the containers of owner did created since `since` (a
    time.time()), in order, as docker events saw them."""
    p = docker("events", "--since", f"{since:.3f}",
               "--until", f"{time.time() + 0.5:.3f}",
               "--filter", "type=container", "--filter", "event=create",
               "--filter", f"label=io.mcpd.owner={did}",
               "--format", "{{.Actor.Attributes.name}}", timeout=30)
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def memory(d):
    return json.loads((d.state / MEMORY).read_text())


def image_label(d, name):
    """The image reference as mcpd records it (io.mcpd.image)."""
    row = ctl_row(d, name)
    info = container(row["container"]["name"])
    return info["Config"]["Labels"]["io.mcpd.image"]


def write_memory(d, images, refs):
    d.state.mkdir(mode=0o700, parents=True, exist_ok=True)
    (d.state / MEMORY).write_text(json.dumps(
        {"version": 1, "images": images, "refs": refs}))


def http_entry(port=8080, path="/mcp"):
    return {"transport": "streamable-http", "port": port, "path": path,
            "saved": 1}


def test_second_load_of_an_http_image_skips_the_probe(start):
    d = start()
    t0 = time.time()
    r = load(d, HTTP, name="m1")
    assert r["container"]["name"] == f"rax-mcp-m1-{d.pid}"
    # The first load probed: the probe, promoted (the image exposes 8080).
    assert created_since(d.did, t0) == [f"rax-probe-m1-{d.pid}"]
    # The probe is gone by the time the load answered.
    assert container(f"rax-probe-m1-{d.pid}") is None
    ref = image_label(d, "m1")
    assert memory(d) == {
        "version": 1,
        "images": {image_id(HTTP): {
            "transport": "streamable-http", "port": 8080, "path": "/mcp",
            "saved": memory(d)["images"][image_id(HTTP)]["saved"]}},
        "refs": {ref: image_id(HTTP)}}
    ctl_ok_unload(d, "m1")

    t1 = time.time()
    r = load(d, HTTP, name="m2")
    cname = f"rax-mcp-m2-{d.pid}"
    assert r["container"]["name"] == cname
    assert created_since(d.did, t1) == [cname]
    row = ctl_row(d, "m2")
    assert row["transport"] == "streamable-http"
    assert row["container"]["phase"] == "managed"
    assert (f"m2: image {ref} ({image_id(HTTP)}) answered HTTP on port "
            f"8080 before: starting {cname} directly") in d.read_stderr()
    echo(d, "m2", HTTP, "direct")
    # A restart of the same image ID goes direct too.
    t2 = time.time()
    assert d.ctl("reload", "m2").rc == 0
    assert created_since(d.did, t2) == [cname]
    echo(d, "m2", HTTP, "reloaded")
    ctl_ok_unload(d, "m2")
    assert owned_by(d.did) == []


def ctl_ok_unload(d, name):
    r = d.ctl("unload", name, timeout=60)
    assert r.rc == 0, r


def test_memory_survives_a_restart(start):
    d = start()
    load(d, HTTP, name="keep")
    before = (d.state / MEMORY).read_bytes()
    d.stop()
    d2 = start(base=d.base)
    assert (d2.state / MEMORY).read_bytes() == before
    t0 = time.time()
    r = load(d2, HTTP, name="keep")
    assert created_since(d2.did, t0) == [f"rax-mcp-keep-{d2.pid}"]
    assert r["container"]["name"] == f"rax-mcp-keep-{d2.pid}"
    echo(d2, "keep", HTTP, "after-restart")
    # Known already: the file was not rewritten.
    assert (d2.state / MEMORY).read_bytes() == before


def test_remembered_image_that_does_not_answer_http_is_probed(start):
    # A memory that says the stdio image's ID answered HTTP: its managed
    # container (no stdin) ends at once, and mcpd falls back to the probe.
    probe = start()
    ref = f"{STDIO}:latest"
    write_memory(probe, {image_id(STDIO): http_entry()},
                 {ref: image_id(STDIO)})
    d = probe
    t0 = time.time()
    r = load(d, STDIO, name="fb")
    assert r["container"]["name"] == f"rax-probe-fb-{d.pid}"
    assert created_since(d.did, t0) == [f"rax-mcp-fb-{d.pid}",
                                        f"rax-probe-fb-{d.pid}"]
    assert container(f"rax-mcp-fb-{d.pid}") is None
    row = ctl_row(d, "fb")
    assert row["transport"] == "stdio" and row["state"] == "ready", row
    assert (f"container rax-mcp-fb-{d.pid} of image {image_id(STDIO)} did "
            "not answer HTTP as remembered") in d.read_stderr()
    # The image ID is forgotten: the next load probes at once (the
    # reference is remembered as stdio: its probe publishes nothing).
    assert memory(d) == {"version": 1, "images": {}, "refs": {},
                         "stdio": {ref: memory(d)["stdio"][ref]}}
    echo(d, "fb", STDIO, "probed")
    ctl_ok_unload(d, "fb")
    t1 = time.time()
    load(d, STDIO, name="fb2")
    assert created_since(d.did, t1) == [f"rax-probe-fb2-{d.pid}"]
    ctl_ok_unload(d, "fb2")
    assert owned_by(d.did) == []


def test_moved_tag_is_probed_and_the_image_id_kept(start):
    # The stdio image's reference points at the HTTP image's ID (as if the
    # tag had moved since): the managed container runs another image ID,
    # so mcpd probes; the HTTP image's own entry stays.
    d = start()
    ref = f"{STDIO}:latest"
    write_memory(d, {image_id(HTTP): http_entry()}, {ref: image_id(HTTP)})
    t0 = time.time()
    r = load(d, STDIO, name="mv")
    assert r["container"]["name"] == f"rax-probe-mv-{d.pid}"
    assert created_since(d.did, t0) == [f"rax-mcp-mv-{d.pid}",
                                        f"rax-probe-mv-{d.pid}"]
    assert "(the image is another one now)" in d.read_stderr()
    # The reference is the stdio image's now.
    assert memory(d) == {"version": 1,
                         "images": {image_id(HTTP): http_entry()},
                         "refs": {}, "stdio": {ref: memory(d)["stdio"][ref]}}
    echo(d, "mv", STDIO, "moved")
    ctl_ok_unload(d, "mv")
    assert owned_by(d.did) == []


@pytest.mark.parametrize("content,why", [
    (b"{not json",
     "is corrupt (string or '}' expected near 'not' at line 1, column 4)"),
    (b'{"version": 1, "images": [], "refs": {}}\n',
     'is corrupt (not a version 1 object of "images" and "refs")'),
])
def test_corrupt_memory_is_logged_and_left_alone(start, content, why):
    d = start()
    d.state.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = d.state / MEMORY
    path.write_bytes(content)
    for name in ("c1", "c2"):
        t0 = time.time()
        r = load(d, HTTP, name=name)
        # Probed each time, as if nothing were remembered...
        assert created_since(d.did, t0) == [f"rax-probe-{name}-{d.pid}"]
        assert r["container"]["name"] == f"rax-mcp-{name}-{d.pid}"
        echo(d, name, HTTP, name)
        ctl_ok_unload(d, name)
    # ... and the file is left as it was, with one clear line (said once).
    assert path.read_bytes() == content
    lines = [x for x in d.read_stderr().splitlines() if MEMORY in x]
    assert len(lines) == 1, lines
    assert f"{path} {why}" in lines[0], lines
    assert "remove the file to let mcpd remember image transports" \
        in lines[0]
    assert owned_by(d.did) == []


def test_shutdown_during_a_direct_start_leaves_no_container(start):
    d = start()
    load(d, HTTP, name="warm")
    ctl_ok_unload(d, "warm")
    cname = f"rax-mcp-sd-{d.pid}"
    ctl = subprocess.Popen(
        [str(MCPCTL), "-s", str(d.sock), "--json", "load", "--no-persist",
         "--name", "sd", HTTP], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    try:
        # The managed container exists: the direct start is under way.
        poll(lambda: container(cname) is not None, timeout=30,
             interval=0.02, what=f"{cname} to be created")
        problems = d.stop()
        assert problems == [], problems
    finally:
        ctl.kill()
        ctl.wait()
    assert container(cname) is None
    assert owned_by(d.did) == []


def test_probe_that_cannot_be_removed_fails_the_switch_and_goes_later(
        start, tmp_path):
    """The probe's docker rm -f (run while the managed container starts)
    fails: the load fails saying so, both containers are accounted for,
    the managed one goes at once and the probe when the retry timer runs
    after docker rm works again. A fake docker (a script in front of the
    real one) refuses `docker rm` of rax-probe-* while a flag file exists:
    a real engine cannot be made to refuse it (DESIGN 9)."""
    from conftest import DOCKER, UNAVAILABLE
    flag = tmp_path / "refuse-probe-rm"
    fake = tmp_path / "docker"
    fake.write_text(
        "#!/bin/sh\n"
        f"if [ \"$1\" = rm ] && [ -e '{flag}' ]; then\n"
        "\tcase \"$*\" in *rax-probe-*)\n"
        "\t\techo \"fake docker: refusing docker $* on purpose\" >&2\n"
        "\t\texit 1;;\n"
        "\tesac\n"
        "fi\n"
        f"exec '{DOCKER}' \"$@\"\n")
    fake.chmod(0o755)
    d = start(env={"MCPD_DOCKER": str(fake)})
    probe, managed = f"rax-probe-rp-{d.pid}", f"rax-mcp-rp-{d.pid}"
    flag.touch()
    # On 9090, which the image does not expose: not promoted, switched.
    r = d.ctl("load", "--no-persist", "--name", "rp", HTTP, "--",
              "--http", "9090", timeout=120)
    assert r.rc == 1, r
    assert r.json["code"] == UNAVAILABLE, r
    assert "cannot remove the probe container" in r.json["message"], r
    assert "refusing docker rm" in r.json["message"], r
    # The managed one went; the probe stays, and is listed.
    assert container(managed) is None
    assert container(probe) is not None
    row = ctl_row(d, "rp")
    assert row is not None and row["state"] == "failed", row
    assert row["container"]["name"] == probe, row
    assert "refusing docker rm" in row["container"]["remove_error"], row
    # Nothing was remembered: the managed container never answered.
    assert not (d.state / MEMORY).exists()
    flag.unlink()
    poll(lambda: ctl_row(d, "rp") is None, timeout=25, interval=0.25,
         what="the retry timer to remove the probe")
    assert container(probe) is None
    assert owned_by(d.did) == []
