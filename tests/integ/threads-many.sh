#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Timeout: 600
#
# Description: thousands of threads, end to end, with the default settings.
# - 3,000 live threads x 1,000 events under rip run: nothing lost (its
#   summary), and rip dump counts exactly 3,000,000 events; 1,000 threads x
#   100 events: babeltrace2 counts exactly 100,000 in the trace's CTF export
#   (its muxer's cost grows with events x streams: make bench counts the
#   3,000 x 1,000).  With 100 threads and only 2 rings, the 9,800 events that found
#   no ring are counted: rip run's summary, rip dump, and the warnings of
#   rip leaks (text and JSON), rip report and rip calltree say so.
# - rip run --mem on 1,000 and 3,000 live threads, each doing 2,000
#   malloc/free pairs and leaking one 100-byte block from leak_once(): 0
#   lost, and rip leaks --json reports exactly N
#   blocks and N x 100 bytes there, and no free of a block never seen.
# - 10,000 live threads in flight-recorder mode (RIP_RING), every one with
#   a ring, ten of them wrapping theirs: the ring file takes at most 256 MiB
#   of tmpfs; after SIGKILL, rip snapshot's events plus the events it says
#   were overwritten add up to what was emitted, and rip dump counts as
#   many events as rip snapshot kept (babeltrace2's muxer takes minutes on
#   10,000 streams: the 1,000-thread export above is its check).
. tests/data/common.sh
prog=$BUILD/tests/integ/manythreads
need_bin "$prog" "$RIP"
command -v babeltrace2 >/dev/null || die "babeltrace2 is missing: make check installs it"
command -v python3 >/dev/null || die "python3 is missing: make check installs it"

# ---- 3,000 threads x 1,000 events: every one recorded ----
expect_status 0 "rip run, 3000 threads" "$RIP" run -o "$TEST_TMP/ev" -- "$prog" events 3000 1000
grep -q '^emitted 3000000$' "$TEST_TMP/out" || fail "events: the program did not emit 3000000"
grep -q ': 3000000 events (.*) recorded in .*, 0 lost$' "$TEST_TMP/err" ||
	fail "events: rip run's summary: $(cat "$TEST_TMP/err")"
expect_status 0 "rip dump" "$RIP" dump "$TEST_TMP/ev"
tail -n 1 "$TEST_TMP/out" | grep -q '^3000000 events, 3000 streams, 0 discarded/overwritten, 0 packets lost' ||
	fail "events: rip dump says $(tail -n 1 "$TEST_TMP/out")"
# babeltrace2 on the CTF export (1,000 x 100: its muxer looks at every stream for each
# event, minutes for the run above on a loaded machine; make bench counts that one)
expect_status 0 "rip run, 1000 threads x 100" "$RIP" run -q -o "$TEST_TMP/ev1" -- "$prog" events 1000 100
expect_status 0 "rip export --format=ctf" "$RIP" export --format=ctf "$TEST_TMP/ev1" -o "$TEST_TMP/ev1.ctf"
babeltrace2 "$TEST_TMP/ev1.ctf" -c sink.utils.counter -p step=+0 >"$TEST_TMP/bt.txt" \
	2>"$TEST_TMP/bt.err" || fail "events: babeltrace2 failed: $(head -n 3 "$TEST_TMP/bt.err")"
n=$(awk '/Event messages/ { print $1 }' "$TEST_TMP/bt.txt")
[ "$n" = 100000 ] || fail "events: babeltrace2 counts $n events, want 100000"

# ---- forced loss: 100 threads and 2 rings; every lost event counted and shown ----
RIP_EVENT_RINGS=2 "$RIP" run -o "$TEST_TMP/lossy" -- "$prog" events 100 100 >"$TEST_TMP/out" \
	2>"$TEST_TMP/err" || fail "lossy run: rip run failed"
grep -q '^emitted 10000$' "$TEST_TMP/out" || fail "lossy run: the program did not emit 10000"
grep -q ': 200 events (.*) recorded in .*, 9800 lost$' "$TEST_TMP/err" ||
	fail "lossy run: rip run's summary: $(cat "$TEST_TMP/err")"
# the reason: no ring, not a small buffer
grep -q ': 9800 events found no event ring: 98 threads found none free' "$TEST_TMP/err" &&
	! grep -q 'bigger --buffer' "$TEST_TMP/err" ||
	fail "lossy run: rip run does not say the events found no ring: $(cat "$TEST_TMP/err")"
expect_status 0 "rip dump, lossy" "$RIP" dump "$TEST_TMP/lossy"
tail -n 1 "$TEST_TMP/out" | grep -q '^200 events, 2 streams, 9800 discarded/overwritten' ||
	fail "lossy run: rip dump says $(tail -n 1 "$TEST_TMP/out")"
for c in leaks report calltree; do
	"$RIP" $c "$TEST_TMP/lossy" >"$TEST_TMP/c.out" 2>&1
	grep -q '9800 events discarded' "$TEST_TMP/c.out" ||
		fail "lossy run: rip $c does not warn that 9800 events were lost: $(head -n 2 "$TEST_TMP/c.out")"
done
expect_status 0 "rip leaks --json, lossy" "$RIP" leaks --json "$TEST_TMP/lossy"
grep -q '"discarded":9800' "$TEST_TMP/out" || fail "lossy run: rip leaks --json has no \"discarded\":9800"
expect_status 0 "rip report --json, lossy" "$RIP" report --json "$TEST_TMP/lossy"
grep -q '"complete":false,"discarded":9800' "$TEST_TMP/out" ||
	fail "lossy run: rip report --json has no \"complete\":false,\"discarded\":9800"
