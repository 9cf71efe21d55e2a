# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The instr, ctl and memory parts of bench/run, which sources this file
# and lends it its variables and helpers (die, start_mcpd, stop_mcpd,
# field, ratio, row, want, tmp, build, mcpd, mcpctl, bench, server).
#
# instr: mcpd's own cost per relayed stdio tool call, in instructions and
# in system calls, by difference so that start-up, the load and shutdown
# cancel out.
#   Instructions: twice, a fresh mcpd under `valgrind --tool=callgrind
#   --collect-atstart=yes --cache-sim=no` (it counts every instruction mcpd
#   runs, deterministically; the server runs natively: valgrind follows
#   mcpd's fork into the shim, not the server's exec) loads the test server
#   and mcpd-bench makes N1 (BENCH_INSTR_N1, default 2000), then N2
#   (BENCH_INSTR_N2, default 12000) calls of its echo tool at concurrency
#   16 on one connection, after the same 200 unmeasured; mcpctl shutdown
#   makes callgrind write its totals (the "totals:" line of mcpd's own
#   output file). The figure is (I2 - I1) / (N2 - N1). mcpd's output file
#   of the N2 run is kept as BUILD_DIR/bench-callgrind.out for
#   callgrind_annotate.
#   System calls: one mcpd (natively), the test server loaded; for N1 and
#   N2 calls, at concurrency 16 and 1, `strace -c -f -p MCPD` is attached
#   while mcpd-bench runs and detached (SIGINT) after it; (S2 - S1) / (N2 -
#   N1) from strace's "total" line, and the same per system call name.
#   strace slows every system call of mcpd, so at concurrency 16 mcpd finds
#   more calls waiting per loop turn than it would untraced: a lower bound;
#   at concurrency 1 there is one call at a time, so nothing to batch.
# ctl: the wall time of a warm `mcpctl call bench echo message=bench` (mcpd
#   running, the test server loaded, 20 calls before) against the one-shot
#   call of the same tool of the same server with
#   @modelcontextprotocol/inspector-cli (bench/peers; its bin, build/cli.js
#   --cli, which starts the server itself; run from its build directory,
#   where its lookup of its own package.json works), both timed by
#   hyperfine -N (no shell) in the same run: BENCH_CTL_RUNS (default 200)
#   mcpctl runs, BENCH_INSPECTOR_RUNS (default 10) inspector runs; the
#   medians. Beside them, the floor any command's wall time stands on
#   here: /bin/true, as many runs as mcpctl's, just before (on a small VM
#   a process's start and exit alone take about a millisecond, most of it
#   glibc's start-up), and mcpctl's own start-up (mcpctl --version; mcpctl
#   is built with musl). mcpctl keeps tool definitions in the run's own
#   XDG_CACHE_HOME: the warm-up calls leave the tool's there.
# memory: a fresh mcpd; its VmRSS (/proc/PID/status) and Pss
#   (/proc/PID/smaps_rollup) with no server, then with BENCH_MEM_SERVERS
#   (default 100) test servers of 20 tools each (mcp-testserver --tools 8:
#   its 12 built-in tools and t0..t7) loaded with mcpctl load --no-persist
#   under distinct names; what each server costs mcpd ((RSS(100) - RSS(0))
#   / 100), and the shim mcpd forks per server (mcpd-shim: the leader of
#   the server's process group, which kills it when mcpd dies): its mean
#   VmRSS and Pss (a fork of mcpd, most of its RSS is pages it shares with
#   mcpd; its Pss is its fair share).

instr_n1=${BENCH_INSTR_N1:-2000}
instr_n2=${BENCH_INSTR_N2:-12000}
ctl_runs=${BENCH_CTL_RUNS:-200}
inspector_runs=${BENCH_INSPECTOR_RUNS:-10}
mem_servers=${BENCH_MEM_SERVERS:-100}
inspector_dir=$root/bench/peers/node_modules/@modelcontextprotocol/inspector-cli
costs_pid= # the mcpd of the part that runs
costs_sock=
strace_pid=

# costs_check: dies unless the tools of the parts asked for are there.
costs_check() {
	local t

	if want instr; then
		for t in valgrind strace; do
			command -v "$t" >/dev/null ||
				die "no $t (the instr part needs it); run scripts/install-deps --bench"
		done
	fi
	if want ctl; then
		command -v hyperfine >/dev/null ||
			die "no hyperfine (the ctl part needs it); run scripts/install-deps --bench"
		command -v "$node" >/dev/null ||
			die "no $node (the ctl part needs it); run scripts/install-deps --bench"
		[[ -f $inspector_dir/build/cli.js ]] ||
			die "$inspector_dir is missing; run scripts/install-deps --bench"
	fi
}

