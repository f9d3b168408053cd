#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: stacks walked through patched functions (rip run
# --functions=GLOB, whose return addresses point at librip's exit
# trampoline) are the stacks of the program unpatched: fnbt-patch (by gcc,
# and by clang) patched and unpatched, both under rip run --mem, with each
# of librip-preload's walks (RIP_UNWIND unset: the unwind tables; fp;
# libunwind).  The program's own backtrace(3) and its own walk of libgcc's
# _Unwind_Backtrace (each whole, and cut to 3 frames; the walk's callback
# calls a patched function, fnbt_note, for each frame) print the same
# frames, and the same as the program run alone; the stacks rip leaks
# gives the blocks leaked through the program's functions are the same
# (blocks from two call sites of one patched function, three times each:
# the stack cache must tell them apart); neither ever names librip.
# fnbtx-patch, its C++ twin, walks too, and throws through patched frames
# twice, one of whose cleanups walks and catches an exception of its own:
# the same output patched, unpatched and alone (the exceptions land), and
# every patched call traced with its exit.  fnfore-patch throws an
# exception of another runtime than C++'s through patched frames, caught
# by a personality of its own (no __cxa_begin_catch, as Rust's
# catch_unwind): it lands, and every patched call is seen leaving.  Before anything else the patched run
# must have traced the chain's calls (the check is not vacuous).
. tests/data/common.sh
need_cmd python3
need_libunwind
rep=$PWD/tests/data/fn-report.py
cd "$TEST_TMP" || die "no TEST_TMP"

# leaks T: the blocks rip leaks gives for T whose stacks pass through fnbt_*, each a line
# (its header less the time it was made at, then its frames), sorted
leaks() {
	"$RIP" leaks "$1" | awk '
		/ bytes in / { sub(/, made at .*/, ""); b = $0; next }
		NF == 0 { if (b ~ /fnbt_/) print b; b = ""; next }
		b != "" { b = b " |" $0 }
		END { if (b ~ /fnbt_/) print b }' | sort
}

