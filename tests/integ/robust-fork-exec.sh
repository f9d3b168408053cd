#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem and fork, exec (robust_fork).  Without
# --follow-fork a child forked without exec runs untraced and cleanly: its
# output and exit status are right, it maps no ring file, no trace of it is
# written, nothing is left in the ring directory, and none of its blocks
# reach the parent's trace.  With --follow-fork, DIR/PID holds the child's
# own allocations only (not the parent's blocks made just before the fork,
# still unread in the ring then), every backtrace it uses is defined in it,
# and rip leaks DIR/PID finds the child's leak at child_leak and the
# inherited block it freed as released-unseen.  With --follow-exec the
# program re-exec'd into gets DIR/PID.1 with its own events only; without,
# no such trace and no event of the new image anywhere.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/robust_fork
need_bin "$prog" "$RIP"
[ -f "$BUILD/librip-preload.so" ] || die "$BUILD/librip-preload.so is missing: run make"
need_cmd python3
RIP_DIR=$TEST_TMP/rings
export RIP_DIR
mkdir -p "$RIP_DIR"
info=$TEST_TMP/info

# sizes FILE: "COUNT SIZE" of the mem:alloc events of a dump
sizes() { grep -Eo ' mem:alloc .*size=[0-9]+' "$1" | sed 's/.*size=//' | sort -n | uniq -c; }
# has DUMP N SIZE WHAT: exactly N mem:alloc of SIZE bytes
has() {
	got=$(grep -Ec " mem:alloc .*size=$3 " "$1")
	[ "$got" = "$2" ] || fail "$4: $got allocations of $3 bytes, want $2"
}
# dump_ok WHAT DIR: decode DIR into $TEST_TMP/dump, 0 lost, bt ids defined before use
dump_ok() {
	"$RIP" dump "$2" >"$TEST_TMP/dump" 2>"$TEST_TMP/dump.err" ||
		fail "$1: rip dump $2 failed: $(head -n 3 "$TEST_TMP/dump.err")"
	tail -n 1 "$TEST_TMP/dump" | grep -q ' 0 discarded/overwritten, 0 packets lost$' ||
		fail "$1: $(tail -n 1 "$TEST_TMP/dump")"
	awk '/rip:bt id=/ { sub(/.*id=/, ""); sub(/ .*/, ""); def[$0] = 1; next }
	     / mem:/ { for (i = 1; i <= NF; i++) if ($i ~ /^bt=/) { b = substr($i, 4);
		if (b != 0 && !(b in def)) { print "undefined bt " b; bad = 1 } } }
	     END { exit bad }' "$TEST_TMP/dump" || fail "$1: a mem event uses a bt not defined before it"
}
ringdir_empty() {
	[ -z "$(find "$RIP_DIR" -mindepth 1)" ] ||
		fail "$1: left in the ring directory: $(find "$RIP_DIR" -mindepth 1 | head -n 3)"
}

"$prog" fork >"$TEST_TMP/plain.out" 2>&1
prc=$?
[ "$prc" = 0 ] || die "robust_fork fork: exit $prc untraced"
printf 'child done\nparent: child exited 5\n' | cmp -s - "$TEST_TMP/plain.out" ||
	die "robust_fork fork: unexpected output: $(cat "$TEST_TMP/plain.out")"

# ---- fork, not followed ----
rm -f "$info"
ROBUST_INFO=$info timeout -k 5 30 "$RIP" run -q --mem -o "$TEST_TMP/f1" -- "$prog" fork \
	>"$TEST_TMP/traced.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "fork: exit $rc under rip run"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
	fail "fork: output differs: $(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" | head -n 5)"
grep -q '^child [0-9]* 0$' "$info" || fail "fork: the untraced child maps a ring file: $(cat "$info")"
grep -q '^parent [0-9]* 1$' "$info" || fail "fork: the parent has no ring file: $(cat "$info")"
k=$(find "$TEST_TMP/f1" -mindepth 1 -type d | wc -l)
[ "$k" = 0 ] || fail "fork: $k child traces without --follow-fork"
ringdir_empty "fork"
dump_ok "fork" "$TEST_TMP/f1"
has "$TEST_TMP/dump" 10 11111 "fork: parent's trace"
has "$TEST_TMP/dump" 1 44444 "fork: parent's trace"
has "$TEST_TMP/dump" 0 22222 "fork: parent's trace (the child's blocks)"
has "$TEST_TMP/dump" 0 33333 "fork: parent's trace (the child's blocks)"

# ---- fork, followed ----
rm -f "$info"
ROBUST_INFO=$info timeout -k 5 30 "$RIP" run -q --mem --follow-fork -o "$TEST_TMP/f2" -- \
	"$prog" fork >"$TEST_TMP/traced.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "follow-fork: exit $rc under rip run"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
	fail "follow-fork: output differs: $(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" | head -n 5)"
cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$info")
[ -n "$cpid" ] || die "follow-fork: the child did not say its pid: $(cat "$info")"
grep -q "^child $cpid 1\$" "$info" || fail "follow-fork: the child maps no ring file of its own"
ringdir_empty "follow-fork"
[ -f "$TEST_TMP/f2/$cpid/.rip-index" ] || die "follow-fork: no trace $TEST_TMP/f2/$cpid: $(ls -A "$TEST_TMP/f2")"
k=$(find "$TEST_TMP/f2" -mindepth 1 -type d | wc -l)
[ "$k" = 1 ] || fail "follow-fork: $k child traces, want 1"
dump_ok "follow-fork parent" "$TEST_TMP/f2"
has "$TEST_TMP/dump" 10 11111 "follow-fork: parent's trace"
has "$TEST_TMP/dump" 0 22222 "follow-fork: parent's trace (the child's blocks)"
dump_ok "follow-fork child" "$TEST_TMP/f2/$cpid"
cp "$TEST_TMP/dump" "$TEST_TMP/child.dump"
has "$TEST_TMP/child.dump" 3 22222 "follow-fork: child's trace"
has "$TEST_TMP/child.dump" 5 33333 "follow-fork: child's trace"
has "$TEST_TMP/child.dump" 0 11111 "follow-fork: child's trace (the parent's pre-fork blocks)"
has "$TEST_TMP/child.dump" 0 44444 "follow-fork: child's trace (the parent's later block)"
[ "$(grep -c ' mem:free ' "$TEST_TMP/child.dump")" -ge 6 ] ||
	fail "follow-fork: child's trace lacks its frees: $(sizes "$TEST_TMP/child.dump")"
grep -v "robust_fork/$cpid " "$TEST_TMP/child.dump" | grep -q ' mem:' &&
	fail "follow-fork: child's trace holds events of another thread or process"
expect_status 0 "rip leaks DIR/PID" "$RIP" leaks --json "$TEST_TMP/f2/$cpid"
python3 - "$TEST_TMP/out" <<'PY' || fail "follow-fork: rip leaks DIR/PID is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
mem = [g for g in r["leaks"] if g["resource"] == "mem"]
fns = lambda g: [f["function"] for f in g["stack"] or []]
leak = [g for g in mem if "child_leak" in fns(g)]
assert sum(g["count"] for g in leak) == 3 and sum(g["bytes"] for g in leak) == 66666, mem
assert not [g for g in mem if g["bytes"] == 11111 * g["count"]], mem
assert r["totals"]["mem"]["released_unseen"] >= 1, r["totals"]
assert r["complete"], r
PY
expect_status 0 "rip leaks DIR/PID (text)" "$RIP" leaks "$TEST_TMP/f2/$cpid"
grep -q 'child_leak (.*robust_fork.c:[0-9]*)' "$TEST_TMP/out" || fail "follow-fork: text report lacks child_leak"

# ---- exec of itself ----
"$prog" exec >"$TEST_TMP/plain.out" 2>&1 || die "robust_fork exec: exit $? untraced"
for follow in yes no; do
	rm -f "$info"
	t=$TEST_TMP/e-$follow
	opt=""
	[ "$follow" = yes ] && opt=--follow-exec
	# shellcheck disable=SC2086
	ROBUST_INFO=$info timeout -k 5 30 "$RIP" run -q --mem $opt -o "$t" -- "$prog" exec \
		>"$TEST_TMP/traced.out" 2>&1
	rc=$?
	[ "$rc" = 0 ] || fail "exec ($follow): exit $rc under rip run"
	cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" || fail "exec ($follow): output differs"
	pid=$(sed -n 's/^image1 \([0-9]*\) .*/\1/p' "$info")
	grep -q "^image2 $pid " "$info" || fail "exec ($follow): not the same pid: $(cat "$info")"
	ringdir_empty "exec ($follow)"
	dump_ok "exec ($follow) image 1" "$t"
	has "$TEST_TMP/dump" 1 55555 "exec ($follow): image 1's trace"
	has "$TEST_TMP/dump" 1 55556 "exec ($follow): image 1's trace"
	has "$TEST_TMP/dump" 0 66666 "exec ($follow): image 1's trace (image 2's blocks)"
	has "$TEST_TMP/dump" 0 77777 "exec ($follow): image 1's trace (image 2's blocks)"
	k=$(find "$t" -mindepth 1 -type d | wc -l)
	if [ "$follow" = no ]; then
		[ "$k" = 0 ] || fail "exec (no follow): $k traces of new images"
		continue
	fi
	[ "$k" = 1 ] || fail "exec: $k traces of new images, want 1: $(ls -A "$t")"
	[ -f "$t/$pid.1/.rip-index" ] || { fail "exec: no trace $pid.1: $(ls -A "$t")"; continue; }
	dump_ok "exec image 2" "$t/$pid.1"
	has "$TEST_TMP/dump" 2 66666 "exec: image 2's trace"
	has "$TEST_TMP/dump" 1 77777 "exec: image 2's trace"
	has "$TEST_TMP/dump" 0 55555 "exec: image 2's trace (image 1's blocks)"
	has "$TEST_TMP/dump" 0 55556 "exec: image 2's trace (image 1's blocks)"
	expect_status 0 "rip leaks DIR/PID.1" "$RIP" leaks "$t/$pid.1"
	grep -q 'image2_leak (.*robust_fork.c:[0-9]*)' "$TEST_TMP/out" ||
		fail "exec: rip leaks DIR/PID.1 lacks image2_leak"
	grep -q '55556 bytes' "$TEST_TMP/out" && fail "exec: image 1's block reported in image 2"
done
t_done
