#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# bench/run.sh - measure librip's fast paths, rip ps, events against LTTng-UST,
# rip run and malloc + free against heaptrack, and print one report.
#
# Every figure is a median of several repetitions, and every ratio is taken
# against a baseline measured in this same run, because the machine is
# shared and noisy.  Instruction counts come from callgrind: each loop runs
# twice, with N1 and N2 iterations, under --toggle-collect of its loop
# function, and (Ir2 - Ir1) / (N2 - N1) is the exact per-iteration count,
# with the loop's entry and exit cancelled out.  objdump gives the same count
# from the loop body, so the instructions can be read.  bench/README.md says
# what each row means.  The LTTng-UST rows need lttng-tools and
# liblttng-ust-dev (installed through mk/deps-bench.sh when run as root; the
# session is set up and torn down by bench/lttng.sh); without them they are
# skipped with the reason.  malloc + free under `rip run --mem` is compared
# with heaptrack by bench/heaptrack.sh (MEM_N, MEM_REPS; skipped without it).
#
#   sh bench/run.sh            (make bench builds first, then runs this)
#   REPS=15 sh bench/run.sh    more repetitions (default 9)
#
# It is a report, not a test: it exits 0 when it measured, 1 when a program
# failed or a loop did not do the work it claims.  Missing valgrind, LTTng-UST,
# build/rip or `rip run` only skip their rows.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
B=$BUILD/bench
RIP=$BUILD/rip
REPS=${REPS:-9}
N1=100000
N2=1100000
ORIG_INSTR=12 # the original librip: 12 instructions per iteration, loop of 3 included

for p in snap snap-legacy many events; do
	if [ ! -x "$B/$p" ]; then
		echo "bench: $B/$p is missing; build it with: make tests" >&2
		exit 1
	fi
done
# wall time and peak RSS (ru_maxrss) of a command, for the rip ps rows
RUSAGE=$BUILD/tests/integ/rusage
if [ ! -x "$RUSAGE" ]; then
	echo "bench: $RUSAGE is missing; build it with: make tests" >&2
	exit 1
fi
# the coroutines of bench/many for the rip ps rows (the threads are 10,000)
PS_COROS=${PS_COROS:-1000000}

# ring files belong on a tmpfs (the design's rule, and no disk writeback in the timings)
tmpfs=/dev/shm
[ -n "${XDG_RUNTIME_DIR:-}" ] && [ -d "$XDG_RUNTIME_DIR" ] && tmpfs=$XDG_RUNTIME_DIR
tmp=$(mktemp -d "$tmpfs/rip-bench.XXXXXX" 2>/dev/null) ||
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rip-bench.XXXXXX") || exit 1
many_pid=""
cleanup() {
	# the LTTng session, and the lttng-sessiond it started, if the LTTng rows were cut short
	if [ -e "$tmp/lttng.session" ] || [ -e "$tmp/lttng.sessiond" ]; then
		sh bench/lttng.sh teardown "$tmp"
	fi
	if [ -n "$many_pid" ]; then
		kill -9 "$many_pid" 2>/dev/null
		wait "$many_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
trap 'exit 141' PIPE
# the benchmarks' ring files go here and go away with it
RIP_DIR=$tmp
export RIP_DIR
failed=0

# fig FILE KEY...: the median recorded for KEY (the first number after it), or "-"
fig() {
	f=$1
	shift
	awk -v k="$*" 'index($0, k " ") == 1 { n = split(k, a, " "); print $(n + 1); found = 1
		exit } END { if (!found) print "-" }' "$f" 2>/dev/null || echo -
}

# calc FORMAT EXPR A B: EXPR of a and b (awk), printed with FORMAT; "-" if A or B is "-"
calc() {
	if [ "$3" = - ] || [ "$4" = - ]; then
		echo -
	else
		awk -v a="$3" -v b="$4" "BEGIN { printf \"$1\", $2 }" 2>/dev/null || echo -
	fi
}

# ratio A B: A/B as "1.23x", or "-"
ratio() {
	calc "%.2fx" "(b > 0 ? a / b : 0)" "$1" "$2"
}

. bench/lib.sh # now_ns, median, disk_bytes

echo "librip bench: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) CPUs," \
	"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); medians of $REPS repetitions unless said"
echo

# ---- 1. timing ---------------------------------------------------------------------------------

echo "timing the loops ..." >&2
if ! "$B/snap" time "$REPS" >"$tmp/time.txt" 2>"$tmp/time.err"; then
	echo "bench: snap time failed: $(head -n 3 "$tmp/time.err")"
	failed=1
fi
if ! "$B/snap-legacy" time "$REPS" >"$tmp/legacy.txt" 2>"$tmp/legacy.err"; then
	echo "bench: snap-legacy time failed: $(head -n 3 "$tmp/legacy.err")"
	failed=1
fi
echo "timing 1 and 2 threads ..." >&2
if ! "$B/snap" threads "$REPS" >"$tmp/threads.txt" 2>"$tmp/threads.err"; then
	echo "bench: snap threads failed: $(head -n 3 "$tmp/threads.err")"
	failed=1
fi

echo "timing the event loops ..." >&2
if ! "$B/events" time "$REPS" >"$tmp/ev.txt" 2>"$tmp/ev.err"; then
	echo "bench: events time failed: $(head -n 3 "$tmp/ev.err")"
	failed=1
fi
if ! "$B/events" bytes >"$tmp/evbytes.txt" 2>"$tmp/evbytes.err"; then
	echo "bench: events bytes failed: $(head -n 3 "$tmp/evbytes.err")"
	failed=1
fi

# ---- 2. instructions: callgrind ----------------------------------------------------------------

# cg PROG LOOP [N1 N2]: instructions per iteration of loop_LOOP in PROG, or "-"
cg() {
	n1=${3:-$N1} n2=${4:-$N2}
	for n in $n1 $n2; do
		if ! valgrind --tool=callgrind --toggle-collect="loop_$2" \
			--callgrind-out-file="$tmp/cg.$1.$2.$n" "$B/$1" count "$2" "$n" \
			>/dev/null 2>"$tmp/cg.err"; then
			echo "bench: callgrind $1 $2 failed: $(tail -n 2 "$tmp/cg.err")" >&2
			echo -
			return
		fi
	done
	a=$(awk '/^summary:/ { print $2; exit }' "$tmp/cg.$1.$2.$n1")
	b=$(awk '/^summary:/ { print $2; exit }' "$tmp/cg.$1.$2.$n2")
	echo "cg $1 $2 $a $b (at $n1 and $n2)" >>"$tmp/cg.raw"
	calc "%.6g" "(b - a) / ($n2 - $n1)" "$a" "$b"
}

