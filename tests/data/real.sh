# SPDX-License-Identifier: Apache-2.0
#
# Description: shell helpers sourced by tests/integ/real-*.sh (not a test
# itself): run a real program (one we did not write) plain, then under
# rip run with resource tracing, and check that nothing changed for the
# program and nothing was missed by rip: the same stdout (and stderr, unless
# the test says otherwise) and exit status, within a time limit, a summary
# line of rip run that says 0 lost, and every trace of the run (the
# program's and each followed child's or new image's) complete and read by
# rip leaks and rip report; no ring file left but the one rip run keeps,
# and names, for a program killed by a signal.  A loss is printed with its
# exact figure.

. tests/data/common.sh
need_bin "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"

# Seconds one run of a program may take (plain or traced) before it counts as a hang.
: "${REAL_TIMEOUT:=60}"
# Work directory of the test's programs.
W=$TEST_TMP/w
mkdir -p "$W"
# Ring files go to a directory of their own: none may be left behind.
RIP_DIR=$TEST_TMP/rings
export RIP_DIR
mkdir -p "$RIP_DIR"
real_n=0

# real_need CMD...: the programs the test runs; make check installs them all
# (mk/deps.sh check), so a missing one fails the test.
real_need() {
	need_cmd "$@"
}

# real_python: the path of a real python3 interpreter (not a pyenv shim,
# which is a bash script): Debian's when it is there.
real_python() {
	if [ -x /usr/bin/python3 ]; then
		echo /usr/bin/python3
	else
		python3 -c 'import sys; print(sys.executable)'
	fi
}

# real_field FILE KEY: the number or true/false after "KEY": in the JSON
# document FILE (its first occurrence: top-level keys of rip's documents
# come before any nested object of the same name).
real_field() {
	grep -o "\"$2\":[^,}]*" "$1" | head -n 1 | cut -d: -f2
}

