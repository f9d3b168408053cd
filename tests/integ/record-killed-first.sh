#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip run --mem whose recorder is killed (SIGKILL) before it
# closes its first chunk (packed) or writes its metadata (--ctf): the trace
# is read up to its last whole record.  killed_leaks (4 threads leak 250
# blocks of 100 bytes each from leak_once, then wait) is recorded; once rip
# leaks of the trace being written finds the 1,000 blocks, rip run is
# killed, then the program.  rip leaks --json then gives exactly 1,000
# blocks of 100,000 bytes at leak_once, "complete": false, and says the
# recording went on or its recorder was killed; babeltrace2 reads the CTF one.  A CTF stream file
# cut in the middle of a packet (a recorder killed in its write) is read
# up to that packet, counted lost, and rip export --format=ctf makes of it
# a trace babeltrace2 reads.  rip ps of the trace shows its program
# live while it is recorded, and dead after both were killed (its ring
# file, which rip run copies in at the end, is where the program left it).  (Such traces had no index, and the CTF
# one no metadata: nothing read them.)
# Timeout: 120
. tests/data/common.sh
prog=$PWD/$BUILD/tests/integ/killed_leaks
need_bin "$prog"
need_cmd python3
cd "$TEST_TMP" || die "no TEST_TMP"

# leak_once JSON N: does rip leaks --json output JSON hold N blocks, N x 100 bytes, at leak_once?
leak_once() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
at = [g for g in d["leaks"] if any("leak_once" in str(f) for f in g.get("stack", []))]
n, b, want = sum(g["count"] for g in at), sum(g["bytes"] for g in at), int(sys.argv[2])
print("leak_once: %d blocks, %d bytes, complete %s" % (n, b, d["complete"]))
# a trace whose recorder was killed is not said complete
sys.exit(0 if n == want and b == 100 * want and d["complete"] is False else 1)
EOF
}

for fmt in packed ctf; do
	opt=""
	[ "$fmt" = ctf ] && opt=--ctf
	rm -f ready
	t_bg "$RIP" run $opt --mem -o "$fmt" -- "$prog" ready
	run=$T_LAST
	t_ready_pid ready
	# packed: killed as soon as its first record is on disk (a block is written a second
	# after its first packet), before the recorder writes its index again (every 2 s at
	# most, for new threads' streams: now for modules only): the record's streams are
	# newer than the index, which was written at the first pass
	# (its threads made their 1,000 blocks in the first milliseconds: that record has them);
	# CTF: once rip leaks of the trace being written finds the 1,000 blocks (or 20 s)
	if [ "$fmt" = packed ]; then
		wait_until 20 sh -c '[ "$(stat -c %s packed/chunk-000000.rpk 2>/dev/null || echo 0)" -gt 64 ]' ||
			fail "packed: no record in 20 s: $(ls -la packed)"
	else
		wait_until 20 sh -c "'$RIP' leaks --json $fmt >now.json 2>now.err &&
			python3 -c 'import json, sys; d = json.load(open(\"now.json\"));
sys.exit(sum(g[\"count\"] for g in d[\"leaks\"] if \"leak_once\" in str(g.get(\"stack\"))) < 1000)'" ||
			fail "$fmt: rip leaks of the trace being written never found the 1,000 blocks: $(cat now.err)"
	fi
	if [ "$fmt" = packed ]; then
		[ -e packed/chunk-000000.rpk ] && [ ! -e packed/chunk-000001.rpk ] ||
			die "not one chunk being written: $(ls -a packed)"
	fi
	# rip ps of the trace being recorded: its program, live (rip run copies the ring file at the end)
	"$RIP" ps "$fmt" >ps.out 2>ps.err || fail "$fmt: rip ps of the trace being recorded: $(cat ps.err)"
	grep -q "^killed_leaks (pid $pid) alive" ps.out ||
		fail "$fmt: rip ps of the trace being recorded: $(head -n 2 ps.out)"
	t_kill "$run"
	kill -9 "$pid" 2>/dev/null
	wait_until 10 sh -c "! kill -0 $pid 2>/dev/null" || die "the program did not die"
	"$RIP" ps "$fmt" >ps.out 2>ps.err || fail "$fmt: rip ps, recorder and program killed: $(cat ps.err)"
	grep -q "^killed_leaks (pid $pid) dead" ps.out ||
		fail "$fmt: rip ps, recorder and program killed: $(head -n 2 ps.out)"

	expect_status 0 "$fmt: rip leaks --json" "$RIP" leaks --json "$fmt"
	grep -q "$fmt was read while its recording went on (or its recorder was killed" \
		"$TEST_TMP/err" ||
		fail "$fmt: rip leaks does not say its recorder may have been killed: $(cat "$TEST_TMP/err")"
	leak_once "$TEST_TMP/out" 1000 || fail "$fmt: rip leaks, its recorder killed: not the 1,000 blocks"
	asan_run leaks "$fmt"
	[ "$asan_rc" = 0 ] || fail "$fmt: rip leaks (asan), its recorder killed: exit $asan_rc"
done

if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 ctf >bt.out 2>bt.err || fail "babeltrace2 of the CTF trace, its recorder killed: $(tail -n 3 bt.err)"
	n=$(grep -c 'mem:alloc' bt.out)
	[ "$n" -ge 1000 ] || fail "babeltrace2: $n allocations, 1,000 leaked at least"
else
	skip_part "babeltrace2 is not installed"
fi

# a stream file cut in its last packet's middle: read up to it, the packet counted lost
big=$(ls -S ctf/stream_* | head -n 1)
size=$(stat -c %s "$big")
truncate -s $((size - 100)) "$big"
"$RIP" dump ctf >cut.dump 2>cut.err || fail "rip dump of a stream cut short: $(cat cut.err)"
tail -n 1 cut.dump | grep -Eq '^[1-9][0-9]* events, [0-9]+ streams, [0-9]+ discarded/overwritten, 1 packets lost$' ||
	fail "rip dump of a stream cut short does not count one packet lost: $(tail -n 1 cut.dump)"
# babeltrace2 refuses that stream; rip export --format=ctf writes what was whole, the loss counted
"$RIP" export --format=ctf -o whole ctf >/dev/null 2>exp.err || fail "rip export of a stream cut short: $(cat exp.err)"
grep -q "ctf was read while its recording went on" exp.err ||
	fail "rip export of a trace whose recorder was killed does not say so: $(cat exp.err)"
"$RIP" dump whole >whole.dump 2>whole.err || fail "rip dump of the export: $(cat whole.err)"
[ "$(tail -n 1 whole.dump)" = "$(tail -n 1 cut.dump)" ] ||
	fail "the export of a stream cut short holds $(tail -n 1 whole.dump), the trace $(tail -n 1 cut.dump)"
if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 whole >/dev/null 2>bt.err || fail "babeltrace2 of the export: $(tail -n 3 bt.err)"
fi
t_done
