#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip gc --all-users (root) removes what another user's
# directory of rip run holds only through descriptors, never through a name
# that user may swap.  In a shared ring directory (sticky, writable by all)
# a directory rip-run.XXXXXX of nobody's holds its "rules" directory (what
# gc clears and removes) and a symbolic link to a directory of root's with
# a file in it; a small preload library (tests/data/swap-open.c,
# SWAP_EXCHANGE=1) exchanges the two at rip's open of "rules", after gc
# checked it to be nobody's directory: what nobody could do in between.  The
# file of root's must still be there.  Then nobody's directory holds a ring
# file of a dead process (build/examples/simple, killed), which gc removes,
# and the directory itself is exchanged for a link to a directory of root's
# holding a file of the same name, at rip's removal, after gc checked the
# file: root's file must still be there.  Needs root (to give files to
# nobody, and for --all-users): skipped with the reason otherwise.
. tests/data/common.sh
prog=$BUILD/examples/simple
need_bin "$RIP" "$prog"
CC=${CC:-cc}

[ "$(id -u)" = 0 ] || skip "needs root, to give a directory to another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the directory"
$CC -O1 -fPIC -shared -o "$TEST_TMP/swap.so" tests/data/swap-open.c -ldl ||
	die "cannot build tests/data/swap-open.c"

shared=$TEST_TMP/shared
victim=$TEST_TMP/victim
run=$shared/rip-run.AbCdEf
mkdir -p "$shared" "$victim" "$run/rules" && chmod 1777 "$shared" && chmod 700 "$run" ||
	die "mkdir $run"
echo precious >"$victim/precious" && : >"$run/rules/x" && ln -s "$victim" "$run/link" &&
	chown -R -h nobody "$run" || die "cannot set up $run"

SWAP_PATH=$run/rules SWAP_FROM=$run/link SWAP_EXCHANGE=1 LD_PRELOAD=$TEST_TMP/swap.so \
	"$RIP" gc --all-users --dir "$shared" >"$TEST_TMP/gc" 2>&1
[ -L "$run/rules" ] || die "the swap did not happen: $(cat "$TEST_TMP/gc")"
[ -f "$victim/precious" ] ||
	fail "rip gc --all-users removed $victim/precious through nobody's link: $(cat "$TEST_TMP/gc")"

# A ring file of a dead process in nobody's rip run directory: the directory
# exchanged for a link to a directory of root's that holds a file of that
# name, at rip's removal of the ring file, after gc checked it.
t_bg env RIP_DIR="$TEST_TMP" "$prog" --wait >"$TEST_TMP/simple.out" 2>&1
wait_until 20 grep -q '^ring ' "$TEST_TMP/simple.out" ||
	die "simple made no ring file: $(cat "$TEST_TMP/simple.out")"
t_kill "$T_LAST"
ring=$(sed -n 's/^ring //p' "$TEST_TMP/simple.out")
base=${ring##*/}
shared=$TEST_TMP/shared2
run=$shared/rip-run.GhIjKl
mkdir -p "$shared" "$run" "$victim" && chmod 1777 "$shared" && chmod 700 "$run" ||
	die "mkdir $run"
mv "$ring" "$run/" && echo precious >"$victim/$base" && ln -s "$victim" "$shared/link" &&
	chown -R -h nobody "$run" "$shared/link" || die "cannot set up $run"

SWAP_PATH=$run/$base SWAP_AT=3 SWAP_DIR=$run SWAP_FROM=$shared/link SWAP_EXCHANGE=1 \
	LD_PRELOAD=$TEST_TMP/swap.so "$RIP" gc --all-users --dir "$shared" >"$TEST_TMP/gc2" 2>&1
[ -L "$run" ] || die "the swap did not happen: $(cat "$TEST_TMP/gc2")"
[ -f "$victim/$base" ] ||
	fail "rip gc --all-users removed $victim/$base through nobody's link: $(cat "$TEST_TMP/gc2")"
t_done
