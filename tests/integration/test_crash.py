# SPDX-License-Identifier: ISC
"""Crash safety of the enablement store (DESIGN.md section 6).

Rounds on one state dir: a thread loads and unloads a few saved servers
(process ones, and a container one in some rounds) while mcpd is killed
with SIGKILL at a random moment; then a fresh mcpd starts on the same state
dir and the test checks that

  - enabled.json parses (or is absent), and holds every load that was
    answered persistent:true and not later unloaded, and nothing that was
    answered unloaded (requests in flight at the kill may go either way);
  - the fresh daemon restores exactly the rows of the file, all ready, and
    does not rewrite the file;
  - no container of a dead daemon survives the fresh daemon's reaping;
  - no process of the killed daemon (its servers, their shims, docker
    clients) is left.

Every fourth round does not wait for the fresh daemon's restore: the next
round's loop and kill come while it restores (its checks are made at the
round after). Each line says what was in flight at the kill, the rows the
file had, the containers the killed daemon left on the engine, and times.

The seed is fixed and printed (MCPD_CRASH_SEED overrides it, MCPD_CRASH_ROUNDS
the number of rounds); so is one line per round."""

import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import (kill_all, DOCKER, owner_containers, TESTSERVER, Client,
                      all_procs, cmdline, descendants, poll)

SEED = int(os.environ.get("MCPD_CRASH_SEED", "20261129"))
ROUNDS = int(os.environ.get("MCPD_CRASH_ROUNDS", "30"))
CONTAINER_EVERY = 3         # rounds 1, 4, 7, ... touch the container too
EARLY_EVERY = 4             # rounds 3, 7, 11, ... do not wait for restore
MAX_IN_FLIGHT = 2









@pytest.fixture
def images(docker_images):
    """The container parts always run: no engine fails the test."""
    return docker_images

# --------------------------------------------------------------------------
# The load/unload loop

class Churn(threading.Thread):
    """Loads (persist) and unloads the given servers over one connection,
    at most MAX_IN_FLIGHT requests at a time and one per server, until the
    connection ends. ops: one dict per request, in the order sent."""

    def __init__(self, sock, specs, loaded, rng):
        super().__init__(daemon=True)
        self.sock = sock
        self.specs = specs
        self.loaded = dict(loaded)      # name -> bool, as last answered
        self.rng = rng
        self.ops = []
        self.started = threading.Event()
        self.error = None

    def run(self):
        try:
            self._run()
        except Exception as e:     # noqa: BLE001 - reported by the test
            self.error = repr(e)
        finally:
            self.started.set()

    def _run(self):
        try:
            c = Client(self.sock, timeout=30)
        except OSError as e:
            self.error = f"connect: {e!r}"
            return
        in_flight, busy = {}, set()
        try:
            while True:
                idle = [n for n in self.specs if n not in busy]
                while len(in_flight) < MAX_IN_FLIGHT and idle:
                    name = self.rng.choice(idle)
                    idle.remove(name)
                    if self.loaded.get(name):
                        kind, method = "unload", "mcpd/unload"
                        params = {"target": name}
                    else:
                        kind, method = "load", "mcpd/load"
                        params = dict(self.specs[name], name=name,
                                      persist=True, timeout_ms=60000)
                    op = {"name": name, "kind": kind, "sent": time.monotonic(),
                          "done": None, "result": None, "error": None}
                    try:
                        rid = c.request(method, params)
                    except OSError:
                        return
                    self.ops.append(op)
                    self.started.set()
                    in_flight[rid] = op
                    busy.add(name)
                try:
                    msg = c.read_message(timeout=0.2)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if msg is None:
                    return
                op = in_flight.pop(msg.get("id"), None)
                if op is None:
                    continue
                op["done"] = time.monotonic()
                op["result"] = msg.get("result")
                op["error"] = msg.get("error")
                busy.discard(op["name"])
                if op["result"] is not None:
                    self.loaded[op["name"]] = op["kind"] == "load"
        finally:
            c.close()


def expectations(initial, ops):
    """(must, must_not, maybe): names whose row must be in the file, must
    not be, and may be either way, after these ops; initial: the names
    saved before. Also the anomalies seen in the answers."""
    must, must_not, maybe, anomalies = set(initial), set(), set(), []
    for op in ops:          # in the order sent; one per server at a time
        n = op["name"]
        must.discard(n)
        must_not.discard(n)
        maybe.discard(n)
        if op["done"] is None:
            maybe.add(n)
        elif op["error"] is not None:
            anomalies.append(f"{op['kind']} {n} failed: {op['error']}")
            maybe.add(n)
        elif op["kind"] == "load":
            if op["result"].get("persistent") is not True:
                anomalies.append(f"load {n} not persistent: {op['result']}")
                maybe.add(n)
            else:
                must.add(n)
        else:
            if op["result"].get("removed_saved") is not True:
                anomalies.append(f"unload {n} removed no row: "
                                 f"{op['result']}")
            must_not.add(n)
    return must, must_not, maybe, anomalies


