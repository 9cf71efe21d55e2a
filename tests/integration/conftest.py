# SPDX-License-Identifier: ISC
"""Fixtures and helpers of the integration tests: a real mcpd per test on a
private socket and state dir, mcpctl, a raw JSON-RPC client over the control
socket, a direct MCP client over pipes, and /proc process checks.

Every wait has a timeout; every daemon and child is stopped at teardown,
also when the test failed."""

import atexit
import json
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("MCPD_BUILD") or REPO / "build").resolve()
MCPD = BUILD / "mcpd"
MCPCTL = BUILD / "mcpctl"
TESTSERVER = BUILD / "mcp-testserver"
# mcpd built with AddressSanitizer (make check-asan): memory figures differ.
IS_SANITIZED = MCPD.is_file() and b"__asan_init" in MCPD.read_bytes()
PEERS = REPO / "tests" / "peers"
# The package's bin entry (mcp-server-everything) is dist/index.js.
EVERYTHING_JS = (PEERS / "node_modules" / "@modelcontextprotocol" /
                 "server-everything" / "dist" / "index.js")
NODE = shutil.which("node") or "/usr/bin/node"

# A shell that starts the suite in the background (`make check &` in a
# script) ignores SIGINT and SIGQUIT for it, and every process it starts
# inherits that: the tests that interrupt mcpctl need the defaults back.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGQUIT) == signal.SIG_IGN:
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)

MiB = 1024 * 1024
DEFAULT_MAX_MESSAGE = 16 * MiB

# Error codes of doc/control-protocol.md.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
NOT_FOUND = -32001
CONFLICT = -32002
DENIED = -32003
UNAVAILABLE = -32004
UPSTREAM = -32005
OUTCOME_UNKNOWN = -32006
STORAGE = -32007
STALE_HANDLE = -32008
TIMEOUT = -32009
TOOL_CHANGED = -32010

