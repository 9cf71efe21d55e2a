# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The on-demand part of bench/run (issue 26, doc/lifecycle.md), which
# sources this file and lends it its variables and helpers (die,
# start_mcpd, stop_mcpd, ratio, row, tmp, mcpctl, node, everything,
# proc_kb, kb_mib).
#
# Memory: a private mcpd loads 20 server-everything (stdio) --on-demand
# --no-persist and waits until all 20 are idle (each was started once to
# keep its lists, then stopped); the RSS total of mcpd and every process
# under it (VmRSS of /proc/PID/status) is taken. Then the same 20 on
# another private mcpd, always on, once all are ready. Target: idle <=
# 0.1x always-on.
#
# First-call latency: `mcpctl call NAME echo message=hi` timed from start
# to exit, on 5 of the idle servers (each call starts its server: node,
# the handshake, the call) against the same call on 5 warm always-on
# servers; medians, reported (no target).

ondemand_n=20
ondemand_pid_idle=
ondemand_pid_on=

ondemand_cleanup() {
	stop_mcpd "$ondemand_pid_idle" "$tmp/od-idle.sock"
	stop_mcpd "$ondemand_pid_on" "$tmp/od-on.sock"
	ondemand_pid_idle=
	ondemand_pid_on=
}

# ondemand_rss PID: kB of VmRSS of PID and every process under it.
ondemand_rss() {
	local total=0 p kb

	for p in $1 $(pgrep -P "$1" || true; for c in $(pgrep -P "$1" ||
		true); do pgrep -P "$c" || true; done); do
		kb=$(proc_kb "$p" status VmRSS 2>/dev/null) || kb=0
		total=$((total + ${kb:-0}))
	done
	echo "$total"
}

# ondemand_wait SOCK STATE: until every server of SOCK is in STATE (60 s).
ondemand_wait() {
	local n

	for _ in $(seq 600); do
		n=$("$mcpctl" -s "$1" --json list |
			grep -o "\"state\":\"$2\"" | wc -l) || true
		((n == ondemand_n)) && return 0
		sleep 0.1
	done
	die "the $ondemand_n servers did not all become $2 within 60 s"
}

# ondemand_call_ms SOCK NAME: ms of one mcpctl call of echo.
ondemand_call_ms() {
	local t0 t1

	t0=$EPOCHREALTIME
	"$mcpctl" -s "$1" call "$2" echo message=hi >/dev/null ||
		die "mcpctl call $2 failed"
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }'
}

ondemand_median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

ondemand_main() {
	local isock=$tmp/od-idle.sock osock=$tmp/od-on.sock i idle on r
	local cold warm

	echo "on demand: $ondemand_n server-everything, idle vs always on"
	start_mcpd "$isock" "$tmp/od-idle-state" "$tmp/od-idle.log"
	ondemand_pid_idle=$started_pid
	start_mcpd "$osock" "$tmp/od-on-state" "$tmp/od-on.log"
	ondemand_pid_on=$started_pid
	for ((i = 1; i <= ondemand_n; i++)); do
		"$mcpctl" -s "$isock" load --no-persist --on-demand \
			--name "e$i" -- "$node" "$everything" stdio \
			>>"$tmp/od-load.log" 2>&1 ||
			die "mcpctl load --on-demand e$i failed" "$tmp/od-load.log"
		"$mcpctl" -s "$osock" load --no-persist --name "e$i" -- \
			"$node" "$everything" stdio >>"$tmp/od-load.log" 2>&1 ||
			die "mcpctl load e$i failed" "$tmp/od-load.log"
	done
	ondemand_wait "$isock" idle
	ondemand_wait "$osock" ready
	sleep 2 # the idle servers' processes end after their stdin closes
	idle=$(ondemand_rss "$ondemand_pid_idle")
	on=$(ondemand_rss "$ondemand_pid_on")
	r=$(ratio "$idle" "$on")
	echo "  RSS total (mcpd and its processes): idle $(kb_mib "$idle") MiB," \
		"always on $(kb_mib "$on") MiB, ratio $r (target <= 0.1)"
	row "RSS of $ondemand_n idle on-demand servers vs always on" \
		"$(kb_mib "$idle")" MiB "$(kb_mib "$on")" "$r" "ratio<=0.1"

	cold=$(for ((i = 1; i <= 5; i++)); do
		ondemand_call_ms "$isock" "e$i"; echo; done | ondemand_median)
	warm=$(for ((i = 1; i <= 5; i++)); do
		ondemand_call_ms "$osock" "e$i"; echo; done | ondemand_median)
	r=$(ratio "$cold" "$warm")
	echo "  first call (mcpctl call, median of 5): on demand ${cold} ms," \
		"warm ${warm} ms, ratio $r"
	row "first call of an idle on-demand server vs warm (mcpctl call)" \
		"$cold" ms "$warm" "$r" -
	ondemand_cleanup
}