have_vg=0
if command -v valgrind >/dev/null 2>&1; then
	have_vg=1
	echo "counting instructions with callgrind ..." >&2
	: >"$tmp/cg.raw"
	i_floor=$(cg snap floor)
	i_snap=$(cg snap snap)
	i_legacy=$(cg snap-legacy snap)
	i_rdtsc=$(cg snap rdtsc)
	i_coro=$(cg snap coro)
	for l in empty rdtsc16 event disabled; do
		eval "i_ev_$l=\$(cg events $l)"
	done
else
	echo "callgrind: valgrind not installed, instruction counts skipped" \
		"(mk/deps.sh check installs it)"
	i_floor=- i_snap=- i_legacy=- i_rdtsc=- i_coro=-
	i_ev_empty=- i_ev_rdtsc16=- i_ev_event=- i_ev_disabled=-
fi

# ---- 3. instructions: objdump of the loop bodies -----------------------------------------------

# body PROG FUNC [follow]: instructions in FUNC's loop, from the target of its backward
# conditional jump to that jump; the listing (prologue, then loop lines marked with *) goes
# to $tmp/dis.PROG.FUNC.  With "follow", the loop's first forward branch out of the loop is
# taken as well (the path a compiler moved out of line, RIP_UNLIKELY's), up to the jmp
# that comes back: those lines are marked + and counted too.
body() {
	objdump -d --no-show-raw-insn --disassemble="$2" "$B/$1" 2>/dev/null |
		awk -v out="$tmp/dis.$1.$2" -v follow="${3:-}" '
	function hex(s,   i, v) {
		v = 0
		s = tolower(s)
		for (i = 1; i <= length(s); i++)
			v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v
	}
	/^ *[0-9a-f]+:\t/ {
		split($0, f, "\t")
		a = f[1]
		gsub(/[ :]/, "", a)
		n++
		addr[n] = hex(a)
		text[n] = sprintf("%6s  %s", a, f[2])
		mn = f[2]
		sub(/ .*/, "", mn)
		mnem[n] = mn
		tgt[n] = -1
		if (mn ~ /^j/) {
			t = f[2]
			sub(/^[a-z]+ +/, "", t)
			sub(/ .*/, "", t)
			tgt[n] = tv = hex(t)
		}
		if (mn ~ /^j/ && mn != "jmp") {
			if (tv < addr[n] && (lo == "" || tv < lo)) {
				lo = tv
				hi = addr[n]
			}
		}
	}
	END {
		if (lo == "") {
			print "-"
			exit
		}
		for (i = 1; i <= n && addr[i] <= hi; i++) {
			in_loop = addr[i] >= lo
			cnt += in_loop
			print (in_loop ? "  * " : "    ") text[i] > out
			if (follow && in_loop && out_lo == "" && mnem[i] != "jmp" && tgt[i] > hi)
				out_lo = tgt[i]
		}
		if (out_lo != "") {
			print "    ..." > out
			for (; i <= n; i++) {
				if (addr[i] < out_lo)
					continue
				cnt++
				print "  + " text[i] > out
				if (mnem[i] == "jmp" && tgt[i] >= lo && tgt[i] <= hi)
					break
			}
		}
		print cnt
	}'
}

if command -v objdump >/dev/null 2>&1; then
	d_floor=$(body snap loop_floor)
	d_snap=$(body snap loop_snap)
	d_legacy=$(body snap-legacy loop_snap)
	d_rdtsc=$(body snap loop_rdtsc)
	d_coro=$(body snap loop_coro)
	d_ev_empty=$(body events loop_empty)
	d_ev_rdtsc16=$(body events loop_rdtsc16)
	d_ev_event=$(body events loop_event follow)
	d_ev_disabled=$(body events loop_disabled)
else
	echo "objdump: not installed (binutils), loop listings skipped"
	d_floor=- d_snap=- d_legacy=- d_rdtsc=- d_coro=-
	d_ev_empty=- d_ev_rdtsc16=- d_ev_event=- d_ev_disabled=-
fi

# ---- 4. rip ps on 10,000 threads + 1,000,000 coroutines ----------------------------------------

# tps ARGS...: run `rip ps ARGS >/dev/null` three times through integ/rusage; prints "MEDIAN_MS
# PEAK_MB ms,ms,ms MB,MB,MB" (PEAK_MB: the largest peak RSS of the three), or "- -", then keeps
# the first lines of one more, untimed, run's output in $tmp/ps.head
tps() {
	raw="" rss=""
	for r in 1 2 3; do
		if ! "$RUSAGE" "$tmp/ps.ru" timeout 60 "$RIP" ps "$@" >/dev/null 2>"$tmp/ps.err"; then
			echo "bench: rip ps $* failed: $(head -n 2 "$tmp/ps.err")" >&2
			echo - -
			return
		fi
		read -r ms kb <"$tmp/ps.ru"
		raw="$raw${raw:+,}$ms"
		rss="$rss${rss:+,}$(awk -v k="$kb" 'BEGIN { printf "%.1f", k / 1024 }')"
	done
	echo "== rip ps $*" >>"$tmp/ps.head"
	timeout 60 "$RIP" ps "$@" 2>&1 | head -n 4 >>"$tmp/ps.head"
	echo "$(echo "$raw" | tr ',' '\n' | median) $(echo "$rss" | tr ',' '\n' | sort -n | tail -n 1)" \
		"$raw $rss"
}

ps_live=- ps_dead=- ps_threads=- ps_note="" many_ms=- many_thr=10000 many_co=$PS_COROS
ps_live_mb=- ps_dead_mb=- ps_threads_mb=-
ps_raw_live="" ps_raw_dead="" ps_raw_threads=""
# only one 10,000-thread process at a time on this machine: not a second bench/many
other=$(ps -eo pid=,nlwp=,comm= 2>/dev/null | awk '$3 == "many" && $2 > 100 { print $1; exit }')
if [ ! -x "$RIP" ]; then
	ps_note="rip ps: not built, skipped"