RFC3339_UTC = re.compile(
    r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SERVER_ID = re.compile(r"^[0-9a-f]{12}$")

TESTSERVER_TOOLS = ["echo", "add", "sleep_ms", "fail", "crash", "big",
                    "stderr", "notify_changed", "ask", "deaf", "report",
                    "mismatch"]


# --------------------------------------------------------------------------
# Waiting

def poll(fn, timeout=30.0, interval=0.02, what="a condition"):
    """Calls fn until it returns something truthy; fails after timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = fn()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"timed out after {timeout} s waiting for {what} "
                f"(last value: {last!r})")
        time.sleep(interval)


# --------------------------------------------------------------------------
# Processes, from /proc

def proc_stat(pid):
    """(state, ppid, pgid) of pid, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("utf-8", "replace")
    except (FileNotFoundError, ProcessLookupError):
        return None
    rest = data[data.rindex(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[2])


def is_alive(pid):
    """True while pid exists and is not a zombie."""
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode("utf-8", "replace")
                    for a in f.read().split(b"\0") if a]
    except (FileNotFoundError, ProcessLookupError):
        return None


def all_procs():
    """{pid: (state, ppid, pgid)} of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


def descendants(pid):
    """Live (non-zombie) descendants of pid."""
    procs = all_procs()
    children = {}
    for p, (_, ppid, _) in procs.items():
        children.setdefault(ppid, []).append(p)
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if procs[c][0] not in ("Z", "X"):
                found.append(c)
            todo.append(c)
    return found


def pgid_of(pid):
    st = proc_stat(pid)
    return st[2] if st else None


def process_groups(pid):
    """Process groups of pid's live descendants: one per server."""
    return {pgid_of(p) for p in descendants(pid)} - {None}


def group_members(pgids):
    """Live processes whose process group is one of pgids."""
    pgids = set(pgids)
    return [p for p, (state, _, pgid) in all_procs().items()
            if pgid in pgids and state not in ("Z", "X")]


def find_procs(needle):
    """Live processes whose command line contains needle."""
    out = []
    for p in all_procs():
        args = cmdline(p)
        if args and is_alive(p) and any(needle in a for a in args):
            out.append(p)
    return out


def wait_gone(pids, timeout=30.0, what="processes to end"):
    pids = list(pids)
    poll(lambda: not [p for p in pids if is_alive(p)] or None,
         timeout=timeout, what=f"{what} {pids}")


def read_io_chars(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            k, v = line.split(":")
            if k == "rchar":
                return int(v)
    return 0


# --------------------------------------------------------------------------
# Raw JSON-RPC over the control socket

class RpcError(Exception):
    def __init__(self, response):
        self.response = response
        err = response.get("error") or {}
        self.code = err.get("code")
        self.message = err.get("message")
        self.data = err.get("data")
        super().__init__(f"{self.code} {self.message} data={self.data!r}")


def _id_key(id_):
    return json.dumps(id_, sort_keys=True)


class Client:
    """A blocking NDJSON JSON-RPC client over a unix socket. Every read has
    a deadline; responses that arrive for other ids are kept aside."""

    def __init__(self, path, timeout=30.0):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(self.path)
        except BaseException:
            self.sock.close()
            raise
        self.buf = bytearray()
        self.kept = {}          # id key -> response
        self.other = []         # notifications and stray messages
        self.is_eof = False
        self.next_id = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def request(self, method, params=None, id_=None):
        """Sends a request and returns its id (allocated when None)."""
        if id_ is None:
            id_ = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return id_

    def read_line(self, timeout=30.0):
        """The next line (bytes, without the newline), or None at EOF."""
        deadline = time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[:nl + 1]
                return line
            if self.is_eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"no complete line from mcpd within {timeout} s "
                    f"({len(self.buf)} bytes buffered)")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.is_eof = True
            else:
                self.buf += chunk

    def read_message(self, timeout=30.0):
        """The next message as a dict, or None at EOF."""
        line = self.read_line(timeout)
        if line is None:
            return None
        try:
            return json.loads(line)
        except ValueError as e:
            raise AssertionError(
                f"mcpd sent a line that is not JSON: {line[:200]!r}") from e

    def response(self, id_, timeout=30.0):
        """Waits for the response to id_ (other responses are kept)."""
        key = _id_key(id_)
        deadline = time.monotonic() + timeout
        while key not in self.kept:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(
                    f"no response to id {id_!r} within {timeout} s")
            msg = self.read_message(left)
            if msg is None:
                raise ConnectionError(
                    f"mcpd closed the connection before answering id {id_!r}")
            if isinstance(msg, dict) and "id" in msg and (
                    "result" in msg or "error" in msg):
                self.kept[_id_key(msg["id"])] = msg
            else:
                self.other.append(msg)
        return self.kept.pop(key)

    def call(self, method, params=None, timeout=30.0):
        """The whole response message of one request."""
        return self.response(self.request(method, params), timeout)

    def result(self, method, params=None, timeout=30.0):
        """The result, or RpcError."""
        resp = self.call(method, params, timeout)
        if "error" in resp:
            raise RpcError(resp)
        assert "result" in resp, f"response without result: {resp}"
        return resp["result"]

    def error(self, method, params=None, timeout=30.0):
        """The error object of a request that must fail."""
        resp = self.call(method, params, timeout)
        assert "error" in resp, (
            f"{method} {params} should have failed, got {resp}")
        return resp["error"]

    def wait_closed(self, timeout=30.0):
        """Reads (keeping messages) until mcpd closes the connection."""
        deadline = time.monotonic() + timeout
        msgs = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"mcpd did not close the connection within {timeout} s; "
                    f"got {msgs}")
            msg = self.read_message(left)
            if msg is None:
                return msgs
            msgs.append(msg)


