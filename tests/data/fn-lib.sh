# SPDX-License-Identifier: Apache-2.0
#
# Description: shell helpers of the function-tracing tests (sourced after
# tests/data/common.sh, not a test itself): record a program's calls,
# compare rip report --functions with the counts a test wants, and check the
# path rip ps --stacks shows for a program parked under rip run, live and
# after kill -9.

FN_REPORT=$PWD/tests/data/fn-report.py
FN_PATHS=$PWD/tests/data/fn-paths.py
FN_TOP=$PWD

# fn_record TRACE [RUN-OPTION] -- PROG ARGS...: rip run --functions (or RUN-OPTION) into TRACE,
# nothing lost.
fn_record() {
	t=$1
	opt=--functions
	shift
	if [ "$1" != -- ]; then
		opt=$1
		shift
	fi
	shift
	"$RIP" run "$opt" -o "$t" -- "$@" >"$t.out" 2>"$t.err" ||
		die "rip run (or the program's results): $(cat "$t.err")"
	grep -q ", 0 lost\$" "$t.err" || fail "rip run lost records: $(cat "$t.err")"
}

# fn_counts TRACE: rip report --functions of TRACE is want.txt (fn-report.py's lines).
fn_counts() {
	"$RIP" report --functions --json "$1" >"$1.json" 2>"$1.rerr" || die "rip report: $(cat "$1.rerr")"
	python3 "$FN_REPORT" <"$1.json" >"$1.txt" || die "not JSON: $(head -c 300 "$1.json")"
	diff want.txt "$1.txt" >"$1.diff" || fail "rip report --functions (want, got): $(cat "$1.diff")"
}

# fn_paired N: the last lines of want.txt for a trace of N calls, every entry with its exit.
fn_paired() {
	printf 'entries %s\nexits %s\nno_entry 0\nno_exit 0\nrunning 0\nids_unknown 0\nid0 0\n' "$1" "$1"
}

# fn_paths_has TARGET LINE...: rip ps --stacks --threads of TARGET shows each LINE (fn-paths.py's
# form), all in the one run of rip ps.
fn_paths_has() {
	"$RIP" ps --stacks --threads --json "$1" >paths.json 2>paths.err ||
		{ fail "rip ps --stacks $1: $(cat paths.err)"; return; }
	python3 "$FN_PATHS" <paths.json >paths.txt || { fail "not JSON: $(head -c 300 paths.json)"; return; }
	fph_target=$1
	shift
	for fph_line in "$@"; do
		grep -qx "$fph_line" paths.txt ||
			fail "rip ps --stacks $fph_target, want $fph_line: $(cat paths.txt)"
	done
}

# fn_parked LINE READY PROG ARGS...: PROG under rip run (trace tr) writes READY once parked; the
# path LINE is shown live, and through the trace after kill -9.
fn_parked() {
	line=$1
	ready=$2
	shift 2
	"$RIP" run --no-waits -o tr -- "$@" >parked.out 2>parked.err &
	run=$!
	T_PIDS="$T_PIDS $run"
	wait_file "$ready" 60 || die "$1 never got ready: $(cat parked.err)"
	pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
	fn_paths_has "$pid" "$line"
	kill -9 "$pid"
	wait "$run"
	fn_paths_has tr "$line"
}

# fn_prog VARIANT: the funcprog build a variant names, checked to be there (with rip): gcc and
# clang the patchable builds, gcc-hooks and clang-hooks the -finstrument-functions ones.
fn_prog() {
	case $1 in
	gcc) set -- "$FN_TOP/$BUILD/tests/integ/funcprog-patch" ;;
	clang) set -- "$FN_TOP/$BUILD/tests/integ/funcprog-patch-clang" ;;
	gcc-hooks) set -- "$FN_TOP/$BUILD/tests/integ/funcprog" ;;
	clang-hooks) set -- "$FN_TOP/$BUILD/tests/integ/funcprog-clang" ;;
	*) die "fn_prog: no variant $1" ;;
	esac
	need_bin "$1" "$RIP"
	echo "$1"
}

# fn_need_builds: the three builds of funcprog that fn_builds runs, rip, and python3 for fn_counts.
fn_need_builds() {
	need_bin "$FN_TOP/$BUILD/tests/integ/funcprog" "$FN_TOP/$BUILD/tests/integ/funcprog-clang" \
		"$FN_TOP/$BUILD/tests/integ/funcprog-nofp" "$RIP"
	need_cmd python3
}

# fn_builds CHECK: CHECK PROG NAME, in TEST_TMP/NAME, for funcprog as gcc (gcc), clang (clang) and
# gcc without frame pointers (nofp) built it.
fn_builds() {
	for b in funcprog:gcc funcprog-clang:clang funcprog-nofp:nofp; do
		mkdir -p "$TEST_TMP/${b#*:}" && cd "$TEST_TMP/${b#*:}" || die "no $TEST_TMP/${b#*:}"
		"$1" "$FN_TOP/$BUILD/tests/integ/${b%%:*}" "${b#*:}"
	done
}