elif [ -n "$other" ]; then
	ps_note="rip ps: skipped, another bench/many (pid $other) runs; one at a time"
else
	echo "starting bench/many (10,000 threads, $PS_COROS coroutines) ..." >&2
	"$B/many" 10000 "$PS_COROS" >"$tmp/many.out" 2>"$tmp/many.err" &
	many_pid=$!
	i=0
	while ! grep -q '^ready ' "$tmp/many.out" 2>/dev/null; do
		if ! kill -0 "$many_pid" 2>/dev/null || [ $i -ge 900 ]; then
			echo "bench: bench/many did not get ready: $(head -n 3 "$tmp/many.err")"
			kill -9 "$many_pid" 2>/dev/null
			wait "$many_pid" 2>/dev/null
			many_pid=""
			ps_note="rip ps: bench/many failed, see above"
			failed=1
			break
		fi
		sleep 0.1
		i=$((i + 1))
	done
fi
if [ -n "$many_pid" ]; then
	set -- $(sed -n 's/^ready //p' "$tmp/many.out")
	ring=$1 mpid=$2 many_thr=$3 many_co=$4 many_ms=$5
	echo "timing rip ps ..." >&2
	set -- $(tps "$mpid")
	ps_live=$1 ps_live_mb=$2
	shift 2
	ps_raw_live="$*"
	# measured: the 10,000 tasks go back to the machine at once; the file stays
	kill -9 "$many_pid" 2>/dev/null
	wait "$many_pid" 2>/dev/null
	many_pid=""
	set -- $(tps "$ring")
	ps_dead=$1 ps_dead_mb=$2
	shift 2
	ps_raw_dead="$*"
	set -- $(tps --threads "$ring")
	ps_threads=$1 ps_threads_mb=$2
	shift 2
	ps_raw_threads="$*"
	rm -f "$ring"
fi

# ---- 5. the same event through LTTng-UST 2.13 -----------------------------------------------------

# bench/lttng.sh builds build/bench/events-lttng (bench/events.c with the tracepoint loop) and
# starts a snapshot session; the rip and LTTng loops of that program are timed together.
i_lttng=- lt_note=""
echo "setting up LTTng-UST (bench/lttng.sh) ..." >&2
if lt_note=$(BUILD=$BUILD sh bench/lttng.sh setup "$tmp"); then
	echo "timing LTTng-UST ..." >&2
	if ! "$B/events-lttng" time "$REPS" >"$tmp/lt.txt" 2>"$tmp/lt.err"; then
		lt_note="LTTng-UST: events-lttng failed: $(head -n 2 "$tmp/lt.err")"
		failed=1
	elif [ $have_vg = 1 ]; then
		echo "counting LTTng-UST instructions with callgrind ..." >&2
		# some 900 instructions an event: fewer iterations keep callgrind at a few seconds
		i_lttng=$(cg events-lttng lttng $((N1 / 5)) $((N2 / 5)))
	fi
	BUILD=$BUILD sh bench/lttng.sh teardown "$tmp"
fi

# ---- 6. rip run: a recorded trace, 2 threads, blocking mode ------------------------------------

# rip run -o DIR -- examples/events RUN_N --threads 2, three times: events per second of wall
# time (start to exit, draining included), then bench/events trace checks the trace: every
# count of both threads there in order, nothing discarded, and the bytes on disk per event.
RUN_N=${RUN_N:-5000000}
run_note="" run_rate=- run_bytes=- run_raw="" run_check=""
EV=$BUILD/examples/events
if [ ! -x "$RIP" ] || ! "$RIP" run --help >/dev/null 2>&1; then
	run_note="rip run: not built yet, skipped"
elif [ ! -x "$EV" ]; then
	run_note="rip run: $EV missing (make), skipped"
else
	echo "timing rip run ..." >&2
	for r in 1 2 3; do
		rm -rf "$tmp/trace"
		s=$(now_ns)
		if ! timeout 120 "$RIP" run -o "$tmp/trace" -- "$EV" "$RUN_N" --threads 2 \
			>"$tmp/run.out" 2>"$tmp/run.err"; then
			run_note="rip run: failed: $(grep -v '^ *$' "$tmp/run.err" | head -n 2)"
			failed=1
			break
		fi
		e=$(now_ns)
		if [ "$(grep -c "^thread [01] emitted $RUN_N\$" "$tmp/run.out")" != 2 ]; then
			run_note="rip run: examples/events said: $(head -n 2 "$tmp/run.out")"
			failed=1
			break
		fi
		# events/s of this run, and what the trace holds
		run_raw="$run_raw $(awk -v n="$RUN_N" -v t=$((e - s)) \
			'BEGIN { printf "%.2f", 2 * n / (t / 1e9) / 1e6 }')"
		# the trace is packed: bench/events reads its CTF form, its bytes are the packed ones
		rm -rf "$tmp/trace.ctf"
		"$RIP" export --format=ctf "$tmp/trace" -o "$tmp/trace.ctf" >/dev/null 2>&1
		"$B/events" trace "$tmp/trace.ctf" >"$tmp/trace.txt" 2>&1
		set -- $(cat "$tmp/trace.txt")
		# trace streams S packets P events E discarded D bytes B gaps G bad X
		if [ "${1:-}" != trace ] || [ "$7" != $((2 * RUN_N)) ] || [ "$9" != 0 ] ||
			[ "${13}" != 0 ] || [ "${15}" != 0 ]; then
			run_check="$run_check run $r: $*;"
		fi
		run_bytes=$(calc "%.2f" "a / b" "$(disk_bytes "$tmp/trace")" "${7:-0}")
		run_trace="$*"
	done
	rm -rf "$tmp/trace" "$tmp/trace.ctf"
	[ -z "$run_note" ] && run_rate=$(echo $run_raw | tr ' ' '\n' | median)
fi

# ---- 7. malloc + free with backtraces: rip run --mem against heaptrack --------------------------

