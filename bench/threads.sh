#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/threads.sh - tracing and analysis as the threads grow.
#
#  1. malloc + free traced at 1, 2, 64 and 512 threads: build/bench/malloc
#     (THR_PAIRS pairs in all, split over the threads, all threads alive at
#     once) plain, under `rip run --mem` and under heaptrack, back to back in
#     each of THR_REPS repetitions; the medians of the wall times and of
#     rip's extra time over heaptrack's within each repetition (budget: a
#     third or less).
#  2. The readers at 1, 60 and 1,000 threads: the same workload recorded
#     once by each tracer, then `rip leaks`, `rip report` and
#     `heaptrack_print` THR_REPS times each, interleaved: median wall time,
#     heaptrack_print's time over each (goal: 5x or more) and peak RSS.
#     The ratios are the medians of each repetition's (as in
#     bench/analysis.sh): the three runs of a repetition follow each other,
#     so that a host whose speed drifts between minutes (a shared virtual
#     machine) moves both sides of a ratio alike.
#  3. Tmpfs bytes of a flight-recorder ring file with the defaults, at 100,
#     1,000 and 10,000 live threads that each emitted events
#     (build/tests/integ/manythreads events N 200 wait): the blocks the file
#     holds (st_blocks), against the 256 MiB bound at 10,000.
#
#   sh bench/threads.sh DIR        (from the top of a built tree; DIR: a tmpfs scratch)
#   THR_PAIRS=1000000 THR_REPS=3   (defaults)
#
# Prints its block on stdout, progress on stderr.  Exit status 1 when a
# program failed, 0 otherwise (missing heaptrack included: its rows say so).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
RIP=$BUILD/rip
PROG=$BUILD/bench/malloc
MANY=$BUILD/tests/integ/manythreads
PAIRS=${THR_PAIRS:-1000000}
REPS=${THR_REPS:-3}
dir=${1:?usage: threads.sh DIR}
. bench/lib.sh # now_ns, median, bench_work
bench_work "$dir/thr"
failed=0
have_ht=1
command -v heaptrack >/dev/null 2>&1 && command -v heaptrack_print >/dev/null 2>&1 || have_ht=0
gnutime=0
/usr/bin/time -f %M true >/dev/null 2>&1 && gnutime=1



# wall CMD...: run CMD quietly, print its wall time in seconds, "-" if it failed
wall() {
	t0=$(now_ns)
	if "$@" >/dev/null 2>"$work/err"; then
		t1=$(now_ns)
		awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
	else
		echo "  failed: $* ($(tail -n 1 "$work/err"))" >&2
		echo -
	fi
}

# rss CMD...: "WALL_S RSS_KB" of CMD, or "- -"
rss() {
	if [ $gnutime = 1 ]; then
		t0=$(now_ns)
		if /usr/bin/time -o "$work/time" -f %M "$@" >/dev/null 2>"$work/err"; then
			t1=$(now_ns)
			awk -v a="$t0" -v b="$t1" -v m="$(tail -n 1 "$work/time")" \
				'BEGIN { printf "%.4f %s\n", (b - a) / 1e9, m }'
			return
		fi
		echo "  failed: $* ($(tail -n 1 "$work/err"))" >&2
		echo "- -"
	else
		echo "$(wall "$@") -"
	fi
}

echo ""
echo "threads: malloc + free traced at 1, 2, 64, 512 threads, $PAIRS pairs in all [9]"
[ $have_ht = 1 ] || echo "  heaptrack: not installed (sh mk/deps-bench.sh heaptrack), its columns are -"
if [ ! -x "$PROG" ] || [ ! -x "$RIP" ]; then
	echo "  skipped: $PROG or $RIP is missing (make tests)"
	exit 1
fi
printf '  %-8s %9s %9s %9s %9s %9s  %s\n' threads plain_s rip_s heaptr_s rip_x ht_x \
	"rip extra / heaptrack extra (budget <= 0.33)"
for t in 1 2 64 512; do
	per=$((PAIRS / t))
	: >"$work/p"
	: >"$work/r"
	: >"$work/h"
	: >"$work/s"
	for rep in $(seq "$REPS"); do
		echo "  malloc $t threads, repetition $rep of $REPS ..." >&2
		p=$(wall "$PROG" "$t" "$per")
		rm -rf "$work/tr"
		r=$(wall "$RIP" run --mem -q -o "$work/tr" -- "$PROG" "$t" "$per")
		rm -rf "$work/tr"
		h=-
		if [ $have_ht = 1 ]; then
			h=$(wall heaptrack -o "$work/ht" "$PROG" "$t" "$per")
			rm -f "$work"/ht*
		fi
		for v in "$p" "$r"; do [ "$v" = - ] && failed=1; done
		echo "$p" >>"$work/p"
		echo "$r" >>"$work/r"
		echo "$h" >>"$work/h"
		[ "$p" != - ] && [ "$r" != - ] && [ "$h" != - ] &&
			awk -v p="$p" -v r="$r" -v h="$h" \
				'BEGIN { if (h > p) printf "%.3f\n", (r - p) / (h - p) }' >>"$work/s"
	done
	mp=$(grep -v - "$work/p" | median)
	mr=$(grep -v - "$work/r" | median)
	mh=$(grep -v '^-$' "$work/h" | median)
	ms=$(median <"$work/s")
	printf '  %-8s %9s %9s %9s %9s %9s  %s (each: %s)\n' "$t" "$mp" "$mr" "$mh" \
		"$(awk -v a="$mr" -v b="$mp" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }')" \
		"$(awk -v a="$mh" -v b="$mp" 'BEGIN { if (b > 0 && a != "-") printf "%.2f", a / b; else print "-" }')" \
		"$ms" "$(tr '\n' ' ' <"$work/s")"
