#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --functions records the calls of a program built
# with -finstrument-functions (funcprog count N: known counts), without
# loss, and rip report --functions gives the exact counts; its filters
# (--depth, --min-time, --match) and --threads; rip export draws every call
# as a Chrome span and folds the call paths; babeltrace2 prints the records
# by name.  Without --functions nothing of the kind is recorded.  A
# program killed with coroutines parked mid-call: its calls are counted
# per coroutine, as running; the 10 calls a longjmp jumped over end where
# the hooks saw them go.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog
need_bin "$prog" "$RIP"
need_cmd python3 babeltrace2
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"
n=2000

"$RIP" run --functions -o t -- "$prog" count $n >run.out 2>run.err || die "rip run: $(cat run.err)"
grep -q ", 0 lost\$" run.err || fail "rip run lost records: $(cat run.err)"
"$RIP" report --functions --json t >rep.json 2>rep.err || die "rip report: $(cat rep.err)"
python3 "$rep" <rep.json >rep.txt || die "not JSON: $(head -c 300 rep.json)"
# count_rec(9) recurses 10 deep; count_leaf: twice through count_inner, once from count_run
cat >want.txt <<EOW
count_inner $((2 * n)) 0
count_leaf $((3 * n)) 0
count_outer $n 0
count_rec $((10 * n)) 0
count_run 1 0
main 1 0
entries $((16 * n + 2))
exits $((16 * n + 2))
no_entry 0
no_exit 0
running 0
ids_unknown 0
id0 0
EOW
diff want.txt rep.txt >rep.diff || fail "rip report --functions (want, got): $(cat rep.diff)"

# the text table
"$RIP" report --functions t >rep.txt 2>rep.err || fail "rip report (text): $(cat rep.err)"
grep -Eq "^ +[0-9.]+ [mun ]s +[0-9.]+ [mun ]s +[0-9.]+ [mun ]s +$((10 * n))  count_rec  \(funcprog.c:[0-9]+\)\$" rep.txt ||
	fail "text report: no count_rec row: $(cat rep.txt)"

# filters: depth 3 leaves count_inner out (depth 4); count_leaf counts its direct calls only
"$RIP" report --functions --json --depth=3 t | python3 "$rep" >d3.txt || fail "--depth=3"
grep -qx "count_leaf $n 0" d3.txt && ! grep -q "^count_inner " d3.txt &&
	grep -qx "count_rec $n 0" d3.txt || fail "--depth=3: $(cat d3.txt)"
"$RIP" report --functions --json --match='count_*' --match='!count_rec' t | python3 "$rep" >m.txt ||
	fail "--match"
[ "$(grep -c '^count_\(inner\|leaf\|outer\|run\) ' m.txt)" = 4 ] && ! grep -q '^\(main\|count_rec\) ' m.txt ||
	fail "--match='count_*' --match='!count_rec': $(cat m.txt)"
# a glob that matches no function says so (it was an empty table alone)
"$RIP" report --functions --match='count' t >nm.txt || fail "--match=count"
grep -q "no function recorded matches the --match globs" nm.txt ||
	fail "--match=count: no word that nothing matched: $(cat nm.txt)"
"$RIP" report --functions --match='count_*' t >ym.txt || fail "--match=count_*"
grep -q "no function recorded matches" ym.txt && fail "--match='count_*': says nothing matched"
# nothing lasts an hour: only the calls that do are shown, none
"$RIP" report --functions --json --min-time=1h t | python3 "$rep" >t.txt || fail "--min-time"
grep -q '^count_' t.txt && fail "--min-time=1h still shows: $(cat t.txt)"
"$RIP" report --functions --json --threads t | python3 "$rep" >th.txt || fail "--threads"
grep -qx "thread|funcprog count_outer $n" th.txt || fail "--threads: $(cat th.txt)"
expect_status 2 "--depth without --functions" "$RIP" report --depth=3 t
# a number without a unit: seconds here, nanoseconds in uftrace's -t; refused (0 is 0)
expect_status 2 "--min-time=5" "$RIP" report --functions --min-time=5 t
grep -q "wants a number and a unit" err || fail "--min-time=5: $(cat err)"
expect_status 0 "--min-time=0" "$RIP" report --functions --min-time=0 t

