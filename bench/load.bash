# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The load part of bench/run (BENCH_ONLY=load), which sources it and runs
# load_main, lending it its variables and helpers (die, field, free_port,
# start_mcpd, stop_mcpd, row, ratio, cpu_ticks).
#
# bench/mcpd-load.c drives Streamable HTTP itself (one thread, epoll,
# keep-alive connections with TCP_NODELAY, one request in flight on each;
# a session per connection in the 2025 era, stateless requests in the
# 2026-07-28 era; JSON and event-stream answers both read), so that the
# load generator is not what is measured. To show it: its rate against its
# own trivial responder (mcpd-load --serve: one thread, epoll, that
# answers every POST at once) is its ceiling, and its CPU time is printed
# beside every figure. Then, each at concurrency 1, 16 and 64 for
# BENCH_LOAD_SECONDS (default 5) after a second's warm-up (which starts
# once every connection is through its handshake):
#   - the C test server's own Streamable HTTP (mcp-testserver --http): the
#     floor a relay in front of it adds to;
#   - mcpd's front (--listen-http, /mcp/ts: the test server over stdio
#     behind it), both eras;
#   - bench/evhttp-floor: libevent's evhttp answering every POST at once
#     with a fixed JSON result (--accept json), the floor of any front on
#     evhttp, as mcpd's is: what it does alone bounds mcpd's front.
# For mcpd it prints mcpd's CPU time per 10,000 calls (utime + stime of
# /proc/PID/stat, before and after) and its RSS after the run.

ldir=$tmp/load
load=$build/mcpd-load
load_secs=${BENCH_LOAD_SECONDS:-5}
load_serve_pid=
load_floor_pid=
load_ts_pid=
load_mcpd_pid=

load_stop() {
	local p

	for p in $load_serve_pid $load_floor_pid $load_ts_pid; do
		pkill -P "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	load_serve_pid=""
	load_floor_pid=""
	load_ts_pid=""
	stop_mcpd "$load_mcpd_pid" "$ldir/s.sock"
	load_mcpd_pid=""
}

# wait_port PORT: until something accepts on 127.0.0.1:PORT (10 s).
wait_port() {
	for _ in $(seq 100); do
		(: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	die "nothing listens on 127.0.0.1:$1 after 10 s"
}

# load_one WHAT CONC URL [ARG...]: one mcpd-load run; prints its line with
# what=WHAT added.
load_one() {
	local what=$1 conc=$2 url=$3 log=$ldir/$1-$2.log l

	shift 3
	l=$("$load" -c "$conc" -d "$load_secs" -w 1 "$@" "$url" 2>"$log") ||
		die "mcpd-load $what at concurrency $conc failed" "$log"
	echo "what=$what $l"
}

load_main() {
	local port tsport mport tok l t0 t1 calls hz

	mkdir -p "$ldir"
	[[ -x $load ]] || die "$load is missing; run 'make all' first"
	hz=$(getconf CLK_TCK)
	port=$(free_port)
	"$load" --serve "$port" >"$ldir/serve.log" 2>&1 &
	load_serve_pid=$!
	fport=$(free_port)
	"$build/evhttp-floor" "$fport" >"$ldir/floor.log" 2>&1 &
	load_floor_pid=$!
	tsport=$(free_port)
	"$server" --http "$tsport" >"$ldir/ts.log" 2>&1 &
	load_ts_pid=$!
	mport=$(free_port)
	start_mcpd "$ldir/s.sock" "$ldir/state" "$ldir/mcpd.log" \
		--listen-http "127.0.0.1:$mport"
	load_mcpd_pid=$started_pid
	"$mcpctl" -s "$ldir/s.sock" load --name ts --no-persist -- "$server" \
		>"$ldir/load.log" 2>&1 || die "mcpctl load failed" "$ldir/load.log"
	tok=$("$mcpctl" -s "$ldir/s.sock" token 2>/dev/null)
	wait_port "$port"
	wait_port "$fport"
	wait_port "$tsport"

	echo
	echo "load generator: bench/mcpd-load (C, epoll, keep-alive," \
		"TCP_NODELAY), ${load_secs} s a figure"
	printf '%-26s %5s %9s %7s %7s %8s %13s %8s\n' what conns calls/s \
		p50_us p99_us gen_cpu mcpd_cpu/10k mcpd_rss
	for conc in 1 16 64; do
		for what in ceiling evhttp-floor ts-http mcpd-2025 mcpd-2026; do
			case $what in
			ceiling) l=$(load_one "$what" "$conc" \
				"http://127.0.0.1:$port/mcp") ;;
			evhttp-floor) l=$(load_one "$what" "$conc" \
				"http://127.0.0.1:$fport/mcp" --accept json) ;;
			ts-http) l=$(load_one "$what" "$conc" \
				"http://127.0.0.1:$tsport/mcp") ;;
			mcpd-*)
				t0=$(cpu_ticks "$load_mcpd_pid")
				l=$(load_one "$what" "$conc" \
					"http://127.0.0.1:$mport/mcp/ts" \
					--token "$tok" --era "${what#mcpd-}")
				t1=$(cpu_ticks "$load_mcpd_pid")
				calls=$(field "$l" calls)
				l+=" mcpd_cpu_ms_10k=$(awk -v d=$((t1 - t0)) \
					-v h="$hz" -v n="$calls" \
					'BEGIN { printf "%.0f", d * 1000 / h * 10000 / n }')"
				l+=" mcpd_rss_kb=$(awk '/^VmRSS/ { print $2 }' \
					"/proc/$load_mcpd_pid/status")"
				;;
			esac
			printf '%-26s %5s %9s %7s %7s %8s %13s %8s\n' \
				"$(field "$l" what)" "$conc" "$(field "$l" rate)" \
				"$(field "$l" p50_us)" "$(field "$l" p99_us)" \
				"$(field "$l" cpu_s)" \
				"$(if [[ $what == mcpd-* ]]; then
					echo "$(field "$l" mcpd_cpu_ms_10k) ms"
				else echo -; fi)" \
				"$(if [[ $what == mcpd-* ]]; then
					echo "$(field "$l" mcpd_rss_kb) kB"
				else echo -; fi)"
			eval "load_${what//-/_}_$conc=\"\$l\""
		done
	done
	# shellcheck disable=SC2154 # set by the eval above
	row "HTTP front calls/s vs generator ceiling, c=16" \
		"$(field "$load_mcpd_2025_16" rate)" calls/s \
		"$(field "$load_ceiling_16" rate)" \
		"$(ratio "$(field "$load_mcpd_2025_16" rate)" \
			"$(field "$load_ceiling_16" rate)")" -
	# shellcheck disable=SC2154
	row "HTTP front calls/s vs evhttp alone (its floor), c=16" \
		"$(field "$load_mcpd_2025_16" rate)" calls/s \
		"$(field "$load_evhttp_floor_16" rate)" \
		"$(ratio "$(field "$load_mcpd_2025_16" rate)" \
			"$(field "$load_evhttp_floor_16" rate)")" -
	# shellcheck disable=SC2154
	row "HTTP front p50 added over the C server's HTTP, c=1" \
		$(($(field "$load_mcpd_2025_1" p50_us) - \
			$(field "$load_ts_http_1" p50_us))) us \
		"$(field "$load_ts_http_1" p50_us)" - "value<=50"
	load_stop
}
