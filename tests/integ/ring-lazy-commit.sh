#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 120
#
# Description: a ring's packets are backed as they are first opened, not
# all when a thread takes the ring (lib/events.c, rip_packet_open).  A
# shell under rip run --mem writes a few events and waits: its ring file
# holds about as many bytes with -b 4m as with -b 32k (the whole ring would
# be 4 MiB more).  Then, on a tmpfs filled up to the last byte while the
# shell waits (root), rip dump PID reads the live ring file without a
# failure (the packets never opened are not read), and the shell's run
# ends with its trace written.  Where no tmpfs can be mounted, that part
# does not run and the test skips.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/librip-preload.so"
RIP=$(cd "$(dirname "$RIP")" && pwd)/$(basename "$RIP")
cd "$TEST_TMP" || exit 1
MNT=""
l_cleanup() {
	[ -n "$MNT" ] && umount "$MNT" 2>/dev/null
	t_cleanup
}
trap 'l_cleanup' EXIT
trap 'l_cleanup; exit 1' INT TERM HUP

# run_wait DIR BUF NAME: rip run -b BUF, its rings in DIR, of a shell that
# waits on fifo NAME.go; its pid in NAME.pid once it waits
run_wait() {
	mkfifo "$3.go" || die "mkfifo"
	RIP_DIR=$1 "$RIP" run --mem -b "$2" -o "$3" -- \
		sh -c "echo \$\$ >$3.pid; read x <$3.go; echo done" >"$3.out" 2>"$3.err" &
	wait_file "$3.pid" 20 || die "$3: the shell did not start: $(cat "$3.err")"
}

# the bytes on tmpfs of the ring file of pid PID under DIR
ring_bytes() {
	f=$(ls "$1"/rip-run.*/rip-"$2"-*.ring 2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo 0; return; }
	echo $(($(stat -c %b "$f") * $(stat -c %B "$f")))
}

mkdir rings
for buf in 32k 4m; do
	run_wait "$PWD/rings" $buf t$buf
	eval "b_$buf=\$(ring_bytes rings \$(cat t$buf.pid))"
	echo go >t$buf.go
	wait || true
	grep -q "done" t$buf.out || fail "-b $buf: the shell did not finish: $(cat t$buf.err)"
	[ -f t$buf/.rip-index ] || fail "-b $buf: no trace"
done
# shellcheck disable=SC2154
echo "ring file bytes: -b 32k $b_32k, -b 4m $b_4m"
[ "$b_32k" -gt 0 ] && [ "$b_4m" -gt 0 ] || fail "ring files not found"
[ "$b_4m" -lt $((b_32k + 512 * 1024)) ] ||
	fail "a 4 MiB ring takes $b_4m bytes against $b_32k for a 32 KiB one: its packets were all backed"

# a full tmpfs under a live ring file: rip dump reads it
if [ "$(id -u)" != 0 ] || ! mkdir small || ! mount -t tmpfs -o size=2m,mode=0700 tmpfs small 2>/dev/null; then
	skip_part "cannot mount a tmpfs (not root, or not permitted): the full-tmpfs part"
	t_done
fi
MNT=$TEST_TMP/small
run_wait "$MNT" 1m full
pid=$(cat full.pid)
dd if=/dev/zero of="$MNT/fill" bs=4k 2>/dev/null # until ENOSPC
"$RIP" dump "$pid" >dump.out 2>dump.err || fail "rip dump of a live ring on a full tmpfs: $(cat dump.err)"
grep -q 'shrank' dump.err && fail "rip dump: $(cat dump.err)"
echo go >full.go
wait || true
rm -f "$MNT/fill"
grep -q "done" full.out || fail "full tmpfs: the shell did not finish: $(cat full.err)"
[ -f full/.rip-index ] || fail "full tmpfs: no trace: $(cat full.err)"
t_done
