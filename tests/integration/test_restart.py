# SPDX-License-Identifier: ISC
"""Server death and restart, stale handles, and the daemon's own end:
mcpd/shutdown, SIGTERM and kill -9 leave no process behind."""

import os
import re
import signal
import subprocess

from conftest import (MCPD, OUTCOME_UNKNOWN, STALE_HANDLE, TIMEOUT,
                      UNAVAILABLE, Client, descendants, group_members, is_alive, pgid_of, poll,
                      process_groups, rpc_error_of, wait_gone)

NOT_READY = ("restarting", "starting", "connecting")


def test_killed_server_restarts_and_pending_call_is_outcome_unknown(mcpd):
    mcpd.load_testserver("ts")
    row = mcpd.row("ts")
    pid, gen = row["pid"], row["generation"]
    old_handle = f"ts.{gen}/echo"
    with mcpd.client(timeout=30) as c:
        pending = c.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                          "arguments": {"ms": 5000}})
        # The echo sent after it is answered only once the server has read
        # both: the sleep is then in flight at the server.
        probe = c.request("mcpd/call", {"server": "ts", "tool": "echo",
                                        "arguments": {"message": "probe"}})
        assert c.response(probe, timeout=10)["result"][
            "structuredContent"] == {"message": "probe"}
        os.kill(pid, signal.SIGKILL)
        resp = c.response(pending, timeout=10)
    err = resp.get("error")
    assert err is not None, resp
    assert err["code"] == OUTCOME_UNKNOWN
    assert err["data"]["kind"] == "outcome-unknown"
    assert err["data"]["execution_outcome"] == "unknown"

    row = mcpd.wait_row("ts", lambda r: r["state"] == "ready" and
                        r["restarts"] == 1, what="ts ready after 1 restart")
    assert row["pid"] != pid and is_alive(row["pid"])
    assert row["generation"] != gen
    assert isinstance(row["last_error"], str)
    assert re.search(r"signal 9|SIGKILL|killed", row["last_error"]), \
        row["last_error"]

    e = rpc_error_of(mcpd.rpc.result, "mcpd/call",
                     {"handle": old_handle, "arguments": {"message": "x"}})
    assert e.code == STALE_HANDLE
    assert e.data["current_generation"] == row["generation"]
    assert mcpd.call("ts", "echo", {"message": "back"})[
        "structuredContent"] == {"message": "back"}
    assert [t["handle"] for t in mcpd.tools("ts")
            if t["name"] == "echo"] == [f"ts.{row['generation']}/echo"]
    # mcpctl logs tells the exit and the restart, with their times, apart
    # from what the server wrote.
    stamp = r"\[mcpd \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] "
    notes = [l for l in mcpd.logs("ts") if l.startswith("[mcpd ")]
    assert all(re.match(stamp, l) for l in notes), notes
    said = [re.sub(stamp, "", l) for l in notes]
    assert said[0] == f"connected: generation {gen}, protocol " \
        f"{row['protocol_version']}, {row['tools']} tools", said
    assert re.fullmatch(r"connection lost: the server was killed by "
                        r"signal 9.*", said[1]), said
    assert said[2] == "restarting in 500 ms", said
    assert said[3].startswith(f"connected: generation {row['generation']},")


def test_crashes_restart_with_backoff(mcpd):
    mcpd.load_testserver("ts")
    pids = []
    for n in (1, 2, 3):
        row = mcpd.row("ts")
        pids.append(row["pid"])
        e = rpc_error_of(mcpd.call, "ts", "crash", {"code": 3})
        assert e.code == OUTCOME_UNKNOWN
        # Between the death and the new connection the server is not
        # ready, and says why.
        row = mcpd.row("ts")
        assert row["state"] in NOT_READY, row
        assert row["restarts"] in (n - 1, n)
        assert re.search(r"\b3\b", row["last_error"] or ""), row
        row = mcpd.wait_row("ts", lambda r, n=n: r["state"] == "ready" and
                            r["restarts"] == n, timeout=30,
                            what=f"ready after {n} restarts")
        # The reason of the last restart stays visible.
        assert re.search(r"\b3\b", row["last_error"] or ""), row
    assert len(set(pids + [row["pid"]])) == 4
    assert [p for p in pids if is_alive(p)] == []
    assert process_groups(mcpd.pid) == {pgid_of(row["pid"])}


