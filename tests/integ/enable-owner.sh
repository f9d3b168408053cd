#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip enable PID func (root) on another user's process writes
# and removes nothing next to that user's ring file.  nobody runs
# funcprog-patch under rip run --functions, its ring files in a directory
# of nobody's, and leaves a file of its own where the list of functions
# goes (RING.patch): a path whose directories nobody may swap for links
# meanwhile, so that a list written or removed there by name could land
# anywhere.  The process's watcher takes a list only from its own user
# anyway: rip enable must refuse, naming the owner, and nobody's file must
# still be there.  Needs root (to run the program as nobody): skipped with
# the reason otherwise.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/funcprog-patch
need_bin "$prog" "$RIP"

[ "$(id -u)" = 0 ] || skip "needs root, to run a program as another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to run the program as"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv to run a program as nobody"
nob="--reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
as_nobody() {
	# shellcheck disable=SC2086 # the options, split
	setpriv $nob "$@"
}
as_nobody test -x "$prog" && as_nobody test -x "$RIP" ||
	skip "nobody cannot reach $prog (a directory on the way is private)"

# nobody's directory, outside TEST_TMP (private to root)
ndir=$(mktemp -d /tmp/rip-enable-owner.XXXXXX) || die "mktemp"
ppid=
trap 't_cleanup; [ -z "$ppid" ] || kill -9 "$ppid" 2>/dev/null; rm -rf "$ndir"' EXIT
chown nobody "$ndir" || die "chown nobody $ndir"

# shellcheck disable=SC2086 # the options, split
t_bg setpriv $nob env HOME="$ndir" RIP_DIR="$ndir" "$RIP" run --functions -o "$ndir/t" -- \
	"$prog" spin 60 2 "$ndir/ready" >"$TEST_TMP/run.out" 2>&1
wait_file "$ndir/ready" 60 || die "funcprog-patch never got ready: $(cat "$TEST_TMP/run.out")"
ppid=$(pgrep -P "$T_LAST" | head -1)
[ -n "$ppid" ] || die "no program under rip run"
ring=$(sed -n "s|.* rw-s .* \\($ndir/.*\\.ring\\)\$|\\1|p" "/proc/$ppid/maps" | head -1)
[ -n "$ring" ] || die "no ring file of nobody's mapped by $ppid"
as_nobody sh -c "echo canary >'$ring.patch'" || die "cannot make $ring.patch"

expect_status 1 "rip enable PID func of nobody's process" "$RIP" enable "$ppid" func
grep -q "owned by nobody" "$TEST_TMP/err" || fail "rip enable did not name the owner: $(cat "$TEST_TMP/err")"
[ -f "$ring.patch" ] && [ "$(stat -c %U "$ring.patch")" = nobody ] ||
	fail "rip enable removed or replaced nobody's $ring.patch"
t_done