# bench/heaptrack.sh runs build/bench/malloc (1 and 2 threads, MEM_N pairs each, 10 frames deep)
# plain, under rip run --mem and under heaptrack, MEM_REPS times interleaved, and prints
# "mem KEY... MEDIAN EACH..." lines; without heaptrack its figures are "-" with a note.
echo "timing malloc + free: plain, rip run --mem, heaptrack (bench/heaptrack.sh) ..." >&2
M=$tmp/mem.txt
mem_note=""
if [ ! -x "$RIP" ] || ! "$RIP" run --help >/dev/null 2>&1; then
	mem_note="rip run --mem: not built yet, skipped"
	: >"$M"
elif ! BUILD=$BUILD sh bench/heaptrack.sh "$tmp" >"$M"; then
	failed=1
fi
# the workload shaped like real code (issue 27): built without frame pointers (as Debian's
# packages and most production builds), 256 live blocks a thread, 8-11 frames across 256
# stacks: rip's walk of the unwind tables then (RIP_UNWIND, preload/unwind.c), heaptrack's
# libunwind.  MEM_NOFP_N pairs a thread (default 1,000,000, as the issue measured).
echo "timing malloc + free without frame pointers (build/bench/malloc-nofp) ..." >&2
MN=$tmp/mem-nofp.txt
if [ -n "$mem_note" ]; then
	: >"$MN"
elif ! BUILD=$BUILD MEM_PROG=$B/malloc-nofp MEM_N=${MEM_NOFP_N:-1000000} \
	sh bench/heaptrack.sh "$tmp" >"$MN"; then
	failed=1
fi

# same_stacks: are the stacks rip records of build/bench/malloc-nofp 2 20000 (the default
# walk) libunwind's (RIP_UNWIND=libunwind), event by event?  Both runs without address space
# randomisation (setarch -R), so that both give the same addresses; each thread's sequence of
# mem events with its frames (tests/data/mem-stacks.awk) is summed (cksum), and the sums of
# the threads compared as a set (which thread is numbered 1 differs from run to run).
# Prints "same N", "differ N" or "-" (a run failed, or setarch -R is not allowed here).
same_stacks() {
	setarch "$(uname -m)" -R true 2>/dev/null || { echo -; return; }
	for m in libunwind auto; do
		rm -rf "$tmp/same-$m"
		if ! RIP_UNWIND=$m timeout 60 setarch "$(uname -m)" -R "$RIP" run --mem \
			-o "$tmp/same-$m" -- "$B/malloc-nofp" 2 20000 >/dev/null 2>&1 ||
			! "$RIP" dump "$tmp/same-$m" >"$tmp/same-$m.dump" 2>&1; then
			echo -
			return
		fi
		awk -f tests/data/mem-stacks.awk "$tmp/same-$m.dump" >"$tmp/same-$m.stacks"
		n=$(wc -l <"$tmp/same-$m.stacks")
		for t in $(awk '{ print $1 }' "$tmp/same-$m.stacks" | sort -u); do
			awk -v t="$t" '$1 == t { $1 = ""; print }' "$tmp/same-$m.stacks" | cksum
		done | sort >"$tmp/same-$m.sums"
		rm -rf "$tmp/same-$m" "$tmp/same-$m.dump" "$tmp/same-$m.stacks"
	done
	if cmp -s "$tmp/same-libunwind.sums" "$tmp/same-auto.sums"; then
		echo "same $n"
	else
		echo "differ $n"
	fi
	rm -f "$tmp"/same-*.sums
}
same_nofp=-
if [ -z "$mem_note" ] && [ -x "$B/malloc-nofp" ]; then
	echo "comparing malloc-nofp's stacks with libunwind's ..." >&2
	same_nofp=$(same_stacks)
fi

# ---- the table ---------------------------------------------------------------------------------

T=$tmp/time.txt
L=$tmp/legacy.txt
H=$tmp/threads.txt
ns_floor=$(fig "$T" ns floor)
ns_snap=$(fig "$T" ns snap)
ns_rdtsc=$(fig "$T" ns rdtsc)
ns_coro=$(fig "$T" ns coro)
ns_lfloor=$(fig "$L" ns floor)
ns_legacy=$(fig "$L" ns snap)
t1=$(fig "$H" threads snap 1)
t2=$(fig "$H" threads snap 2)
p2=$(fig "$H" threads private 2)
f2=$(fig "$H" threads floor 2)

c2=$(fig "$H" concurrency snap 2)
# rfig FILE KEY...: a ratio recorded by the programs, as "1.23x"
rfig() {
	calc "%.2fx" "a" "$(fig "$@")" 0
}
count() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
big="$(count "$many_thr") thr + $(count "$many_co") coro"

row() { printf '%-40s %10s  %-19s %9s %9s %8s\n' "$@"; }
ns() { [ "$1" = - ] && echo - || echo "$1 ns"; }
ms() { [ "$1" = - ] && echo - || echo "$1 ms"; }
mb() { [ "$1" = - ] && echo - || echo "$1 MB"; }

row "path" "time/iter" "time ratio" "instr/it" "instr" "objdump"
row "" "(median)" "(same run)" "callgrind" "ratio" "loop"
row "floor: thread-local 8-byte store" "$(ns "$ns_floor")" "1.00x floor" "$i_floor" \
	"$(ratio "$i_floor" "$ORIG_INSTR")" "$d_floor"
row "rip_snap (rip.h)" "$(ns "$ns_snap")" "$(rfig "$T" ratio snap floor) floor" "$i_snap" \
	"$(ratio "$i_snap" "$ORIG_INSTR")" "$d_snap"
row "rip_snap (librip.h, original API)" "$(ns "$ns_legacy")" \
	"$(rfig "$L" ratio snap floor) floor [1]" "$i_legacy" \
	"$(ratio "$i_legacy" "$ORIG_INSTR")" "$d_legacy"
row "original librip (constant, the issue)" "-" "-" "$ORIG_INSTR" "1.00x" "-"
row "bare rdtsc" "$(ns "$ns_rdtsc")" "1.00x rdtsc" "$i_rdtsc" "" "$d_rdtsc"
row "coro switch_in + switch_out (2 rdtsc)" "$(ns "$ns_coro")" \
	"$(rfig "$T" ratio coro rdtsc2) 2 rdtsc [2]" "$i_coro" "" "$d_coro"
row "rip_snap (rip.h), 1 thread" "$(ns "$t1")" "1.00x 1 thread" "" "" ""
row "rip_snap (rip.h), 2 threads at once [3]" "$(ns "$t2")" "$(rfig "$H" ratio snap 2 1) 1 thread" \
	"" "" ""
