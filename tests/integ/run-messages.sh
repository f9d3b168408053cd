#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run says what went wrong when a program cannot be traced
# for reasons outside rip.  (a) A set-user-ID root copy of /bin/true, and a
# copy given file capabilities, run by an unprivileged user (setpriv to
# nobody): the loader ignores LD_PRELOAD for them, and rip run says so
# before it runs them, instead of "is it linked with librip?" (with --mem it
# refuses to; plain rip run runs it untraced).  (b) A ring
# directory on a full 1 MiB tmpfs: rip run says "no space left in DIR for
# its ring file (needs N bytes" and fails, instead of "No such file or
# directory".  (c) A tmpfs with room for the shell's ring file only, under
# --follow-fork --follow-exec: the shell's trace is written and rip run
# warns that its children were not traced, for want of space.  Parts that
# need root (setuid files, setcap, mount) do not run without it, and the test
# then skips with the reason.
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/burstprog
need_bin "$prog"
RIP=$(cd "$(dirname "$RIP")" && pwd)/$(basename "$RIP")
cd "$TEST_TMP" || exit 1
skipped=""
MNT=""
PUB=""
m_cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	[ -n "$PUB" ] && rm -rf "$PUB"
	t_cleanup
}
trap 'm_cleanup' EXIT
trap 'm_cleanup; exit 1' INT TERM HUP

# (a) secure execution
if [ "$(id -u)" != 0 ]; then
	skipped="$skipped (a): not root, cannot make a set-user-ID root copy;"
elif ! command -v setpriv >/dev/null || ! setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	skipped="$skipped (a): setpriv cannot run as nobody;"
elif ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$RIP"; then
	skipped="$skipped (a): nobody cannot run $RIP (a private directory on its path);"
else
	# a directory nobody can reach (TEST_TMP's parents may be private)
	PUB=$(mktemp -d /tmp/rip-run-messages.XXXXXX) || die "mktemp"
	chmod 755 "$PUB"
	mkdir -m 755 "$PUB/bin"
	mkdir -m 1777 "$PUB/out" "$PUB/rings"
	# a program not linked with librip (the helpers find it through $ORIGIN)
	true=/bin/true
	[ -x "$true" ] || true=/usr/bin/true
	cp "$true" "$PUB/bin/suid" && chmod 4755 "$PUB/bin/suid"
	as_nobody() {
		(cd "$PUB/out" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
			env RIP_DIR="$PUB/rings" "$@")
	}
	as_nobody "$RIP" run --mem -o t1 -- "$PUB/bin/suid" 10 >out.txt 2>err.txt
	rc=$?
	[ "$rc" = 1 ] || fail "setuid as nobody: exit $rc, want 1: $(cat err.txt)"
	grep -q "bin/suid is set-user-ID root: the dynamic loader ignores LD_PRELOAD" err.txt ||
		fail "setuid as nobody: the message does not say the loader ignores LD_PRELOAD: $(cat err.txt)"
	grep -q "linked with librip" err.txt && fail "setuid: still asks if it is linked with librip"
	# found through PATH too
	PATH=$PUB/bin:$PATH as_nobody "$RIP" run --mem -o t2 -- suid 10 >out.txt 2>err.txt
	grep -q "suid is set-user-ID root" err.txt || fail "setuid through PATH: $(cat err.txt)"
	# plain rip run runs it, untraced, and says why at once
	as_nobody "$RIP" run -o t5 -- "$PUB/bin/suid" 10 >out.txt 2>err.txt
	rc=$?
	[ "$rc" = 0 ] || fail "setuid as nobody, plain rip run: exit $rc, want 0: $(cat err.txt)"
	grep -q "bin/suid is set-user-ID root: the dynamic loader ignores LD_PRELOAD.*; it runs untraced" \
		err.txt || fail "setuid, plain rip run: no clear message: $(cat err.txt)"
	grep -q "linked with librip" err.txt && fail "setuid, plain rip run: still asks if it is linked with librip"
	# root runs it as itself: nothing changes, it is traced
	"$RIP" run --mem -q -o t3 -- "$PUB/bin/suid" 10 >out.txt 2>err.txt ||
		fail "setuid run by root: $(cat err.txt)"
	[ -f t3/.rip-index ] || fail "setuid run by root: no trace"
	cp "$true" "$PUB/bin/caps"
	if command -v setcap >/dev/null && setcap cap_net_raw+ep "$PUB/bin/caps" 2>/dev/null; then
		as_nobody "$RIP" run --mem -o t4 -- "$PUB/bin/caps" 10 >out.txt 2>err.txt
		rc=$?
		[ "$rc" = 1 ] || fail "setcap as nobody: exit $rc, want 1: $(cat err.txt)"
		grep -q "caps is given file capabilities (setcap): the dynamic loader ignores LD_PRELOAD" \
			err.txt || fail "setcap as nobody: $(cat err.txt)"
	else
		skipped="$skipped (a) setcap: cannot give file capabilities here;"
	fi
fi

# (b) a full tmpfs: creation backs the header and the category names
# (12 KiB), so 8 KiB cannot hold a ring file
mkdir small
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=8k,mode=0700 tmpfs small 2>/dev/null; then
	skipped="$skipped (b), (c): cannot mount a tmpfs (not root, or not permitted);"
else
	MNT=$TEST_TMP/small
	RIP_DIR=$MNT "$RIP" run --mem -o t5 -- "$prog" 10 >out.txt 2>err.txt
	rc=$?
	[ "$rc" = 1 ] || fail "full tmpfs: exit $rc, want 1 (no trace): $(cat err.txt)"
	grep -q "no space left in $MNT for its ring file (needs [0-9]* bytes" err.txt ||
		fail "full tmpfs: the message does not say no space left in $MNT: $(cat err.txt)"
	grep -q "No such file" err.txt && fail "full tmpfs: still says No such file: $(cat err.txt)"
	[ -e t5 ] && fail "full tmpfs: a trace directory was left"

	# (c) the shell's file fits, then the tmpfs fills up (the test fills it,
	# outside the traced family, while the shell waits in a builtin read):
	# its children find no room, and rip run says so
	mount -o remount,size=4m "$MNT" || die "cannot resize the tmpfs"
	mkfifo go || die "mkfifo"
	RIP_DIR=$MNT "$RIP" run --mem --follow-fork --follow-exec -o t6 -- \
		sh -c "echo up >ready; read x <go; '$prog' 10; '$prog' 10" >out.txt 2>err.txt &
	runpid=$!
	wait_file ready 20 || fail "small tmpfs: the shell did not start"
	dd if=/dev/zero of="$MNT/fill" bs=64k 2>/dev/null
	echo go >go
	wait $runpid
	rc=$?
	[ "$rc" = 0 ] || fail "small tmpfs: exit $rc: $(cat err.txt)"
	[ -f t6/.rip-index ] || fail "small tmpfs: the shell's trace is missing"
	grep -q "^rip run: warning: [1-9][0-9]* child.* not traced: no space left in $MNT for" \
		err.txt || fail "small tmpfs: no warning about the children not traced: $(cat err.txt)"
	grep -q "were left" err.txt && fail "small tmpfs: files left behind: $(cat err.txt)"
	rm -f "$MNT/fill"
	umount "$MNT" && MNT=""
fi
skipped=${skipped%;}
[ -n "$skipped" ] && skip_part "${skipped# }"
t_done
