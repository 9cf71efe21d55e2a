# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The views part of bench/run (issue 23, doc/views.md), which sources this
# file and lends it its variables and helpers (die, start_mcpd, stop_mcpd,
# field, ratio, row, tmp, build, mcpd, mcpctl, server, node, everything,
# root).
#
# A private mcpd (default --tool-budget, 12000 tokens) runs 10 servers:
# the issue's four small ones, server-memory, server-filesystem (on an
# empty directory), server-everything and server-sequential-thinking,
# those of them tests/peers has (server-everything at least), then test
# servers with --tools 100 (112 tools each) up to 10. `mcpctl tools --cost` gives the bytes and
# estimated tokens (bytes/4) of the whole view's tools/list and of what
# the view lists over its budget (search mode: mcpd__find_tools and
# mcpd__call_tool; nothing is pinned without a profile); target: search
# mode <= 0.1x of everything. Then find_tools's p50: common/toolsearch.c
# alone (build/toolsearch-bench: the fixture's tools copied to 1,000, its
# 30 queries 200 times each; also the time to build the index, which a
# change of the view costs), target <= 1 ms; and a whole mcpd__find_tools
# call through mcpd on its socket (a raw gateway session, 300 calls after
# 20 unmeasured, the fixture's queries in turn), reported.

views_pid=

views_cleanup() {
	stop_mcpd "$views_pid" "$tmp/v.sock"
	views_pid=
}

views_main() {
	local vsock=$tmp/v.sock cost micro e2e i

	local mcp=$peers/@modelcontextprotocol names=() n
	declare -A js=([memory]=$mcp/server-memory/dist/index.js
		[filesystem]=$mcp/server-filesystem/dist/index.js
		[everything]=$everything
		[sequential-thinking]=$mcp/server-sequential-thinking/dist/index.js)
	declare -A arg=([filesystem]=$tmp/files [everything]=stdio)

	start_mcpd "$vsock" "$tmp/vstate" "$tmp/views-mcpd.log"
	views_pid=$started_pid
	mkdir -p "$tmp/files"
	for n in memory filesystem everything sequential-thinking; do
		[[ -f ${js[$n]} ]] || continue
		"$mcpctl" -s "$vsock" load --name "$n" -- "$node" "${js[$n]}" \
			${arg[$n]:+"${arg[$n]}"} >>"$tmp/views-load.log" 2>&1 ||
			die "mcpctl load $n failed" "$tmp/views-load.log"
		names+=("$n")
	done
	for ((i = 1; ${#names[@]} < 10; i++)); do
		"$mcpctl" -s "$vsock" load --name "ts$i" -- "$server" \
			--tools 100 >>"$tmp/views-load.log" 2>&1 ||
			die "mcpctl load ts$i failed" "$tmp/views-load.log"
		names+=("ts$i")
	done
	cost=$("$mcpctl" -s "$vsock" --json tools --cost) ||
		die "mcpctl tools --cost failed"
	cost=$(python3 -c '
import json, sys
c = json.load(sys.stdin)
s = c.get("search") or {"tools": "-", "bytes": "-", "tokens": "-"}
print("tools=%(tools)s bytes=%(bytes)s tokens=%(tokens)s budget=%(budget)s"
      % c, "stools=%(tools)s sbytes=%(bytes)s stokens=%(tokens)s" % s)
' <<<"$cost")
	micro=$("$build/toolsearch-bench" "$root/tests/fixtures/toolsearch" \
		1000) || die "toolsearch-bench failed"
	e2e=$(python3 - "$vsock" "$root/tests/fixtures/toolsearch" <<'PY'
import json, socket, sys, time
sock, fixtures = sys.argv[1], sys.argv[2]
queries = [q["query"] for q in json.load(open(fixtures + "/queries.json"))]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
f = s.makefile("rwb")
def ask(i, method, params):
    f.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                         "params": params}) + "\n").encode())
    f.flush()
    while True:
        m = json.loads(f.readline())
        if m.get("id") == i:
            if "error" in m:
                sys.exit(f"{method}: {m['error']}")
            return m["result"]
ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "bench", "version": "1"}})
us = []
for i in range(320):
    t0 = time.perf_counter()
    ask(i + 1, "tools/call", {"name": "mcpd__find_tools", "arguments":
                              {"query": queries[i % len(queries)]}})
    if i >= 20:
        us.append((time.perf_counter() - t0) * 1e6)
us.sort()
print(f"p50_us={us[len(us) // 2]:.0f} p99_us={us[len(us) * 99 // 100]:.0f}")
PY
) || die "mcpd__find_tools through mcpd failed"
	views_cleanup

	echo "views: tools/list of 10 servers (${names[*]}; ts: test" \
		"servers --tools 100) through the gateway,"
	echo "bytes and estimated tokens (bytes/4; doc/views.md), budget" \
		"$(field "$cost" budget) tokens:"
	printf '  %-34s %6s %8s %8s\n' "" tools bytes tokens \
		"every tool" "$(field "$cost" tools)" "$(field "$cost" bytes)" \
		"$(field "$cost" tokens)" \
		"search mode (over the budget)" "$(field "$cost" stools)" \
		"$(field "$cost" sbytes)" "$(field "$cost" stokens)"
	echo "search mode / everything (tokens):" \
		"$(awk -v m="$(field "$cost" stokens)" \
			-v d="$(field "$cost" tokens)" \
			'BEGIN { printf "%.4f", m / d }')" "(target <= 0.1)"
	echo "find_tools over $(field "$micro" tools) tools" \
		"(common/toolsearch.c): p50 $(field "$micro" find_p50_us) us," \
		"p99 $(field "$micro" find_p99_us) us; building the index" \
		"$(field "$micro" build_us) us"
	echo "mcpd__find_tools through mcpd (socket, round trip):" \
		"p50 $(field "$e2e" p50_us) us, p99 $(field "$e2e" p99_us) us"
	row "tools/list tokens, search mode vs everything" \
		"$(field "$cost" stokens)" tokens "$(field "$cost" tokens)" \
		"$(ratio "$(field "$cost" stokens)" "$(field "$cost" tokens)")" \
		"ratio<=0.1"
	row "find_tools p50 over 1,000 tools" \
		"$(field "$micro" find_p50_us)" us - - "value<=1000"
	row "mcpd__find_tools round trip p50 via mcpd" \
		"$(field "$e2e" p50_us)" us - - -
}