def test_clean_exit_is_restarted_too(mcpd):
    mcpd.load_testserver("ts", "--exit-after", "2")
    pid = mcpd.row("ts")["pid"]
    for i in range(2):
        assert mcpd.call("ts", "echo", {"message": str(i)})[
            "structuredContent"] == {"message": str(i)}
    row = mcpd.wait_row("ts", lambda r: r["state"] == "ready" and
                        r["restarts"] == 1, what="ts ready after its exit")
    assert row["pid"] != pid
    wait_gone([pid])
    assert mcpd.logs("ts").count(
        "mcp-testserver: answered 2 calls, exiting") == 1


def test_calls_while_restarting_wait_for_it(mcpd):
    """A restart is invisible to callers (issue 26, doc/lifecycle.md): a
    call that was not sent waits for the new connection, within its own
    deadline."""
    # A start delay keeps the new process from being ready for a while.
    mcpd.load_testserver("ts", "--start-delay-ms", "3000")
    e = rpc_error_of(mcpd.call, "ts", "crash")
    assert e.code == OUTCOME_UNKNOWN
    row = mcpd.row("ts")
    assert row["state"] in NOT_READY
    # Its deadline ends before the restart does: timed out, nothing sent.
    e = rpc_error_of(mcpd.call, "ts", "echo", {"message": "x"},
                     timeout_ms=200)
    assert e.code == TIMEOUT and e.data["kind"] == "timeout", e
    assert e.message == ("server ts did not start within the call's "
                         "deadline (200 ms); nothing was sent"), e.message
    # One with time enough is answered by the new connection.
    assert mcpd.call("ts", "echo", {"message": "y"})[
        "structuredContent"] == {"message": "y"}
    assert mcpd.row("ts")["restarts"] == 1


def test_logs_are_kept_across_restarts(mcpd):
    mcpd.load_testserver("ts")
    mcpd.call("ts", "stderr", {"lines": 2, "text": "before-crash"})
    mcpd.wait_log("ts", lambda ls: "before-crash 1" in ls)
    rpc_error_of(mcpd.call, "ts", "crash")
    mcpd.wait_row("ts", lambda r: r["state"] == "ready" and
                  r["restarts"] == 1)
    lines = mcpd.logs("ts")
    assert "before-crash 0" in lines and "before-crash 1" in lines
    assert "crashing" in lines


def test_unload_while_restarting(mcpd):
    mcpd.load_testserver("ts", "--start-delay-ms", "3000")
    rpc_error_of(mcpd.call, "ts", "crash")
    assert mcpd.row("ts")["state"] in NOT_READY
    mcpd.rpc.result("mcpd/unload", {"target": "ts"}, timeout=30)
    assert mcpd.list() == []
    wait_gone(mcpd.seen_pids, what="every ts process")
    assert descendants(mcpd.pid) == []


def load_two(d):
    d.load_testserver("ts")
    d.load_everything("everything")
    pids = [r["pid"] for r in d.list()]
    assert len(pids) == 2 and all(is_alive(p) for p in pids)
    family = descendants(d.pid)
    assert set(pids) <= set(family)
    groups = process_groups(d.pid)
    assert len(groups) == 2 and pgid_of(d.pid) not in groups
    return groups, family


def test_kill_9_mcpd_leaves_no_child(mcpd):
    groups, family = load_two(mcpd)
    os.kill(mcpd.pid, signal.SIGKILL)
    mcpd.proc.wait(timeout=10)
    wait_gone(family, what="mcpd's children after kill -9 mcpd")
    assert group_members(groups) == []


def test_shutdown_stops_servers_and_removes_socket(mcpd):
    groups, family = load_two(mcpd)
    with mcpd.client(timeout=30) as c:
        assert c.result("mcpd/shutdown", timeout=30) == {}
        # Answered after every server has stopped.
        assert [p for p in family if is_alive(p)] == []
        c.wait_closed(timeout=10)
    assert mcpd.proc.wait(timeout=10) == 0
    assert not mcpd.sock.exists()
    assert group_members(groups) == []


