# SPDX-License-Identifier: ISC
# shellcheck shell=bash
# The one table and the one chart of bench/run, which sources this file
# before its parts run; it lends it tmp, root, build, rounds, only, want
# and die.
#
# Each part adds its figures with `row`, one tab-separated line each in
# $tmp/rows.tsv:
#
#   what  value  unit  compare  ratio  target  met
#
# compare is the baseline's figure in the same unit ("-" when there is
# none), ratio is value / compare ("-" when there is none), target is "-"
# or SUBJECT OP NUMBER with SUBJECT "ratio" or "value", OP "<=" or ">=" and
# NUMBER a decimal or A/B ("ratio>=0.6", "value<=30", "ratio<=1/600"), and
# met is yes, no or - (computed by row). A part may also leave data for a
# panel of its own in $tmp/chart/ (the relays part does: relays-*.dat).
#
# report_main prints the table and draws the chart with gnuplot: a panel
# of every figure that has a target (how far each is from it: the figure
# over the target for "<=", the target over the figure for ">=", so that
# met is at or below 1), one of the throughputs and one of the wall times
# against their baselines, and the relays' calls/s and RSS. The rows are
# also kept in BUILD_DIR/bench.tsv.

rows=$tmp/rows.tsv
report_is_done=
chart_dir=$tmp/chart
mkdir -p "$chart_dir"
: >"$rows"

