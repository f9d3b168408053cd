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
# file of root's must still be there.  Needs root (to give files to
# nobody, and for --all-users): skipped with the reason otherwise.
. tests/data/common.sh
need_bin "$RIP"
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
t_done
