#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the fd hooks of librip-preload.so record exactly the fd:open
# and fd:close events of fdprog's known sites, in order, with their kinds,
# flags and paths (open/openat/creat with variadic modes, dup2/dup3 onto
# an open fd as a REPLACED close, F_DUPFD, pipes, socketpair, accept, fds
# received over SCM_RIGHTS, eventfd & co., memfd, stdio streams and
# directories, a leaked fd), and nothing for failed calls.  Every event has
# a backtrace that was defined.  fdprog checks that the calls still work
# and that errno survives the hooks; its output is the same with and
# without the preload library.  With RIP_DISABLE=fd, the file still records
# the other categories (mem) and holds no fd event.
. tests/data/common.sh
prog=$BUILD/tests/integ/fdprog
pre=$PWD/$BUILD/librip-preload.so
need_bin "$prog" "$RIP"
[ -f "$pre" ] || die "$pre is missing: run make"

mkdir -p "$TEST_TMP/plain" "$TEST_TMP/work" "$TEST_TMP/ring"

# untraced: the reference output
"$prog" "$TEST_TMP/plain" >"$TEST_TMP/plain.out" 2>"$TEST_TMP/plain.err" ||
	die "fdprog fails without the preload library: $(cat "$TEST_TMP/plain.err")"

# traced: fd 9 receives the events fdprog expects
LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ "$prog" "$TEST_TMP/work" \
	>"$TEST_TMP/traced.out" 2>"$TEST_TMP/traced.err" 9>"$TEST_TMP/want"
rc=$?
[ "$rc" = 0 ] || fail "fdprog traced: exit $rc: $(head -n 5 "$TEST_TMP/traced.err")"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/traced.out" ||
	fail "output differs with the preload library:" \
		"$(diff "$TEST_TMP/plain.out" "$TEST_TMP/traced.out")"
[ "$(wc -l <"$TEST_TMP/want")" -gt 80 ] || fail "fdprog wrote too few expected events"

set -- "$TEST_TMP"/ring/*.ring
[ $# = 1 ] && [ -f "$1" ] || die "want one ring file in $TEST_TMP/ring, got: $*"
ring=$1
expect_status 0 "rip dump" "$RIP" dump "$ring"
cp "$TEST_TMP/out" "$TEST_TMP/dump"

# the fd events, without time and thread, backtrace ids masked
grep -E '^[^ ]+ [^ ]+ fd:' "$TEST_TMP/dump" | sed -E 's/^[^ ]+ [^ ]+ //' >"$TEST_TMP/fd-events"
sed -E 's/ bt=[0-9]+/ bt=*/' "$TEST_TMP/fd-events" >"$TEST_TMP/got"
if ! cmp -s "$TEST_TMP/want" "$TEST_TMP/got"; then
	fail "fd events differ from fdprog's sites (want < > got)"
	diff "$TEST_TMP/want" "$TEST_TMP/got" | head -n 30 >&2
fi

# every event has a backtrace, defined by a rip:bt event
if grep -q ' bt=0 ' "$TEST_TMP/fd-events"; then
	fail "fd events without a backtrace: $(grep -c ' bt=0 ' "$TEST_TMP/fd-events")"
fi
sed -nE 's/.* rip:bt id=([0-9]+) .*/\1/p' "$TEST_TMP/dump" | sort -u >"$TEST_TMP/bt-defined"
sed -nE 's/.* bt=([0-9]+) .*/\1/p' "$TEST_TMP/fd-events" | sort -u >"$TEST_TMP/bt-used"
missing=$(comm -13 "$TEST_TMP/bt-defined" "$TEST_TMP/bt-used" | head -n 5 | tr '\n' ' ')
[ -z "$missing" ] || fail "backtrace ids used but never defined: $missing"

# nothing lost, and the process's exit left a complete file
grep -Eq '^[0-9]+ events, [0-9]+ streams?, 0 discarded/overwritten, 0 packets lost$' \
	"$TEST_TMP/dump" || fail "events lost: $(tail -n 1 "$TEST_TMP/dump")"

# switched off: RIP_DISABLE=fd records no fd event and changes nothing else
rm -f "$TEST_TMP"/ring/*.ring
rm -rf "$TEST_TMP/work" && mkdir -p "$TEST_TMP/work"
LD_PRELOAD=$pre RIP_RING=$TEST_TMP/ring/ RIP_DISABLE=fd "$prog" "$TEST_TMP/work" \
	>"$TEST_TMP/off.out" 2>"$TEST_TMP/off.err" ||
	fail "fdprog with fd off: $(cat "$TEST_TMP/off.err")"
cmp -s "$TEST_TMP/plain.out" "$TEST_TMP/off.out" || fail "output differs with fd tracing off"
set -- "$TEST_TMP"/ring/*.ring
[ -f "$1" ] || die "no ring file with fd off (the other categories still trace)"
"$RIP" dump "$1" >"$TEST_TMP/off.dump" 2>&1 || fail "rip dump (fd off) failed"
grep -q ' mem:alloc ' "$TEST_TMP/off.dump" || fail "no mem event with fd off: $(tail -n 1 "$TEST_TMP/off.dump")"
if grep -Eq '^[^ ]+ [^ ]+ fd:' "$TEST_TMP/off.dump"; then
	fail "fd events recorded with RIP_DISABLE=fd"
fi
t_done