# --------------------------------------------------------------------------
# What a killed daemon may leave

def related_procs(base, did):
    """Live processes of this test's daemons: mcpd and its shims (their
    command line names the base dir), the test servers (a copy of the
    binary under the base dir), docker clients (the owner label)."""
    out = []
    for p, (state, _, _) in all_procs().items():
        if state in ("Z", "X"):
            continue
        args = cmdline(p)
        if not args:
            continue
        line = "\0".join(args)
        if str(base) in line or f"io.mcpd.owner={did}" in line:
            out.append(p)
    return out


def orphans(base, did, live):
    keep = {live.pid} | set(descendants(live.pid))
    return [p for p in related_procs(base, did) if p not in keep and
            p != os.getpid()]


# --------------------------------------------------------------------------



def test_kill_9_at_random_moments(container_guard, mcpd_factory, images,
                                  capsys):
    rng = random.Random(SEED)
    t_start = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="mcpd-it-", dir="/tmp"))
    bindir = base / "bin"
    bindir.mkdir()
    ts = bindir / "mcp-testserver"
    shutil.copy2(TESTSERVER, ts)
    specs = {
        "p0": {"command": [str(ts)]},
        "p1": {"command": [str(ts), "--tools", "3"]},
        "p2": {"command": [str(ts), "--start-delay-ms", "100"]},
    }
    container_spec = {"target": "mcpd-test/stdio"}
    store = base / "state" / "enabled.json"
    lines = [f"crash test: seed {SEED}, {ROUNDS} rounds, containers "
             f"{'every ' + str(CONTAINER_EVERY) + ' rounds' if images else 'left out (no docker)'}"]

    def say(text):
        lines.append(text)
        with capsys.disabled():
            print(text, flush=True)

    say("")
    say(lines[0])
    d = mcpd_factory(base=base)
    did = d.rpc.result("mcpd/status")["did"]
    if images:
        container_guard.append(did)
    anomalies = []
    totals = {"ops": 0, "answered": 0, "kill_in_load": 0,
              "kill_in_unload": 0, "kill_idle": 0, "rows_max": 0,
              "containers_left": 0, "tmp_left": 0, "container_rounds": 0,
              "early_rounds": 0}
    used_docker = False
    was_early = False
    try:
        for rnd in range(ROUNDS):
            t_round = time.monotonic()
            with_box = images and rnd % CONTAINER_EVERY == 1
            # Early rounds do not wait for the fresh daemon's restore: the
            # next kill may come during it. The last round always waits.
            early = rnd % EARLY_EVERY == EARLY_EVERY - 1 and rnd < ROUNDS - 1
            totals["early_rounds"] += early
            round_specs = dict(specs)
            if with_box:
                round_specs["c0"] = container_spec
                used_docker = True
                totals["container_rounds"] += 1
                if d.row("c0") is None:
                    # Loaded first, so that the loop may unload it (a load
                    # takes longer than the longest delay before the kill).
                    d.rpc.result("mcpd/load", dict(
                        container_spec, name="c0", persist=True),
                        timeout=120)
            elif d.row("c0") is not None:
                # Not this round's: the container goes before the loop.
                d.rpc.result("mcpd/unload", {"target": "c0"}, timeout=120)
            listed = {r["name"] for r in d.list()}
            initial = {r["name"] for r in
                       json.loads(store.read_bytes())["agents"].get(
                           "default", [])} if store.exists() else set()
            if listed != initial and not was_early:
                anomalies.append(f"round {rnd}: listed {sorted(listed)} "
                                 f"but saved {sorted(initial)}")

            churn = Churn(d.sock, round_specs,
                          {n: n in initial for n in round_specs},
                          random.Random(rng.random()))
            delay = rng.uniform(0.0, 0.4)
            churn.start()
            churn.started.wait(10)
            time.sleep(delay)
            if d.proc.poll() is not None:
                pytest.fail(f"round {rnd}: mcpd {d.pid} ended by itself "
                            f"(status {d.proc.returncode}) before the "
                            f"kill:\n{d.read_stderr()[-3000:]}")
            d.track()       # the children, to check they go too
            os.kill(d.pid, signal.SIGKILL)
            d.proc.wait(timeout=10)
            dead_pid = d.pid
            churn.join(30)
            assert not churn.is_alive(), "the loop did not end"
            if churn.error:
                anomalies.append(f"round {rnd}: loop: {churn.error}")

            ops = churn.ops
            pending = [o for o in ops if o["done"] is None]
            kinds = {o["kind"] for o in pending}
            totals["ops"] += len(ops)
            totals["answered"] += len(ops) - len(pending)
            totals["kill_in_load"] += "load" in kinds
            totals["kill_in_unload"] += "unload" in kinds
            totals["kill_idle"] += not pending
            must, must_not, maybe, bad = expectations(initial, ops)
            anomalies += [f"round {rnd}: {b}" for b in bad]

            # The file as the killed daemon left it.
            tmp_left = store.with_name("enabled.json.tmp").exists()
            totals["tmp_left"] += tmp_left
            if store.exists():
                raw = store.read_bytes()
                try:
                    doc = json.loads(raw)
                except ValueError as e:
                    pytest.fail(f"round {rnd}: enabled.json does not parse "
                                f"after kill -9: {e}: {raw[:500]!r}")
                assert doc.get("version") == 1, doc
                assert set(doc["agents"]) <= {"default"}, doc
                rows = doc["agents"].get("default", [])
            else:
                raw, rows = None, []
            names = [r["name"] for r in rows]
            if len(names) != len(set(names)):
                anomalies.append(f"round {rnd}: a name twice: {names}")
            saved = set(names)
            if must - saved:
                anomalies.append(
                    f"round {rnd}: answered persistent but not in the "
                    f"file: {sorted(must - saved)}")
            if must_not & saved:
                anomalies.append(
                    f"round {rnd}: answered unloaded but still in the "
                    f"file: {sorted(must_not & saved)}")
            totals["rows_max"] = max(totals["rows_max"], len(saved))

            # What the killed daemon left on the engine.
            left_by_kill = []
            if used_docker:
                left_by_kill = [n for n, p in owner_containers(did)
                                if p == str(dead_pid)]
            totals["containers_left"] += len(left_by_kill)

            # A fresh daemon on the same state dir. In early rounds the
            # next round's loop (and kill) starts while it restores; what
            # is checked after a restore is checked at the next round.
            d = mcpd_factory(base=base)
            was_early = early
            if early:
                say(f"round {rnd:2}: kill after {delay * 1000:3.0f} ms "
                    f"{'(+c0) ' if with_box else '      '}"
                    f"ops {len(ops):2} answered {len(ops) - len(pending):2} "
                    f"in flight {','.join(o['kind'] + ' ' + o['name'] for o in pending) or '-':24} "
                    f"rows {len(saved)} {sorted(saved)} maybe "
                    f"{sorted(maybe)} tmp {'left' if tmp_left else '-'} "
                    f"left {len(left_by_kill)}; next round during restore")
                continue
            try:
                restored = poll(
                    lambda: (lambda rs: [rs] if sorted(r["name"] for r in rs)
                             == sorted(saved) and all(
                                 r["state"] == "ready" for r in rs)
                             else None)(d.list()),
                    timeout=60, interval=0.1,
                    what=f"the saved servers {sorted(saved)} to be ready")[0]
            except AssertionError as e:
                anomalies.append(f"round {rnd}: restore: {e}; listed "
                                 f"{d.list()}")
                restored = d.list()
            t_restored = time.monotonic()
            if any(r["persistent"] is not True for r in restored):
                anomalies.append(f"round {rnd}: a restored row is not "
                                 f"persistent: {restored}")
            if store.exists() and store.read_bytes() != raw:
                anomalies.append(f"round {rnd}: the fresh daemon rewrote "
                                 f"enabled.json")

            # Nothing of the killed daemon is left.
            try:
                poll(lambda: not orphans(base, did, d), timeout=20,
                     interval=0.05, what="the killed daemon's processes "
                     "to go")
            except AssertionError:
                left = orphans(base, did, d)
                anomalies.append(f"round {rnd}: processes of the killed "
                                 f"mcpd {dead_pid} left: "
                                 f"{[(p, cmdline(p)) for p in left]}")
                kill_all(left)
            if used_docker:
                try:
                    poll(lambda: not [n for n, p in owner_containers(did)
                                      if p != str(d.pid)],
                         timeout=20, interval=0.25,
                         what="containers of dead daemons to be reaped")
                except AssertionError:
                    stale = [c for c in owner_containers(did)
                             if c[1] != str(d.pid)]
                    anomalies.append(f"round {rnd}: containers of dead "
                                     f"daemons survive: {stale}")
                    subprocess.run([DOCKER, "rm", "-f"] +
                                   [n for n, _ in stale],
                                   capture_output=True, timeout=120)

            say(f"round {rnd:2}: kill after {delay * 1000:3.0f} ms "
                f"{'(+c0) ' if with_box else '      '}"
                f"ops {len(ops):2} answered {len(ops) - len(pending):2} "
                f"in flight {','.join(o['kind'] + ' ' + o['name'] for o in pending) or '-':24} "
                f"rows {len(saved)} {sorted(saved)} maybe {sorted(maybe)} "
                f"tmp {'left' if tmp_left else '-'} "
                f"left {len(left_by_kill)} "
                f"restore {t_restored - t_round:.1f}s "
                f"round {time.monotonic() - t_round:.1f}s")
    finally:
        say(f"totals: {totals}, {time.monotonic() - t_start:.1f} s")
    assert not anomalies, "\n".join(anomalies)
