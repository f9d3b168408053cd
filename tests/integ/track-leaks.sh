#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --track on a real library (issue 29's acceptance):
# trackprog compiles regular expressions and opens SQLite connections and
# statements, releases some and leaks 2 regex (leak_regex), 1 connection
# (leak_db) and 3 statements (leak_stmt), with the three specs of
# rip-run(1) (ids by value, by what an argument points to after the call).
# rip leaks --json then names the kinds regex, stmt and db, with exactly
# those counts, every group's stack starting at the function that leaked
# (then main), nothing released that was not seen made and no other
# resource; the text report names them too.  The same with LD_BIND_NOW=1
# (every binding made at load, through the GOT, before main), and the
# program checks every result itself (a trampoline that lost an argument or
# a result makes it fail).  A call through a pointer from dlsym is traced
# too.  rip run itself under ASan and UBSan, with a
# function to report missing.
. tests/data/common.sh
prog=$BUILD/tests/integ/trackprog
need_bin "$prog" "$RIP" "$BUILD/librip-track.so" "$BUILD/librip-preload.so"
need_cmd python3

# run NAME [ENV...]: rip run --track with the three specs into $TEST_TMP/NAME
run() {
	name=$1
	shift
	expect_status 0 "$name: rip run --track" env "$@" "$RIP" run -o "$TEST_TMP/$name" \
		--track='regex=regcomp(1),regfree(1)' \
		--track='stmt=sqlite3_prepare_v2(*4),sqlite3_finalize(1)' \
		--track='db=sqlite3_open(*2),sqlite3_close(1)' -- "$prog"
	grep -q "trackprog: done" "$TEST_TMP/out" ||
		fail "$name: trackprog failed: $(cat "$TEST_TMP/err")"
	grep -q "not found in any object" "$TEST_TMP/err" &&
		fail "$name: a function reported missing: $(cat "$TEST_TMP/err")"
	expect_status 0 "$name: rip leaks --json" "$RIP" leaks --json "$TEST_TMP/$name"
	python3 - "$TEST_TMP/out" "$name" <<'EOF' || fail "$name: the JSON report differs"
import json, sys
r = json.load(open(sys.argv[1]))
want = {"regex": (2, "leak_regex"), "stmt": (3, "leak_stmt"), "db": (1, "leak_db")}
count = {}
ok = True
for g in r["leaks"]:
    k = g["resource"]
    if k not in want or not g.get("module"):
        print("unexpected group:", k, g.get("count"), file=sys.stderr)
        ok = False
        continue
    count[k] = count.get(k, 0) + g["count"]
    fns = [f["function"] for f in g["stack"]]
    if fns[:2] != [want[k][1], "main"]:
        print("%s: stack %s, want %s then main" % (k, fns[:3], want[k][1]), file=sys.stderr)
        ok = False
    if g["stack"][0]["file"] is None or not g["stack"][0]["file"].endswith("trackprog.c"):
        print("%s: frame 0 not in trackprog.c: %s" % (k, g["stack"][0]), file=sys.stderr)
        ok = False
got = {k: count.get(k, 0) for k in want}
if got != {k: v[0] for k, v in want.items()}:
    print("counts:", got, file=sys.stderr)
    ok = False
t = r["totals"]
for k, (n, _) in want.items():
    if t.get(k, {}).get("count") != n:
        print("totals[%s]: %s, want count %d" % (k, t.get(k), n), file=sys.stderr)
        ok = False
for k in ("mem", "fd", "shm", "shm-map"):
    if t[k]["count"]:
        print("totals[%s]: %s" % (k, t[k]), file=sys.stderr)
        ok = False
if t["res"]["released_unseen"] or not r["complete"] or r["discarded"]:
    print("releases unseen, or incomplete:", t["res"], r["complete"], r["discarded"],
          file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)
EOF
	expect_status 0 "$name: rip leaks" "$RIP" leaks "$TEST_TMP/$name"
	for line in "regex: 2 never released" "stmt: 3 never released" "db: 1 never released"; do
		grep -q "^$line" "$TEST_TMP/out" || fail "$name: text report lacks '$line'"
	done
	grep -q "stmt never released.*(sqlite3_prepare_v2() to sqlite3_finalize())" \
		"$TEST_TMP/out" || fail "$name: text report lacks the kind's description"
}

run lazy
run now LD_BIND_NOW=1

# a pointer from dlsym is bound to the trampoline too: its leak, with its stack
expect_status 0 "dlsym: rip run --track" "$RIP" run -o "$TEST_TMP/dlsym" \
	--track='regex=regcomp(1),regfree(1)' -- "$prog" dlsym
expect_status 0 "dlsym: rip leaks --json" "$RIP" leaks --json "$TEST_TMP/dlsym"
python3 - "$TEST_TMP/out" <<'EOF' || fail "dlsym: the JSON report differs"
import json, sys
r = json.load(open(sys.argv[1]))
got = [(g["resource"], g["count"], g["stack"][0]["function"]) for g in r["leaks"]]
if got != [("regex", 1, "leak_dlsym")]:
    print("got:", got, file=sys.stderr)
    sys.exit(1)
EOF

# rip's side (the specs, RIP_TRACK, the marks of found functions) under ASan and UBSan
asan_run run -q -o "$TEST_TMP/asan" --track='regex=regcomp(1),regfree(1)' \
	--track='db=sqlite3_open(*2),sqlite3_close(1)' \
	--track='x=rip_no_such_fn(1),sqlite3_finalize(1)' \
	-- "$prog"
[ "$asan_rc" = 0 ] || fail "asan rip run --track: exit $asan_rc"
grep -q "trackprog: done" "$TEST_TMP/asan.out" || fail "asan: trackprog failed"
grep -q "rip_no_such_fn was not found" "$TEST_TMP/asan.err" || fail "asan: missing not reported"

t_done
