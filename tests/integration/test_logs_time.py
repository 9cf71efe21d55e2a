# SPDX-License-Identifier: ISC
"""Server log lines with the time mcpd read them (mcpctl logs -t), and the
lines kept across a restart of mcpd: written to <state>/logs/<id>.log at a
clean stop, read back into the restored server's log at the next start
(issue 22, item 9)."""

import re
import signal
import time
from datetime import datetime, timezone

import pytest

from conftest import poll

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
RESTARTED = re.compile(r"-- mcpd restarted at (" + ISO + r") --")


def iso_ms(text):
    """An ISO 8601 UTC time with milliseconds as ms since the epoch."""
    t = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return int(t.replace(tzinfo=timezone.utc).timestamp() * 1000 + 0.5)


def now_ms():
    return time.time_ns() // 1_000_000


def write_lines(d, text, n):
    d.call("ts", "stderr", {"lines": n, "text": text})
    want = [f"{text} {i}" for i in range(n)]
    d.wait_log("ts", lambda ls: all(w in ls for w in want),
               what=f"the lines {text} 0..{n - 1}")
    return want


def logs_with_times(d):
    r = d.rpc.result("mcpd/logs", {"server": "ts", "lines": 0})
    assert len(r["times"]) == len(r["lines"]), r
    return list(zip(r["times"], r["lines"]))


def shutdown(d, how="shutdown"):
    """mcpctl shutdown (as a user stops mcpd) or SIGTERM (as systemd
    does), and its end."""
    d.list()    # remembers the children, for teardown's check
    if how == "shutdown":
        r = d.ctl("shutdown", is_json=False)
        assert r.rc == 0, r
    else:
        d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=60) == 0, d.read_stderr()


def saved_log(d, sid):
    return d.state / "logs" / f"{sid}.log"


def test_logs_t_prints_the_time_mcpd_read_each_line(mcpd):
    mcpd.load_testserver("ts")
    before = now_ms()
    want = write_lines(mcpd, "timed", 3)
    after = now_ms()

    r = mcpd.ctl("logs", "-t", "ts", is_json=False)
    assert r.rc == 0 and r.err == "", r
    stamped = {}
    for line in r.out.splitlines():
        m = re.fullmatch(r"(" + ISO + r") (.*)", line)
        assert m, line
        stamped[m.group(2)] = m.group(1)
    for w in want:
        assert before <= iso_ms(stamped[w]) <= after, (w, stamped[w],
                                                       before, after)
    # In order: a later line was not read before an earlier one.
    assert [iso_ms(stamped[w]) for w in want] == \
        sorted(iso_ms(stamped[w]) for w in want)

    # --json: "times" beside "lines", the same times -t printed.
    j = mcpd.ctl("logs", "ts")
    assert j.rc == 0, j
    assert len(j.json["times"]) == len(j.json["lines"]), j.out
    got = dict(zip(j.json["lines"], j.json["times"]))
    assert {w: got[w] for w in want} == {w: stamped[w] for w in want}

    # mcpd's own notes say their time once with -t: "[mcpd] ...".
    notes = [l for l in r.out.splitlines() if " [mcpd" in l]
    assert notes, r.out
    for n in notes:
        assert re.fullmatch(ISO + r" \[mcpd\] \S.*", n), n

    # Without -t, the lines as they were.
    plain = mcpd.ctl("logs", "ts", is_json=False)
    assert [l for l in plain.out.splitlines() if l.startswith("timed ")] \
        == want, plain


@pytest.mark.parametrize("how", ["shutdown", "sigterm"])
def test_logs_are_kept_across_a_shutdown_and_start(mcpd_factory, how):
    d = mcpd_factory()
    d.load_testserver("ts", persist=True)
    sid = d.row("ts")["id"]
    write_lines(d, "before-restart", 2)
    old = logs_with_times(d)
    shutdown(d, how)
    assert saved_log(d, sid).read_bytes().startswith(b"mcpd-logs 1\n")

    start = now_ms()
    d2 = mcpd_factory(base=d.base)
    d2.wait_row("ts", lambda r: r["state"] == "ready", timeout=60,
                what="ts restored and ready")
    new = logs_with_times(d2)
    # Every line of before, with its own time, then the separator.
    assert new[:len(old)] == old, (old, new)
    sep_time, sep = new[len(old)]
    m = RESTARTED.fullmatch(sep)
    assert m, sep
    assert m.group(1) == sep_time
    assert start <= iso_ms(sep_time) <= now_ms()
    # This run's lines come after it (mcpd's note of the new connection).
    assert any(l.startswith("[mcpd ") and " connected: generation " in l
               for _, l in new[len(old) + 1:]), new
    # Read back, the file is gone: a crash from here shows no stale copy.
    assert not saved_log(d2, sid).exists()

    r = d2.ctl("logs", "ts", is_json=False)
    lines = r.out.splitlines()
    assert lines[:len(old)] == [l for _, l in old], r
    assert RESTARTED.fullmatch(lines[len(old)]), r


def test_a_corrupt_saved_log_is_ignored_and_the_server_starts(mcpd_factory):
    d = mcpd_factory()
    d.load_testserver("ts", persist=True)
    sid = d.row("ts")["id"]
    write_lines(d, "lost", 1)
    shutdown(d)
    path = saved_log(d, sid)
    path.write_bytes(b"mcpd-logs 1\n12 fine\nnot a time\n")

    d2 = mcpd_factory(base=d.base)
    d2.wait_row("ts", lambda r: r["state"] == "ready", timeout=60,
                what="ts restored and ready")
    why = 'line 3 does not start with a time in ms and a space'
    poll(lambda: f"the log saved at mcpd's last stop is ignored and left "
         f"as it is ({path}): {why}" in d2.read_stderr(),
         what="the warning about the corrupt saved log")
    lines = d2.logs("ts")
    assert not any(RESTARTED.fullmatch(l) for l in lines), lines
    assert not any(l.startswith("lost ") or l == "fine" for l in lines), \
        lines
    assert re.fullmatch(r"\[mcpd \S+\] the log saved at mcpd's last stop "
                        r"is ignored: " + re.escape(why), lines[0]), lines
    # Left as it was; the unload of the server removes it.
    assert path.read_bytes() == b"mcpd-logs 1\n12 fine\nnot a time\n"
    r = d2.ctl("unload", "ts")
    assert r.rc == 0, r
    assert not path.exists()


def test_a_saved_log_too_large_for_log_lines_is_ignored(mcpd_factory):
    """Larger than what the current --log-lines can make (it was lowered
    since): ignored with a warning, left as it is."""
    d = mcpd_factory()
    d.load_testserver("ts", persist=True)
    sid = d.row("ts")["id"]
    write_lines(d, "x" * 4000, 2)
    shutdown(d)
    path = saved_log(d, sid)
    kept = path.read_bytes()
    assert len(kept) > 12 + 4113, len(kept)

    d2 = mcpd_factory("--log-lines", "1", base=d.base)
    d2.wait_row("ts", lambda r: r["state"] == "ready", timeout=60,
                what="ts restored and ready")
    why = "it is larger than 4125 bytes, the most --log-lines 1 can make"
    poll(lambda: f"the log saved at mcpd's last stop is ignored and left "
         f"as it is ({path}): {why}" in d2.read_stderr(),
         what="the warning about the saved log too large")
    assert path.read_bytes() == kept
    assert not any(l.startswith("x" * 4000) for l in d2.logs("ts"))
