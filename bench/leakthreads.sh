#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/leakthreads.sh - issue 27's workload as the threads grow: N threads
# alive at once, each doing LT_PAIRS malloc/free pairs of 32-95 bytes and
# leaking one 100-byte block from leak_once() (build/bench/leakthreads, a
# plain program built -O1 -g without frame pointers), at 1, 2, 64, 512,
# 1,000, 3,000 and 10,000 live threads.
#
# Each repetition runs, back to back: the program plain, under
# `rip run --mem -o DIR` (block mode, the default) and under
# `heaptrack -o FILE`, each through build/bench/tracewatch (wall time, start
# to exit; the peak RSS of its own process; the peak tmpfs of the files
# under a directory).  The ratios are taken within a repetition, then the
# medians kept.  Per thread count it prints: the median wall times, rip /
# plain, heaptrack / plain, rip / heaptrack (budget: at most 1, at most 0.5
# from 1,000 threads up); the events rip run's summary says it lost (all
# repetitions; budget 0); whether `rip leaks --json` of every trace is
# exact (N blocks, N x 100 bytes, at leak_once, the trace complete); the
# peak tmpfs of the ring file (RIP_DIR/rip-run.XXXXXX/*.ring, polled every
# 10 ms) and rip run's own peak RSS (VmHWM of the rip process as it exits:
# its children's are not in it), budget 256 MiB each at 10,000 threads.
#
# Thread counts the machine cannot give (the smallest of `ulimit -u`,
# kernel.threads-max and kernel.pid_max, less the tasks that exist and a
# reserve of LT_RESERVE) are skipped, and the line says why.
#
#   sh bench/leakthreads.sh DIR     (from the top of a built tree; DIR: a tmpfs scratch)
#   LT_THREADS="1 2 64 512 1000 3000 10000" LT_PAIRS=2000 LT_REPS=3
#   LT_BIG=10000 LT_BIG_REPS=3      (repetitions at LT_BIG threads and up)
#   LT_RESERVE=2048                 (tasks left to the rest of the machine)
#
# Prints its block on stdout, progress on stderr.  Exit status 1 when a
# program failed, 0 otherwise (budgets missed included: the lines say so).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
RIP=$BUILD/rip
PROG=$BUILD/bench/leakthreads
WATCH=$BUILD/bench/tracewatch
THREADS=${LT_THREADS:-1 2 64 512 1000 3000 10000}
PAIRS=${LT_PAIRS:-2000}
REPS=${LT_REPS:-3}
BIG=${LT_BIG:-10000}
BIG_REPS=${LT_BIG_REPS:-3}
RESERVE=${LT_RESERVE:-2048}
dir=${1:?usage: sh bench/leakthreads.sh DIR}
. bench/lib.sh # now_ns, median, bench_work
bench_work "$dir/lt"
failed=0

echo ""
echo "issue 27's workload: N live threads x $PAIRS malloc/free pairs (32-95 B), one 100 B leak" \
	"each [9l]"
if [ ! -x "$PROG" ] || [ ! -x "$WATCH" ] || [ ! -x "$RIP" ]; then
	echo "  skipped: $PROG, $WATCH or $RIP is missing (make tests)"
	exit 1
fi
have_ht=1
ht_note=
if ! command -v heaptrack >/dev/null 2>&1; then
	if ! msg=$(sh mk/deps-bench.sh heaptrack 2>&1) || ! command -v heaptrack >/dev/null 2>&1; then
		have_ht=0
		ht_note="heaptrack: not installed, its columns are - ($(echo "$msg" | tail -n 1))"
		echo "  $ht_note"
	fi
fi
have_py=1
command -v python3 >/dev/null 2>&1 || have_py=0

# the tasks this machine can still give: min(ulimit -u, threads-max, pid_max) - tasks - reserve
task_room() {
	lim=$(cat /proc/sys/kernel/threads-max)
	why="kernel.threads-max $lim"
	p=$(cat /proc/sys/kernel/pid_max)
	[ "$p" -lt "$lim" ] && lim=$p && why="kernel.pid_max $p"
	# RLIMIT_NPROC, soft: what `ulimit -u` says (dash has no -u)
	u=$(awk '/^Max processes/ { print $3 }' /proc/self/limits)
	[ -n "$u" ] && [ "$u" != unlimited ] && [ "$u" -lt "$lim" ] && lim=$u && why="ulimit -u $u"
	used=$(awk '{ split($4, a, "/"); print a[2] }' /proc/loadavg)
	echo "$((lim - used - RESERVE)) $why, $used tasks in use, $RESERVE kept in reserve"
}

