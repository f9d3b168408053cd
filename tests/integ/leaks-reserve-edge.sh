#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Description: the other ways address space reserved with PROT_NONE is made
# memory or moved (leaks-reserve has the mprotect and MAP_FIXED ways).
# reserve_edge (tests/integ/reserve_edge.c) makes 1 MiB of a 16 MiB
# reservation accessible by syscall(SYS_mprotect), which was not recorded
# (that MiB was never memory), and grows a 4 MiB reservation to 8 MiB by
# mremap, which was recorded as 8 MiB of memory.  rip leaks: 1 MiB at
# commit_sys (kind mprotect), nothing at grow_reserve, and 23 MiB still
# reserved in 2 ranges; neither it nor rip report takes the old range of the
# moved reservation for memory freed unseen.
. tests/data/common.sh
prog=$BUILD/tests/integ/reserve_edge
need_bin "$RIP" "$prog" "$BUILD/librip-preload.so"
need_cmd python3
t=$TEST_TMP/trace

expect_status 0 "rip run" "$RIP" run --mem -o "$t" -- "$prog"
grep -q '^done$' "$TEST_TMP/out" || die "the program did not finish: $(cat "$TEST_TMP/out")"
grep -q ", 0 lost" "$TEST_TMP/err" || fail "losses: $(cat "$TEST_TMP/err")"

expect_status 0 "rip leaks --json" "$RIP" leaks --json "$t"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip leaks --json: $(cat "$TEST_TMP/out")"
import json, sys
d = json.load(open(sys.argv[1]))
MIB = 1 << 20
sites = {}
for g in d["leaks"]:
    names = " ".join(f.get("function") or "" for f in g["stack"])
    for fn in ("commit_sys", "grow_reserve", "reserve_site", "reserve_moved"):
        if fn in names:
            sites[fn] = (g["count"], g["bytes"], g["kinds"])
assert sites.get("commit_sys") == (1, MIB, ["mprotect"]), sites
assert "grow_reserve" not in sites, ("a reservation moved taken for memory", sites)
assert set(sites) == {"commit_sys"}, sites
assert d["reserved"] == {"bytes": 23 * MIB, "ranges": 2}, d["reserved"]
# the old range of the reservation mremap moved was seen reserved
assert d["totals"]["mem"]["released_unseen"] == 0, d["totals"]["mem"]
PY

expect_status 0 "rip report --json" "$RIP" report --json "$t"
python3 - "$TEST_TMP/out" <<'PY' || fail "rip report --json"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
MIB = 1 << 20
# the MiB made accessible and the stdio buffer
assert m["live_bytes"] == MIB + 4096, m
assert m["frees_unseen"] == 0, m
PY
t_done
