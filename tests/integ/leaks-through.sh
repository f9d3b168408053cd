#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: --through=FUNC of rip leaks, rip report, rip calltree and rip
# export (issue 29, item 2: sp-rtrace's rtrace-from-function).
# tests/integ/throughprog.c, built here with -O0 -g and run under rip run
# --mem, leaks through parse_a (6 blocks, 1340 bytes, one of its stacks
# through an always-inlined mk_inl and one through parse_b), through parse_b
# (4, 80: 2 from parse_a, 2 from main), and through neither (6, 5263), with
# grab() called from main, parse_a and parse_b, and frees 50 bytes it made
# in parse_a.  rip leaks gives the exact subset of each pattern (a name, the
# union of two, globs, FILE:LINE by file name or path suffix, the inlined
# function, grab at its three depths), in JSON, in the text report (the
# filter line, the total line) and with --diff; rip report counts
# allocations, frees, what is live and the peak of that subset only; rip
# calltree draws only those stacks; rip export's pprof heap profile and
# folded stacks hold the same totals.  A pattern on no stack of the trace is
# an error (exit 1, no file left by export); --through where it does not
# apply, or empty, is a usage error.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
need_cmd python3 cc

prog=$TEST_TMP/throughprog
cc -O0 -g -fno-omit-frame-pointer -o "$prog" tests/integ/throughprog.c ||
	die "cannot build tests/integ/throughprog.c"
trace=$TEST_TMP/trace
"$RIP" run --mem -q -o "$trace" -- "$prog" >"$TEST_TMP/run.out" 2>&1 ||
	{ cat "$TEST_TMP/run.out" >&2; die "rip run --mem throughprog failed"; }
# the line of parse_a's call grab(100), and of mk_inl's malloc
line_a=$(grep -n 'TAG:a100' tests/integ/throughprog.c | cut -d: -f1)
line_inl=$(grep -n 'TAG:inl' tests/integ/throughprog.c | cut -d: -f1)
[ -n "$line_a" ] && [ -n "$line_inl" ] || die "no TAG lines in throughprog.c"

# ---- rip leaks ----

# leaks WHAT WANT ARGS...: rip leaks --json ARGS has memory totals WANT ("blocks bytes
# groups"), and groups "count:bytes" WANT_GROUPS (sorted) if given as $3
leaks() {
	what=$1 want=$2 groups=$3
	shift 3
	"$RIP" leaks --json "$@" "$trace" >"$TEST_TMP/l.json" 2>"$TEST_TMP/l.err" ||
		{ fail "leaks $what: exit $?"; head -n 3 "$TEST_TMP/l.err" >&2; return; }
	got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["totals"]["mem"]; \
g=sorted("%d:%d" % (x["count"], x["bytes"]) for x in r["leaks"]); \
print(t["count"], t["bytes"], t["sites"], " ".join(g) if sys.argv[2] else "")' \
		"$TEST_TMP/l.json" "$groups") || { fail "leaks $what: cannot read the JSON"; return; }
	[ "$got" = "$want $groups" ] || fail "leaks $what: got '$got', want '$want $groups'"
}

leaks "parse_a" "6 1340 3" "1:1000 2:40 3:300" --through=parse_a
leaks "parse_b" "4 80 2" "2:40 2:40" --through=parse_b
leaks "parse_a or parse_b" "8 1380 4" "1:1000 2:40 2:40 3:300" --through=parse_a --through=parse_b
leaks "the same pattern twice" "6 1340 3" "" --through=parse_a --through=parse_a
leaks "glob parse_?" "8 1380 4" "" '--through=parse_?'
leaks "glob parse_*" "8 1380 4" "" '--through=parse_*'
leaks "glob [gm]*_inl / grab" "9 1387 5" "" --through=grab '--through=[m]k_in?'
leaks "grab at three depths" "8 387 4" "1:7 2:40 2:40 3:300" --through=grab
leaks "inlined mk_inl" "1 1000 1" "1:1000" --through=mk_inl
leaks "FILE:LINE" "3 300 1" "3:300" --through="throughprog.c:$line_a"
leaks "PATH:LINE" "3 300 1" "" --through="tests/integ/throughprog.c:$line_a"
leaks "FILE:LINE in the inlined function" "1 1000 1" "" --through="throughprog.c:$line_inl"
leaks "main" "14 6643 7" "1:1000 1:5000 1:7 2:40 2:40 3:300 4:256" --through=main
leaks "no filter" "14 6643 7" ""
leaks "--through and --min-size" "1 1000 1" "" --through=parse_a --min-size=500

# what the filter matched, in the JSON
"$RIP" leaks --json --through='parse_*' --through=grab "$trace" >"$TEST_TMP/m.json" ||
	fail "leaks --json with two patterns"
python3 - "$TEST_TMP/m.json" <<'PY' || fail "leaks --json: the through list is wrong"
import json, sys
t = json.load(open(sys.argv[1]))["through"]
assert [x["pattern"] for x in t] == ["parse_*", "grab"], t
assert t[0]["kind"] == "glob" and sorted(t[0]["matched"]) == ["parse_a", "parse_b"], t
assert t[0]["functions"] == 2 and t[0]["stacks"] == 4, t
assert t[1]["kind"] == "name" and t[1]["matched"] == ["grab"] and t[1]["stacks"] == 4, t
PY

