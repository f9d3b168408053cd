#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: under secure execution (a set-user-ID program) librip and
# librip-preload.so ignore every RIP_* variable.  A copy of secure_prog
# (linked with librip) is made set-user-ID root in a directory of the
# build tree (a file system that honours set-user-ID), and run by nobody
# (setpriv, or runuser) with RIP_RING, RIP_DIR, XDG_RUNTIME_DIR and the
# preload library's variables pointing into a directory only root may
# write: no file may appear there.  The program asks for a ring itself too
# (it goes to /dev/shm, the default place) and loads the preload library
# with dlopen, as a loader that let it in would: the preload library must
# do nothing (the main thread gets no slot).  The same program run by root
# without set-user-ID must create its files there and get the slot: the
# check would see a library that trusted the environment.  Made
# set-group-ID root instead, the program runs as nobody in secure execution
# but with nobody its effective user: the file it asks for would be
# nobody's, who could write what the program maps and trusts, so it must get
# none.  Needs root:
# skipped with the reason otherwise.  Also: no plain getenv in lib/,
# preload/ or include/.
. tests/data/common.sh
prog=$BUILD/tests/integ/secure_prog
pre=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$pre"

# the source rule holds everywhere, root or not
bare=$(grep -rn '[^_a-z]getenv(' lib preload include | grep -v 'secure_getenv(')
[ -z "$bare" ] || fail "getenv instead of secure_getenv (secure execution): $bare"

[ "$(id -u)" = 0 ] || {
	[ "$T_FAILED" = 0 ] || die "$T_FAILED check(s) failed"
	skip "needs root, to make a set-user-ID root program and run it as another user"
}
id nobody >/dev/null 2>&1 || skip "no user nobody to run the set-user-ID program as"
if command -v setpriv >/dev/null 2>&1; then
	as_nobody() {
		setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups "$@"
	}
elif command -v runuser >/dev/null 2>&1; then
	as_nobody() { runuser -u nobody -- "$@"; }
else
	skip "neither setpriv nor runuser to run a program as nobody"
fi

# The set-user-ID copy, where nobody can reach it: the build tree (TEST_TMP is private).
sdir=$PWD/$BUILD/tests/integ/secure-exec.$$
trap 'rm -rf "$sdir"; t_cleanup' EXIT
mkdir -p "$sdir" && chmod 755 "$sdir" || die "mkdir $sdir"
case ,$(findmnt -n -o OPTIONS -T "$sdir" 2>/dev/null), in
*,nosuid,*) skip "the build tree is on a file system mounted nosuid: no set-user-ID program" ;;
esac
cp "$prog" "$sdir/prog" && chown root:root "$sdir/prog" && chmod 4755 "$sdir/prog" ||
	die "cannot make $sdir/prog set-user-ID root"
as_nobody test -x "$sdir/prog" && as_nobody test -r "$pre" ||
	skip "nobody cannot reach $sdir/prog or $pre (a directory on the way is private)"

priv=$TEST_TMP/rootonly
mkdir -p "$priv" && chmod 700 "$priv" || die "mkdir $priv"
# run WHO OUT: the program with every variable pointing into $priv
run() {
	who=$1 out=$2
	$who env RIP_RING="$priv/x" RIP_DIR="$priv" XDG_RUNTIME_DIR="$priv" RIP_RULE_CACHE="$priv" \
		"$sdir/prog" "$pre" >"$out" 2>&1
}

# root, not set-user-ID (no secure execution): the environment is followed
run "" "$TEST_TMP/root.out" || die "secure_prog as root failed: $(cat "$TEST_TMP/root.out")"
grep -qx 'secure 0' "$TEST_TMP/root.out" || die "as root: $(cat "$TEST_TMP/root.out")"
grep -qx "auto $priv/x" "$TEST_TMP/root.out" ||
	fail "as root, RIP_RING=$priv/x made no file: $(cat "$TEST_TMP/root.out")"
grep -q '^slots 0 -> [1-9]' "$TEST_TMP/root.out" ||
	fail "as root, the preload library gave the main thread no slot: $(cat "$TEST_TMP/root.out")"
[ -e "$priv/x" ] || fail "as root: no $priv/x"
rm -rf "${priv:?}"/* "$priv"/.[!.]* 2>/dev/null

# nobody, set-user-ID root: secure execution, the environment is ignored
run as_nobody "$TEST_TMP/nobody.out" ||
	die "secure_prog as nobody failed: $(cat "$TEST_TMP/nobody.out")"
cat "$TEST_TMP/nobody.out"
grep -qx 'secure 1' "$TEST_TMP/nobody.out" ||
	die "the set-user-ID program did not run in secure execution: $(cat "$TEST_TMP/nobody.out")"
left=$(ls -A "$priv")
[ -z "$left" ] || fail "files made in the root-only directory $priv: $left"
grep -qx 'auto none' "$TEST_TMP/nobody.out" ||
	fail "librip opened a ring from RIP_RING in a set-user-ID program: $(grep ^auto "$TEST_TMP/nobody.out")"
opened=$(sed -n 's/^open \(.*\)/\1/p' "$TEST_TMP/nobody.out")
case $opened in
/dev/shm/*) rm -f "$opened" ;;
*) fail "rip_ring_open(NULL) did not use the default place, /dev/shm: $opened" ;;
esac
grep -qx 'slots 0 -> 0' "$TEST_TMP/nobody.out" ||
	fail "the preload library acted in a set-user-ID program: $(grep ^slots "$TEST_TMP/nobody.out")"

# nobody, set-group-ID root: secure execution, but the effective user is
# nobody, who would own (and could write) the file the program maps
chmod 2755 "$sdir/prog" || die "cannot make $sdir/prog set-group-ID root"
run as_nobody "$TEST_TMP/sgid.out" || die "secure_prog set-group-ID failed: $(cat "$TEST_TMP/sgid.out")"
grep -qx 'secure 1' "$TEST_TMP/sgid.out" ||
	die "the set-group-ID program did not run in secure execution: $(cat "$TEST_TMP/sgid.out")"
opened=$(sed -n 's/^open \(.*\)/\1/p' "$TEST_TMP/sgid.out")
case $opened in
*/*)
	fail "a set-group-ID program made a ring file its caller owns: $(ls -l "${opened#* }")"
	rm -f "${opened#* }"
	;;
esac
t_done