# watch RINGDIR CMD...: run CMD through tracewatch, its stdout and stderr in $work/out and
# $work/err; print "WALL_S RSS_KIB DIR_KIB", or "- - -" (and a line on stderr) if it failed
watch() {
	wd=$1
	shift
	if ! timeout 600 "$WATCH" "$wd" "$@" >"$work/out" 2>"$work/err" ||
		! grep -q '^tracewatch ' "$work/err"; then
		echo "  failed: $* ($(grep -v '^tracewatch ' "$work/err" | tail -n 1))" >&2
		echo "- - -"
		return
	fi
	awk '/^tracewatch / { print $3, $5, $7 }' "$work/err"
}

# exact N: is rip leaks --json of $work/tr exactly N blocks, N x 100 bytes at leak_once,
# complete?  "yes", "no: WHY" or "-" (no python3 to read the JSON)
exact() {
	[ $have_py = 1 ] || { echo -; return; }
	if ! "$RIP" leaks --json "$work/tr" >"$work/leaks.json" 2>"$work/leaks.err"; then
		echo "no: rip leaks failed: $(tail -n 1 "$work/leaks.err")"
		return
	fi
	python3 - "$work/leaks.json" "$1" <<'PY' 2>&1 | tail -n 1
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
at = [g for g in r["leaks"] if g["resource"] == "mem" and g["stack"] and
      g["stack"][0]["function"] == "leak_once"]
c, b = (at[0]["count"], at[0]["bytes"]) if len(at) == 1 else (sum(g["count"] for g in at), 0)
if len(at) == 1 and (c, b) == (n, 100 * n) and r["complete"] and not r["discarded"] \
        and not r["lost_packets"]:
    print("yes")
else:
    print("no: %d groups at leak_once, %d blocks, %d bytes, complete %s, discarded %s"
          % (len(at), c, b, r["complete"], r["discarded"]))
PY
}

mkdir -p "$work/none" "$work/rd"
printf '  %-7s %4s %8s %8s %8s %7s %7s %7s %6s %9s %6s %8s %8s\n' threads reps plain_s rip_s \
	heaptr_s rip_x ht_x rip/ht budget lost exact ring_MiB rip_MiB
