#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run inside a traced family takes its own options, not
# the enclosing run's settings.  A plain rip run gives its program
# RIP_RESOURCES=0 (slots and waits only), RIP_DISABLE and the rest; a
# script under it that ran rip run --mem inherited them, and the inner
# program recorded no resource event ("0 bytes never freed").  Here an
# outer rip run (plain, then --fd) runs a shell that runs rip run --mem of
# a program that leaks one 100-byte block in each of 4 threads: the inner
# trace must hold exactly those 4 blocks at leak_once, and the outer run
# must end well.  A RIP_RESOURCES=0 of the user's does not turn --mem off
# either.
. tests/data/common.sh
prog=$PWD/$BUILD/bench/leakthreads
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3

# 4 blocks of 100 bytes at leak_once, and nothing else of the program's
check_inner() { # TRACE WHAT
	"$RIP" leaks --json "$1" >"$TEST_TMP/leaks.json" 2>"$TEST_TMP/leaks.err" ||
		{ fail "$2: rip leaks failed: $(cat "$TEST_TMP/leaks.err")"; return; }
	python3 - "$TEST_TMP/leaks.json" <<'PY' || fail "$2: the inner run's leaks are not the program's"
import json, sys
r = json.load(open(sys.argv[1]))
g = [x for x in r["leaks"] if x["resource"] == "mem" and
     any(f.get("function") == "leak_once" for f in x["stack"])]
assert len(g) == 1 and g[0]["count"] == 4 and g[0]["bytes"] == 400, (g, r["totals"])
PY
}

for outer in "" --fd; do
	rm -rf "$TEST_TMP/outer" "$TEST_TMP/inner"
	# shellcheck disable=SC2086 # $outer: no option, or one
	"$RIP" run -q $outer -o "$TEST_TMP/outer" -- sh -c \
		"'$RIP' run -q --mem -o '$TEST_TMP/inner' -- '$prog' 4 10" \
		>"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err" ||
		fail "rip run ${outer:-(plain)} of rip run --mem failed: $(cat "$TEST_TMP/run.err")"
	check_inner "$TEST_TMP/inner" "inside rip run ${outer:-(plain)}"
done

rm -rf "$TEST_TMP/inner"
RIP_RESOURCES=0 "$RIP" run -q --mem -o "$TEST_TMP/inner" -- "$prog" 4 10 >/dev/null \
	2>"$TEST_TMP/run.err" || fail "RIP_RESOURCES=0 rip run --mem failed: $(cat "$TEST_TMP/run.err")"
check_inner "$TEST_TMP/inner" "with RIP_RESOURCES=0 in the environment"
t_done