# real_check_traces WHAT DIR [OPTS]: DIR and every trace under it
# (children, new images) are complete (0 discarded, 0 packets lost) and rip
# leaks and rip report read them without a warning; with --mem in OPTS,
# DIR holds allocations.  Sets real_traces to their number.
real_check_traces() {
	rc_what=$1 rc_opts=${3:-}
	real_traces=0
	[ -f "$2/.rip-index" ] || {
		fail "$rc_what: no trace in $2"
		return 0
	}
	for d in "$2" "$2"/*/; do
		[ -d "$d" ] || continue
		d=${d%/}
		real_traces=$((real_traces + 1))
		[ -f "$d/.rip-index" ] || {
			fail "$rc_what: $d holds no trace"
			continue
		}
		if ! "$RIP" leaks "$d" >"$TEST_TMP/leaks" 2>"$TEST_TMP/leaks.err"; then
			fail "$rc_what: rip leaks $d failed: $(head -n 3 "$TEST_TMP/leaks.err")"
		else
			grep -q '^total: ' "$TEST_TMP/leaks" || fail "$rc_what: rip leaks $d printed no total"
		fi
		if grep -h '^WARNING' "$TEST_TMP/leaks" "$TEST_TMP/leaks.err" >"$TEST_TMP/warn"; then
			fail "$rc_what: rip leaks $d: $(head -n 2 "$TEST_TMP/warn")"
		fi
		# the text report of the program's own trace (the JSON one of each below)
		if [ "$d" = "$2" ] && ! "$RIP" report "$d" >"$TEST_TMP/report" 2>"$TEST_TMP/report.err"; then
			fail "$rc_what: rip report $d failed: $(head -n 3 "$TEST_TMP/report.err")"
		fi
		if ! "$RIP" report --json "$d" >"$TEST_TMP/report.json" 2>"$TEST_TMP/report.err"; then
			fail "$rc_what: rip report --json $d failed: $(head -n 3 "$TEST_TMP/report.err")"
			continue
		fi
		# the program's own trace holds its allocations (a child may only exec)
		if [ "$d" = "$2" ] && [ "$(real_field "$TEST_TMP/report.json" allocations)" = 0 ]; then
			case " $rc_opts " in
			*" --mem "*) fail "$rc_what: $d holds no allocation" ;;
			esac
		fi
		rc_disc=$(real_field "$TEST_TMP/report.json" discarded)
		rc_lostp=$(real_field "$TEST_TMP/report.json" lost_packets)
		rc_comp=$(real_field "$TEST_TMP/report.json" complete)
		if [ "$rc_disc" != 0 ] || [ "$rc_lostp" != 0 ] || [ "$rc_comp" != true ]; then
			fail "$rc_what: $d ($(real_field "$TEST_TMP/report.json" comm | tr -d '"')) lost" \
				"$rc_disc events and $rc_lostp packets (complete: $rc_comp)"
		fi
	done
	[ -z "$(find "$RIP_DIR" -mindepth 1)" ] ||
		fail "$rc_what: left in the ring directory: $(find "$RIP_DIR" -mindepth 1 | head -n 3)"
	rm -rf "$RIP_DIR" && mkdir -p "$RIP_DIR"
	return 0
}

# real_run WHAT OPTS PREP CMD...: run PREP (a shell command, eval'ed, that
# resets the state CMD works on), CMD plain, then PREP again and CMD under
# rip run OPTS -o $real_trace; compare and check the traces.  Stdin is
# $W/stdin when it exists, else /dev/null.  REAL_STDERR=any: do not compare
# stderr (a program that prints times or pids there).  Leaves the plain
# run's status in real_prc and its output in $TEST_TMP/plain.out.
real_run() {
	r_what=$1 r_opts=$2 r_prep=$3
	shift 3
	r_in=/dev/null
	[ -f "$W/stdin" ] && r_in=$W/stdin
	(eval "$r_prep") || die "$r_what: cannot prepare"
	timeout -k 5 "$REAL_TIMEOUT" "$@" <"$r_in" >"$TEST_TMP/plain.out" 2>"$TEST_TMP/plain.err"
	real_prc=$?
	case $real_prc in
	124 | 137) die "$r_what: timed out untraced (${REAL_TIMEOUT}s): $*" ;;
	esac
	# dash reports a death by signal on the command's stderr
	[ "$real_prc" -gt 128 ] && sed -i '/^Terminated$/d' "$TEST_TMP/plain.err"
	real_n=$((real_n + 1))
	real_trace=$TEST_TMP/t$real_n
	(eval "$r_prep") || die "$r_what: cannot prepare"
	r_start=$(date +%s)
	# shellcheck disable=SC2086 # the options are words
	timeout -k 5 "$REAL_TIMEOUT" "$RIP" run $r_opts -o "$real_trace" -- "$@" <"$r_in" \
		>"$TEST_TMP/traced.out" 2>"$TEST_TMP/traced.err"
	r_rc=$?
	echo "$r_what (rip run $r_opts): exit $r_rc, $(($(date +%s) - r_start))s, trace t$real_n"
	case $r_rc in
	124 | 137)
		fail "$r_what (rip run $r_opts): timed out after ${REAL_TIMEOUT}s (hang?)"
		return 0
		;;
	"$real_prc") ;;
	*) fail "$r_what (rip run $r_opts): exit $r_rc traced, $real_prc untraced: $(tail -n 3 "$TEST_TMP/traced.err")" ;;
	esac
	cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
		fail "$r_what (rip run $r_opts): stdout differs: $(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" | head -n 6)"
	# rip run's own lines: the summary and what it says about children
	grep '^rip run: ' "$TEST_TMP/traced.err" >"$TEST_TMP/summary"
	grep -v '^rip run: ' "$TEST_TMP/traced.err" >"$TEST_TMP/traced.err2"
	if [ "${REAL_STDERR:-}" != any ]; then
		cmp -s "$TEST_TMP/plain.err" "$TEST_TMP/traced.err2" ||
			fail "$r_what (rip run $r_opts): stderr differs: $(diff "$TEST_TMP/plain.err" "$TEST_TMP/traced.err2" | head -n 6)"
	fi
	r_lost=$(sed -n "s|^rip run: [0-9]* events (.*) recorded in $real_trace/, \([0-9]*\) lost.*|\1|p" \
		"$TEST_TMP/summary")
	if [ -z "$r_lost" ]; then
		fail "$r_what (rip run $r_opts): no summary line: $(head -n 3 "$TEST_TMP/summary")"
	elif [ "$r_lost" != 0 ]; then
		fail "$r_what (rip run $r_opts): rip run says $r_lost events lost: $(head -n 3 "$TEST_TMP/summary")"
	fi
	# any other loss rip run reports (children, packets, traces it could not record)
	# (how a child's image ended, at the end of its line, is no loss)
	grep -v "recorded in $real_trace/, " "$TEST_TMP/summary" |
		sed -e "s/; exec'd .*\$//" -e 's/; dead (killed or crashed)$//' |
		grep -Ev "^rip run: [0-9]+ more traces? \(children, new images\) in [^,]*$" |
		grep -Ev ', 0 lost$' | grep -Ei 'lost|corrupt|could not|incomplete|missing' >"$TEST_TMP/other"
	[ -s "$TEST_TMP/other" ] && fail "$r_what (rip run $r_opts): $(head -n 3 "$TEST_TMP/other")"
	# a program killed by a signal keeps its ring file, which rip run names: nothing else stays
	sed -n 's/^rip run: .* was killed by signal .* its ring file stays as \([^ ]*\) (.*/\1/p' \
		"$TEST_TMP/summary" >"$TEST_TMP/kept"
	if [ "$real_prc" -gt 128 ] && [ ! -s "$TEST_TMP/kept" ]; then
		fail "$r_what (rip run $r_opts): killed, but rip run names no ring file it keeps"
	fi
	while read -r r_kept; do
		[ "$real_prc" -gt 128 ] || fail "$r_what (rip run $r_opts): keeps $r_kept, not killed"
		[ -f "$r_kept" ] || fail "$r_what (rip run $r_opts): says it keeps $r_kept, not there"
		rm -f "$r_kept"
	done <"$TEST_TMP/kept"
	real_check_traces "$r_what (rip run $r_opts)" "$real_trace" "$r_opts"
	echo "  $real_traces trace(s) checked"
	return 0
}

