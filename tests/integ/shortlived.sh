#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: 100,000 short-lived threads (at most 200 alive at a time),
# each snapping three times, in a ring of RIP_SLOTS=256 slots: the slots are
# reused (never more than 256 used, no overflow, none left attached), the
# RSS stays bounded, the file size never changes, and afterwards `rip ps
# --threads --all` reads the file without complaint and shows the threads
# of the last batch (200, fewer when pthread_create made a batch short) as
# exited, each with its three snaps in shortlived_work.
. tests/data/common.sh
prog=$BUILD/tests/integ/shortlived_prog
need_bin "$prog" "$RIP"
need_cmd python3
n=${SHORTLIVED_THREADS:-100000}
ring=$TEST_TMP/shortlived.ring

RIP_SLOTS=256 timeout -k 5 120 "$prog" "$ring" "$n" >"$TEST_TMP/progress" ||
	die "shortlived_prog failed (exit $?): $(tail -n 3 "$TEST_TMP/progress")"
cat "$TEST_TMP/progress"
python3 - "$TEST_TMP/progress" "$n" <<'PY' || fail "slots, RSS or file size misbehaved"
import sys
rows = [list(map(int, l.split()[1:])) for l in open(sys.argv[1]) if l.startswith("progress")]
n = int(sys.argv[2])
bad = []
if not rows or rows[-1][0] != n:
    bad.append("did not get through %d threads" % n)
for done, rss, size, used, overflow, live in rows:
    if size != rows[0][2]:
        bad.append("file size %d at %d threads, was %d" % (size, done, rows[0][2]))
    if used > 256:
        bad.append("%d slots used at %d threads" % (used, done))
    if overflow:
        bad.append("overflow %d at %d threads" % (overflow, done))
if rows and rows[-1][5] != 0:
    bad.append("%d threads still attached at the end" % rows[-1][5])
# RSS: what the first 10000 threads needed, plus a little; never growing with the count
if len(rows) > 2 and rows[-1][1] > rows[0][1] + 8192:
    bad.append("RSS grew from %d kB to %d kB" % (rows[0][1], rows[-1][1]))
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
size=$(stat -c %s "$ring")
expect_status 0 "rip ps --threads --all --json" "$RIP" ps --threads --all --json "$ring"
[ -s "$TEST_TMP/err" ] && fail "rip ps complained: $(head -n 3 "$TEST_TMP/err")"
last=$(sed -n 's/^last \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p' "$TEST_TMP/progress")
[ -n "$last" ] || die "shortlived_prog did not say which threads came last"
# shellcheck disable=SC2086 # the three numbers
set -- $last
[ "$3" = 0 ] || echo "note: $3 batches were cut short (pthread_create: EAGAIN)"
python3 - "$TEST_TMP/out" "$n" "$1" "$2" <<'PY' || {
import json, sys
d = json.load(open(sys.argv[1]))
n, first, count = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
slots = {s["name"]: s for s in d["slots"]}
bad = []
if len(d["slots"]) > 256:
    bad.append("%d slots shown" % len(d["slots"]))
if first + count != n or not 0 < count <= 200:
    bad.append("the last batch is threads %d..%d of %d" % (first, first + count - 1, n))
# the last batch's slots were never taken again: each shows its thread
for i in range(first, first + count):
    s = slots.get("s%d" % i)
    if not s:
        bad.append("s%d missing" % i)
    elif s["state"] != "exited" or s["snaps"] != 3 or \
            [p["function"] for p in s["path"]] != ["shortlived_work"] * 3:
        bad.append("s%d: %s, %d snaps, %s" % (i, s["state"], s["snaps"],
                                              [p["function"] for p in s["path"]]))
for b in bad[:10]:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	fail "rip ps --all: the last threads are not right"
	# what the text listing says (slots left out are noted on stderr)
	"$RIP" ps --threads --all "$ring" 2>&1 | tail -n 5 >&2
}
expect_status 0 "rip ps" "$RIP" ps "$ring"
grep -q '^0 threads, 0 coroutines (0 waiting), [0-9]* exited' "$TEST_TMP/out" ||
	fail "rip ps header: $(sed -n 2p "$TEST_TMP/out")"
[ "$(stat -c %s "$ring")" = "$size" ] || fail "the file size changed after the exit"
t_done