for v in gcc clang; do
	prog=$OLDPWD/$BUILD/tests/integ/fnbt-patch
	[ $v = clang ] && prog=$prog-clang
	need_bin "$prog" "$RIP"
	# the program alone: librip-preload's hooks of the walks give what it would without them
	"$prog" >plain.$v.out 2>plain.$v.err || fail "$v: plain: $(cat plain.$v.err)"
	for w in tables fp libunwind; do
		t=$v.$w
		uw=$w
		[ $w = tables ] && uw= # the default
		RIP_UNWIND=$uw "$RIP" run --mem -o u.$t -- "$prog" >u.$t.out 2>u.$t.err ||
			fail "$t: unpatched: $(cat u.$t.err)"
		RIP_UNWIND=$uw "$RIP" run --mem --functions='fnbt_*' --functions=main -o p.$t -- \
			"$prog" >p.$t.out 2>p.$t.err || fail "$t: patched: $(cat p.$t.err)"
		"$RIP" report --functions --json p.$t | python3 "$rep" >calls.$t ||
			fail "$t: rip report"
		# fnbt_note: once a frame of the unpatched run's two walks of _Unwind_Backtrace
		notes=$(awk '/^_Unwind_Backtrace depth / { n += $3 } END { print n + 0 }' u.$t.out)
		for f in 'fnbt_leaf 1' 'fnbt_mid 1' 'fnbt_top 1' 'main 1' 'fnbt_alloc 6' \
			"fnbt_note $notes"; do
			grep -q "^$f 0$" calls.$t || fail "$t: not traced as $f: $(cat calls.$t)"
		done

		grep -q "^  .*fnbt_leaf" u.$t.out || fail "$t: no backtrace unpatched: $(cat u.$t.out)"
		awk '/^_Unwind_Backtrace depth / { w = 1; next } /depth/ { w = 0 }
			w && /\(main\+/ { found = 1 } END { exit !found }' u.$t.out ||
			fail "$t: _Unwind_Backtrace unpatched does not reach main: $(cat u.$t.out)"
		cmp -s u.$t.out p.$t.out || fail "$t: backtrace(3), _Unwind_Backtrace through patched frames (unpatched, patched):
$(cat u.$t.out)
--
$(cat p.$t.out)"

		cmp -s plain.$v.out u.$t.out || fail "$t: the walks under librip-preload (plain, preloaded):
$(cat plain.$v.out)
--
$(cat u.$t.out)"

		leaks u.$t >u.$t.leaks || fail "$t: rip leaks (unpatched)"
		leaks p.$t >p.$t.leaks || fail "$t: rip leaks (patched)"
		[ "$(grep -c 'fnbt_mid' u.$t.leaks)" -ge 3 ] ||
			fail "$t: not the leaks expected unpatched: $(cat u.$t.leaks)"
		! grep -q librip p.$t.leaks || fail "$t: a leak's stack names librip:
$(cat p.$t.leaks)"
		cmp -s u.$t.leaks p.$t.leaks || fail "$t: leaks' stacks through patched frames (unpatched, patched):
$(cat u.$t.leaks)
--
$(cat p.$t.leaks)"
	done
done

# fnbtx-patch (C++, by g++): its walks through patched frames, and exceptions through them, one
# of whose cleanups walks the stack and catches an exception of its own on the way
prog=$OLDPWD/$BUILD/tests/integ/fnbtx-patch
need_bin "$prog"
"$prog" >plain.x.out 2>plain.x.err || fail "c++: plain: $(cat plain.x.err)"
"$RIP" run --mem -o u.x -- "$prog" >u.x.out 2>u.x.err || fail "c++: unpatched: $(cat u.x.err)"
"$RIP" run --mem --functions='*fnx_*' --functions=main -o p.x -- "$prog" >p.x.out 2>p.x.err ||
	fail "c++: patched: $(cat p.x.err)"
[ "$(grep -c '^caught 7$' plain.x.out)" = 2 ] && grep -q '^  .*fnx_guard' plain.x.out &&
	grep -q '^  .*fnx_leaf' plain.x.out || fail "c++: not the output expected: $(cat plain.x.out)"
cmp -s plain.x.out u.x.out || fail "c++: the walks under librip-preload (plain, preloaded):
$(cat plain.x.out)
--
$(cat u.x.out)"
cmp -s u.x.out p.x.out || fail "c++: walks and exceptions through patched frames (unpatched, patched):
$(cat u.x.out)
--
$(cat p.x.out)"
"$RIP" report --functions --json p.x | python3 "$rep" >calls.x || fail "c++: rip report"
for f in 'fnx_catch() 2' 'fnx_cleanup() 2' 'fnx_guard::~fnx_guard() 2' 'fnx_inner() 2' \
	'fnx_throw() 2' 'fnx_top(char const*) 1' 'main 1' 'no_exit' 'running'; do
	grep -qxF "$f 0" calls.x || fail "c++: not traced as $f 0: $(cat calls.x)"
done

# fnfore-patch: an exception of another runtime than C++'s (as Rust's panics), raised through
# patched frames and caught by a personality of its own, which calls no __cxa_begin_catch
prog=$OLDPWD/$BUILD/tests/integ/fnfore-patch
need_bin "$prog"
"$prog" >plain.f.out 2>plain.f.err || fail "foreign: plain: $(cat plain.f.out plain.f.err)"
[ "$(grep -c '^landed 1$' plain.f.out)" = 2 ] || fail "foreign: not landed: $(cat plain.f.out)"
"$RIP" run --functions='fnfore_*' --functions=main -o p.f -- "$prog" >p.f.out 2>p.f.err ||
	fail "foreign: patched: $(cat p.f.err)"
cmp -s plain.f.out p.f.out || fail "foreign: through patched frames (plain, patched):
$(cat plain.f.out)
--
$(cat p.f.out)"
"$RIP" report --functions --json p.f | python3 "$rep" >calls.f || fail "foreign: rip report"
for f in 'fnfore_throw 2' 'fnfore_mid 2' 'fnfore_top 1' 'main 1' 'no_exit' 'running'; do
	grep -qxF "$f 0" calls.f || fail "foreign: not traced as $f 0: $(cat calls.f)"
done
t_done
