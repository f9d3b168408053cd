#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: tar with xz (tar forks and execs xz; xz compresses with two
# threads) runs under rip run --mem --fd --shm --follow-fork --follow-exec
# as it runs plain: creating an archive of a tree of 60 files to stdout
# (fixed owner, dates and order: the same bytes traced), listing it and
# extracting it; the same output and exit status, no hang, 0 events lost
# in tar and in xz, every trace read by rip leaks and rip report, and the
# extracted tree equal to the original.
# Timeout: 150
. tests/data/real.sh
real_need tar xz
src=$W/src
for d in a b c; do
	mkdir -p "$src/$d"
	for i in $(seq 1 20); do
		seq "$i" 3 $((i * 400)) >"$src/$d/file$i.txt"
	done
done
# xz: two threads over blocks of 64 KiB (the input is about 1 MB)
XZ_OPT="-T2 --block-size=65536 -3"
export XZ_OPT
topts="--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner"
# shellcheck disable=SC2086 # the options are words
real_run "tar -cJ" "$REAL_FOLLOW" : tar $topts -cJf - -C "$W" src
[ -s "$TEST_TMP/plain.out" ] || fail "tar -cJ wrote nothing"
cp "$TEST_TMP/plain.out" "$W/src.tar.xz"
# tar and xz, each forked and exec'd: at least tar's, the fork's and xz's
[ "$real_traces" -ge 3 ] || fail "tar -cJ: $real_traces traces, want tar's and xz's"
xz -t "$W/src.tar.xz" || fail "the archive is not valid xz"
real_run "tar -tJv" "$REAL_FOLLOW" : tar -tvJf "$W/src.tar.xz"
[ "$(grep -c 'file.*\.txt$' "$TEST_TMP/plain.out")" = 60 ] ||
	fail "tar -t: $(grep -c 'file' "$TEST_TMP/plain.out") files listed, want 60"
real_run "tar -xJ" "$REAL_FOLLOW" "rm -rf \"\$W/x\" && mkdir \"\$W/x\"" tar -xJf "$W/src.tar.xz" -C "$W/x"
diff -r "$src" "$W/x/src" >/dev/null || fail "the tree extracted under rip run differs"
real_run "xz -d of a corrupt file" "$REAL_FOLLOW" "head -c 3000 \"\$W/src.tar.xz\" >\"\$W/bad.xz\"" \
	xz -dc "$W/bad.xz"
[ "$real_prc" = 1 ] || fail "xz -d of a truncated file: exit $real_prc, want 1"
t_done