# row WHAT VALUE UNIT COMPARE RATIO TARGET: adds a figure to the table.
row() {
	local met

	(($# == 6)) || die "row: 6 fields wanted, $# given: $*"
	met=$(awk -v v="$2" -v r="$5" -v t="$6" '
		function num(s,	p) {
			if (split(s, p, "/") == 2) return p[1] / p[2]
			return s + 0
		}
		BEGIN {
			if (t == "-") { print "-"; exit }
			if (!match(t, /^(ratio|value)(<=|>=)/))
				{ print "bad target " t; exit 1 }
			subj = substr(t, 1, RLENGTH - 2)
			op = substr(t, RLENGTH - 1, 2)
			x = subj == "ratio" ? r : v
			if (x == "-" || x == "") { print "-"; exit }
			n = num(substr(t, RLENGTH + 1))
			ok = op == "<=" ? x + 0 <= n : x + 0 >= n
			print ok ? "yes" : "no"
		}') || die "row $1: $met"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" "$met" >>"$rows"
}

# report_awk_lib: the awk functions the table and the chart share.
report_awk_lib() {
	cat <<'EOF'
function fmt_ratio(r) {
	if (r == "-" || r == "") return "-"
	if (r > 0 && r < 0.1) return sprintf("1/%.0f", 1 / r)
	return sprintf("%.2fx", r)
}
function fmt_target(t, unit,	subj, op, n) {
	if (t == "-") return "-"
	match(t, /^(ratio|value)(<=|>=)/)
	subj = substr(t, 1, RLENGTH - 2)
	op = substr(t, RLENGTH - 1, 2)
	n = substr(t, RLENGTH + 1)
	if (subj == "ratio") return op " " n (n ~ /\// ? "" : "x")
	return op " " n " " unit
}
function with_unit(v, unit) {
	return v == "-" ? "-" : v " " unit
}
EOF
}

# report_table: the rows as an aligned table on stdout.
report_table() {
	awk -F '\t' "$(report_awk_lib)"'
		{ n++
		  c[n, 1] = $1; c[n, 2] = with_unit($2, $3)
		  c[n, 3] = with_unit($4, $3); c[n, 4] = fmt_ratio($5)
		  c[n, 5] = fmt_target($6, $3); c[n, 6] = $7
		  for (i = 1; i <= 6; i++)
			if (length(c[n, i]) > w[i]) w[i] = length(c[n, i]) }
		END {
			split("figure|measured|baseline|ratio|target|met", h, "|")
			for (i = 1; i <= 6; i++)
				if (length(h[i]) > w[i]) w[i] = length(h[i])
			line(h)
			for (r = 1; r <= n; r++) {
				for (i = 1; i <= 6; i++) x[i] = c[r, i]
				line(x)
			}
		}
		function line(x,	i, s) {
			s = sprintf("%-" w[1] "s", x[1])
			for (i = 2; i <= 6; i++)
				s = s "  " sprintf("%" w[i] "s", x[i])
			print s
		}' "$rows"
}

# report_chart_data: the data files of the generic panels, from the rows:
# targets.dat (label, score, colour, text), pairs-calls.dat and
# pairs-ms.dat (label, baseline, measured).
report_chart_data() {
	awk -F '\t' -v dir="$chart_dir" "$(report_awk_lib)"'
		function num(s,	p) {
			if (split(s, p, "/") == 2) return p[1] / p[2]
			return s + 0
		}
		{ label = $1; gsub(/"/, "'\''", label) }
		$6 != "-" && $7 != "-" {
			match($6, /^(ratio|value)(<=|>=)/)
			subj = substr($6, 1, RLENGTH - 2)
			op = substr($6, RLENGTH - 1, 2)
			t = num(substr($6, RLENGTH + 1))
			x = subj == "ratio" ? $5 : $2
			score = op == "<=" ? x / t : (x > 0 ? t / x : 1e3)
			text = subj == "ratio" ? fmt_ratio($5) : with_unit($2, $3)
			printf "\"%s\" %g %d \"%s\"\n", label, score,
				$7 == "yes" ? 5082957 : 12597547, text \
				>(dir "/targets.dat")
			if (!nt++ || score < lo) lo = score
			if (nt == 1 || score > hi) hi = score
		}
		$4 != "-" && $3 == "calls/s" && $1 !~ /^relays[: ]/ {
			printf "\"%s\" %s %s\n", label, $4, $2 \
				>(dir "/pairs-calls.dat")
		}
		$4 != "-" && $3 == "ms" {
			printf "\"%s\" %s %s\n", label, $4, $2 \
				>(dir "/pairs-ms.dat")
		}
		END {
			if (nt) printf "%g:%g\n", (lo < 0.5 ? lo : 0.5) / 1.5,
				(hi > 2 ? hi : 2) * 1.5 >(dir "/targets.range")
		}' "$rows"
}

# report_panel_pairs FILE TITLE: a panel of baseline and measured bars
# (the relays' rows are left to their own panels).
report_panel_pairs() {
	cat <<EOF
set title "$2"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set logscale y
set yrange [*:*]
set key outside right top vertical
set xtics rotate by 25 right font ",8"
plot "$1" using 2:xtic(1) title "baseline" linecolor rgb "#999999", \\
	"" using 3 title "mcpd" linecolor rgb "#3b6ea8", \\
	"" using (\$0 - 1.0 / 6):2:(sprintf(\$2 >= 100 ? "%.0f" : "%.3g", \$2)) \\
		with labels offset 0,0.6 font ",7" notitle, \\
	"" using (\$0 + 1.0 / 6):3:(sprintf(\$3 >= 100 ? "%.0f" : "%.3g", \$3)) \\
		with labels offset 0,0.6 font ",7" notitle
unset logscale y
set xtics norotate font ""
set key inside top right
EOF
}

# report_chart FILE: the chart, with a panel for each kind of data there is.
report_chart() {
	local gp=$chart_dir/chart.gp body=$chart_dir/body.gp n=0 cols rowsn

	report_chart_data
	: >"$body"
	if [[ -s $chart_dir/targets.dat ]]; then
		n=$((n + 1))
		cat >>"$body" <<EOF
set title "each figure against its target (1 = the target; met at or below)"
set logscale y
set yrange [$(cat "$chart_dir/targets.range")]
set ytics 1.0 / 1024, 2 format "%g"
set xrange [-0.6:$(($(wc -l <"$chart_dir/targets.dat") - 1)).6]
set grid ytics
set xtics rotate by 30 right font ",7"
set style fill solid 0.8 border -1
unset key
plot "$chart_dir/targets.dat" using 0:2:(0.7):3:xtic(1) \\
		with boxes linecolor rgb variable, \\
	1 with lines dashtype 2 linecolor rgb "black", \\
	"" using 0:2:4 with labels offset 0,0.6 font ",7"
unset logscale y
set xtics norotate font ""
set xrange [*:*]
set ytics autofreq
EOF
	fi
	if [[ -s $chart_dir/pairs-calls.dat ]]; then
		n=$((n + 1))
		report_panel_pairs "$chart_dir/pairs-calls.dat" \
			"tool calls per second, mcpd and its baseline (log scale)" \
			>>"$body"
	fi
	if [[ -s $chart_dir/pairs-ms.dat ]]; then
		n=$((n + 1))
		report_panel_pairs "$chart_dir/pairs-ms.dat" \
			"wall time, ms, mcpd and its baseline (log scale)" \
			>>"$body"
	fi
	if [[ -s $chart_dir/relays-ts.dat ]]; then
		n=$((n + 3))
		relays_panels >>"$body"
	fi
	((n > 0)) || return 0
	cols=$((n > 1 ? 2 : 1))
	rowsn=$(((n + 1) / 2))
	{
		echo "set terminal pngcairo size $((cols * 820)),$((rowsn * 540)) font \"sans,9\""
		echo "set output \"$1\""
		echo "set termoption noenhanced"
		echo "set lmargin 12"
		echo "set bmargin 9"
		echo "set multiplot layout $rowsn,$cols title \"make bench ($(date -u +%Y-%m-%d), $(nproc) cores, $(uname -m)); parts: $only\""
		cat "$body"
		echo "unset multiplot"
	} >"$gp"
	gnuplot "$gp" >"$chart_dir/gnuplot.log" 2>&1 ||
		die "gnuplot failed" "$chart_dir/gnuplot.log"
}

# report_main: the table, the rows kept in BUILD_DIR/bench.tsv, the chart.
report_main() {
	report_is_done=1
	[[ -s $rows ]] || return 0
	echo
	echo "== all figures (ratio: measured / baseline; met: against the" \
		"target of issue 15 and the earlier issues) =="
	report_table
	cp "$rows" "$build/bench.tsv"
	report_chart "$chart"
	echo "rows: $build/bench.tsv; chart: $chart"
}

# report_partial: for bench/run's exit trap: when a part failed (or the run
# was interrupted) before report_main, the figures gathered so far, on
# stderr, without a chart.
report_partial() {
	[[ -z $report_is_done && -s $rows ]] || return 0
	report_is_done=1
	echo "bench/run: the figures gathered before it stopped:" >&2
	report_table >&2
}
