#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: ring files copied off a host compressed, as gzip and as
# zstd, are read directly.  A dead 20-thread program's ring (snapshots)
# and a memprog ring (resource events) are compressed with gzip and zstd;
# rip ps (grouped and --json), rip dump, rip leaks --json and rip snapshot
# must give on each copy exactly what they give on the plain file.  Then
# hostile copies: truncated, corrupt in the middle, and one that unpacks to
# more than its header's file_size: every command exits 1 with a message
# that says what is wrong, and the ASan/UBSan rip reads them cleanly.
# Last, --sysroot: the program's binary moved under a sysroot directory, as
# on the machine the copy is read on; rip ps finds its functions there.
. tests/data/common.sh
pm=$BUILD/tests/integ/postmortem_prog
memprog=$BUILD/tests/integ/memprog
lib=$PWD/$BUILD/librip-preload.so
need_bin "$pm" "$memprog" "$RIP"
command -v gzip >/dev/null || skip "gzip is needed to make the compressed copies"
command -v zstd >/dev/null || skip "zstd is needed to make the compressed copies"

# The snapshot program runs from a copy of its binary, so that the binary
# can be moved away for the --sysroot part.
mkdir -p "$TEST_TMP/bin" || die "mkdir"
cp "$pm" "$TEST_TMP/bin/pmprog" || die "cp"
ring=$TEST_TMP/pm.ring
export LD_LIBRARY_PATH="$PWD/$BUILD${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# small files (256 slots): the copies are unpacked many times below, under ASan too
export RIP_SLOTS=256
t_bg "$TEST_TMP/bin/pmprog" "$ring" "$TEST_TMP/addrs" "$TEST_TMP/ready" 20
pid=$T_LAST
wait_file "$TEST_TMP/ready" 30 || die "the helper did not park its threads in 30s"
t_kill "$pid"

LD_PRELOAD=$lib RIP_RING=$TEST_TMP/mem.ring RIP_MODE=block "$memprog" basic >/dev/null 2>&1 ||
	die "memprog basic failed"

for f in pm.ring mem.ring; do
	gzip -c "$TEST_TMP/$f" >"$TEST_TMP/$f.gz" || die "gzip $f"
	zstd -q -c "$TEST_TMP/$f" >"$TEST_TMP/$f.zst" || die "zstd $f"
done

# same NAME CMD...: CMD's output on the plain file (with FILE replaced)
# equals its output on the .gz and on the .zst copy, the file's name aside.
same() {
	name=$1 file=$2
	shift 2
	for suf in "" .gz .zst; do
		# shellcheck disable=SC2046 # the arguments are words on purpose
		"$RIP" "$@" "$TEST_TMP/$file$suf" >"$TEST_TMP/$name$suf.out" 2>"$TEST_TMP/$name$suf.err"
		rc=$?
		[ "$rc" = 0 ] || fail "rip $* $file$suf: exit $rc: $(head -n 2 "$TEST_TMP/$name$suf.err")"
		sed "s#$TEST_TMP/$file$suf#FILE#g" "$TEST_TMP/$name$suf.out" >"$TEST_TMP/$name$suf.norm"
	done
	for suf in .gz .zst; do
		cmp -s "$TEST_TMP/$name.norm" "$TEST_TMP/$name$suf.norm" ||
			fail "rip $* differs on the $suf copy: $(diff "$TEST_TMP/$name.norm" \
				"$TEST_TMP/$name$suf.norm" | head -n 4)"
	done
	[ -s "$TEST_TMP/$name.norm" ] || fail "rip $*: no output on the plain file"
}
same ps pm.ring ps
same psjson pm.ring ps --threads --json
same dump mem.ring dump
same leaks mem.ring leaks --json
grep -q park_0007 "$TEST_TMP/ps.zst.out" || fail "rip ps on the .zst copy: no park_0007 row"
grep -q 'size=1009' "$TEST_TMP/dump.gz.out" || fail "rip dump on the .gz copy: no leak event"