# chrome: every call a complete span of its function; folded: the calls of each path
"$RIP" export --format=chrome t -o t.json 2>exp.err || fail "rip export chrome: $(cat exp.err)"
python3 -c '
import json, sys
d = json.load(open("t.json"))
x = [e for e in d["traceEvents"] if e.get("ph") == "X"]
c = {}
for e in x:
    c[e["name"]] = c.get(e["name"], 0) + 1
    assert e["dur"] >= 0 and e["cat"] == "function", e
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))
' >chrome.txt || fail "chrome: $(head -c 300 t.json)"
[ "$(cat chrome.txt)" = "count_inner=$((2 * n)) count_leaf=$((3 * n)) count_outer=$n count_rec=$((10 * n)) count_run=1 main=1" ] ||
	fail "chrome spans: $(cat chrome.txt)"
"$RIP" export --format=folded --value=calls t -o f.txt 2>exp.err || fail "rip export folded: $(cat exp.err)"
grep -qx "main;count_run;count_outer;count_inner;count_leaf $((2 * n))" f.txt ||
	fail "folded calls: $(cat f.txt)"
"$RIP" export --format=folded t -o ft.txt 2>exp.err || fail "rip export folded (time): $(cat exp.err)"
grep -Eq '^main;count_run;count_rec;count_rec [0-9]+$' ft.txt || fail "folded time: $(cat ft.txt)"

# CTF (the trace exported: rip run packs it): babeltrace2 names the records
"$RIP" export --format=ctf -o t.ctf t 2>ex.err || fail "rip export --format=ctf: $(cat ex.err)"
babeltrace2 t.ctf >bt.txt 2>bt.err || fail "babeltrace2: $(head -n 3 bt.err)"
[ "$(grep -c ' rip:fn_entry: {.*}, { fn = [0-9]* }$' bt.txt)" = $((16 * n + 2)) ] ||
	fail "babeltrace2: $(grep -c ' rip:fn_entry: {.*}, { fn = [0-9]* }$' bt.txt) rip:fn_entry, want $((16 * n + 2))"
grep -q ' rip:fn: {.*}, { id = 1, addr = 0x[0-9A-F]* }$' bt.txt ||
	fail "babeltrace2 shows no rip:fn definition: $(grep -m 1 'rip:fn:' bt.txt)"

# without --functions: the stacks only, no records
"$RIP" run -o t0 -- "$prog" count 10 >/dev/null 2>run0.err || fail "rip run: $(cat run0.err)"
grep -q "^rip run: 0 events" run0.err || fail "rip run without --functions recorded: $(cat run0.err)"

# a killed program: the calls of its coroutines, parked mid-call, are theirs and running
"$RIP" run --functions --no-waits -o tk -- "$prog" park "$TEST_TMP/ready" >runk.out 2>runk.err &
run=$!
T_PIDS="$T_PIDS $run"
wait_file "$TEST_TMP/ready" 60 || die "funcprog never got ready: $(cat runk.err)"
pid=$(ps -o pid= --ppid "$run" | tr -d ' ')
kill -9 "$pid"
wait "$run"
"$RIP" report --functions --json --threads tk | python3 "$rep" >k.txt || die "report of tk"
grep -qx "coroutine|co-mid co_entry 1" k.txt && grep -qx "coroutine|co-hop co_hop_b 1" k.txt &&
	grep -qx "thread|chain chain_20 1" k.txt && grep -qx "thread|jumper jump_10 1" k.txt ||
	fail "per coroutine: $(cat k.txt)"
grep -qx "co_pause 3 2" k.txt || fail "co_pause: 3 calls, 2 of them parked: $(cat k.txt)"
# the hooks write the exits of the 10 calls the longjmp jumped over, when they see it
grep -qx "jump_10 1 0" k.txt && grep -qx "jump_01 1 0" k.txt && grep -qx "no_exit 0" k.txt ||
	fail "the longjmp over 10 calls: $(grep 'jump_\|no_exit' k.txt)"
t_done
