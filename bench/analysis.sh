#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/analysis.sh - the reader side of malloc tracing: `rip leaks` on a
# trace of build/bench/malloc against `heaptrack_print` on heaptrack's file
# of the same workload.
#
# The workload (1 thread, ANA_N malloc/free pairs through 32 distinct
# stacks) is recorded once with `rip run --mem` and once with heaptrack;
# then `rip leaks DIR`, `rip report DIR` and `heaptrack_print FILE` (each
# > /dev/null) run ANA_REPS times each, interleaved, so a busy neighbour
# slows all alike; so does `rip leaks` on the trace's CTF export (`rip
# export --format=ctf`), the control that says what the decoding of the
# packed form costs under the same load.  Each run gives its wall time (start to exit), its CPU time and
# its peak RSS (/usr/bin/time -f, or VmHWM polled in /proc without it);
# the medians are printed, with the speed ratios (heaptrack_print's time
# over rip leaks' and rip report's, goal: 5x or more), the events each reads
# per second, and the budget lines (medians of the ratios within each
# repetition).  rip uses a debug cache of this run's own (RIP_DEBUG_CACHE):
# the first rip leaks, timed apart, fills it.  Last, the peak memory of rip
# leaks on a longer trace shows that it streams.  Without heaptrack its rows say why they were skipped.
#
#   sh bench/analysis.sh [DIR]      (from the top of a built tree; DIR: scratch,
#                                    a tmpfs directory is made when not given)
#   ANA_N=2000000 ANA_REPS=5        pairs (as heaptrack.sh's MEM_N), repetitions (defaults)
#   ANA_GROW=5                      also rip leaks' peak memory on a trace this many
#                                   times longer (1: skip)
#   ANA_DEEP="2 60 1000"            the deep-stack block's thread counts ("": skip it)
#   ANA_DEEP_PAIRS=1800000          its pairs in all, split over the threads
#   ANA_DEEP_REPS=3                 its repetitions
#
# Then the deep-stack block [11d]: build/bench/malloc-nofp (no frame pointers, 8 to 11
# frames across 256 stacks, 256 live blocks a thread: issue 27's shape) at each of
# ANA_DEEP threads, ANA_DEEP_PAIRS pairs in all, recorded once by each tracer; rip leaks,
# rip report and heaptrack_print on each pair of files, ANA_DEEP_REPS times interleaved;
# the medians of the ratios within each repetition, against the same 5x goal.
#
# Exit status 1 when a program failed, 0 otherwise (missing heaptrack included).
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
RIP=$BUILD/rip
PROG=$BUILD/bench/malloc
N=${ANA_N:-2000000}
REPS=${ANA_REPS:-5}
own=""
if [ $# -ge 1 ]; then
	dir=$1
else
	dir=$(mktemp -d /dev/shm/rip-ana.XXXXXX 2>/dev/null) ||
		dir=$(mktemp -d "${TMPDIR:-/tmp}/rip-ana.XXXXXX") || exit 1
	own=$dir
fi
trace=$dir/ana-trace
ht=$dir/ana-ht
cleanup() {
	rm -rf "$trace" "$trace.ctf" "$dir"/ana-ht.* "$dir"/ana-out "$dir"/ana-err "$dir"/ana-time "$dir"/ana-raw \
		"$dir"/ana-cache "$dir"/ana-deep*
	[ -n "$own" ] && rm -rf "$own"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
RIP_DIR=${RIP_DIR:-$dir}
export RIP_DIR
# a cache of inflated debug files of this run's own, empty at the start
RIP_DEBUG_CACHE=$dir/ana-cache
export RIP_DEBUG_CACHE
failed=0

. bench/lib.sh # now_ns, median
say() { printf '%s\n' "$*"; }

say ""
say "analysis: rip leaks against heaptrack_print, same workload [11]"
if [ ! -x "$PROG" ] || [ ! -x "$RIP" ] || [ ! -e "$BUILD/librip-preload.so" ]; then
	say "  skipped: $PROG, $RIP or $BUILD/librip-preload.so is missing (make tests)"
	exit 1
fi
have_ht=1
if ! command -v heaptrack >/dev/null 2>&1 || ! command -v heaptrack_print >/dev/null 2>&1; then
	if ! msg=$(sh mk/deps-bench.sh heaptrack 2>&1) ||
		! command -v heaptrack_print >/dev/null 2>&1; then
		have_ht=0
		ht_note="heaptrack: not installed ($(echo "$msg" | tail -n 1))"
	fi
fi
gnutime=0
/usr/bin/time -f %M true >/dev/null 2>&1 && gnutime=1

# measure CMD...: run CMD (output to /dev/null, errors to ana-err) and print
# "WALL_S CPU_S RSS_KB", or "-" when it failed
measure() {
	if [ $gnutime = 1 ]; then
		s=$(now_ns)
		timeout 60 /usr/bin/time -o "$dir/ana-time" -f '%U %S %M' "$@" >/dev/null \
			2>"$dir/ana-err"
		rc=$?
		e=$(now_ns)
		[ $rc = 0 ] || { echo -; return; }
		awk -v t=$((e - s)) '{ printf "%.4f %.4f %d\n", t / 1e9, $1 + $2, $3 }' \
			"$dir/ana-time"
		return
	fi
	# without GNU time: VmHWM from /proc until it exits, CPU from its stat line
	s=$(now_ns)
	"$@" >/dev/null 2>"$dir/ana-err" &
	pid=$!
	hwm=0 cpu=0
	while kill -0 $pid 2>/dev/null; do
		h=$(sed -n 's/^VmHWM: *\([0-9]*\).*/\1/p' /proc/$pid/status 2>/dev/null)
		[ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
		c=$(awk '{ print $14 + $15 }' /proc/$pid/stat 2>/dev/null)
		[ -n "$c" ] && cpu=$c
		sleep 0.005
	done
	wait $pid
	rc=$?
	e=$(now_ns)
	[ $rc = 0 ] || { echo -; return; }
	awk -v t=$((e - s)) -v c="$cpu" -v h="$hwm" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.4f %.4f %d\n", t / 1e9, c / hz, h }'
}

# record the workload once with each tracer
rm -rf "$trace"
if ! timeout 60 "$RIP" run --mem -o "$trace" -- "$PROG" 1 "$N" >/dev/null 2>"$dir/ana-err"; then
	say "  rip run --mem failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
	exit 1
fi
events=$(sed -n 's/^.* run: \([0-9]*\) events .*/\1/p' "$dir/ana-err")
rm -rf "$trace.ctf"
"$RIP" export --format=ctf "$trace" -o "$trace.ctf" >/dev/null 2>&1 || rm -rf "$trace.ctf"
if [ $have_ht = 1 ]; then
	rm -f "$ht".*
	if ! timeout 60 heaptrack -o "$ht" "$PROG" 1 "$N" >/dev/null 2>&1 ||
		! ls "$ht".* >/dev/null 2>&1; then
		have_ht=0
		ht_note="heaptrack -o FILE $PROG failed"
		failed=1
	fi
fi
htfile=$(ls "$ht".* 2>/dev/null | head -n 1)

: >"$dir/ana-raw"
# once with the cache empty: what the first analysis of a trace costs
cold=$(measure "$RIP" leaks "$trace")
for r in $(seq "$REPS"); do
	echo "  analysis: repetition $r of $REPS ..." >&2
	m=$(measure "$RIP" leaks "$trace")
	if [ "$m" = - ]; then
		say "  rip leaks failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
		failed=1
	fi
	echo "rip $m" >>"$dir/ana-raw"
	m=$(measure "$RIP" report "$trace")
	if [ "$m" = - ]; then
		say "  rip report failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
		failed=1
	fi
	echo "rep $m" >>"$dir/ana-raw"
	if [ -d "$trace.ctf" ]; then
		echo "ctf $(measure "$RIP" leaks "$trace.ctf")" >>"$dir/ana-raw"
	fi
	if [ $have_ht = 1 ]; then
		m=$(measure heaptrack_print "$htfile")
		if [ "$m" = - ]; then
			say "  heaptrack_print failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
			failed=1
		fi
		echo "ht $m" >>"$dir/ana-raw"
	fi
done

# medians of each column per tool, then the table and the budget line
awk -v ev="${events:-0}" -v have_ht=$have_ht -v note="${ht_note:-}" -v reps="$REPS" \
	-v cold="$(echo "$cold" | cut -d' ' -f1)" \
	-v n="$N" -v ver="$(heaptrack --version 2>/dev/null | sed -n 's/^heaptrack //p')" \
	-v rmem="$gnutime" "$AWK_MED"'
$2 != "-" { W[$1] = W[$1] " " $2; C[$1] = C[$1] " " $3; M[$1] = M[$1] " " $4 }
# per repetition (rip, rep, ht in turn): the ratios of the same repetition
$1 == "rip" { lr = $2 } $1 == "rep" { lp = $2 } $1 == "ctf" { lc = $2 }
$1 == "ht" && $2 != "-" {
	if (lr != "-" && lr > 0) PR = PR " " $2 / lr
	if (lp != "-" && lp > 0) PP = PP " " $2 / lp
	if (lc != "-" && lc > 0) PC = PC " " $2 / lc
}
function row(name, t,   w, c, m) {
	w = med(W[t]); c = med(C[t]); m = med(M[t])
	if (w == "-") {
		printf "  %-34s %10s %10s %10s %12s\n", name, "-", "-", "-", "-"
		return
	}
	printf "  %-34s %8.3f s %8.3f s %7.1f MB %10.2f M/s\n", name, w, c, m / 1024,
		(w > 0 ? ev / w / 1e6 : 0)
	WM[t] = w; CM[t] = c; MM[t] = m
}
END {
	printf "  %-34s %10s %10s %10s %12s\n", "reader (median of " reps ")", "wall", "CPU",
		"peak RSS", "events/s"
	row("rip leaks DIR > /dev/null", "rip")
	row("rip report DIR > /dev/null", "rep")
	if ("ctf" in W)
		row("rip leaks CTF-EXPORT > /dev/null", "ctf")
	if (have_ht)
		row("heaptrack_print FILE > /dev/null", "ht")
	else
		printf "  %-34s skipped: %s\n", "heaptrack_print", note
	if (("rip" in WM) && ("ht" in WM) && WM["rip"] > 0) {
		sp = WM["ht"] / WM["rip"]
		printf "  %-34s %8.2fx %9.2fx %9.2fx\n", "heaptrack_print / rip leaks", sp,
			(CM["rip"] > 0 ? CM["ht"] / CM["rip"] : 0),
			(MM["rip"] > 0 ? MM["ht"] / MM["rip"] : 0)
	}
	if (("rep" in WM) && ("ht" in WM) && WM["rep"] > 0) {
		spr = WM["ht"] / WM["rep"]
		printf "  %-34s %8.2fx %9.2fx %9.2fx\n", "heaptrack_print / rip report", spr,
			(CM["rep"] > 0 ? CM["ht"] / CM["rep"] : 0),
			(MM["rep"] > 0 ? MM["ht"] / MM["rep"] : 0)
	}
	if (("ctf" in WM) && ("ht" in WM) && WM["ctf"] > 0)
		printf "  %-34s %8.2fx %9.2fx %9.2fx\n", "heaptrack_print / rip leaks (CTF)",
			WM["ht"] / WM["ctf"], (CM["ctf"] > 0 ? CM["ht"] / CM["ctf"] : 0),
			(MM["ctf"] > 0 ? MM["ht"] / MM["ctf"] : 0)
	print "[11] build/bench/malloc 1 " n " recorded once with rip run --mem and once with"
	how = rmem ? "/usr/bin/time -f %M" : "VmHWM polled in /proc"
	print "    heaptrack -o FILE; " ev " events (rip run'"'"'s count, backtrace definitions"
	print "    included).  wall: start to exit; CPU: user + system; peak RSS: " how ";"
	print "    events/s: those events over the wall time.  rip leaks reads the events and"
	print "    symbolizes what is left, rip report builds the whole report; both read"
	print "    with a second thread resolving symbols as backtraces appear.  heaptrack_print"
	print "    reads a file heaptrack already interpreted (symbols resolved while"
	print "    recording).  Ratios above 1x favour rip.  DIR is packed (the default);"
	print "    CTF-EXPORT is rip export --format=ctf of it, read the same way: the control"
	print "    for what decoding the packed form costs under the same load."
	print "budget:"
	if (PR != "") {
		pr = med(PR)
		printf "  rip leaks vs heaptrack_print, wall time: %.2fx (goal >= 5x), %s\n", pr,
			(pr >= 5 ? "goal met" : "goal NOT met")
	} else
		print "  rip leaks vs heaptrack_print: not measured"
	if (PP != "") {
		pp = med(PP)
		printf "  rip report vs heaptrack_print, wall time: %.2fx (goal >= 5x), %s\n", pp,
			(pp >= 5 ? "goal met" : "goal NOT met")
	} else
		print "  rip report vs heaptrack_print: not measured"
	print "  (medians of the ratios of each repetition: " PR " | " PP " )"
	if (PC != "")
		printf "  (control: rip leaks on the CTF export vs heaptrack_print, wall time: %.2fx)\n",
			med(PC)
	if (cold != "-" && cold != "")
		printf "  rip leaks, first run with an empty debug cache: %.3f s\n", cold
}' "$dir/ana-raw"

# Streaming: the peak memory of rip leaks on a trace ANA_GROW times longer
# (same workload, more pairs) should stay where it was.
G=${ANA_GROW:-5}
if [ "$G" -gt 1 ]; then
	echo "  analysis: a trace $G times longer ..." >&2
	rm -rf "$trace"
	if timeout 120 "$RIP" run --mem -o "$trace" -- "$PROG" 1 $((N * G)) >/dev/null \
		2>"$dir/ana-err"; then
		m1=$(awk '$1 == "rip" && $2 != "-" { print $4 }' "$dir/ana-raw" | sort -n | tail -n 1)
		m2=$(measure "$RIP" leaks "$trace")
		size=$(du -sk "$trace" | cut -f1)
		if [ "$m2" = - ] || [ -z "$m1" ]; then
			say "  rip leaks on the longer trace failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
			failed=1
		else
			echo "$m2" | awk -v m1="$m1" -v g="$G" -v kb="$size" '{
				printf "  rip leaks on a %dx longer trace (%.0f MB): %.3f s, peak RSS %.1f MB (%.2fx the shorter one'"'"'s)\n",
					g, kb / 1024, $1, $3 / 1024, (m1 > 0 ? $3 / m1 : 0) }'
		fi
	else
		say "  rip run --mem of the longer trace failed"
		failed=1
	fi
fi

# ---- [11d] deep stacks without frame pointers, as the threads grow --------------------------

DEEP=${ANA_DEEP-2 60 1000}
DPAIRS=${ANA_DEEP_PAIRS:-1800000}
DREPS=${ANA_DEEP_REPS:-3}
DPROG=$BUILD/bench/malloc-nofp
[ -z "$DEEP" ] && exit $failed
say ""
say "analysis: rip leaks, rip report against heaptrack_print, deep stacks, no frame pointers [11d]"
if [ ! -x "$DPROG" ]; then
	say "  skipped: $DPROG is missing (make tests)"
	exit 1
fi
if [ $have_ht = 0 ]; then
	say "  skipped: ${ht_note:-heaptrack is not installed}"
	exit $failed
fi
: >"$dir/ana-deep-raw"
for t in $DEEP; do
	n=$((DPAIRS / t))
	echo "  analysis: deep stacks, $t threads: recording ..." >&2
	rm -rf "$dir/ana-deep-tr" "$dir"/ana-deep-ht.*
	if ! timeout 120 "$RIP" run --mem -o "$dir/ana-deep-tr" -- "$DPROG" "$t" "$n" >/dev/null \
		2>"$dir/ana-err" ||
		! timeout 300 heaptrack -o "$dir/ana-deep-ht" "$DPROG" "$t" "$n" >/dev/null 2>&1 ||
		! dht=$(ls "$dir"/ana-deep-ht.* 2>/dev/null | head -n 1) || [ -z "$dht" ]; then
		say "  $t threads: recording failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
		failed=1
		continue
	fi
	devents=$(sed -n 's/^.* run: \([0-9]*\) events .*/\1/p' "$dir/ana-err")
	"$RIP" leaks "$dir/ana-deep-tr" >/dev/null 2>&1 # the debug cache, filled once
	for r in $(seq "$DREPS"); do
		echo "  analysis: deep stacks, $t threads: repetition $r of $DREPS ..." >&2
		for c in leaks report ht; do
			if [ $c = ht ]; then
				m=$(measure heaptrack_print "$dht")
			else
				m=$(measure "$RIP" "$c" "$dir/ana-deep-tr")
			fi
			if [ "$m" = - ]; then
				say "  $t threads: $c failed: $(head -n 2 "$dir/ana-err" | tr '\n' ' ')"
				failed=1
			fi
			echo "$t $r $c ${devents:-0} $m" >>"$dir/ana-deep-raw"
		done
	done
	rm -rf "$dir/ana-deep-tr" "$dir"/ana-deep-ht.*
done
awk -v pairs="$DPAIRS" -v reps="$DREPS" "$AWK_MED"'
# a figure, or "failed" when no run gave one (a reader that failed is not 0 s)
function fsec(v) { return v == "-" ? "failed" : sprintf("%.3f s", v) }
function fx(v) { return v == "-" ? "-" : sprintf("%.2fx", v) }
{
	t = $1
	if (!(t in seen)) { order[++nt] = t; seen[t] = 1 }
	ev[t] = $4
}
$5 != "-" {
	t = $1; r = $2; c = $3
	W[t, c] = W[t, c] " " $5; C[t, c] = C[t, c] " " $6
	T[t, r, c] = $5
}
END {
	printf "  %-8s %-9s %10s %10s %10s %10s %10s\n", "threads", "events", "leaks", "report",
		"ht_print", "ht/leaks", "ht/report"
	for (i = 1; i <= nt; i++) {
		t = order[i]
		pl = pr = ""
		for (r = 1; r <= reps; r++) {
			if (T[t, r, "ht"] == "") continue
			if (T[t, r, "leaks"] > 0)
				pl = pl sprintf(" %.2f", T[t, r, "ht"] / T[t, r, "leaks"])
			if (T[t, r, "report"] > 0)
				pr = pr sprintf(" %.2f", T[t, r, "ht"] / T[t, r, "report"])
		}
		RL[t] = med(pl); RR[t] = med(pr); PL[t] = pl; PR[t] = pr
		printf "  %-8s %-9s %10s %10s %10s %10s %10s\n", t, ev[t],
			fsec(med(W[t, "leaks"])), fsec(med(W[t, "report"])), fsec(med(W[t, "ht"])),
			fx(RL[t]), fx(RR[t])
		printf "  %-8s %-9s %10s %10s %10s   (CPU: user + system)\n", "", "",
			fsec(med(C[t, "leaks"])), fsec(med(C[t, "report"])), fsec(med(C[t, "ht"]))
	}
	print "[11d] build/bench/malloc-nofp T " pairs "/T (issue 27'"'"'s shape: no frame pointers,"
	print "    8-11 frames, 256 stacks, 256 live blocks a thread) recorded once by rip run --mem"
	print "    and once by heaptrack at each T; then rip leaks, rip report and heaptrack_print,"
	print "    " reps " times interleaved.  Wall time, medians; ratios: medians of the ratios within"
	print "    each repetition."
	print "budget:"
	for (i = 1; i <= nt; i++) {
		t = order[i]
		if (RL[t] == "-" || RR[t] == "-") {
			printf "  deep stacks, %d threads: rip leaks vs heaptrack_print %s, rip report %s:" \
				" not measured (a reader failed, see above)\n", t, fx(RL[t]), fx(RR[t])
			continue
		}
		printf "  deep stacks, %d threads: rip leaks vs heaptrack_print %.2fx, rip report %.2fx" \
			" (goal >= 5x): %s\n", t, RL[t], RR[t],
			(RL[t] >= 5 && RR[t] >= 5 ? "goal met" : "goal NOT met")
		print "    (ratios of each repetition:" PL[t] " |" PR[t] " )"
	}
}' "$dir/ana-deep-raw"
exit $failed