def rpc_error_of(fn, *args, **kwargs):
    """The RpcError raised by fn (fails when fn succeeds)."""
    try:
        got = fn(*args, **kwargs)
    except RpcError as e:
        return e
    raise AssertionError(f"expected an error, got the result {got!r}")


# --------------------------------------------------------------------------
# A direct MCP client over a child's pipes (what the server itself says)

class DirectMcp:
    """Speaks MCP to a server process over its stdin/stdout, bypassing
    mcpd, so that tests can compare mcpd's answers with the server's own."""

    def __init__(self, argv, env=None):
        self.proc = subprocess.Popen(
            [str(a) for a in argv], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = bytearray()
        self.next_id = 1

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.sel.close()
        self.proc.stdout.close()

    def send(self, obj):
        self.proc.stdin.write(json.dumps(obj).encode() + b"\n")
        self.proc.stdin.flush()

    def read(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the MCP server did not answer in time")
            if not self.sel.select(left):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                raise ConnectionError("the MCP server closed its stdout")
            self.buf += chunk
        nl = self.buf.index(b"\n")
        line = bytes(self.buf[:nl])
        del self.buf[:nl + 1]
        return json.loads(line)

    def request(self, method, params=None, timeout=20.0):
        id_ = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            m = self.read(timeout)
            if m.get("id") == id_ and ("result" in m or "error" in m):
                assert "error" not in m, f"{method} failed: {m}"
                return m["result"]

    def initialize(self):
        # What mcpd declares upstream, so that a server offers the same.
        result = self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": UPSTREAM_CAPABILITIES,
            "clientInfo": {"name": "mcpd-integration-tests",
                           "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def tools(self):
        tools, cursor, seen = [], None, set()
        while True:
            result = self.request(
                "tools/list", {"cursor": cursor} if cursor else {})
            tools += result["tools"]
            cursor = result.get("nextCursor")
            if cursor is None:
                return tools
            assert cursor not in seen, "the server repeated a cursor"
            seen.add(cursor)


# What mcpd declares to every server it connects (it relays these requests
# to the client whose call raised them: daemon/server-ask.c).
UPSTREAM_CAPABILITIES = {"sampling": {}, "elicitation": {"form": {}, "url": {}},
                         "roots": {"listChanged": True}}


def direct_tools(argv):
    """The server's own tools/list, every page."""
    d = DirectMcp(argv)
    try:
        d.initialize()
        return d.tools()
    finally:
        d.close()


# --------------------------------------------------------------------------
# mcpctl

class CtlResult:
    def __init__(self, rc, out, err, is_json):
        self.rc = rc
        self.out = out
        self.err = err
        self.json = None
        if is_json and out.strip():
            try:
                self.json = json.loads(out)
            except ValueError as e:
                raise AssertionError(
                    f"mcpctl --json printed something that is not one JSON "
                    f"value: {out[:500]!r}") from e

    def __iter__(self):
        # rc, json, err: the triple the tests unpack.
        return iter((self.rc, self.json, self.err))

    def __repr__(self):
        return (f"CtlResult(rc={self.rc}, out={self.out[:2000]!r}, "
                f"err={self.err[:2000]!r})")


def run_ctl(sock, *args, is_json=True, timeout=60.0, cwd=None, env=None):
    argv = [str(MCPCTL), "-s", str(sock)]
    if is_json:
        argv.append("--json")
    argv += [str(a) for a in args]
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=timeout, cwd=cwd, env=env)
    return CtlResult(p.returncode, p.stdout.decode("utf-8", "replace"),
                     p.stderr.decode("utf-8", "replace"), is_json)


# --------------------------------------------------------------------------
# The daemon

# The secret store's key goes to $XDG_CONFIG_HOME/mcpd: a private one for
# the test run, never the user's own.
CONFIG_HOME = tempfile.mkdtemp(prefix="mcpd-it-config-")
atexit.register(shutil.rmtree, CONFIG_HOME, True)


# mcpctl call keeps tool definitions in $XDG_CACHE_HOME/mcpctl: in the test
# run's own directory, never the user's.
CACHE_HOME = tempfile.mkdtemp(prefix="mcpd-it-cache-")
atexit.register(shutil.rmtree, CACHE_HOME, True)
os.environ["XDG_CACHE_HOME"] = CACHE_HOME


# mcpctl starts mcpd itself when none answers: not in tests that expect it
# unreachable (test_bridge.py turns it on where it tests it).
os.environ["MCPD_NO_AUTOSTART"] = "1"


def child_env(extra=None):
    """A small, explicit environment for mcpd and mcpctl."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root"),
           "XDG_CONFIG_HOME": CONFIG_HOME, "XDG_CACHE_HOME": CACHE_HOME,
           "MCPD_NO_AUTOSTART": "1",
           # An illegal state transition stops mcpd: a bug, seen at once
           # (doc/states.md).
           "MCPD_STRICT_STATES": "1"}
    for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(extra or {})
    return env


def ts_command(*args):
    return [str(TESTSERVER)] + [str(a) for a in args]


def everything_cmd():
    assert EVERYTHING_JS.is_file(), (
        f"{EVERYTHING_JS} is missing: run scripts/install-deps --test-peers "
        f"(npm ci in tests/peers)")
    return [NODE, str(EVERYTHING_JS), "stdio"]


class Daemon:
    """One real mcpd on a private socket and state dir."""

    def __init__(self, args=(), env=None, base=None, preexec_fn=None,
                 nofile=None):
        for exe in (MCPD, MCPCTL, TESTSERVER):
            assert exe.is_file() and os.access(exe, os.X_OK), (
                f"{exe} is missing: build with make (MCPD_BUILD={BUILD})")
        # Short paths: a unix socket path has at most 107 bytes. A given
        # base reuses another daemon's socket path and state dir.
        self.base = Path(base) if base else Path(
            tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
        self.run_dir = self.base / "run"
        self.run_dir.mkdir(mode=0o700, exist_ok=True)
        self.sock = self.run_dir / "mcpd.sock"
        self.state = self.base / "state"
        n = 0
        while (self.base / f"mcpd-{n}.stderr").exists():
            n += 1
        self.stderr_path = self.base / f"mcpd-{n}.stderr"
        self.stderr_path.touch()
        self.args = [str(a) for a in args]
        self.env = child_env(env)
        self.preexec_fn = preexec_fn    # run in the child before exec
        self.nofile = nofile    # (soft, hard) RLIMIT_NOFILE, or None
        self.proc = None
        self.stderr_text = None
        self.seen_pids = set()
        self.seen_pgids = set()
        self.is_stopped_on_purpose = False
        self._rpc = None

    # -- lifecycle

    def start(self, timeout=30.0):
        argv = [str(MCPD), "-d", "-s", str(self.sock), "-S",
                str(self.state)] + self.args
        nofile = self.nofile

        preexec_fn = self.preexec_fn

        def limit():
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
            if preexec_fn is not None:
                preexec_fn()
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                env=self.env, cwd=str(self.base), start_new_session=True,
                preexec_fn=limit)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"mcpd exited with {self.proc.returncode} before "
                    f"listening:\n{self.read_stderr()}")
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(str(self.sock))
                return self
            except OSError:
                if time.monotonic() >= deadline:
                    raise AssertionError(
                        f"mcpd did not accept on {self.sock} within "
                        f"{timeout} s:\n{self.read_stderr()}")
                time.sleep(0.02)
            finally:
                s.close()

    @property
    def pid(self):
        return self.proc.pid

    def read_stderr(self):
        if self.stderr_text is not None:
            return self.stderr_text
        try:
            return self.stderr_path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""

    def track(self):
        """Remembers the daemon's children so teardown can check them."""
        if self.proc is not None and self.proc.poll() is None:
            kids = descendants(self.proc.pid)
            self.seen_pids.update(kids)
            self.seen_pgids.update(pgid_of(p) for p in kids)
            self.seen_pgids.discard(None)
            self.seen_pgids.discard(pgid_of(self.proc.pid))

    def stop(self):
        """Stops mcpd (shutdown, SIGTERM, SIGKILL) and every child; returns
        the problems seen, an empty list when all went as it should."""
        problems = []
        if self._rpc is not None:
            self._rpc.close()
            self._rpc = None
        if self.proc is None:
            return problems
        if self.proc.poll() is None:
            self.track()
            try:
                with Client(self.sock, timeout=30) as c:
                    c.response(c.request("mcpd/shutdown"), timeout=30)
            except Exception as e:   # noqa: BLE001 - reported below
                problems.append(f"mcpd/shutdown failed: {e!r}")
            try:
                self.proc.wait(timeout=30)
                if self.proc.returncode != 0:
                    problems.append(
                        f"mcpd exited with {self.proc.returncode} after "
                        f"mcpd/shutdown")
            except subprocess.TimeoutExpired:
                problems.append("mcpd did not exit after mcpd/shutdown")
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    problems.append("mcpd did not exit after SIGTERM")
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        else:
            self.proc.wait(timeout=10)
        # Every server process (and its process group) must be gone.
        left = ([p for p in self.seen_pids if is_alive(p)] +
                group_members(self.seen_pgids))
        if left:
            try:
                wait_gone(set(left), timeout=15)
            except AssertionError:
                left = sorted(set(p for p in left if is_alive(p)))
                problems.append(
                    f"processes left behind by mcpd: "
                    f"{[(p, cmdline(p)) for p in left]}")
                kill_all(left)
        self.stderr_text = self.read_stderr()
        # A broken invariant is logged as "BUG:" (an illegal server state
        # transition, say): every test fails on one.
        problems += [line for line in self.stderr_text.splitlines()
                     if "BUG:" in line]
        return problems

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)

    # -- talking to it

    def client(self, timeout=30.0):
        return Client(self.sock, timeout=timeout)

    def mcp_session(self, capabilities=None, version="2025-06-18",
                    timeout=30.0):
        """A raw gateway session on the socket, initialized (agent
        default): the MCP client a test drives by hand."""
        c = self.client(timeout=timeout)
        c.result("initialize", {"protocolVersion": version,
                                "capabilities": capabilities or {},
                                "clientInfo": {"name": "raw", "version": "1"}})
        c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return c

    @property
    def rpc(self):
        """A shared client for the test's plain requests."""
        if self._rpc is None:
            self._rpc = self.client()
        return self._rpc

    def ctl(self, *args, **kwargs):
        kwargs.setdefault("env", self.env)
        return run_ctl(self.sock, *args, **kwargs)

    def load(self, command, name=None, timeout=60.0, **params):
        """mcpd/load of a command; not saved unless the test passes
        persist=True (the persistence tests do)."""
        params = dict(params, command=[str(a) for a in command])
        params.setdefault("persist", False)
        if name is not None:
            params["name"] = name
        result = self.rpc.result("mcpd/load", params, timeout=timeout)
        self.list()     # remembers the new pid
        return result

    def load_testserver(self, name="ts", *args, **params):
        return self.load(ts_command(*args), name=name, **params)

    def load_everything(self, name="everything", settle=False, **params):
        """settle: wait until mcpd has answered the roots/list that
        server-everything sends 350 ms after its handshake (no call is in
        flight then), so that it cannot land in a test's first call; mcpd
        says so at debug level: the daemon runs with -v."""
        result = self.load(everything_cmd(), name=name, **params)
        if settle:
            assert "-v" in self.args, "settle reads mcpd's debug log: -v"
            poll(lambda: f"{name}: roots/list with no call in flight: "
                 in self.read_stderr(),
                 what="the handshake's roots/list to be answered")
        return result

    def load_url(self, url, name=None, timeout=60.0, **params):
        """mcpd/load of a remote endpoint (params: allow_local, headers,
        transport, timeout_ms)."""
        params = dict(params, target=str(url))
        params.setdefault("persist", False)
        if name is not None:
            params["name"] = name
        return self.rpc.result("mcpd/load", params, timeout=timeout)

    def list(self, **params):
        servers = self.rpc.result("mcpd/list", params)["servers"]
        for row in servers:
            if isinstance(row.get("pid"), int):
                self.seen_pids.add(row["pid"])
        self.track()
        return servers

    def row(self, name):
        rows = [r for r in self.list() if r["name"] == name]
        assert len(rows) <= 1, f"two rows named {name}: {rows}"
        return rows[0] if rows else None

    def wait_row(self, name, pred, timeout=30.0, what=None):
        def check():
            r = self.row(name)
            return r if r is not None and pred(r) else None
        return poll(check, timeout=timeout, interval=0.05,
                    what=what or f"server {name} to match")

    def tools(self, server=None):
        params = {"server": server} if server else {}
        return self.rpc.result("mcpd/tools", params)["tools"]

    def call(self, server, tool, arguments=None, timeout=30.0, **params):
        params = dict(params, server=server, tool=tool,
                      arguments=arguments or {})
        return self.rpc.result("mcpd/call", params, timeout=timeout)

    def logs(self, server, lines=None):
        params = {"server": server}
        if lines is not None:
            params["lines"] = lines
        return self.rpc.result("mcpd/logs", params)["lines"]

    def wait_log(self, server, pred, timeout=30.0, what=None):
        def check():
            lines = self.logs(server)
            return lines if pred(lines) else None
        return poll(check, timeout=timeout, interval=0.05,
                    what=what or f"log lines of {server}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for d in getattr(item, "_mcpd_daemons", []):
            rep.sections.append(
                (f"mcpd stderr ({' '.join(d.args) or 'default options'})",
                 d.read_stderr()[-20000:] or "(empty)"))
        for p in getattr(item, "_mcpd_peers", []):
            for what, path in (("stdout", p.out_path),
                               ("stderr", p.err_path)):
                try:
                    text = path.read_bytes().decode("utf-8", "replace")
                except OSError:
                    text = ""
                rep.sections.append((f"{p.name} {what}",
                                     text[-8000:] or "(empty)"))


@pytest.fixture
def mcpd_factory(request):
    """Starts daemons with extra options; all are stopped at teardown."""
    daemons = []
    request.node._mcpd_daemons = daemons

    def start(*args, env=None, base=None, preexec_fn=None, nofile=None):
        d = Daemon(args, env=env, base=base, preexec_fn=preexec_fn,
                   nofile=nofile)
        daemons.append(d)
        return d.start()

    yield start
    problems = []
    try:
        for d in daemons:
            try:
                problems += d.stop()
            except Exception as e:     # noqa: BLE001 - the others still stop
                problems.append(f"stopping mcpd failed: {e!r}")
                if d.proc is not None and d.proc.poll() is None:
                    d.proc.kill()
    finally:
        # Daemons may share a base directory: remove it after all stopped.
        for d in daemons:
            d.cleanup()
    if problems:
        pytest.fail("teardown: " + "; ".join(problems), pytrace=False)


@pytest.fixture
def mcpd(mcpd_factory):
    """A running mcpd with default options."""
    return mcpd_factory()


def socket_mode(path):
    st = os.stat(path)
    assert stat.S_ISSOCK(st.st_mode), f"{path} is not a socket"
    return stat.S_IMODE(st.st_mode)


# --------------------------------------------------------------------------
# Peers the tests run beside mcpd (HTTP servers, TLS terminators, resolvers)

def free_port(below=65536):
    """A TCP port nobody listens on now (the kernel's pick), under below."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port < below:
            return port


def tcp_listening():
    """(local address in hex, as /proc/net/tcp{,6} write it, port) of every
    TCP socket in LISTEN state on this host."""
    found = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    addr, port = fields[1].rsplit(":", 1)
                    if fields[3] == "0A":
                        found.append((addr, int(port, 16)))
        except FileNotFoundError:
            pass
    return found


def listening_ports():
    """TCP ports in LISTEN state on this host."""
    return {port for _, port in tcp_listening()}


def end_client(proc, quit_line, timeout=20):
    """Ends a client script driven over stdin: quit_line, then its end
    within timeout seconds, else it is killed."""
    if proc.poll() is not None:
        return
    try:
        proc.stdin.write(quit_line + "\n")
        proc.stdin.close()
        proc.wait(timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait(timeout=10)


def kill_all(pids):
    """SIGKILL to each of pids that is still there."""
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def breakable_server(tmp_path):
    """(script, flag): a wrapper of the test server that fails at start
    (exit 7, "broken on purpose" on stderr) while flag exists."""
    script = tmp_path / "server.sh"
    flag = tmp_path / "broken"
    script.write_text(
        "#!/bin/sh\n"
        f"if [ -e {flag} ]; then echo 'broken on purpose' >&2; exit 7; fi\n"
        f"exec {TESTSERVER}\n")
    script.chmod(0o755)
    return script, flag


def failed_daemon(mcpd_factory, tmp_path, names=("bad",)):
    """A daemon whose saved servers names are listed as failed: each was
    loaded and saved while it worked, then broken, and the daemon
    restarted (a first load that fails leaves nothing listed)."""
    script, flag = breakable_server(tmp_path)
    d1 = mcpd_factory()
    for name in names:
        d1.load([script], name=name, persist=True)
    flag.touch()
    assert d1.stop() == []
    d2 = mcpd_factory(base=d1.base)
    for name in names:
        d2.wait_row(name, lambda r: r["state"] == "failed", timeout=30)
    return d2


def wait_listening(port, timeout=15.0, proc=None):
    """Waits until something listens on port (without connecting to it);
    fails early when proc, a Peer, has exited."""
    def check():
        if proc is not None and not proc.is_running():
            raise AssertionError(
                f"{proc.name} exited with {proc.proc.returncode} before "
                f"listening on {port}:\n{proc.err()[-4000:]}")
        return port in listening_ports()
    poll(check, timeout=timeout, interval=0.02,
         what=f"a listener on port {port}")


class Peer:
    """A background process with its stdout and stderr in files, in a
    process group of its own, stopped at teardown by the peers fixture."""

    def __init__(self, argv, base, name, env=None):
        self.name = name
        self.argv = [str(a) for a in argv]
        n = 0
        while (Path(base) / f"{name}-{n}.out").exists():
            n += 1
        self.out_path = Path(base) / f"{name}-{n}.out"
        self.err_path = Path(base) / f"{name}-{n}.err"
        with open(self.out_path, "wb") as out, \
                open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.DEVNULL, stdout=out,
                stderr=err, env=child_env(env), start_new_session=True)

    @property
    def pid(self):
        return self.proc.pid

    def is_running(self):
        return self.proc.poll() is None

    def out(self):
        return self.out_path.read_bytes().decode("utf-8", "replace")

    def err(self):
        return self.err_path.read_bytes().decode("utf-8", "replace")

    def wait_output(self, pattern, stream="out", timeout=15.0):
        """The first match of the regular expression in stdout (or
        stderr); fails when the process exits first."""
        rx = re.compile(pattern, re.M)

        def check():
            m = rx.search(self.out() if stream == "out" else self.err())
            if m is None and not self.is_running():
                raise AssertionError(
                    f"{self.name} exited with {self.proc.returncode} "
                    f"before printing {pattern!r}:\n"
                    f"{self.out()[-2000:]}\n{self.err()[-4000:]}")
            return m
        return poll(check, timeout=timeout, interval=0.02,
                    what=f"{self.name} to print {pattern!r}")

    def _exited(self):
        """True once the leader has exited; it is not reaped, so that its
        pid (and the group id) cannot be taken by another process."""
        if self.proc.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.proc.pid,
                             os.WEXITED | os.WNOWAIT | os.WNOHANG)
        except ChildProcessError:
            return True
        return info is not None

    def _signal_group(self, sig):
        if self.proc.returncode is not None:
            return     # reaped: the group id may belong to someone else
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self, sig=signal.SIGKILL):
        """Signals the process group this peer leads (socat forks one child
        per connection), waits for the leader to end and reaps it."""
        self._signal_group(sig)
        poll(self._exited, timeout=10, what=f"{self.name} to exit")
        self._signal_group(signal.SIGKILL)   # its children, if any
        self.proc.wait(timeout=10)

    def stop(self):
        self._signal_group(signal.SIGTERM)
        try:
            poll(self._exited, timeout=15, what=f"{self.name} to exit")
        except AssertionError:
            pass
        self._signal_group(signal.SIGKILL)
        self.proc.wait(timeout=10)


@pytest.fixture
def peers(request, tmp_path):
    """Starts background peers: peers(argv, name=..., env=...); each is
    stopped (its whole process group) at teardown."""
    started = []
    request.node._mcpd_peers = started

    def start(argv, name="peer", env=None):
        p = Peer(argv, tmp_path, name, env=env)
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


# --------------------------------------------------------------------------
# Docker: the engine, the test images, and containers by owner

DOCKER = os.environ.get("MCPD_DOCKER") or shutil.which("docker") or \
    "/usr/bin/docker"
IMAGES_BUILD = REPO / "tests" / "images" / "build"


@pytest.fixture(scope="session")
def docker_images():
    """The engine answers and tests/images/build made the test images; else
    the test fails (CI installs docker.io and starts dockerd)."""
    if not os.access(DOCKER, os.X_OK):
        pytest.fail("the container tests need the docker CLI (docker.io); "
                    "scripts/install-deps --test-peers installs it",
                    pytrace=False)
    p = subprocess.run([DOCKER, "info", "--format", "{{.ServerVersion}}"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        pytest.fail(f"the container tests need a running Docker engine: "
                    f"`docker info` failed: {p.stderr.strip()}",
                    pytrace=False)
    assert TESTSERVER.is_file(), f"build {TESTSERVER} first"
    b = subprocess.run([str(IMAGES_BUILD), str(BUILD)],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=600)
    if b.returncode != 0:
        pytest.fail(f"tests/images/build {BUILD} failed "
                    f"({b.returncode}):\n{b.stdout}{b.stderr}",
                    pytrace=False)
    lines = b.stdout.splitlines()
    assert len(lines) == 3 and all(" built " in ln or " up to date " in ln
                                   for ln in lines), b.stdout
    return True


def owner_containers(did):
    """[(name, daemon pid label)] of every container of this identity."""
    p = subprocess.run(
        [DOCKER, "ps", "-a", "--no-trunc", "--filter",
         f"label=io.mcpd.owner={did}", "--format",
         '{{.Names}} {{.Label "io.mcpd.daemon-pid"}}'],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert p.returncode == 0, f"docker ps failed: {p.stderr!r}"
    return [tuple(line.partition(" ")[::2])
            for line in p.stdout.decode().splitlines()]


@pytest.fixture
def container_guard():
    """Identities whose containers are removed after the daemons stopped
    (they should be gone by then: this is so a failure leaks nothing)."""
    dids = []
    yield dids
    for did in dids:
        try:
            names = [n for n, _ in owner_containers(did)]
        except Exception:    # noqa: BLE001 - best effort
            continue
        if names:
            subprocess.run([DOCKER, "rm", "-f"] + names,
                           capture_output=True, timeout=120)