# costs_cleanup: for bench/run's exit trap.
costs_cleanup() {
	if [[ -n $strace_pid ]]; then
		kill "$strace_pid" 2>/dev/null || true
		wait "$strace_pid" 2>/dev/null || true
		strace_pid=
	fi
	stop_mcpd "$costs_pid" "$costs_sock"
	costs_pid=
}

# costs_mcpd NAME [WRAPPER...]: a private mcpd (under WRAPPER, if given)
# in $tmp/NAME; sets costs_pid and costs_sock.
costs_mcpd() {
	local dir=$tmp/$1 i

	shift
	mkdir -p "$dir"
	costs_sock=$dir/s.sock
	"$@" "$mcpd" -d -s "$costs_sock" -S "$dir/state" 2>"$dir/mcpd.log" &
	costs_pid=$!
	for i in $(seq 600); do
		[[ -S $costs_sock ]] && return 0
		kill -0 "$costs_pid" 2>/dev/null ||
			die "mcpd exited before it listened" "$dir/mcpd.log"
		sleep 0.1
	done
	die "mcpd did not create $costs_sock within 60 s" "$dir/mcpd.log"
}

# costs_load NAME [ARG...]: loads the test server into the part's mcpd.
costs_load() {
	local name=$1 log=$tmp/load-$1.log

	shift
	"$mcpctl" -s "$costs_sock" load --no-persist --timeout 60000 \
		--name "$name" -- "$server" "$@" >"$log" 2>&1 ||
		die "mcpctl load $name failed" "$log"
}

# costs_bench CALLS [CONCURRENCY]: mcpd-bench on the part's mcpd, at
# concurrency 16 unless told.
costs_bench() {
	local log=$tmp/costs-bench-$1.log

	"$bench" -n "$1" -c "${2:-16}" -t 900 --socket "$costs_sock" \
		--server bench >"$log" 2>&1 || die "mcpd-bench -n $1 failed" "$log"
}

# instr_run CALLS: instructions mcpd runs from start to exit with CALLS
# calls made through it.
instr_run() {
	local dir=$tmp/instr-$1 pid out total

	costs_mcpd "instr-$1" valgrind --tool=callgrind \
		--callgrind-out-file="$tmp/instr-$1/callgrind.%p" \
		--collect-atstart=yes --cache-sim=no --branch-sim=no
	pid=$costs_pid
	costs_load bench
	costs_bench "$1"
	stop_mcpd "$costs_pid" "$costs_sock"
	costs_pid=
	out=$dir/callgrind.$pid
	total=$(awk '/^totals:/ { t = $2 } /^summary:/ && t == "" { s = $2 }
		END { print t != "" ? t : s }' "$out" 2>/dev/null)
	[[ $total =~ ^[0-9]+$ ]] ||
		die "no totals in callgrind's output $out" "$dir/mcpd.log"
	if (($1 == instr_n2)); then cp "$out" "$build/bench-callgrind.out"; fi
	echo "$total"
}

# sys_run CALLS CONCURRENCY: strace -c's summary of mcpd's system calls
# while CALLS calls go through it (the part's mcpd runs), in
# $tmp/strace-CALLS-CONCURRENCY.
sys_run() {
	local out=$tmp/strace-$1-$2 log=$tmp/strace-$1-$2.log i

	strace -c -f -o "$out" -p "$costs_pid" 2>"$log" &
	strace_pid=$!
	for i in $(seq 100); do
		grep -q 'attached' "$log" && break
		kill -0 "$strace_pid" 2>/dev/null ||
			die "strace -p $costs_pid failed" "$log"
		sleep 0.1
	done
	grep -q 'attached' "$log" || die "strace did not attach" "$log"
	costs_bench "$1" "$2"
	kill -INT "$strace_pid"
	wait "$strace_pid" || true
	strace_pid=
	grep -q ' total$' "$out" || die "no total in strace's summary" "$out"
}

# sys_counts FILE: "NAME CALLS" lines of an strace -c summary (total too).
sys_counts() {
	awk '$1 ~ /^[0-9.]+$/ && NF >= 5 { print $NF, $4 }' "$1"
}

# sys_report CONCURRENCY: the system calls per call at CONCURRENCY, in all
# and by name; adds the row.
sys_report() {
	local a=$tmp/strace-$instr_n1-$1 b=$tmp/strace-$instr_n2-$1 s1 s2 per
	local dn=$((instr_n2 - instr_n1))

	s1=$(sys_counts "$a" | awk '$1 == "total" { print $2 }')
	s2=$(sys_counts "$b" | awk '$1 == "total" { print $2 }')
	per=$(awk -v a="$s1" -v b="$s2" -v n="$dn" \
		'BEGIN { printf "%.2f", (b - a) / n }')
	echo "  system calls (strace -c) at concurrency $1: $s2 - $s1 over" \
		"$dn calls = $per; by name, per call:"
	join -a 2 -e 0 -o 0,1.2,2.2 <(sys_counts "$a" | sort) \
		<(sys_counts "$b" | sort) |
		awk -v n="$dn" '$1 != "total" {
			d = ($3 - $2) / n
			if (d >= 0.005) printf "    %-16s %6.2f\n", $1, d }' |
		sort -k2,2gr
	row "mcpd system calls per relayed call, c=$1" "$per" syscalls - - -
}

