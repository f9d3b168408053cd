#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/heaptrack.sh - malloc + free traced with backtraces: build/bench/malloc
# plain, under `rip run --mem` and under heaptrack, on 1 and 2 threads.
#
# Every repetition runs the six commands back to back (plain, rip, heaptrack;
# 1 thread, then 2), so a busy neighbour slows them alike, and every ratio is
# taken within one repetition, then the median of the repetitions is kept.
# Times are the wall time of the whole command, start to exit: rip's draining
# and heaptrack's interpreting and compressing (its default, zstd) included.
# Traces and heaptrack's files go to DIR (run.sh's tmpfs directory) and are
# removed after each run, once measured.  Without heaptrack (mk/deps-bench.sh
# heaptrack installs it when it can) its figures are "-" and a note says why.
#
#   sh bench/heaptrack.sh DIR       (from the top of a built tree)
#   MEM_N=2000000 MEM_REPS=5        pairs per thread, repetitions (defaults)
#   MEM_PROG=build/bench/malloc-nofp  the same benchmark built without frame pointers
#                                   (default build/bench/malloc, built with them)
#
# Output, one "mem KEY... VALUE [each repetition...]" line per figure, VALUE
# the median; bench/run.sh tabulates them.  T is 1 or 2 (threads):
#   mem pairs N                     malloc/free pairs per thread
#   mem time plain|rip|heaptrack T  seconds
#   mem slow rip|heaptrack T        slowdown: traced time / plain time
#   mem share T                     rip's overhead / heaptrack's (overhead = slowdown - 1)
#   mem nsev plain|rip|heaptrack T  ns per event of one thread: time / (2 * pairs)
#   mem added rip|heaptrack T       ns per event added: (traced - plain) / (2 * pairs)
#   mem growth plain|rip|heaptrack  2-thread figure / 1-thread figure (time for plain,
#                                   added ns per event for the tracers)
#   mem cpu plain|rip T             CPU ns per event of one thread, from the program
#   mem cpugrowth rip               added CPU ns per event, 2 threads / 1 thread
#   mem lost T                      events rip run's summary says it lost, all runs
#   mem events T                    events rip recorded (last run), bt records included
#   mem bytes rip|heaptrack T       bytes on disk per event (2 * pairs * T events): the
#                                   trace directory's files (disk_bytes: chunks, index, and
#                                   the pages the sparse copy of the ring file holds), and
#                                   heaptrack's file
#   mem file rip|heaptrack T        those sizes in bytes
#   mem note TEXT                   why something was skipped or failed
# Exit status 1 when a program failed, 0 otherwise (missing heaptrack included).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
RIP=$BUILD/rip
PROG=${MEM_PROG:-$BUILD/bench/malloc}
N=${MEM_N:-2000000}
REPS=${MEM_REPS:-5}
dir=${1:?usage: sh bench/heaptrack.sh DIR}
failed=0

note() { echo "mem note $*"; }
. bench/lib.sh # now_ns, median, disk_bytes

if [ ! -x "$PROG" ]; then
	note "$PROG is missing (make tests), skipped"
	exit 1
fi
if [ ! -x "$RIP" ] || [ ! -e "$BUILD/librip-preload.so" ]; then
	note "rip run --mem: not built, skipped"
	exit 1
fi
have_ht=1
if ! command -v heaptrack >/dev/null 2>&1; then
	if ! msg=$(sh mk/deps-bench.sh heaptrack 2>&1) || ! command -v heaptrack >/dev/null 2>&1; then
		note "heaptrack: not installed, its rows skipped ($(echo "$msg" | tail -n 1))"
		have_ht=0
	fi
fi

# timed CMD...: run CMD with its output in $dir/out, $dir/err; print its wall time in
# seconds, or "-" (and a note) when it failed or did not print its line
timed() {
	s=$(now_ns)
	if ! timeout 120 "$@" >"$dir/out" 2>"$dir/err"; then
		echo "mem note $1 failed: $(grep -v '^ *$' "$dir/err" | head -n 2 | tr '\n' ' ')" >>"$dir/notes"
		echo -
		return
	fi
	e=$(now_ns)
	if ! grep -q '^malloc threads ' "$dir/out"; then
		echo "mem note $1: no result line: $(head -n 2 "$dir/out" | tr '\n' ' ')" >>"$dir/notes"
		echo -
		return
	fi
	awk -v t=$((e - s)) 'BEGIN { printf "%.4f", t / 1e9 }'
}

# cpu: the program's CPU ns per event of one thread, from its result line
cpu() {
	awk '/^malloc threads / { for (i = 1; i < NF; i++) if ($i == "cpu_ns_per_pair")
		printf "%.2f", $(i + 1) / 2 }' "$dir/out"
}