# rip snapshot writes the same trace from each copy.
for suf in "" .gz .zst; do
	"$RIP" snapshot -o "$TEST_TMP/snap$suf" "$TEST_TMP/mem.ring$suf" >/dev/null 2>"$TEST_TMP/snap.err" ||
		fail "rip snapshot mem.ring$suf: $(head -n 2 "$TEST_TMP/snap.err")"
	"$RIP" dump "$TEST_TMP/snap$suf" >"$TEST_TMP/snapdump$suf" 2>&1 ||
		fail "rip dump of the snapshot of mem.ring$suf failed"
done
for suf in .gz .zst; do
	cmp -s "$TEST_TMP/snapdump" "$TEST_TMP/snapdump$suf" ||
		fail "the snapshot of the $suf copy differs from the plain file's"
done

# Hostile copies.  bad NAME PATTERN: every reader exits 1 saying PATTERN.
bad() {
	for cmd in ps dump leaks; do
		expect_status 1 "rip $cmd $1" "$RIP" $cmd "$TEST_TMP/$1"
		grep -q "$2" "$TEST_TMP/err" ||
			fail "rip $cmd $1: the error does not say '$2': $(head -n 2 "$TEST_TMP/err")"
	done
	expect_status 1 "rip snapshot $1" "$RIP" snapshot -o "$TEST_TMP/bad-$1" "$TEST_TMP/$1"
	[ -e "$TEST_TMP/bad-$1" ] && fail "rip snapshot $1 left a trace behind"
	asan_run ps "$TEST_TMP/$1"
	asan_run leaks "$TEST_TMP/$1"
}
sz=$(wc -c <"$TEST_TMP/mem.ring.gz")
head -c $((sz / 2)) "$TEST_TMP/mem.ring.gz" >"$TEST_TMP/half.gz"
bad half.gz 'truncated gzip data'
sz=$(wc -c <"$TEST_TMP/mem.ring.zst")
head -c $((sz / 2)) "$TEST_TMP/mem.ring.zst" >"$TEST_TMP/half.zst"
bad half.zst 'truncated zstd data'
# 64 bytes of garbage in the middle of the compressed stream
for z in gz zst; do
	sz=$(wc -c <"$TEST_TMP/mem.ring.$z")
	{
		head -c $((sz / 2)) "$TEST_TMP/mem.ring.$z"
		head -c 64 /dev/urandom
		tail -c +$((sz / 2 + 65)) "$TEST_TMP/mem.ring.$z"
	} >"$TEST_TMP/mangled.$z"
done
bad mangled.gz 'corrupt gzip data\|truncated gzip data'
bad mangled.zst 'corrupt zstd data\|truncated zstd data'
# the header's file_size says less than the stream holds
{
	cat "$TEST_TMP/mem.ring"
	head -c 8192 /dev/urandom
} | zstd -q -c >"$TEST_TMP/long.zst"
bad long.zst 'the size its header gives'
# only the magic
printf '\037\213' >"$TEST_TMP/magic.gz"
bad magic.gz 'truncated gzip data'

# --sysroot: the binary is now only under SYSROOT, at the path it ran from.
mkdir -p "$TEST_TMP/sysroot$TEST_TMP/bin" || die "mkdir sysroot"
mv "$TEST_TMP/bin/pmprog" "$TEST_TMP/sysroot$TEST_TMP/bin/pmprog" || die "mv"
"$RIP" ps "$TEST_TMP/pm.ring.zst" >"$TEST_TMP/nosys.out" 2>&1
grep -q park_0007 "$TEST_TMP/nosys.out" &&
	fail "rip ps found park_0007 with the binary moved away: the --sysroot check proves nothing"
"$RIP" ps --sysroot "$TEST_TMP/sysroot" "$TEST_TMP/pm.ring.zst" >"$TEST_TMP/sys.out" 2>&1 ||
	fail "rip ps --sysroot on the .zst copy failed: $(head -n 2 "$TEST_TMP/sys.out")"
grep -q park_0007 "$TEST_TMP/sys.out" ||
	fail "rip ps --sysroot did not find park_0007: $(head -n 6 "$TEST_TMP/sys.out")"
t_done