instr_main() {
	local i1 i2 per conc dn=$((instr_n2 - instr_n1))

	((dn > 0)) || die "BENCH_INSTR_N2 must exceed BENCH_INSTR_N1"
	i1=$(instr_run "$instr_n1")
	i2=$(instr_run "$instr_n2")
	per=$(((i2 - i1) / dn))

	costs_mcpd sys
	costs_load bench
	for conc in 16 1; do
		sys_run "$instr_n1" "$conc"
		sys_run "$instr_n2" "$conc"
	done
	stop_mcpd "$costs_pid" "$costs_sock"
	costs_pid=

	echo "mcpd's cost per relayed call (the test server's echo," \
		"$instr_n2 calls minus $instr_n1 calls):"
	echo "  instructions (callgrind) at concurrency 16: $i2 - $i1 over" \
		"$dn calls = $per"
	row "mcpd instructions per relayed call, c=16" "$per" instr - - \
		"value<=25000"
	sys_report 16
	sys_report 1
	echo "  (under strace, mcpd is slower and finds more calls ready per" \
		"loop turn at concurrency 16: a lower bound there)"
	echo "  callgrind_annotate $build/bench-callgrind.out shows where" \
		"the instructions go ($instr_n2 calls)"
}

# hyperfine_median JSON: the median of its one command, in ms.
hyperfine_median() {
	"$node" -e 'const r = JSON.parse(require("fs").readFileSync(
		process.argv[1])).results[0];
		console.log((r.median * 1000).toFixed(3));' "$1"
}

ctl_main() {
	local mjson=$tmp/hf-mcpctl.json ijson=$tmp/hf-inspector.json
	local tjson=$tmp/hf-true.json vjson=$tmp/hf-version.json
	local mctl insp floor start i

	# The tool definitions mcpctl keeps go to the run's own directory.
	export XDG_CACHE_HOME=$tmp/cache
	costs_mcpd ctl
	costs_load bench
	for i in $(seq 20); do
		"$mcpctl" -s "$costs_sock" call bench echo message=bench \
			>"$tmp/ctl-call.log" 2>&1 ||
			die "mcpctl call bench echo failed" "$tmp/ctl-call.log"
	done
	grep -qx bench "$tmp/ctl-call.log" ||
		die "mcpctl call bench echo did not print bench" \
			"$tmp/ctl-call.log"
	hyperfine -N --style none --warmup 5 --runs "$ctl_runs" \
		--export-json "$tjson" /bin/true >"$tmp/hf-true.log" 2>&1 ||
		die "hyperfine /bin/true failed" "$tmp/hf-true.log"
	hyperfine -N --style none --warmup 5 --runs "$ctl_runs" \
		--export-json "$vjson" "$mcpctl --version" \
		>"$tmp/hf-version.log" 2>&1 ||
		die "hyperfine mcpctl --version failed" "$tmp/hf-version.log"
	hyperfine -N --style none --warmup 5 --runs "$ctl_runs" \
		--export-json "$mjson" \
		"$mcpctl -s $costs_sock call bench echo message=bench" \
		>"$tmp/hf-mcpctl.log" 2>&1 ||
		die "hyperfine mcpctl call failed" "$tmp/hf-mcpctl.log"
	(cd "$inspector_dir/build" && hyperfine -N --style none --warmup 1 \
		--runs "$inspector_runs" --export-json "$ijson" \
		"$node cli.js --cli $server --method tools/call --tool-name echo --tool-arg message=bench") \
		>"$tmp/hf-inspector.log" 2>&1 ||
		die "hyperfine inspector-cli failed" "$tmp/hf-inspector.log"
	stop_mcpd "$costs_pid" "$costs_sock"
	costs_pid=
	mctl=$(hyperfine_median "$mjson")
	insp=$(hyperfine_median "$ijson")
	floor=$(hyperfine_median "$tjson")
	start=$(hyperfine_median "$vjson")

	echo "warm mcpctl call against @modelcontextprotocol/inspector-cli" \
		"$(cd "$inspector_dir" && "$node" -p 'require("./package.json").version')'s" \
		"one-shot call (test server, echo), hyperfine -N, medians:"
	echo "  mcpctl call ($ctl_runs runs): $mctl ms;" \
		"inspector-cli --cli ($inspector_runs runs): $insp ms;" \
		"/bin/true ($ctl_runs runs): $floor ms;" \
		"mcpctl --version ($ctl_runs runs): $start ms"
	row "mcpctl start-up (--version) vs /bin/true, median" "$start" ms \
		"$floor" \
		"$(awk -v a="$start" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')" \
		-
	row "warm mcpctl call vs /bin/true, median" "$mctl" ms "$floor" \
		"$(awk -v a="$mctl" -v b="$floor" 'BEGIN { printf "%.2f", a / b }')" \
		"value<=1.5"
	row "mcpctl call vs inspector-cli one-shot" "$mctl" ms "$insp" \
		"$(awk -v a="$mctl" -v b="$insp" 'BEGIN { printf "%.6f", a / b }')" \
		"ratio<=1/600"
}

