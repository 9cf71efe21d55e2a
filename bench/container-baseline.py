#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""The bare baseline of a container server's start, by hand (no mcpd).

usage: bench/container-baseline.py [--docker CLI] [--timeout S] \
           stdio|http IMAGE NAME

stdio: `docker run -i --rm --name NAME IMAGE`; initialize is written to its
stdin at once (as mcpd's probe does), then, after its answer,
notifications/initialized and tools/list.

http: `docker run -d --rm --name NAME -p 127.0.0.1::8080 IMAGE`, then
`docker port NAME 8080/tcp`, then POST initialize to /mcp every 10 ms until
it answers (docker-proxy accepts and resets until the server listens), then
notifications/initialized and tools/list with the Mcp-Session-Id.

The clock starts just before `docker run` is spawned and stops when the
tools/list answer has been read. Then (outside the timed part) the
container is removed with `docker rm -f NAME`, also on failure. Prints one
line of key=value figures in milliseconds on stdout:

    stdio: ms=... init_ms=... tools=N
    http:  ms=... run_ms=... port_ms=... init_ms=... tries=N tools=N

(each figure from the start of `docker run`); exits 1 with a message on
stderr when a step fails or the deadline passes.
"""

import argparse
import http.client
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time

PROTOCOL = "2025-11-25"  # what mcpd asks for
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "mcpd-bench-baseline", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
HTTP_PORT = 8080  # what mcpd-test/http listens on inside the container
POLL_S = 0.010


class Failed(Exception):
    pass


def ms(t0):
    return round((time.monotonic() - t0) * 1000, 1)


def short(msg):
    return json.dumps(msg)[:200]


def check_tools(msg):
    if "result" not in msg or not isinstance(msg["result"].get("tools"), list):
        raise Failed("tools/list answered without tools: %s" % short(msg))
    return len(msg["result"]["tools"])


# ---- stdio ----


class LineReader:
    """Newline-delimited JSON from a pipe, with a deadline."""

    def __init__(self, f, deadline):
        self.fd = f.fileno()
        self.buf = b""
        self.deadline = deadline
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)

    def message(self, want_id):
        """The next message with id want_id (notifications are skipped)."""
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue  # not JSON: not for us
                if isinstance(msg, dict) and msg.get("id") == want_id:
                    if "error" in msg:
                        raise Failed("error answer: %s" % short(msg))
                    return msg
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Failed("no answer to id %d before the deadline"
                             % want_id)
            if not self.sel.select(left):
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise Failed("stdout closed before the answer to id %d"
                             % want_id)
            self.buf += chunk


def run_stdio(docker, image, name, timeout, errf):
    argv = [docker, "run", "-i", "--rm", "--name", name, image]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=errf, bufsize=0)
    try:
        rd = LineReader(p.stdout, t0 + timeout)
        p.stdin.write((json.dumps(INIT) + "\n").encode())
        rd.message(1)
        init_ms = ms(t0)
        p.stdin.write((json.dumps(INITIALIZED) + "\n" +
                       json.dumps(TOOLS_LIST) + "\n").encode())
        n = check_tools(rd.message(2))
        total = ms(t0)
    finally:
        try:
            p.stdin.close()
        except OSError:
            pass
        remove(docker, name)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return "ms=%s init_ms=%s tools=%d" % (total, init_ms, n)


# ---- http ----


def docker_out(argv, deadline, errf):
    left = max(deadline - time.monotonic(), 0.1)
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=errf,
                           timeout=left)
    except subprocess.TimeoutExpired:
        raise Failed("%s timed out" % " ".join(argv[:3]))
    if r.returncode != 0:
        raise Failed("%s exited %d" % (" ".join(argv[:3]), r.returncode))
    return r.stdout.decode()


def parse_body(resp):
    """The JSON-RPC message of a JSON or an SSE response body."""
    body = resp.read().decode()
    ctype = resp.getheader("Content-Type", "")
    if ctype.startswith("text/event-stream"):
        for event in body.replace("\r\n", "\n").split("\n\n"):
            data = "\n".join(l[5:].lstrip(" ") for l in event.split("\n")
                             if l.startswith("data:"))
            if data:
                return json.loads(data)
        raise Failed("an event stream without data")
    return json.loads(body)


def post(conn, msg, session=None):
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = PROTOCOL
    conn.request("POST", "/mcp", body=json.dumps(msg), headers=headers)
    return conn.getresponse()


def run_http(docker, image, name, timeout, errf):
    deadline = time.monotonic() + timeout
    argv = [docker, "run", "-d", "--rm", "--name", name,
            "-p", "127.0.0.1::%d" % HTTP_PORT, image]
    t0 = time.monotonic()
    try:
        docker_out(argv, deadline, errf)
        run_ms = ms(t0)
        out = docker_out([docker, "port", name, "%d/tcp" % HTTP_PORT],
                         deadline, errf)
        port_ms = ms(t0)
        first = out.split()[0] if out.split() else ""
        host, _, port = first.rpartition(":")
        if not port.isdigit():
            raise Failed("docker port printed %r" % out)
        host = host.strip("[]")
        tries = 0
        while True:
            tries += 1
            conn = http.client.HTTPConnection(host, int(port), timeout=2)
            try:
                resp = post(conn, INIT)
                if resp.status != 200:
                    raise Failed("initialize: HTTP %d" % resp.status)
                init = parse_body(resp)
                break
            except (ConnectionError, http.client.HTTPException,
                    TimeoutError, OSError) as e:
                conn.close()
                if time.monotonic() + POLL_S > deadline:
                    raise Failed("no answer to initialize on %s:%s (%d tries,"
                                 " last: %r)" % (host, port, tries, e))
                time.sleep(POLL_S)
        if "result" not in init:
            raise Failed("initialize: %s" % short(init))
        init_ms = ms(t0)
        session = resp.getheader("Mcp-Session-Id")
        resp = post(conn, INITIALIZED, session)
        resp.read()
        if resp.status not in (200, 202):
            raise Failed("notifications/initialized: HTTP %d" % resp.status)
        resp = post(conn, TOOLS_LIST, session)
        if resp.status != 200:
            raise Failed("tools/list: HTTP %d" % resp.status)
        n = check_tools(parse_body(resp))
        total = ms(t0)
        conn.close()
    finally:
        remove(docker, name)
    return "ms=%s run_ms=%s port_ms=%s init_ms=%s tries=%d tools=%d" % (
        total, run_ms, port_ms, init_ms, tries, n)


def remove(docker, name):
    subprocess.run([docker, "rm", "-f", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=60)


def main():
    ap = argparse.ArgumentParser(
        description="time a container MCP server's start by hand")
    ap.add_argument("--docker",
                    default=os.environ.get("MCPD_DOCKER", "docker"))
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="deadline in seconds (default 30)")
    ap.add_argument("mode", choices=("stdio", "http"))
    ap.add_argument("image")
    ap.add_argument("name")
    a = ap.parse_args()
    run = run_stdio if a.mode == "stdio" else run_http
    with tempfile.TemporaryFile() as errf:
        try:
            print(run(a.docker, a.image, a.name, a.timeout, errf), flush=True)
        except (Failed, OSError, ValueError) as e:
            errf.seek(0)
            err = errf.read().decode(errors="replace").strip()
            print("container-baseline: %s %s: %s" % (a.mode, a.image, e),
                  file=sys.stderr)
            if err:
                print("--- docker's stderr:\n%s" % err[-2000:],
                      file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
