#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: rip report and rip leaks read a big trace with two CPUs (the
# symbols of the stacks are looked up on a second thread beside the pass,
# analysis/stacks.c) and with one (taskset): the outputs are byte for byte
# the same, text and JSON, with descriptors (with their names) and heap
# blocks from several threads; rip leaks finds a known count of descriptors
# left open.  A trace damaged in the middle of a stream fails the same way
# on both, with what came before it handed on, and the ASan build reads
# both without a report.
# Timeout: 300
. tests/data/common.sh
need_bin "$RIP" "$RIP_ASAN"
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 (the traced program) is missing: make check installs it"
command -v taskset >/dev/null || skip "taskset (util-linux) is needed"
[ "$(nproc)" -ge 2 ] || skip "one CPU: the symbols' thread cannot run beside the pass here"

tr=$TEST_TMP/tr
# 4 threads x 1500 opens (every 50th kept: 120 left open) and lists built and dropped
"$RIP" run --ctf --mem --fd -o "$tr" -- /usr/bin/python3 -c '
import os, threading
keep = []
def work():
    for i in range(1500):
        if i % 50 == 0:
            keep.append(os.open("/etc/hostname", os.O_RDONLY))
        else:
            open("/etc/hostname").close()
        x = [str(j) * 3 for j in range(100)]
ts = [threading.Thread(target=work) for k in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
' >"$TEST_TMP/run.out" 2>"$TEST_TMP/run.err" || die "rip run failed: $(tail -n 2 "$TEST_TMP/run.err")"
kb=$(du -sk "$tr" | cut -f1)
# big enough for the symbols' thread to overlap the pass
[ "$kb" -ge 1200 ] || die "the trace is $kb KiB: smaller than the test means"

for cmd in "leaks" "leaks --json" "report" "report --json" "leaks --resource fd --json"; do
	# shellcheck disable=SC2086
	"$RIP" $cmd "$tr" >"$TEST_TMP/two" 2>"$TEST_TMP/two.err" || fail "rip $cmd failed"
	# shellcheck disable=SC2086
	taskset -c 0 "$RIP" $cmd "$tr" >"$TEST_TMP/one" 2>"$TEST_TMP/one.err" ||
		fail "rip $cmd (one CPU) failed"
	cmp -s "$TEST_TMP/two" "$TEST_TMP/one" || {
		fail "rip $cmd: two CPUs and one differ"
		diff "$TEST_TMP/two" "$TEST_TMP/one" | cut -c 1-200 | head -n 10 >&2
	}
done

# the descriptors left open, with their path
"$RIP" leaks --resource fd --json "$tr" >"$TEST_TMP/fd.json" || fail "rip leaks --resource fd"
python3 - "$TEST_TMP/fd.json" <<'EOF' || fail "descriptors left open: not 120 of /etc/hostname"
import json, sys
r = json.load(open(sys.argv[1]))
n = sum(g["count"] for g in r["leaks"] if g["resource"] == "fd" and g.get("sample") == "/etc/hostname")
if n != 120:
    print("fd groups:", [(g["count"], g.get("sample")) for g in r["leaks"]], file=sys.stderr)
    sys.exit(1)
EOF

asan_run leaks "$tr"
[ "$asan_rc" = 0 ] || fail "rip leaks (asan) exit $asan_rc"
asan_run report --json "$tr"
[ "$asan_rc" = 0 ] || fail "rip report (asan) exit $asan_rc"

# damage the biggest stream at its middle packet (its magic): the same refusal either way
bad=$TEST_TMP/bad
cp -r "$tr" "$bad" || die "cp"
big=$(ls -S "$bad"/stream_* | head -n 1)
python3 - "$big" <<'EOF' || die "could not damage $big"
import struct, sys
f = open(sys.argv[1], "r+b")
data = f.read()
offs, off = [], 0
while off + 48 <= len(data):
    size = struct.unpack_from("<Q", data, off + 40)[0] // 8  # struct rip_packet.packet_size, bits
    if size < 48:
        sys.exit(1)
    offs.append(off)
    off += size
if len(offs) < 3:
    sys.exit(1)
f.seek(offs[len(offs) // 2])
f.write(b"\0\0\0\0")
EOF
"$RIP" report "$bad" >"$TEST_TMP/two" 2>"$TEST_TMP/two.err"
rc_two=$?
taskset -c 0 "$RIP" report "$bad" >"$TEST_TMP/one" 2>"$TEST_TMP/one.err"
rc_one=$?
[ "$rc_two" = 1 ] || fail "damaged trace: exit $rc_two, want 1"
[ "$rc_one" = "$rc_two" ] || fail "damaged trace: exit $rc_two with two CPUs, $rc_one with one"
cmp -s "$TEST_TMP/two.err" "$TEST_TMP/one.err" || {
	fail "damaged trace: the messages differ"
	cat "$TEST_TMP/two.err" "$TEST_TMP/one.err" | cut -c 1-200 >&2
}
grep -q "$(basename "$big")" "$TEST_TMP/two.err" || fail "damaged trace: the message does not name the stream: $(cat "$TEST_TMP/two.err")"
asan_run report "$bad"
asan_run leaks "$bad"
t_done