row "  control: same, private slot [4]" "$(ns "$p2")" "$(rfig "$H" ratio private 2 1) 1 thread" \
	"" "" ""
row "  control: floor, 2 threads" "$(ns "$f2")" "$(rfig "$H" ratio floor 2 1) 1 thread" "" "" ""
if [ -n "$ps_note" ]; then
	row "rip ps PID ($big)" "-" "$ps_note" "" "" ""
	row "rip ps FILE (same, after SIGKILL)" "-" "$ps_note" "" "" ""
else
	row "rip ps PID ($big)" "$(ms "$ps_live")" "$(ratio "$ps_live" 500) goal 0.5 s" "" "" ""
	row "  peak RSS [ps]" "$(mb "$ps_live_mb")" "$(ratio "$ps_live_mb" 100) goal 100 MB" "" "" ""
	row "rip ps FILE (same, after SIGKILL)" "$(ms "$ps_dead")" \
		"$(ratio "$ps_dead" 500) goal 0.5 s" "" "" ""
	row "  peak RSS" "$(mb "$ps_dead_mb")" "$(ratio "$ps_dead_mb" 100) goal 100 MB" "" "" ""
	row "rip ps --threads FILE (every slot)" "$(ms "$ps_threads")" "no budget" "" "" ""
	row "  peak RSS" "$(mb "$ps_threads_mb")" "no budget" "" "" ""
fi
echo "instr/it is per loop iteration, the 3-instruction loop (add, cmp, jne) included, like the"
echo "original's 12; instr ratio is against those 12.  objdump loop counts the same instructions"
echo "in the loop body (listings below).  The lea that takes the IP is loop-invariant, so the"
echo "compiler hoists it out of these loops; a lone rip_snap() call site has it: one more."
echo "time ratios are medians of the ratios within each repetition (the loops of one repetition"
echo "run back to back, so a busy neighbour slows them alike); raw figures are at the end."
echo "[1] against the floor loop timed in the librip.h program itself ($(ns "$ns_lfloor"))."
echo "[2] against two bare rdtsc ($(ns "$ns_rdtsc") each): a switch pair takes two timestamps;"
echo "    $(calc "%.1f" "(a - 3) / 2" "$i_coro" 0) instructions per switch, the loop left out."
echo "[3] each thread snaps into its own slot; on average $c2 of the 2 threads really ran at"
echo "    once (2.00: fully concurrent; less means the shared machine time-sliced them)."
echo "[4] the same snap loop with __rip_self.cur pointed at a malloc'd slot outside the ring:"
echo "    whatever 2 threads cost each other there is the hardware's (vCPUs sharing a core)."
echo "[ps] rip ps: median wall time of 3 runs (>/dev/null); peak RSS is the largest ru_maxrss of"
echo "     the 3 (integ/rusage), the pages of the ring file it maps included."

# the events block
E=$tmp/ev.txt
LT=$tmp/lt.txt
ns_ev_empty=$(fig "$E" ns empty)
ns_ev_rdtsc16=$(fig "$E" ns rdtsc16)
ns_ev_event=$(fig "$E" ns event)
ns_ev_disabled=$(fig "$E" ns disabled)
r_ev_event=$(fig "$E" ratio event rdtsc16)
ns_lttng=$(fig "$LT" ns lttng)
r_lttng=$(fig "$LT" ratio lttng event)
b_ring=$(fig "$tmp/evbytes.txt" bytes event)
# net N: instructions per iteration beyond the empty loop's
net() { calc "%.4g" "a - b" "$1" "$i_ev_empty"; }
unit() { [ "$1" = - ] && echo - || echo "$1 $2"; }
erow() { printf '%-42s %11s  %-26s %9s %6s %7s\n' "$@"; }
echo
erow "event path" "time/iter" "time ratio" "instr/it" "net" "objdump"
erow "" "(median)" "(same run)" "callgrind" "instr" "path"
erow "empty loop (add, cmp, jne)" "$(ns "$ns_ev_empty")" "-" "$i_ev_empty" "$(net "$i_ev_empty")" \
	"$d_ev_empty"
erow "floor: rdtsc + 16-byte store" "$(ns "$ns_ev_rdtsc16")" "1.00x floor" "$i_ev_rdtsc16" \
	"$(net "$i_ev_rdtsc16")" "$d_ev_rdtsc16"
erow "rip_event1, one u64, category on [5]" "$(ns "$ns_ev_event")" \
	"$(rfig "$E" ratio event rdtsc16) floor (budget 1.15x)" "$i_ev_event" "$(net "$i_ev_event")" \
	"$d_ev_event"
erow "rip_event1, category off [6]" "$(ns "$ns_ev_disabled")" \
	"$(rfig "$E" ratio disabled empty) empty loop" "$i_ev_disabled" "$(net "$i_ev_disabled")" \
	"$d_ev_disabled"
if [ -n "$lt_note" ]; then
	erow "LTTng-UST 2.13 tracepoint, one u64" "-" "$lt_note" "" "" ""
else
	erow "LTTng-UST 2.13 tracepoint, one u64 [7]" "$(ns "$ns_lttng")" \
		"$(rfig "$LT" ratio lttng event) rip_event1 (goal 9x)" "$i_lttng" "$(net "$i_lttng")" "-"
fi
erow "bytes per event in the ring" "$(unit "$b_ring" B)" "budget 12 B" "" "" ""
if [ -n "$run_note" ]; then
	erow "rip run, 2 threads, block [8]" "-" "$run_note" "" "" ""
else
	erow "bytes per event on disk, rip run [8]" "$(unit "$run_bytes" B)" "packed, index included" \
		"" "" ""
	erow "rip run, 2 threads, block [8]" "$(unit "$run_rate" M/s)" \
		"$(ratio "$run_rate" 20) goal 20M events/s" "" "" ""
