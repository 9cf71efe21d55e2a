# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The upgrade part of bench/run (issue 26, doc/lifecycle.md), which sources
# this file and lends it its variables and helpers (die, start_mcpd,
# stop_mcpd, free_port, row, tmp, mcpd, mcpctl, node, server, root).
#
# A private mcpd (--listen-http on a loopback port) with 4 C test servers;
# two official SDK clients (tests/integration/upgrade-client.mjs) call echo
# in a loop, one call at a time: one over `mcpctl bridge`, one over
# Streamable HTTP with the default agent's token. Then `mcpctl upgrade
# --binary` to a copy of the built mcpd, upgrade_n times in a row, each once
# both clients have been answered since the last. Each client measures the
# gaps between its consecutive answers: the longest is the longest pause an
# upgrade made in its calls (target <= 100 ms), the median is the cadence
# of its calls without one. mcpd's own pause (pause_ms of mcpd/upgrade: the
# drain begun to the new process adopting) is printed beside, median and
# largest. A failed call is counted and shown (an HTTP one that met its
# keep-alive connection's close at the exec), not a failure of the run.

upgrade_n=10
upgrade_pid=
upgrade_fds=()

upgrade_cleanup() {
	local fd

	for fd in "${upgrade_fds[@]}"; do
		exec {fd}>&-
	done
	upgrade_fds=()
	stop_mcpd "$upgrade_pid" "$tmp/up.sock"
	upgrade_pid=
}

# upgrade_client KIND ARG...: the SDK client over KIND (bridge or http),
# its commands from a fifo on a descriptor kept in upgrade_fd_KIND.
upgrade_client() {
	local kind=$1 fd

	shift
	mkfifo "$tmp/up-$kind.in"
	"$node" "$root/tests/integration/upgrade-client.mjs" \
		"$root/tests/peers" "$@" <"$tmp/up-$kind.in" \
		>"$tmp/up-$kind.out" 2>"$tmp/up-$kind.err" &
	exec {fd}>"$tmp/up-$kind.in"
	upgrade_fds+=("$fd")
	printf -v "upgrade_fd_$kind" %s "$fd"
	upgrade_line "$kind" 1 >/dev/null
}

# upgrade_line KIND N: line N of the client's answers, once it is there
# (60 s at most).
upgrade_line() {
	for _ in $(seq 600); do
		if (($(wc -l <"$tmp/up-$1.out") >= $2)); then
			sed -n "$2p" "$tmp/up-$1.out"
			return
		fi
		sleep 0.1
	done
	die "the SDK client over $1 did not answer" "$tmp/up-$1.err"
}

# upgrade_ask KIND COMMAND: the client's answer to COMMAND.
upgrade_ask() {
	local fd n

	fd=upgrade_fd_$1
	n=$(($(wc -l <"$tmp/up-$1.out") + 1))
	echo "$2" >&"${!fd}"
	upgrade_line "$1" "$n"
}

# upgrade_answers KIND: how many answers the client has had.
upgrade_answers() {
	upgrade_ask "$1" count | sed 's/.*"answers":\([0-9]*\).*/\1/'
}

# upgrade_served: until both clients have been answered again (60 s).
upgrade_served() {
	local kind n

	for kind in bridge http; do
		n=$(upgrade_answers "$kind")
		for _ in $(seq 600); do
			(($(upgrade_answers "$kind") > n)) && continue 2
			sleep 0.1
		done
		die "the SDK client over $kind was not answered again" \
			"$tmp/up.log"
	done
}

# upgrade_field JSON KEY: a number of the client's stop answer (a gap in
# ms with one decimal; failures: how many).
upgrade_field() {
	"$node" -e 'const [json, key] = process.argv.slice(1);
		const r = JSON.parse(json);
		console.log(key === "failures" ? r.failures.length :
		    key.endsWith("_ms") ? r[key].toFixed(1) : r[key]);' \
		"$1" "$2"
}

# upgrade_median: the median of the numbers on stdin.
upgrade_median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

upgrade_main() {
	local sock=$tmp/up.sock port i r kind summary longest median failed
	local binary=$tmp/mcpd-upgrade pauses=$tmp/up-pauses token

	echo "upgrade in place: 2 SDK clients calling in a loop (bridge," \
		"HTTP), $upgrade_n upgrades"
	port=$(free_port)
	start_mcpd "$sock" "$tmp/up-state" "$tmp/up.log" \
		--listen-http "127.0.0.1:$port"
	upgrade_pid=$started_pid
	for i in 0 1 2 3; do
		"$mcpctl" -s "$sock" load --no-persist --name "s$i" -- \
			"$server" >>"$tmp/up-load.log" 2>&1 ||
			die "mcpctl load s$i failed" "$tmp/up-load.log"
	done
	token=$("$mcpctl" -s "$sock" token 2>/dev/null) ||
		die "mcpctl token failed"
	cp "$mcpd" "$binary"
	upgrade_client bridge "$mcpctl" -s "$sock" bridge
	upgrade_client http --http "http://127.0.0.1:$port/mcp" "$token"
	for kind in bridge http; do
		r=$(upgrade_ask "$kind" "loop s0__echo,s1__echo,s2__echo,s3__echo $kind")
		[[ $r == '{"looping":true}' ]] ||
			die "the SDK client over $kind: $r" "$tmp/up-$kind.err"
	done
	upgrade_served
	: >"$pauses"
	for ((i = 1; i <= upgrade_n; i++)); do
		"$mcpctl" -s "$sock" --json upgrade --binary "$binary" \
			>"$tmp/up-answer.json" 2>"$tmp/up-upgrade.err" ||
			die "mcpctl upgrade $i failed" "$tmp/up-upgrade.err"
		sed 's/.*"pause_ms":\([0-9]*\).*/\1/' "$tmp/up-answer.json" \
			>>"$pauses"
		upgrade_served
	done
	for kind in bridge http; do
		summary=$(upgrade_ask "$kind" stop)
		longest=$(upgrade_field "$summary" longest_gap_ms)
		median=$(upgrade_field "$summary" median_gap_ms)
		failed=$(upgrade_field "$summary" failures)
		echo "  over $kind: longest pause between two answers" \
			"$longest ms, median gap $median ms," \
			"$(upgrade_field "$summary" calls) calls, $failed failed" \
			"(target <= 100 ms)"
		row "upgrade: longest pause of an SDK client's calls, $kind" \
			"$longest" ms "$median" - "value<=100"
	done
	echo "  mcpd's pause (drain to adopted), $upgrade_n upgrades:" \
		"median $(upgrade_median <"$pauses") ms, largest" \
		"$(sort -n "$pauses" | tail -n 1) ms"
	upgrade_cleanup
}