: >"$work/summary"
for t in $THREADS; do
	reps=$REPS
	[ "$t" -ge "$BIG" ] && reps=$BIG_REPS
	# shellcheck disable=SC2046 # the words of task_room's line, split on purpose
	set -- $(task_room)
	room=$1
	shift
	if [ "$t" -gt "$room" ]; then
		printf '  %-7s skipped: room for %s more threads here (%s)\n' "$t" "$room" "$*"
		echo "$t skipped" >>"$work/summary"
		continue
	fi
	: >"$work/rows"
	for rep in $(seq "$reps"); do
		echo "  leakthreads $t threads, repetition $rep of $reps ..." >&2
		# shellcheck disable=SC2046 # watch's three fields, split on purpose (the same below)
		set -- $(watch "$work/none" "$PROG" "$t" "$PAIRS")
		p=$1
		[ "$p" = - ] && failed=1
		rm -rf "$work/tr" "$work/rd"/*
		# shellcheck disable=SC2046
		set -- $(watch "$work/rd" env RIP_DIR="$work/rd" "$RIP" run --mem -o "$work/tr" -- \
			"$PROG" "$t" "$PAIRS")
		r=$1 rss=$2 ring=$3
		# rip run: N events (X MB, Y on disk) recorded in DIR/, L lost
		lost=$(sed -n 's/^rip run: [0-9]* events .* recorded in .*, \([0-9]*\) lost.*$/\1/p' \
			"$work/err" | tail -n 1)
		ex=-
		if [ "$r" = - ]; then
			failed=1
		elif [ -z "$lost" ]; then
			echo "  rip run printed no summary: $(tail -n 1 "$work/err")" >&2
			lost=-
			failed=1
		else
			ex=$(exact "$t")
			[ "$ex" = yes ] || [ "$ex" = - ] || echo "  $t threads: rip leaks: $ex" >&2
		fi
		rm -rf "$work/tr" "$work/rd"/*
		h=-
		if [ $have_ht = 1 ]; then
			rm -f "$work"/ht.*
			# shellcheck disable=SC2046
			set -- $(watch "$work/none" heaptrack -o "$work/ht" "$PROG" "$t" "$PAIRS")
			h=$1
			[ "$h" = - ] && failed=1
			rm -f "$work"/ht.*
		fi
		# one line a repetition: plain rip heaptrack lost exact ring rss
		echo "$p $r $h ${lost:--} ${ex%%:*} $ring $rss" >>"$work/rows"
		[ "$ex" != yes ] && [ "$ex" != - ] && echo "    ($t threads, repetition $rep: $ex)" \
			>>"$work/notes"
	done
	awk -v t="$t" -v big="$BIG" "$AWK_MED"'
	function f(fmt, x) { return x == "-" ? "-" : sprintf(fmt, x) }
	{
		n++
		if ($1 != "-") P = P " " $1
		if ($2 != "-") R = R " " $2
		if ($3 != "-") H = H " " $3
		if ($1 != "-" && $2 != "-" && $1 > 0) RX = RX " " $2 / $1
		if ($1 != "-" && $3 != "-" && $1 > 0) HX = HX " " $3 / $1
		if ($2 != "-" && $3 != "-" && $3 > 0) RH = RH " " $2 / $3
		if ($4 == "-") lostm = 1; else lost += $4
		if ($5 == "yes") ex++; else if ($5 != "-") exn++
		if ($6 != "-" && $6 + 0 > ring) ring = $6
		if ($7 != "-" && $7 + 0 > rss) rss = $7
	}
	END {
		b = (t >= 1000 ? 0.5 : 1)
		rh = f("%.2f", med(RH)) # the table and the budget line judge the same figure
		printf "  %-7s %4d %8s %8s %8s %7s %7s %7s %6s %9s %6s %8s %8s\n", t, n,
			f("%.3f", med(P)), f("%.3f", med(R)), f("%.3f", med(H)),
			f("%.2fx", med(RX)), f("%.2fx", med(HX)), (rh == "-" ? "-" : rh "x"), "<=" b "x",
			(lostm ? "-" : lost), (ex + exn ? ex "/" ex + exn : "-"),
			f("%.1f", ring / 1024), f("%.1f", rss / 1024)
		# for the budget lines: t rip/ht budget lost exact-ok exact-all ring rss each-rip/ht
		print t, rh, b, (lostm ? "-" : lost), ex + 0, ex + exn, ring, rss,
			RH > "/dev/stderr"
	}' "$work/rows" 2>>"$work/summary"
done
echo "[9l] build/bench/leakthreads N $PAIRS (gcc -O1 -g -pthread, no frame pointers, default"
echo "    thread stacks): all N threads started before any works, none gone before all are done."
echo "    Wall times start to exit through build/bench/tracewatch (rip run --mem -o DIR, block"
echo "    mode; heaptrack -o FILE, its zstd output), medians of the repetitions; rip_x, ht_x,"
echo "    rip/ht: medians of each repetition's ratio.  lost: the sum of rip run's \"L lost\" over"
echo "    the repetitions.  exact: traces whose rip leaks --json holds exactly N blocks and"
echo "    N x 100 bytes at leak_once, complete.  ring_MiB: the most tmpfs the ring file held"
echo "    (st_blocks, polled every 10 ms); rip_MiB: VmHWM of the rip run process as it exits"
echo "    (ptrace exit stop; its children's memory is not in it).  Largest of the repetitions."
[ -s "$work/notes" ] && cat "$work/notes"
echo "budget:"
awk '
$2 == "skipped" { printf "  %s threads: not measured (skipped, see above)\n", $1; next }
{
	t = $1
	each = ""
	for (i = 9; i <= NF; i++) each = each sprintf(" %.2f", $i)
	if ($2 == "-")
		printf "  %s threads: rip / heaptrack not measured\n", t
	else
		printf "  %s threads: rip / heaptrack %.2fx (each:%s) <= %sx: %s\n", t, $2, each, $3,
			($2 <= $3 ? "within budget" : "OVER budget")
	if ($4 == "-")
		printf "  %s threads: lost events not measured\n", t
	else
		printf "  %s threads: %s events lost (budget 0): %s\n", t, $4,
			($4 == 0 ? "within budget" : "OVER budget")
	if ($6 > 0)
		printf "  %s threads: rip leaks --json exact in %d of %d traces: %s\n", t, $5, $6,
			($5 == $6 ? "within budget" : "OVER budget")
	if (t >= 10000) {
		printf "  %s threads: ring file %.1f MiB of tmpfs (budget 256 MiB): %s\n", t,
			$7 / 1024, ($7 <= 262144 ? "within budget" : "OVER budget")
		printf "  %s threads: rip run RSS %.1f MiB (budget 256 MiB): %s\n", t, $8 / 1024,
			($8 <= 262144 ? "within budget" : "OVER budget")
	}
}' "$work/summary"
exit $failed