# real_valgrind WHAT PREP CMD...: exact agreement with valgrind.  PREP,
# then CMD under valgrind (memcheck); PREP, then CMD under rip run --mem.
# rip report's allocations, bytes allocated and frees, and the blocks and
# bytes left at exit by rip report and by rip leaks, equal valgrind's
# "total heap usage" and "in use at exit"; and rip saw no free of a block it
# never saw allocated.  Both count a realloc as one allocation of its new
# size plus one free of the old block (none when it was NULL), and neither
# counts free(NULL).  Normalised: valgrind runs with --run-libc-freeres=no
# --run-cxx-freeres=no, or it would free glibc's and libstdc++'s internal
# buffers at exit, which the program never frees; and CMD must map no
# anonymous memory itself (rip counts those mappings with the heap,
# valgrind does not).  The environments differ (LD_PRELOAD, RIP_*): a
# program that copies its environment (perl) cannot agree to the byte.
real_valgrind() {
	rv_what=$1 rv_prep=$2
	shift 2
	if ! command -v valgrind >/dev/null 2>&1; then
		fail "$rv_what: valgrind is not installed (mk/deps.sh check installs it): no agreement check"
		return 0
	fi
	rv_in=/dev/null
	[ -f "$W/stdin" ] && rv_in=$W/stdin
	(eval "$rv_prep") || die "$rv_what: cannot prepare"
	timeout -k 5 "$REAL_TIMEOUT" valgrind --run-libc-freeres=no --run-cxx-freeres=no "$@" \
		<"$rv_in" >"$TEST_TMP/vg.out" 2>"$TEST_TMP/vg.err" ||
		{
			fail "$rv_what: failed under valgrind (exit $?): $(tail -n 3 "$TEST_TMP/vg.err")"
			return 0
		}
	real_n=$((real_n + 1))
	rv_trace=$TEST_TMP/t$real_n
	(eval "$rv_prep") || die "$rv_what: cannot prepare"
	timeout -k 5 "$REAL_TIMEOUT" "$RIP" run -q --mem -o "$rv_trace" -- "$@" <"$rv_in" \
		>"$TEST_TMP/rv.out" 2>"$TEST_TMP/rv.err" ||
		{
			fail "$rv_what: failed under rip run --mem (exit $?): $(tail -n 3 "$TEST_TMP/rv.err")"
			return 0
		}
	cmp -s "$TEST_TMP/vg.out" "$TEST_TMP/rv.out" || fail "$rv_what: the output under valgrind and rip differs"
	# ==PID==     in use at exit: 8,937 bytes in 15 blocks
	# ==PID==   total heap usage: 229 allocs, 214 frees, 45,855 bytes allocated
	rv_vg=$(sed -n 's/^==[0-9]*== *in use at exit: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\1 \2/p;
		s/^==[0-9]*== *total heap usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes allocated$/\1 \2 \3/p' \
		"$TEST_TMP/vg.err" | tr -d , | tr '\n' ' ')
	# shellcheck disable=SC2086 # five numbers
	set -- $rv_vg
	[ $# = 5 ] || {
		fail "$rv_what: cannot read valgrind's heap summary: $(grep -A3 'HEAP SUMMARY' "$TEST_TMP/vg.err")"
		return 0
	}
	"$RIP" report --json "$rv_trace" >"$TEST_TMP/rv.json" || {
		fail "$rv_what: rip report --json failed"
		return 0
	}
	"$RIP" leaks --json -r mem "$rv_trace" >"$TEST_TMP/rvl.json" || {
		fail "$rv_what: rip leaks --json failed"
		return 0
	}
	python3 - "$TEST_TMP/rv.json" "$TEST_TMP/rvl.json" "$@" <<'PY' || fail "$rv_what: rip and valgrind disagree"
import json, sys
rep, lk = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
vg_live_bytes, vg_live_blocks, vg_allocs, vg_frees, vg_bytes = map(int, sys.argv[3:8])
m = rep["memory"]
heap = [g for g in lk["leaks"] if g["resource"] == "mem" and "mmap" not in g["kinds"]]
maps = [g for g in lk["leaks"] if g["resource"] == "mem" and "mmap" in g["kinds"]]
print("valgrind: %d allocs, %d frees, %d bytes; at exit %d bytes in %d blocks"
      % (vg_allocs, vg_frees, vg_bytes, vg_live_bytes, vg_live_blocks))
print("rip:      %d allocs, %d frees, %d bytes; at exit %d bytes in %d blocks (rip leaks: %d in %d);"
      " reallocs %d, frees unseen %d, allocated again %d"
      % (m["allocations"], m["frees"], m["bytes"], m["live_bytes"], m["live_blocks"],
         sum(g["bytes"] for g in heap), sum(g["count"] for g in heap),
         m["reallocs"], m["frees_unseen"], m["allocated_again"]))
bad = []
if maps:
    bad.append("the program mapped anonymous memory itself (%d mappings live): not comparable"
               % sum(g["count"] for g in maps))
for what, r, v in (("allocations", m["allocations"], vg_allocs), ("bytes allocated", m["bytes"], vg_bytes),
                   ("frees", m["frees"], vg_frees), ("blocks at exit", m["live_blocks"], vg_live_blocks),
                   ("bytes at exit", m["live_bytes"], vg_live_bytes),
                   ("rip leaks' blocks", sum(g["count"] for g in heap), vg_live_blocks),
                   ("rip leaks' bytes", sum(g["bytes"] for g in heap), vg_live_bytes),
                   ("frees of blocks never seen", m["frees_unseen"], 0)):
    if r != v:
        bad.append("%s: rip %d, valgrind %d (%+d)" % (what, r, v, r - v))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
	return 0
}

# The options of every run: all three resources; forking programs add these.
# shellcheck disable=SC2034 # used by the tests that source this file
{
	REAL_OPTS="--mem --fd --shm"
	REAL_FOLLOW="--mem --fd --shm --follow-fork --follow-exec"
}