def test_shutdown_lets_calls_in_flight_finish(mcpd_factory):
    """Calls in flight when the shutdown starts finish within --stop-grace,
    like admitted jobs; a new call is refused at once."""
    d = mcpd_factory("--stop-grace", "10000")
    d.load_testserver("ts")
    with d.client(timeout=30) as a, d.client(timeout=30) as b, \
            d.client(timeout=30) as c:
        slow = a.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 3000}})
        probe = a.request("mcpd/call", {"server": "ts", "tool": "echo",
                                        "arguments": {"message": "p"}})
        a.response(probe)
        stop = b.request("mcpd/shutdown")
        # c's call comes after the stop began (another connection's
        # request may be read first).
        poll(lambda: "shutting down: stopping" in d.read_stderr(),
             what="the stop to begin")
        e = c.error("mcpd/call", {"server": "ts", "tool": "echo",
                                  "arguments": {"message": "late"}})
        assert e["code"] == UNAVAILABLE, e
        resp = a.response(slow, timeout=20)
        assert resp["result"]["content"] == [
            {"type": "text", "text": "slept 3000 ms"}], resp
        assert b.response(stop, timeout=20)["result"] == {}
    assert d.proc.wait(timeout=10) == 0


def test_shutdown_cancels_calls_at_the_end_of_the_grace(mcpd_factory):
    """What still runs when the grace ends is cancelled upstream
    (notifications/cancelled) and answered outcome-unknown; the stop then
    goes on in order (exit 0, not a forced stop)."""
    d = mcpd_factory("--stop-grace", "1000")
    log = d.base / "ts.log"     # outlives the pipe mcpd closes
    d.load_testserver("ts", "--log-file", log)
    with d.client(timeout=30) as a, d.client(timeout=30) as b:
        slow = a.request("mcpd/call", {"server": "ts", "tool": "sleep_ms",
                                       "arguments": {"ms": 20000}})
        probe = a.request("mcpd/call", {"server": "ts", "tool": "echo",
                                        "arguments": {"message": "p"}})
        a.response(probe)
        stop = b.request("mcpd/shutdown")
        resp = a.response(slow, timeout=10)
        assert resp["error"]["code"] == OUTCOME_UNKNOWN, resp
        assert resp["error"]["data"]["execution_outcome"] == "unknown"
        assert "cancelled (mcpd is shutting down; mcpd sent " \
            "notifications/cancelled)" in resp["error"]["message"], resp
        assert b.response(stop, timeout=20)["result"] == {}
    assert d.proc.wait(timeout=10) == 0
    err = d.read_stderr()
    assert "calls still in flight are cancelled" in err, err
    assert "forced" not in err, err
    assert re.search(r"^client cancelled \d+ \(mcpd is shutting down\)$",
                     log.read_text(), re.M), log.read_text()


def test_sigterm_stops_servers_and_removes_socket(mcpd):
    groups, family = load_two(mcpd)
    mcpd.proc.send_signal(signal.SIGTERM)
    assert mcpd.proc.wait(timeout=20) == 0
    assert not mcpd.sock.exists()
    assert [p for p in family if is_alive(p)] == []
    assert group_members(groups) == []


def test_stale_socket_is_replaced(mcpd_factory):
    d1 = mcpd_factory()
    os.kill(d1.pid, signal.SIGKILL)
    d1.proc.wait(timeout=10)
    assert d1.sock.exists()     # left behind by the killed daemon
    d2 = mcpd_factory(base=d1.base)
    assert d2.sock == d1.sock
    assert d2.rpc.result("mcpd/status")["pid"] == d2.pid


def test_second_daemon_does_not_take_a_live_socket(mcpd):
    mcpd.load_testserver("ts")
    try:
        p = subprocess.run(
            [str(MCPD), "-d", "-s", str(mcpd.sock), "-S",
             str(mcpd.base / "state2")], stdin=subprocess.DEVNULL,
            capture_output=True, timeout=15, env=mcpd.env)
    except subprocess.TimeoutExpired:
        raise AssertionError(
            "a second mcpd on a live socket kept running") from None
    assert p.returncode != 0
    assert str(mcpd.sock) in p.stderr.decode()
    # The first daemon still owns its socket and its server.
    with Client(mcpd.sock) as c:
        assert c.result("mcpd/status")["pid"] == mcpd.pid
    assert mcpd.call("ts", "echo", {"message": "mine"})[
        "structuredContent"] == {"message": "mine"}