expect_status 0 "rip report --html, lossy" "$RIP" report --html="$TEST_TMP/lossy.html" "$TEST_TMP/lossy"
grep -q '"complete":false,"discarded":9800' "$TEST_TMP/lossy.html" &&
	grep -q 'This trace is incomplete' "$TEST_TMP/lossy.html" ||
	fail "lossy run: rip report --html does not carry the loss and its warning"
# the events no ring could count reach the CTF packets: babeltrace2 warns of all 9800
expect_status 0 "rip export --format=ctf, lossy" "$RIP" export --format=ctf "$TEST_TMP/lossy" \
	-o "$TEST_TMP/lossy.ctf"
babeltrace2 "$TEST_TMP/lossy.ctf" >/dev/null 2>"$TEST_TMP/bt.err" || fail "lossy run: babeltrace2 failed"
n=$(grep -o 'discarded [0-9]* events' "$TEST_TMP/bt.err" | awk '{ s += $2 } END { print s + 0 }')
[ "$n" = 9800 ] || fail "lossy run: babeltrace2 warns of $n discarded events, want 9800"

# ---- 1,000 and 3,000 threads, one leak each ----
for n in 1000 3000; do
	expect_status 0 "rip run --mem, $n threads" "$RIP" run --mem -o "$TEST_TMP/leak$n" -- \
		"$prog" leak "$n" 2000
	grep -q "^emitted $n$" "$TEST_TMP/out" || fail "leak $n: the program did not finish"
	grep -q ' recorded in .*, 0 lost$' "$TEST_TMP/err" ||
		fail "leak $n: rip run's summary: $(cat "$TEST_TMP/err")"
	expect_status 0 "rip leaks, $n threads" "$RIP" leaks --json "$TEST_TMP/leak$n"
	python3 - "$TEST_TMP/out" "$n" <<'PY' || fail "leak $n: rip leaks is not exactly N blocks at leak_once"
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
at = [g for g in r["leaks"] if g["resource"] == "mem" and g["stack"] and
      g["stack"][0]["function"] == "leak_once"]
assert len(at) == 1, ("groups at leak_once", len(at))
assert (at[0]["count"], at[0]["bytes"]) == (n, 100 * n), (at[0]["count"], at[0]["bytes"])
t = r["totals"]["mem"]
assert t["released_unseen"] == 0, ("frees of blocks never seen", t)
assert r["complete"] and r["discarded"] == 0 and r["lost_packets"] == 0, "incomplete"
PY
	# streams outnumber the descriptors: the reader opens them in turn, same result
	cp "$TEST_TMP/out" "$TEST_TMP/leaks-all-fds"
	expect_status 0 "rip leaks, $n threads, 200 descriptors" \
		sh -c 'ulimit -n 200 && exec "$@"' sh "$RIP" leaks --json "$TEST_TMP/leak$n"
	cmp -s "$TEST_TMP/out" "$TEST_TMP/leaks-all-fds" ||
		fail "leak $n: rip leaks under ulimit -n 200 differs from the unlimited run"
done

# ---- 10,000 threads, flight recorder, killed ----
rings=$TEST_TMP/rings
mkdir -p "$rings"
RIP_RING=$rings/ "$prog" wide 10000 5000 wait >"$TEST_TMP/fr.out" 2>"$TEST_TMP/fr.err" &
pid=$!
T_PIDS="$T_PIDS $pid"
i=0
while ! grep -q '^ready$' "$TEST_TMP/fr.out" 2>/dev/null && [ $i -lt 1200 ]; do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
grep -q '^ready$' "$TEST_TMP/fr.out" || die "flight recorder: 10000 threads never got ready: $(cat "$TEST_TMP/fr.err")"
ring=$(find "$rings" -name "rip-$pid-*.ring" | head -n 1)
[ -n "$ring" ] || die "flight recorder: no ring file"
kb=$(du -k "$ring" | cut -f1)
[ "$kb" -le 262144 ] || fail "flight recorder: the ring file takes $kb KiB of tmpfs, more than 256 MiB"
echo "10000 threads: the ring file takes $kb KiB of tmpfs"
kill -9 "$pid"
wait "$pid" 2>/dev/null
expect_status 0 "rip snapshot after SIGKILL" "$RIP" snapshot -o "$TEST_TMP/snap" "$ring"
summary=$(grep ' events, ' "$TEST_TMP/out" | head -n 1)
python3 - "$summary" <<'PY' || fail "flight recorder: events and losses do not add up: $summary"
import re, sys
m = re.search(r": (\d+) events, .*; (\d+) events lost", sys.argv[1])
assert m, sys.argv[1]
kept, lost = int(m.group(1)), int(m.group(2))
assert kept + lost == 10 * 5000 + 9990, (kept, lost, kept + lost)
assert lost > 0, "no ring wrapped: the test does not test overwriting"
print(kept)
PY
kept=$(python3 -c 'import re, sys; print(re.search(r": (\d+) events, ", sys.argv[1]).group(1))' "$summary")
expect_status 0 "rip dump of the snapshot" "$RIP" dump "$TEST_TMP/snap"
tail -n 1 "$TEST_TMP/out" | grep -q "^$kept events, 10000 streams," ||
	fail "flight recorder: rip dump says $(tail -n 1 "$TEST_TMP/out"), rip snapshot kept $kept"
t_done