# the text report: the filter line, the totals of the subset
expect_status 0 "leaks text --through=parse_a" "$RIP" leaks --through=parse_a "$trace"
grep -q '^filter: only what was made through --through=parse_a (matched parse_a; on 3 stacks)$' \
	"$TEST_TMP/out" || fail "leaks text: no filter line"
grep -q '^total: 1340 bytes in 6 blocks never freed (3 sites), file descriptors not traced' \
	"$TEST_TMP/out" || fail "leaks text: total line"
grep -q '^      other ' "$TEST_TMP/out" && fail "leaks text: a stack through neither"
expect_status 0 "leaks text FILE:LINE" "$RIP" leaks --through="throughprog.c:$line_a" "$trace"
grep -q "matched parse_a at tests/integ/throughprog.c:$line_a; on 1 stack" "$TEST_TMP/out" ||
	fail "leaks text FILE:LINE: the filter line does not name the line"

# a pattern on no stack is an error, not an empty report
expect_status 1 "leaks --through=prase_a" "$RIP" leaks --through=prase_a "$trace"
grep -q -- '--through=prase_a: no function of that name on the stacks of' "$TEST_TMP/err" ||
	fail "leaks --through=prase_a: no clear error"
expect_status 1 "leaks a line on no stack" "$RIP" leaks --through="throughprog.c:1" "$trace"
expect_status 1 "leaks a partial file name" "$RIP" leaks --through="ughprog.c:$line_a" "$trace"
expect_status 1 "leaks one good, one bad" "$RIP" leaks --through=parse_a --through=nope "$trace"
grep -q -- '--through=nope' "$TEST_TMP/err" || fail "leaks one bad: the error does not name it"
expect_status 2 "leaks --through=" "$RIP" leaks --through= "$trace"

# --diff: both sides filtered
expect_status 0 "leaks --diff --through" "$RIP" leaks --diff --json --through=parse_b "$trace" "$trace"
python3 - "$TEST_TMP/out" <<'PY' || fail "leaks --diff --through: wrong document"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["through"][0]["pattern"] == "parse_b" and r["groups"] == [], r
m = r["totals"]["mem"]
assert (m["count"], m["bytes"], m["old_count"], m["old_bytes"]) == (4, 80, 4, 80), m
PY

# ---- rip report ----

# report WHAT WANT ARGS: allocations bytes frees freed live_blocks live_bytes peak_bytes
# peak_blocks sites
report() {
	what=$1 want=$2
	shift 2
	"$RIP" report --json "$@" "$trace" >"$TEST_TMP/r.json" 2>"$TEST_TMP/r.err" ||
		{ fail "report $what: exit $?"; head -n 3 "$TEST_TMP/r.err" >&2; return; }
	got=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); m=r["memory"]; \
print(m["allocations"], m["bytes"], m["frees"], m["freed_bytes"], m["live_blocks"], \
m["live_bytes"], m["peak"]["bytes"], m["peak"]["blocks"], m["sites"], r["fd"], \
sum(t["allocations"] for t in r["threads"]), sum(s["count"] for s in r["sizes"]))' \
		"$TEST_TMP/r.json") || { fail "report $what: cannot read the JSON"; return; }
	[ "$got" = "$want" ] || fail "report $what: got '$got', want '$want'"
}

report "parse_a" "7 1390 1 50 6 1340 1350 5 4 None 7 7" --through=parse_a
report "parse_b" "4 80 0 0 4 80 80 4 2 None 4 4" --through=parse_b
report "parse_a or parse_b" "9 1430 1 50 8 1380 1380 8 5 None 9 9" \
	--through=parse_a --through=parse_b
report "grab" "8 387 0 0 8 387 387 8 4 None 8 8" --through=grab
expect_status 0 "report text --through" "$RIP" report --through=parse_a "$trace"
grep -q '^filter: only what was made through --through=parse_a' "$TEST_TMP/out" ||
	fail "report text: no filter line"
grep -q '^  allocations: 7 (1390 bytes), 0 of them reallocs$' "$TEST_TMP/out" ||
	fail "report text: allocations"
grep -q '^  live at the end: 1340 bytes in 6 blocks$' "$TEST_TMP/out" ||
	fail "report text: live at the end"
expect_status 1 "report --through=prase_a" "$RIP" report --through=prase_a "$trace"
expect_status 2 "report --through --html" "$RIP" report --through=parse_a \
	--html="$TEST_TMP/r.html" "$trace"

# ---- rip calltree ----