# proc_kb PID FILE FIELD: a kB field of /proc/PID/FILE.
proc_kb() {
	awk -v f="$3:" '$1 == f { print $2; exit }' "/proc/$1/$2"
}

# mib KB: kB as MiB with one decimal.
kb_mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

memory_main() {
	local rss0 pss0 rss1 pss1 i shims=() p srss=0 spss=0 svr=0 n c

	costs_mcpd memory
	"$mcpctl" -s "$costs_sock" list >/dev/null 2>&1 ||
		die "mcpctl list failed"
	rss0=$(proc_kb "$costs_pid" status VmRSS)
	pss0=$(proc_kb "$costs_pid" smaps_rollup Pss)
	for ((i = 1; i <= mem_servers; i++)); do
		costs_load "m$i" --tools 8
		grep -q ': 20 tools' "$tmp/load-m$i.log" ||
			die "server m$i does not have 20 tools" "$tmp/load-m$i.log"
	done
	sleep 1
	rss1=$(proc_kb "$costs_pid" status VmRSS)
	pss1=$(proc_kb "$costs_pid" smaps_rollup Pss)
	for p in $(pgrep -P "$costs_pid"); do
		[[ $(cat "/proc/$p/comm" 2>/dev/null) == mcpd-shim ]] ||
			continue
		shims+=("$p")
		srss=$((srss + $(proc_kb "$p" status VmRSS)))
		spss=$((spss + $(proc_kb "$p" smaps_rollup Pss)))
		for c in $(pgrep -P "$p"); do
			svr=$((svr + $(proc_kb "$c" status VmRSS)))
		done
	done
	n=${#shims[@]}
	((n == mem_servers)) ||
		die "$n shims for $mem_servers servers" "$tmp/memory/mcpd.log"
	stop_mcpd "$costs_pid" "$costs_sock"
	costs_pid=

	echo "memory: mcpd with 0 and $mem_servers test servers of 20 tools" \
		"(kB): VmRSS $rss0 -> $rss1, Pss $pss0 -> $pss1;"
	echo "  per server: mcpd +$(((rss1 - rss0) / n)) kB RSS; mcpd and" \
		"its shims' Pss together +$(((pss1 + spss - pss0) / n)) kB;" \
		"each shim (mcpd-shim)"
	echo "  $((srss / n)) kB RSS, $((spss / n)) kB Pss;" \
		"the server itself (mcp-testserver, static) $((svr / n)) kB RSS"
	row "mcpd RSS, $n servers x 20 tools" "$(kb_mib "$rss1")" MiB \
		"$(kb_mib "$rss0")" \
		"$(awk -v a="$rss1" -v b="$rss0" 'BEGIN { printf "%.2f", a / b }')" \
		"value<=10"
	row "mcpd RSS per loaded server" $(((rss1 - rss0) / n)) kB - - -
	row "shim RSS per server" $((srss / n)) kB - - -
	row "shim Pss per server" $((spss / n)) kB - - -
	row "mcpd and shim Pss per server" \
		$(((pss1 + spss - pss0) / n)) kB - - -
}
