#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: a chunk of a packed trace read alone in a shared directory (a
# spool --on-rotate hands chunks to: sticky, writable by all) is read with
# the index it carries, not with a .rip-index another user put beside it.
# The planted index is the trace's own with an event type renamed
# ("mapping" to "mappinX"), given to nobody: rip dump of the chunk must
# show "mapping".  The same index owned by the chunk's owner is still
# preferred to the chunk's tail (read where it was written): "mappinX".
# Needs root (to give a file to nobody): skipped with the reason otherwise.
. tests/data/common.sh
need_bin "$RIP" "$BUILD/bench/malloc"
need_cmd python3
mal=$PWD/$BUILD/bench/malloc
cd "$TEST_TMP" || die "no TEST_TMP"

[ "$(id -u)" = 0 ] || skip "needs root, to plant a file owned by another user (nobody)"
id nobody >/dev/null 2>&1 || skip "no user nobody to own the planted index"

"$RIP" run --mem -q -o t -- "$mal" 1 1000 >/dev/null 2>run.err || die "rip run: $(cat run.err)"
[ -f t/chunk-000000.rpk ] || die "the trace has no chunk-000000.rpk"
mkdir shared && chmod 1777 shared || die "mkdir shared"
cp t/chunk-000000.rpk shared/c0 || die "cp"
python3 -c 'import sys; b = open(sys.argv[1], "rb").read()
assert b.count(b"mapping") > 0
open(sys.argv[2], "wb").write(b.replace(b"mapping", b"mappinX"))' t/.rip-index shared/.rip-index ||
	die "could not plant the index"

# the planted index is read when its owner is the chunk's (the test's own check)
"$RIP" dump shared/c0 >own.txt 2>own.err || fail "rip dump with our own index: $(cat own.err)"
grep -q 'mem:mappinX ' own.txt || fail "an index of the chunk's owner beside it was not read"

chown nobody shared/.rip-index || die "chown nobody"
"$RIP" dump shared/c0 >planted.txt 2>planted.err ||
	fail "rip dump beside another user's index: $(cat planted.err)"
grep -q 'mem:mappinX ' planted.txt && fail "another user's .rip-index beside the chunk was read"
grep -q 'mem:mapping ' planted.txt || fail "the chunk's own index was not read: $(head -n 2 planted.txt)"
t_done