: >"$dir/raw"
: >"$dir/notes"
lost_1=0 lost_2=0
for r in $(seq "$REPS"); do
	echo "  repetition $r of $REPS ..." >&2
	for t in 1 2; do
		p=$(timed "$PROG" $t "$N")
		pc=$(cpu)
		rm -rf "$dir/trace"
		q=$(timed "$RIP" run --mem -o "$dir/trace" -- "$PROG" $t "$N")
		qc=$(cpu)
		# rip run: N events (X MB) recorded in DIR/, L lost
		l=$(sed -n 's/^.* run: \([0-9]*\) events .*, \([0-9]*\) lost.*$/\1 \2/p' "$dir/err")
		if [ "$q" != - ] && [ -n "$l" ]; then
			set -- $l
			eval "events_$t=$1; lost_$t=\$((lost_$t + $2))"
			eval "rfile_$t=$(disk_bytes "$dir/trace")"
		elif [ "$q" != - ]; then
			echo "mem note rip run printed no summary: $(head -n 2 "$dir/err" | tr '\n' ' ')" \
				>>"$dir/notes"
			q=-
		fi
		rm -rf "$dir/trace"
		h=-
		if [ $have_ht = 1 ]; then
			rm -f "$dir/ht".*
			h=$(timed heaptrack -o "$dir/ht" "$PROG" $t "$N")
			f=$(ls "$dir/ht".* 2>/dev/null | head -n 1)
			if [ "$h" != - ] && [ -n "$f" ]; then
				eval "hfile_$t=$(stat -c %s "$f"); hname=${f##*/}"
			elif [ "$h" != - ]; then
				echo "mem note heaptrack wrote no file in $dir" >>"$dir/notes"
				h=-
			fi
			rm -f "$dir/ht".*
		fi
		echo "$r $t $p $q $h ${pc:--} ${qc:--}" >>"$dir/raw"
		[ "$p" = - ] || [ "$q" = - ] && failed=1
	done
done

# the per-repetition figures, then their medians: one line each
awk -v n="$N" '
function med(s,   v, k, i, j, x) {
	k = split(s, v, " ")
	for (i = 2; i <= k; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	if (!k)
		return "-"
	return sprintf("%.4g", k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2)
}
function add(key, val) {
	if (val == "-")
		return
	if (!(key in seq))
		order[++nk] = key
	seq[key] = seq[key] " " val
}
function f(fmt, x) { return sprintf(fmt, x) }
{
	r = $1; t = $2; p = $3; q = $4; h = $5; pc = $6; qc = $7
	ev = 2 * n
	add("time plain " t, p); add("time rip " t, q); add("time heaptrack " t, h)
	if (p != "-") {
		add("nsev plain " t, f("%.2f", p * 1e9 / ev))
		P[r, t] = p
	}
	if (q != "-") add("nsev rip " t, f("%.2f", q * 1e9 / ev))
	if (h != "-") add("nsev heaptrack " t, f("%.2f", h * 1e9 / ev))
	if (p != "-" && q != "-") {
		add("slow rip " t, f("%.3f", q / p))
		Q[r, t] = (q - p) * 1e9 / ev
		add("added rip " t, f("%.2f", Q[r, t]))
	}
	if (p != "-" && h != "-") {
		add("slow heaptrack " t, f("%.3f", h / p))
		H[r, t] = (h - p) * 1e9 / ev
		add("added heaptrack " t, f("%.2f", H[r, t]))
	}
	if (p != "-" && q != "-" && h != "-" && h > p)
		add("share " t, f("%.3f", (q - p) / (h - p)))
	if (pc != "-") add("cpu plain " t, pc)
	if (qc != "-") add("cpu rip " t, qc)
	if (pc != "-" && qc != "-") C[r, t] = qc - pc
	if (t == 2) {
		if ((r, 1) in P && (r, 2) in P) add("growth plain", f("%.3f", P[r, 2] / P[r, 1]))
		if ((r, 1) in Q && (r, 2) in Q && Q[r, 1] > 0)
			add("growth rip", f("%.3f", Q[r, 2] / Q[r, 1]))
		if ((r, 1) in H && (r, 2) in H && H[r, 1] > 0)
			add("growth heaptrack", f("%.3f", H[r, 2] / H[r, 1]))
		if ((r, 1) in C && (r, 2) in C && C[r, 1] > 0)
			add("cpugrowth rip", f("%.3f", C[r, 2] / C[r, 1]))
	}
}
END {
	print "mem pairs " n
	for (i = 1; i <= nk; i++)
		print "mem " order[i] " " med(seq[order[i]]) seq[order[i]]
}' "$dir/raw"

for t in 1 2; do
	eval "ev=\${events_$t:-}; lost=\$lost_$t; rf=\${rfile_$t:-}; hf=\${hfile_$t:-}"
	echo "mem lost $t $lost"
	[ -n "$ev" ] && echo "mem events $t $ev"
	if [ -n "$rf" ]; then
		echo "mem file rip $t $rf"
		awk -v b="$rf" -v e=$((2 * N * t)) 'BEGIN { printf "mem bytes rip %d %.2f\n", '$t', b / e }'
	fi
	if [ -n "$hf" ]; then
		echo "mem file heaptrack $t $hf ($hname)"
		awk -v b="$hf" -v e=$((2 * N * t)) \
			'BEGIN { printf "mem bytes heaptrack %d %.2f\n", '$t', b / e }'
	fi
	# fewer events than the program made is a loss too, whatever the summary says
	if [ -n "$ev" ] && [ "$ev" -lt $((2 * N * t)) ]; then
		echo "mem note rip recorded $ev events of the $((2 * N * t)) made on $t thread(s)"
		failed=1
	fi
done
sort -u "$dir/notes"
rm -f "$dir/raw" "$dir/notes" "$dir/out" "$dir/err"
exit $failed