fi
echo "net instr is instr/it less the empty loop's; objdump path counts the instructions of one"
echo "iteration in the listing: the loop, and for the enabled event the block the compiler moved"
echo "out of line (RIP_UNLIKELY), marked + in the listing below."
echo "[5] ring open, thread attached, flight-recorder mode: every $(calc "%d" "(16384 - 80) / 12" 1 1)th event or so"
echo "    takes the slow path to switch packets; callgrind's count includes that share, objdump's"
echo "    is the inline path alone."
echo "[6] the category's bit cleared in the ring file's control word, as rip disable does; the"
echo "    goal is 3 net instructions (one load, one test, one branch)."
if [ -z "$lt_note" ]; then
	echo "[7] a snapshot session (overwrite channel, per-UID buffers, 4 x 1 MiB per CPU), timed in"
	echo "    one process with rip_event1 ($(ns "$(fig "$LT" ns event)") there): the ratio is LTTng's"
	echo "    time over librip's, per repetition; callgrind counts at $((N1 / 5)) and $((N2 / 5))"
	echo "    events."
fi
if [ -z "$run_note" ]; then
	echo "[8] rip run -o DIR -- examples/events $RUN_N --threads 2 (RIP_MODE=block, rip run's"
	echo "    default), wall time from start to exit, median of 3:$run_raw M/s.  The trace (its"
	echo "    CTF export read by bench/events; bytes: the packed trace's files, index included):"
	echo "    ${run_trace:-?}"
	if [ -z "$run_check" ]; then
		echo "    every count of both threads in order, nothing discarded: zero loss."
	else
		echo "    NOT all events are there:$run_check"
	fi
fi

# the malloc + free block
mf() { fig "$M" mem "$@"; }
ht_ver=$(heaptrack --version 2>/dev/null | sed -n 's/^heaptrack //p')
secs() { calc "%.3f s" "a" "$1" 0; }
xx() { calc "%.2fx" "a" "$1" 0; }
mrow() { printf '%-40s %8s %7s %10s   %8s %7s %10s\n' "$@"; }
echo
mrow "malloc + free, 10 frames deep [9]" "" "1 thread" "" "" "2 threads" ""
mrow "" "time" "slowdn" "ns/event" "time" "slowdn" "ns/event"
mrow "plain" "$(secs "$(mf time plain 1)")" "1.00x" "$(ns "$(mf nsev plain 1)")" \
	"$(secs "$(mf time plain 2)")" "1.00x" "$(ns "$(mf nsev plain 2)")"
mrow "rip run --mem" "$(secs "$(mf time rip 1)")" "$(xx "$(mf slow rip 1)")" \
	"$(ns "$(mf nsev rip 1)")" "$(secs "$(mf time rip 2)")" "$(xx "$(mf slow rip 2)")" \
	"$(ns "$(mf nsev rip 2)")"
if [ "$(mf time heaptrack 1)" = - ] && [ "$(mf time heaptrack 2)" = - ]; then
	mrow "heaptrack" "-" "skipped" "" "" "" ""
else
	mrow "heaptrack ${ht_ver:-}" "$(secs "$(mf time heaptrack 1)")" \
		"$(xx "$(mf slow heaptrack 1)")" "$(ns "$(mf nsev heaptrack 1)")" \
		"$(secs "$(mf time heaptrack 2)")" "$(xx "$(mf slow heaptrack 2)")" \
		"$(ns "$(mf nsev heaptrack 2)")"
fi
mrow "rip's overhead / heaptrack's (max 0.33x)" "" "$(xx "$(mf share 1)")" "[10]" "" \
	"$(xx "$(mf share 2)")" ""
mrow "ns per event added: rip run --mem" "" "" "$(ns "$(mf added rip 1)")" "" "" \
	"$(ns "$(mf added rip 2)")"
mrow "ns per event added: heaptrack" "" "" "$(ns "$(mf added heaptrack 1)")" "" "" \
	"$(ns "$(mf added heaptrack 2)")"
mrow "CPU ns per event of a thread: plain" "" "" "$(ns "$(mf cpu plain 1)")" "" "" \
	"$(ns "$(mf cpu plain 2)")"
mrow "CPU ns per event of a thread: rip" "" "" "$(ns "$(mf cpu rip 1)")" "" "" \
	"$(ns "$(mf cpu rip 2)")"
mrow "lost events (rip run's summary)" "" "" "$(mf lost 1)" "" "" "$(mf lost 2)"
mfn() { fig "$MN" mem "$@"; }
mrow "without frame pointers [9f]: plain" "$(secs "$(mfn time plain 1)")" "1.00x" \
	"$(ns "$(mfn nsev plain 1)")" "$(secs "$(mfn time plain 2)")" "1.00x" \
	"$(ns "$(mfn nsev plain 2)")"
mrow "  rip run --mem" "$(secs "$(mfn time rip 1)")" "$(xx "$(mfn slow rip 1)")" \
	"$(ns "$(mfn nsev rip 1)")" "$(secs "$(mfn time rip 2)")" "$(xx "$(mfn slow rip 2)")" \
	"$(ns "$(mfn nsev rip 2)")"
mrow "  heaptrack" "$(secs "$(mfn time heaptrack 1)")" "$(xx "$(mfn slow heaptrack 1)")" \
	"$(ns "$(mfn nsev heaptrack 1)")" "$(secs "$(mfn time heaptrack 2)")" \
	"$(xx "$(mfn slow heaptrack 2)")" "$(ns "$(mfn nsev heaptrack 2)")"
mrow "  rip's overhead / heaptrack's (max 0.33x)" "" "$(xx "$(mfn share 1)")" "" "" \
	"$(xx "$(mfn share 2)")" ""
mrow "  CPU ns per event of a thread: rip" "" "" "$(ns "$(mfn cpu rip 1)")" "" "" \
	"$(ns "$(mfn cpu rip 2)")"
mrow "  lost events (rip run's summary)" "" "" "$(mfn lost 1)" "" "" "$(mfn lost 2)"
mrow "bytes per event on disk: rip run" "" "" "$(unit "$(mf bytes rip 1)" B)" "" "" \
	"$(unit "$(mf bytes rip 2)" B)"
mrow "bytes per event on disk: heaptrack" "" "" "$(unit "$(mf bytes heaptrack 1)" B)" "" "" \
	"$(unit "$(mf bytes heaptrack 2)" B)"