# calltree WHAT WANT_TOTAL WANT_NODES ARGS: the graph's total ("bytes count") and
# exactly its nodes of throughprog's functions ("func bytes count;...", sorted)
calltree() {
	what=$1 want_t=$2 want_n=$3
	shift 3
	"$RIP" calltree "$@" "$trace" >"$TEST_TMP/c.dot" 2>"$TEST_TMP/c.err" ||
		{ fail "calltree $what: exit $?"; head -n 3 "$TEST_TMP/c.err" >&2; return; }
	python3 - "$TEST_TMP/c.dot" "$want_t" "$want_n" <<'PY' || fail "calltree $what: graph differs"
import re, sys
text = open(sys.argv[1]).read()
g = re.search(r'total_bytes=(\d+), total_count=(\d+)', text)
got_t = "%s %s" % g.groups()
ours = ("main", "parse_a", "parse_b", "grab", "mk_inl", "other")
nodes = []
for m in re.finditer(r'^\tn\d+ \[(.*)\];$', text, re.M):
    a = m.group(1)
    f = re.search(r'func="((?:[^"\\]|\\.)*)"', a).group(1)
    if f in ours:
        nodes.append("%s %s %s" % (f, re.search(r'\bbytes=(\d+)', a).group(1),
                                   re.search(r'\bcount=(\d+)', a).group(1)))
got_n = ";".join(sorted(nodes))
if got_t != sys.argv[2] or got_n != sys.argv[3]:
    print("total %r nodes %r, want %r %r" % (got_t, got_n, sys.argv[2], sys.argv[3]),
          file=sys.stderr)
    sys.exit(1)
PY
}

calltree "parse_a" "1340 6" "grab 340 5;main 1340 6;mk_inl 1000 1;parse_a 1340 6;parse_b 40 2" \
	--through=parse_a
calltree "parse_b" "80 4" "grab 80 4;main 80 4;parse_a 40 2;parse_b 80 4" --through=parse_b
calltree "parse_a --all" "1390 7" \
	"grab 340 5;main 1390 7;mk_inl 1000 1;parse_a 1390 7;parse_b 40 2" --all --through=parse_a
calltree "FILE:LINE" "300 3" "grab 300 3;main 300 3;parse_a 300 3" \
	--through="throughprog.c:$line_a"
"$RIP" calltree --through=parse_a --through=parse_b "$trace" >"$TEST_TMP/c.dot" ||
	fail "calltree with two patterns"
grep -q 'through="parse_a;parse_b"' "$TEST_TMP/c.dot" || fail "calltree: the graph does not say"
expect_status 1 "calltree --through=prase_a" "$RIP" calltree --through=prase_a "$trace"

# ---- rip export ----

# sum FILE: the sum of the values of folded lines
sum() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}
PP="python3 tests/data/pprof.py"
expect_status 0 "export pprof --through" "$RIP" export --format=pprof --through=parse_a "$trace" \
	-o "$TEST_TMP/a.pb.gz"
grep -q '^filter: only what was made through --through=parse_a' "$TEST_TMP/err" ||
	fail "export pprof: no filter line on stderr"
for v in inuse_space:1340 inuse_objects:6 alloc_space:1390 alloc_objects:7; do
	$PP folded "$TEST_TMP/a.pb.gz" "${v%%:*}" >"$TEST_TMP/a.folded" ||
		{ fail "cannot decode the profile"; break; }
	[ "$(sum "$TEST_TMP/a.folded")" = "${v##*:}" ] ||
		fail "export pprof --through=parse_a: ${v%%:*} $(sum "$TEST_TMP/a.folded"), want ${v##*:}"
	grep -q 'other' "$TEST_TMP/a.folded" && fail "export pprof: a stack through neither"
done
expect_status 0 "export pprof --leaks --through" "$RIP" export --format=pprof --leaks \
	--through=parse_a --through=parse_b "$trace" -o "$TEST_TMP/b.pb.gz"
$PP folded "$TEST_TMP/b.pb.gz" inuse_space >"$TEST_TMP/b.folded" || fail "cannot decode b.pb.gz"
[ "$(sum "$TEST_TMP/b.folded")" = 1380 ] || fail "export pprof --leaks: $(sum "$TEST_TMP/b.folded")"
for v in leaked:1340 bytes:1390 count:7; do
	"$RIP" export --format=folded --value="${v%%:*}" --through=parse_a "$trace" -o - \
		>"$TEST_TMP/f.folded" 2>/dev/null || fail "export folded --value=${v%%:*}"
	[ "$(sum "$TEST_TMP/f.folded")" = "${v##*:}" ] ||
		fail "export folded --value=${v%%:*}: $(sum "$TEST_TMP/f.folded"), want ${v##*:}"
done
expect_status 1 "export --through=prase_a" "$RIP" export --format=pprof --through=prase_a \
	"$trace" -o "$TEST_TMP/bad.pb.gz"
[ -e "$TEST_TMP/bad.pb.gz" ] && fail "export --through=prase_a left its file"
expect_status 2 "export chrome --through" "$RIP" export --format=chrome --through=parse_a \
	"$trace" -o "$TEST_TMP/x.json"
expect_status 1 "export folded --value=samples --through" "$RIP" export --format=folded \
	--value=samples --through=parse_a "$trace" -o "$TEST_TMP/x.folded"

for c in leaks report calltree export; do
	"$RIP" "$c" --help >"$TEST_TMP/out" 2>&1
	grep -q -- '--through=FUNC' "$TEST_TMP/out" || fail "rip $c --help does not list --through"
done

t_done