done

echo ""
echo "threads: rip leaks, rip report against heaptrack_print at 1, 60, 1000 threads [9]"
echo "  (times and RSS: medians of $REPS; ht/leaks, ht/report: medians of each repetition's ratio, goal >= 5)"
printf '  %-8s %8s %9s %9s %9s %8s %8s %9s %9s %9s\n' threads events leaks_s report_s htprint_s \
	ht/leaks ht/report leaks_MB report_MB htprint_MB
for t in 1 60 1000; do
	per=$((PAIRS / t))
	echo "  recording $t threads ..." >&2
	rm -rf "$work/tr" "$work"/ht*
	if ! "$RIP" run --mem -o "$work/tr" -- "$PROG" "$t" "$per" >/dev/null 2>"$work/err"; then
		echo "  $t threads: rip run failed: $(tail -n 1 "$work/err")"
		failed=1
		continue
	fi
	ev=$(sed -n 's/^rip run: \([0-9][0-9]*\) events.*/\1/p' "$work/err" | head -n 1)
	htf=
	if [ $have_ht = 1 ]; then
		heaptrack -o "$work/ht" "$PROG" "$t" "$per" >/dev/null 2>&1
		htf=$(ls "$work"/ht.* 2>/dev/null | head -n 1)
	fi
	"$RIP" leaks "$work/tr" >/dev/null 2>&1 # the debug cache, once
	: >"$work/l"
	: >"$work/rp"
	: >"$work/hp"
	for rep in $(seq "$REPS"); do
		rss "$RIP" leaks "$work/tr" >>"$work/l"
		rss "$RIP" report "$work/tr" >>"$work/rp"
		if [ -n "$htf" ]; then
			rss heaptrack_print "$htf" >>"$work/hp"
		else
			echo "- -" >>"$work/hp"
		fi
	done
	grep -q '^- ' "$work/l" "$work/rp" && failed=1
	lw=$(awk '{ print $1 }' "$work/l" | grep -v - | median)
	rw=$(awk '{ print $1 }' "$work/rp" | grep -v - | median)
	hw=$(awk '{ print $1 }' "$work/hp" | grep -v - | median)
	lm=$(awk '{ print $2 }' "$work/l" | grep -v - | median)
	rm_=$(awk '{ print $2 }' "$work/rp" | grep -v - | median)
	hm=$(awk '{ print $2 }' "$work/hp" | grep -v - | median)
	# each repetition's ratio: line i of hp (heaptrack_print) over line i of FILE
	ratios() { paste "$work/hp" "$1" | awk '$1 != "-" && $3 != "-" && $3 > 0 { printf "%.2f\n", $1 / $3 }'; }
	ratios "$work/l" >"$work/rl"
	ratios "$work/rp" >"$work/rr"
	dec1() { awk -v a="$1" 'BEGIN { if (a != "-" && a != "") printf "%.1f", a; else print "-" }'; }
	mb() { awk -v a="$1" 'BEGIN { if (a != "-") printf "%.1f", a / 1024; else print "-" }'; }
	printf '  %-8s %8s %9s %9s %9s %8s %8s %9s %9s %9s  (each: %s| %s)\n' "$t" "${ev:--}" \
		"$lw" "$rw" "$hw" "$(dec1 "$(median <"$work/rl")")" "$(dec1 "$(median <"$work/rr")")" \
		"$(mb "$lm")" "$(mb "$rm_")" "$(mb "$hm")" "$(tr '\n' ' ' <"$work/rl")" \
		"$(tr '\n' ' ' <"$work/rr")"
done
rm -rf "$work/tr" "$work"/ht*

echo ""
echo "threads: tmpfs bytes of a flight-recorder ring file, defaults, live threads [9]"
if [ ! -x "$MANY" ]; then
	echo "  skipped: $MANY is missing (make tests)"
else
	for n in 100 1000 10000; do
		echo "  $n threads ..." >&2
		rd=$work/rings$n
		mkdir -p "$rd"
		RIP_RING=$rd/ "$MANY" events "$n" 200 wait >"$work/many.out" 2>"$work/many.err" &
		pid=$!
		i=0
		while ! grep -q '^ready$' "$work/many.out" 2>/dev/null && [ $i -lt 1200 ]; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
			i=$((i + 1))
		done
		f=$(ls "$rd"/* 2>/dev/null | head -n 1)
		if grep -q '^ready$' "$work/many.out" && [ -n "$f" ]; then
			set -- $(stat -c '%b %B %s' "$f")
			printf '  %6s threads: %8.1f MiB in tmpfs (file size %.1f MiB)%s\n' "$n" \
				"$(awk -v b="$1" -v s="$2" 'BEGIN { print b * s / 1048576 }')" \
				"$(awk -v z="$3" 'BEGIN { print z / 1048576 }')" \
				"$([ "$n" = 10000 ] && echo ', bound 256 MiB')"
		else
			kill -9 "$pid" 2>/dev/null
			wait "$pid"
			echo "  $n threads: failed (exit $?, after $i polls: $(tail -n 1 "$work/many.err"))"
			failed=1
		fi
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rm -rf "$rd"
	done
fi
exit $failed