mem_pairs=$(mf pairs)
echo "time is the whole command's wall time, start to exit (rip's draining, heaptrack's"
echo "interpreting and zstd compressing included); slowdn = traced / plain, ns/event = time /"
echo "events of one thread (2 x $(count "$mem_pairs") pairs each), added = (traced - plain) / events."
echo "[9] build/bench/malloc THREADS $mem_pairs: each thread does the pairs, 16-4096 bytes, 16 kept"
echo "    live, through 10 noipa frames (32 distinct stacks); rip run --mem -o DIR -- ..., and"
echo "    heaptrack -o FILE ...: bytes on disk are the trace directory's files (packed chunks,"
echo "    index, and the pages its sparse copy of the ring file holds, not its length) and"
echo "    heaptrack's file (its default zstd compression), over 2 x pairs x threads.  Medians of $(echo $(sed -n \
	's/^mem time plain 1 [^ ]* //p' "$M") | wc -w) interleaved repetitions (MEM_REPS)."
echo "[10] overhead = slowdown - 1; rip's over heaptrack's, per repetition.  2 threads / 1 thread,"
echo "    added ns per event: rip $(xx "$(mf growth rip)"), heaptrack" \
	"$(xx "$(mf growth heaptrack)"); plain's time (control:"
echo "    what the machine gives 2 threads) $(xx "$(mf growth plain)"); added CPU ns per event" \
	"of a thread: rip $(xx "$(mf cpugrowth rip)")."
echo "[9f] build/bench/malloc-nofp THREADS $(fig "$MN" mem pairs): shaped like real code (issue 27),"
echo "    built -fomit-frame-pointer: 256 blocks kept live a thread, each pair through a chain of"
echo "    8 to 11 frames picked per pair (256 distinct stacks, sizes in steps of 16 bytes); stacks"
echo "    then come from rip's own walk of the unwind tables (preload/unwind.c; libunwind where it"
echo "    declines), heaptrack's from libunwind.  Its own interleaved repetitions, after the others."
case $same_nofp in
same*) echo "    Stacks: rip's of malloc-nofp 2 20000 are libunwind's (RIP_UNWIND=libunwind), event by"
	echo "    event: ${same_nofp#same } mem events, every thread's sequence the same." ;;
differ*) echo "    Stacks: rip's of malloc-nofp 2 20000 DIFFER from libunwind's (${same_nofp#differ }" \
	"events)." ;;
*) echo "    Stacks: not compared with libunwind's (a run failed)." ;;
esac
[ -n "$mem_note" ] && echo "    $mem_note"
sed -n 's/^mem note /    note: /p' "$M"
sed -n 's/^mem note /    note (no frame pointers): /p' "$MN"
echo
echo "budgets:"
verdict() { # NAME VALUE LIMIT
	if [ "$2" = - ]; then
		echo "  $1: not measured"
	elif awk -v v="$2" -v l="$3" 'BEGIN { exit !(v <= l) }'; then
		echo "  $1: $2 <= $3, within budget"
	else
		echo "  $1: $2 > $3, OVER budget"
	fi
}
verdict "rip_snap (rip.h) instr/iter vs original librip" "$i_snap" "$ORIG_INSTR"
verdict "rip_snap (librip.h) instr/iter vs original librip" "$i_legacy" "$ORIG_INSTR"
r2=$(calc "%.2f" "a" "$(fig "$H" ratio snap 2 1)" 0)
echo "  rip_snap 2 threads / 1 thread: $r2 (must not grow beyond the controls: private slot" \
	"$(calc "%.2f" "a" "$(fig "$H" ratio private 2 1)" 0)," \
	"floor $(calc "%.2f" "a" "$(fig "$H" ratio floor 2 1)" 0))"
if [ -z "$ps_note" ]; then
	verdict "rip ps live, ms" "$ps_live" 500
	verdict "rip ps live, peak RSS MB" "$ps_live_mb" 100
	verdict "rip ps post-mortem, ms" "$ps_dead" 500
	verdict "rip ps post-mortem, peak RSS MB" "$ps_dead_mb" 100
else
	echo "  $ps_note"
fi
verdict "enabled event time / rdtsc+16-byte floor" "$r_ev_event" 1.15
verdict "enabled event bytes in the ring" "$b_ring" 12
verdict "disabled event net instructions" "$(net "$i_ev_disabled")" 3
# verdict_ge NAME VALUE GOAL: the same, for figures that must reach a goal
verdict_ge() {
	if [ "$2" = - ]; then
		echo "  $1: not measured"
	elif awk -v v="$2" -v l="$3" 'BEGIN { exit !(v >= l) }'; then
		echo "  $1: $2 >= $3, goal met"
	else
		echo "  $1: $2 < $3, goal NOT met"
	fi
}
if [ -z "$lt_note" ]; then
	verdict_ge "LTTng-UST time / librip time per event" "$r_lttng" 9
else
	echo "  LTTng-UST comparison: not measured ($lt_note)"
fi
if [ -z "$run_note" ]; then
	verdict_ge "rip run, 2 threads, block, M events/s" "$run_rate" 20
	[ -z "$run_check" ] && echo "  rip run: zero loss" || echo "  rip run: events LOST, see [8]"
else
	echo "  $run_note"
fi

verdict "malloc+free, 1 thread: rip's overhead / heaptrack's" "$(mf share 1)" 0.333
verdict "malloc+free, 2 threads: rip's overhead / heaptrack's" "$(mf share 2)" 0.333
verdict "malloc+free, no frame pointers, 1 thread: overhead / heaptrack's" "$(mfn share 1)" 0.333
verdict "malloc+free, no frame pointers, 2 threads: overhead / heaptrack's" "$(mfn share 2)" \
	0.333
case $same_nofp in
same*) echo "  malloc+free, no frame pointers: stacks the same as libunwind's" \
	"(${same_nofp#same } events), within budget" ;;
differ*) echo "  malloc+free, no frame pointers: stacks DIFFER from libunwind's, OVER budget" ;;
*) echo "  malloc+free, no frame pointers: stacks not compared" ;;
esac
verdict "malloc+free, added CPU ns/event, 2 threads / 1 thread" "$(mf cpugrowth rip)" 1.10
g_rip=$(mf growth rip) g_plain=$(mf growth plain)
verdict "malloc+free, added wall ns/event 2 thr / 1 thr, over plain's" \
	"$(calc "%.3f" "(b > 0 ? a / b : 0)" "$g_rip" "$g_plain")" 1.10
l1=$(mf lost 1) l2=$(mf lost 2)
if [ "$l1" = - ] || [ "$l2" = - ]; then
	echo "  rip run --mem: lost events not measured"
