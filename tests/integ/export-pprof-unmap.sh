#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the pprof heap profile follows munmaps as rip leaks does.
# Its pass took mem:alloc, mem:free and mem:realloc but not mem:unmap, so
# an anonymous mapping unmapped in pieces (tests/integ/mapsprog.c partial:
# all 8 pages, partial-leak: 7 of 8) stayed in inuse_space at its full
# size, where rip leaks and rip report count what is left.  For each case
# the inuse_objects and inuse_space of rip export --format=pprof (with and
# without --leaks) must be rip leaks --json's memory totals.
. tests/data/common.sh
prog=$BUILD/tests/integ/mapsprog
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3
head -c 65536 /dev/zero >"$TEST_TMP/file"

for c in partial partial-leak fixed-over anon-grow-move; do
	t=$TEST_TMP/trace-$c
	"$RIP" run --mem -q -o "$t" -- "$prog" "$c" "$TEST_TMP/file" </dev/null >"$TEST_TMP/out" 2>&1
	rc=$?
	if [ "$rc" = 77 ]; then
		skip_part "$c: the kernel refuses its call"
		continue
	fi
	[ "$rc" = 0 ] || { fail "$c: exit $rc: $(head -n 3 "$TEST_TMP/out")"; continue; }
	"$RIP" leaks --json "$t" >"$TEST_TMP/leaks.json" 2>/dev/null ||
		{ fail "$c: rip leaks --json failed"; continue; }
	for leaks in "" --leaks; do
		# shellcheck disable=SC2086 # leaks is one word or none
		"$RIP" export -f pprof $leaks --force -o "$TEST_TMP/p.pb.gz" "$t" 2>/dev/null ||
			{ fail "$c: rip export -f pprof $leaks failed"; continue; }
		python3 tests/data/pprof.py samples "$TEST_TMP/p.pb.gz" >"$TEST_TMP/samples.json" ||
			{ fail "$c: pprof.py cannot read the profile"; continue; }
		python3 - "$TEST_TMP/leaks.json" "$TEST_TMP/samples.json" "$TEST_TMP/p.pb.gz" <<'PY' ||
import json, subprocess, sys
mem = json.load(open(sys.argv[1]))["totals"]["mem"]
summ = json.loads(subprocess.check_output(["python3", "tests/data/pprof.py", "summary", sys.argv[3]]))
types = [t[0] if isinstance(t, list) else t.get("type", t) for t in summ["sample_types"]]
io, isp = types.index("inuse_objects"), types.index("inuse_space")
objs = space = 0
for s in json.load(open(sys.argv[2])):
    objs += s["values"][io]
    space += s["values"][isp]
if (objs, space) != (mem["count"], mem["bytes"]):
    print("inuse %d objects %d bytes, rip leaks %d blocks %d bytes"
          % (objs, space, mem["count"], mem["bytes"]), file=sys.stderr)
    sys.exit(1)
PY
			fail "$c ${leaks:-(all)}: the pprof inuse values are not rip leaks' totals"
	done
done
t_done