elif [ "$l1" = 0 ] && [ "$l2" = 0 ] && ! grep -q '^mem note rip recorded' "$M"; then
	echo "  rip run --mem: zero loss (1 and 2 threads, every repetition)"
else
	echo "  rip run --mem: events LOST ($l1 on 1 thread, $l2 on 2), see [10]"
fi
for t in 1 2; do
	verdict "malloc+free, $t thread(s): trace bytes per event, rip $(mf bytes rip $t) B / \
heaptrack $(mf bytes heaptrack $t) B" \
		"$(calc "%.3f" "(b > 0 ? a / b : 0)" "$(mf bytes rip $t)" "$(mf bytes heaptrack $t)")" 1
done
echo
echo "raw numbers (ns per iteration: median, then each repetition):"
sed 's/^/  snap        /' "$T" 2>/dev/null
sed 's/^/  snap-legacy /' "$L" 2>/dev/null
sed 's/^/  snap        /' "$H" 2>/dev/null
if [ $have_vg = 1 ]; then
	echo "callgrind Ir inside the loop function, at $N1 and $N2 iterations:"
	sed 's/^cg /  /' "$tmp/cg.raw"
fi
[ "$many_ms" != - ] &&
	echo "bench/many: ready after ${many_ms} ms (ring open, threads parked, coroutines" \
		"switched)"
[ -s "$tmp/many.err" ] && sed 's/^/  /' "$tmp/many.err"
[ -n "$ps_raw_live" ] && echo "rip ps live, ms then peak RSS MB: $ps_raw_live"
[ -n "$ps_raw_dead" ] && echo "rip ps post-mortem, ms then peak RSS MB: $ps_raw_dead"
[ -n "$ps_raw_threads" ] && echo "rip ps --threads post-mortem, ms then peak RSS MB: $ps_raw_threads"
sed 's/^/  events      /' "$E" 2>/dev/null
sed 's/^/  events      /' "$tmp/evbytes.txt" 2>/dev/null
sed 's/^/  lttng       /' "$LT" 2>/dev/null
grep -v '^mem note ' "$M" 2>/dev/null | sed 's/^mem /  malloc      /'
grep -v '^mem note ' "$MN" 2>/dev/null | sed 's/^mem /  malloc-nofp /'
[ -s "$tmp/ps.head" ] && echo "what rip ps said (first lines of one more run):" &&
	sed 's/^/  /' "$tmp/ps.head"
for f in snap.loop_snap snap-legacy.loop_snap snap.loop_floor snap.loop_coro \
	events.loop_rdtsc16 events.loop_event events.loop_disabled; do
	[ -s "$tmp/dis.$f" ] || continue
	echo "objdump -d $B/${f%%.*} --disassemble=${f#*.} (up to the loop's back-edge;" \
		"* = loop body):"
	cat "$tmp/dis.$f"
done

# section NAME SCRIPT WHAT: run bench/SCRIPT, which prints its own block (and budget lines),
# when rip run is built; "NAME: rip run: not built yet, skipped" otherwise.
section() {
	echo "timing $3 (bench/$2) ..." >&2
	if [ ! -x "$RIP" ] || ! "$RIP" run --help >/dev/null 2>&1; then
		echo
		echo "$1: rip run: not built yet, skipped"
	elif ! BUILD=$BUILD sh "bench/$2" "$tmp"; then
		failed=1
	fi
}

# ---- 8. the readers: rip leaks against heaptrack_print on the same workload ------------------

# bench/analysis.sh records build/bench/malloc once with each tracer, then times rip leaks and
# heaptrack_print on what they wrote (median of 3, peak RSS, events per second) and prints its
# own block and budget line; without heaptrack its row says why it was skipped.
section analysis analysis.sh "the readers: rip leaks, heaptrack_print"

# ---- 8b. recording in bounded disk: rip record --max-size ------------------------------------

# bench/store.sh: rip record --max-size=10M of a program recorded for some 200 MB, the disk
# use polled, and what the readers count as dropped (STORE_N, STORE_RATE, STORE_MAX).
section store store.sh "rip record --max-size"

# ---- 9. as the threads grow: tracing at 1-512 threads, readers at 1-1,000, tmpfs bytes -------

# bench/threads.sh prints its own three blocks (THR_PAIRS, THR_REPS).
section threads threads.sh "as the threads grow"

# bench/leakthreads.sh: issue 27's workload (N live threads, 2,000 pairs and one leak each) at
# 1 to 10,000 threads: plain, rip run --mem, heaptrack; loss, leaks exact, tmpfs, rip's RSS
# (LT_THREADS, LT_PAIRS, LT_REPS, LT_BIG, LT_BIG_REPS, LT_RESERVE).
section leakthreads leakthreads.sh "issue 27's workload at 1 to 10,000 live threads"

# ---- 10. programs that start short programs: bash loop, make -j2 ---------------------------

section spawn spawn.sh "programs that spawn"

# ---- 11. many machines: events streamed through lttng-relayd, against LTTng-UST's consumer -----

# bench/relayd.sh starts lttng-relayd on free loopback ports (RLY_N, RLY_REPS).
section relayd relayd.sh "events streamed through lttng-relayd"

# ---- 12. the wait wrappers: an uncontended mutex and a ready read, wrapped and not ------------

section waits waits.sh "the wait wrappers"

# ---- 13. rip ps on 10,000 blocked threads of an uninstrumented program -----------------------

# bench/ps-watch.sh: rip ps (the watcher's stack copies) against eu-stack and gdb on the same
# process, wall time and the pause the program sees (PSW_THREADS, PSW_REPS, PSW_CAP).
section ps-watch ps-watch.sh "rip ps on blocked threads, against eu-stack and gdb"

# ---- 14. CPU sampling for rip top: --sample at 100 Hz, 2 CPU-bound threads -------------------

section sample sample.sh "CPU sampling (rip run --sample)"

# ---- 15. function tracing: the hooks of -finstrument-functions against uftrace --------------

# bench/funcs.sh: per call of a 9-deep chain, the floors, librip's modes and uftrace; bytes a
# call; 1,000 threads; rip ps --stacks at 10,000 threads + 100,000 coroutines (FN_* variables).
section funcs funcs.sh "function tracing"
exit $failed
